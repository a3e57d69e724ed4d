"""Every check of a workload's options that needs no stack outputs (``check_options``), so
that a bad option fails before the outputs are read (before `pulumi` runs, for `--stack`;
before `up`, for `submit run`). ``submit.render.build.build_spec`` runs them first too.

Imports the values (submit/render/values.py) and, late, the modules of the options given
(Pathways, parallel containers, diagnostics); none of them imports this module or
submit/render/spec.py's record back. Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from infra.catalog import tables as catalog
from infra.contract.images import image_problem
from submit.render.values import (
    _DNS_1123, _SECRET, _CPU, _QUANTITY, SpecError, _name, _quantity, check_namespace,
    check_range, check_workload_name, parse_capabilities, parse_env, parse_env_file,
    parse_exit_codes, parse_grace, parse_pull_secrets, parse_secret_env, parse_ttl,
    read_config_file)


def option_refusals(
    *, workload: str, accelerator: str, image: str | None, command: str | None = None,
    num_slices: int | None = None, num_nodes: int | None = None,
    namespace: str | None = None, queue: str | None = None, env: Sequence[str] = (),
    env_file: str | None = None, secret_env: Sequence[str] = (), priority: str | None = None,
    max_restarts: int | None = 0, restart_on_exit_codes: str | None = None,
    ttl: str | int | None = None, termination_grace_period: str | int | None = None,
    config_file: str | None = None, shm_size: str | None = None, cpu: str | None = None,
    memory: str | None = None, add_capability: Sequence[str] = (),
    pathways: bool = False, headless: bool = False, elastic_slices: int | None = None,
    mount: Sequence[str] = (), fleet_worker: str | None = None,
    fleet_region: str | None = None, stack_traces: bool = False, xla_dump: str | None = None,
    debug_logs: bool = False, image_pull_secret: Sequence[str] = (),
    tensorboard: str | None = None, parallel_containers: int | None = None,
    local_checkpoint_dir: str | None = None,
    **_needs_the_stack: object,
) -> list[SpecError]:
    """Every refusal of the checks that need no stack outputs, each option's first (so that
    a bad option fails before `pulumi` runs, and all of them are said at once).

    ``build_spec`` (submit.render.build) runs these first too; options it alone knows are
    ignored here.
    """
    found = _Found()
    with found.step():
        check_workload_name(workload, "--workload", new=True)
    with found.step():
        try:
            catalog.resolve(accelerator)
        except catalog.UnknownAccelerator as e:
            raise SpecError("--accelerator", str(e)) from None
    with found.step():
        check_range("--num-slices", num_slices, 1)
    with found.step():
        check_range("--num-nodes", num_nodes, 1)
    with found.step():
        problem = image_problem(image) if image is not None else None  # None: --script-dir
        if problem:
            raise SpecError("--image", problem)
    with found.step():
        if command is not None and not command.strip():
            raise SpecError("--command", "is empty")
    with found.step():
        check_namespace(namespace)
    with found.step():
        _name("--queue", queue, "a LocalQueue name (a DNS-1123 subdomain)", _SECRET, 253)
    with found.step():
        _name("--fleet-worker", fleet_worker, "a worker name (a DNS-1123 label)", _DNS_1123,
              63)
    with found.step():
        _name("--fleet-region", fleet_region, "a region name such as us-east5", _DNS_1123, 63)
    with found.step():
        if fleet_worker is not None and fleet_region is not None:
            raise SpecError("--fleet-region", "give --fleet-worker or --fleet-region, not both "
                            "(MultiKueue sends a workload to the workers of one queue)")
    with found.step():
        _name("--priority", priority, "a priority class name (a DNS-1123 subdomain)", _SECRET,
              253)
    with found.step():
        check_range("--max-restarts", max_restarts, 0)
    with found.step():
        parse_ttl(ttl)
    with found.step():
        parse_grace(termination_grace_period)
    with found.step():
        parse_exit_codes(restart_on_exit_codes)
    with found.step():
        parse_capabilities(add_capability)
    with found.step():
        parse_pull_secrets(image_pull_secret)
    with found.step():
        _quantity("--shm-size", shm_size, _QUANTITY, "quantity such as 16Gi")
    with found.step():
        _quantity("--cpu", cpu, _CPU, "CPU quantity such as 30 or 3500m")
    with found.step():
        _quantity("--memory", memory, _QUANTITY, "quantity such as 100Gi")
    with found.step():
        if env_file is not None:
            parse_env_file(env_file)
    with found.step():
        parse_env(env)
    with found.step():
        parse_secret_env(secret_env)
    with found.step():
        if config_file is not None:
            read_config_file(config_file)
    with found.step():
        if pathways or headless or elastic_slices:  # (check_flags passes anything else)
            _check_pathways_flags(pathways=pathways, headless=headless,
                                  elastic_slices=elastic_slices, command=command,
                                  mounts=tuple(mount), cpu=cpu, memory=memory)
    passthrough = {k: v for k, v in _needs_the_stack.items() if k.startswith("pathways_") and v}
    with found.step():
        if passthrough:  # --pathways-*-image, --pathways-*-arg, --pathways-colocated-python
            _check_pathways_flags(pathways=pathways, passthrough=passthrough)
    with found.step():
        if parallel_containers is not None:
            from submit.render import parallel_containers as parallel  # late: that option only

            try:
                parallel.check_alone(parallel_containers, pathways=pathways,
                                     stack_traces=stack_traces, xla_dump=xla_dump,
                                     local_checkpoint_dir=local_checkpoint_dir)
            except parallel.ParallelContainersError as e:
                raise SpecError(e.option, e.message) from None
    with found.step():
        if stack_traces or xla_dump is not None or debug_logs or tensorboard is not None:
            from submit.render.diagnostics import options as diagnostics  # late: these only

            user_env = (parse_env_file(env_file) if env_file else []) + parse_env(env) + \
                parse_secret_env(secret_env)
            diagnostics.check_alone(xla_dump=xla_dump, stack_traces=stack_traces,
                                    debug_logs=debug_logs, pathways=pathways, env=user_env,
                                    tensorboard=tensorboard)
    return found.refusals


def check_options(**options: Any) -> None:
    """The first of ``option_refusals`` raised (a SpecError naming the option)."""
    refusals = option_refusals(**options)
    if refusals:
        raise refusals[0]


class _Found:
    """The refusals of independent checks, each said once."""

    def __init__(self) -> None:
        self.refusals: list[SpecError] = []

    @contextmanager
    def step(self) -> Iterator[None]:
        try:
            yield
        except SpecError as e:
            if all((r.option, r.message) != (e.option, e.message) for r in self.refusals):
                self.refusals.append(e)


def _check_pathways_flags(*, passthrough: dict[str, Any] | None = None, **flags: Any) -> None:
    from submit.render import pathways_options  # late: --pathways and its flags only

    try:
        if passthrough is not None:
            pathways_options.check_passthrough(
                pathways=flags["pathways"], **pathways_options.passthrough_kwargs(passthrough))
        else:
            pathways_options.check_flags(**flags)
    except pathways_options.PathwaysError as e:
        raise SpecError(e.option, e.message) from None
