"""One check path (issue 41): every option of `submit workload create`, read from the Click
command itself so that a new option cannot be missed, given a bad value, is refused by
`create --dry-run` (against the stack's offline outputs) and by `submit run --dry-run`
(against the outputs its stack will have, derived offline from the stack file before `up`)
with the same exit code and the same message. And the reverse: every shape a stack offers
is accepted by both.

The run is named after its stack file (`--name v5e-spot`) so that the stack a message
names is the same one: a run's stack is named after the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import ROOT
from submit.cli.app import main
from submit.cli.workload import create

BASE = {"--workload": "train", "--accelerator": "v5litepod-16", "--image": "python:3.12",
        "--command": "python3 train.py"}
STACK = "v5e-spot"

# Options whose value no check refuses, or that `submit run` does not take, and why.
NOT_CHECKED = {
    "stack_after": "where `create` reads the outputs; `submit run` takes STACK",
    "outputs_after": "where `create` reads the outputs; `submit run` takes STACK",
    "project_dir_after": "where `create` reads the outputs; `submit run` has its own",
    "resolve_image": "a flag that changes no check: the image is pinned after every check",
    "mount_service_account_token": "a flag valid on every workload",
    "image_repository": "only a registry can refuse it, when the image is pushed",
    "dry_run": "not an option of `submit run` (it has its own --dry-run)",
    "fmt": "not an option of `submit run`",
    "export_file": "not an option of `submit run`",
    "replace": "not an option of `submit run`",
    "after": "not an option of `submit run`",
    "runs_for": "not an option of `submit run` (whose own --timeout ends the run); it only "
                "warns",
    "goodput": "every shipped stack observes (the default), so none refuses it; its refusal "
               "goes through the one check path (build_spec) and is tested in test_goodput.py",
}

# option (Click's name) -> cases: (stack, the options changed; True: a flag).
BAD: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "name": [(STACK, {"--workload": "Train_1"})],
    "accelerator": [(STACK, {"--accelerator": "v5p-8"}), (STACK, {"--accelerator": "v9z"})],
    "pool": [(STACK, {"--pool": "nosuch"})],
    "num_slices": [(STACK, {"--num-slices": "3"}), (STACK, {"--num-slices": "0"})],
    "num_nodes": [(STACK, {"--num-nodes": "2"})],
    "image": [(STACK, {"--image": "Not An Image"})],
    "script_dir": [(STACK, {"--script-dir": "/nonexistent-accelstack-dir"})],
    "base_image": [(STACK, {"--base-image": "python:3.12"})],
    "command": [(STACK, {"--command": "  "})],
    "env": [(STACK, {"--env": "NOVALUE"})],
    "env_file": [(STACK, {"--env-file": "/nonexistent-accelstack.env"})],
    "secret_env": [(STACK, {"--secret-env": "X=bad"})],
    "priority": [(STACK, {"--priority": "urgent"})],
    "max_restarts": [(STACK, {"--max-restarts": "-1"})],
    "restart_on_exit_codes": [(STACK, {"--restart-on-exit-codes": "300"})],
    "ttl": [(STACK, {"--ttl": "forever"})],
    "termination_grace_period": [(STACK, {"--termination-grace-period": "soon"}),
                                 (STACK, {"--termination-grace-period": "1.5s"})],
    "add_capability": [(STACK, {"--add-capability": "FOO"}),
                       (STACK, {"--add-capability": "SYS_ADMIN"})],
    "config_file": [(STACK, {"--config-file": "/nonexistent-accelstack.conf"})],
    "shm_size": [(STACK, {"--shm-size": "lots"})],
    "cpu": [(STACK, {"--cpu": "9999"})],
    "memory": [(STACK, {"--memory": "0"})],
    "mount": [(STACK, {"--mount": "nosuch"}),
              ("v6e-training", {"--mount": "datasets", "-n": "pretraining"})],
    "stack_traces": [(STACK, {"--stack-traces": True, "--pathways": True})],
    "xla_dump": [(STACK, {"--xla-dump": "nosuch"}),
                 ("v6e-training", {"--xla-dump": "datasets", "-n": "pretraining"})],
    "tensorboard": [(STACK, {"--tensorboard": "nosuch"})],
    "debug_logs": [(STACK, {"--debug-logs": True, "--pathways": True})],
    "ml_diagnostics": [(STACK, {"--ml-diagnostics": True})],
    "image_pull_secret": [(STACK, {"--image-pull-secret": "Bad_Secret"})],
    "pathways_server_image": [(STACK, {"--pathways": True,
                                       "--pathways-server-image": "x.io/server:latest"})],
    "pathways_proxy_image": [(STACK, {"--pathways": True,
                                      "--pathways-proxy-image": "x.io/proxy:latest"})],
    "pathways_colocated_python": [(STACK, {"--pathways-colocated-python": True})],
    "pathways_colocated_python_image": [(STACK, {"--pathways-colocated-python-image":
                                                 "x.io/sidecar:1"})],
    "pathways_server_arg": [(STACK, {"--pathways": True, "--pathways-server-arg": "nodash"})],
    "pathways_proxy_arg": [(STACK, {"--pathways": True, "--pathways-proxy-arg": "nodash"})],
    "pathways_worker_arg": [(STACK, {"--pathways": True, "--pathways-worker-arg": "nodash"})],
    "parallel_containers": [(STACK, {"--parallel-containers": "2"})],
    "pathways": [(STACK, {"--pathways": True})],
    "headless": [(STACK, {"--headless": True})],
    "elastic_slices": [(STACK, {"--elastic-slices": "1"})],
    "local_checkpoint_dir": [
        (STACK, {"--local-checkpoint-dir": "/ckpt", "--num-slices": "2"}),
        ("v6e-mtc", {"--accelerator": "v6e-64", "--num-slices": "2",
                     "--local-checkpoint-dir": "ckpt"}),
        ("v6e-mtc", {"--accelerator": "v6e-64", "--num-slices": "2",
                     "--local-checkpoint-dir": "/dev/shm"}),
        ("v6e-mtc", {"--accelerator": "v6e-64", "--local-checkpoint-dir": "/ckpt"})],
    "namespace": [(STACK, {"-n": "Bad_NS"}), (STACK, {"-n": "nosuch"})],
    "queue": [(STACK, {"--queue": "nosuch"})],
    "fleet_worker": [(STACK, {"--fleet-worker": "east"})],
    "fleet_region": [(STACK, {"--fleet-region": "us-east5"})],
}

CASES = [pytest.param(stack, changes, id=f"{option}-{i}")
         for option, cases in BAD.items() for i, (stack, changes) in enumerate(cases)]


def test_every_option_of_create_has_a_bad_value_or_a_reason() -> None:
    options = [p.name for p in create.params]
    missing = [o for o in options if o not in BAD and o not in NOT_CHECKED]
    assert missing == [], f"options of `create` with no bad value in this test: {missing}"
    assert not set(BAD) & set(NOT_CHECKED)
    assert set(BAD) | set(NOT_CHECKED) <= set(options), "an option `create` no longer has"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Each stack's offline outputs file, as `accelstack-preview STACK --outputs` writes
    it (the same harness, in this process)."""
    from infra.preview import harness

    folder = tmp_path_factory.mktemp("outputs")
    made: dict[str, Path] = {}

    def of(stack: str) -> Path:
        if stack not in made:
            ev = harness.evaluate_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
            made[stack] = folder / f"{stack}.json"
            made[stack].write_text(json.dumps(harness.offline_outputs(ev)))
        return made[stack]
    return of


def _argv(changes: dict[str, Any]) -> list[str]:
    merged = {**BASE, **changes}
    out: list[str] = []
    for option, value in merged.items():
        if value is True:
            out.append(option)
        elif value is not None:
            out += [option, value]
    return out


def _invoke(argv: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result.exit_code, result.output


def _verdict(output: str) -> str:
    """The error line (without Click's usage lines, which name the command)."""
    errors = [ln for ln in output.splitlines() if ln.startswith("Error: ")]
    return errors[-1] if errors else output


def _both(stack: str, changes: dict[str, Any], outputs: Any) -> tuple[tuple[int, str],
                                                                       tuple[int, str]]:
    work = _argv(changes)
    made = _invoke(["workload", "--outputs", str(outputs(stack)), "create", *work,
                    "--dry-run"])
    ran = _invoke(["run", stack, "--project-dir", str(ROOT), "--name", stack, "--dry-run",
                   *work])
    return made, ran


@pytest.mark.parametrize(("stack", "changes"), CASES)
def test_a_bad_value_is_refused_alike_by_create_and_run(stack: str, changes: dict[str, Any],
                                                        outputs: Any) -> None:
    (code_c, out_c), (code_r, out_r) = _both(stack, changes, outputs)
    assert code_c == 2, out_c
    assert (code_r, _verdict(out_r)) == (code_c, _verdict(out_c))
    assert "Traceback" not in out_r


def test_every_shape_of_a_dynamic_slicing_stack_is_accepted_by_both(outputs: Any) -> None:
    from submit.cluster.stack_outputs import from_file

    stack = "tpu7x-dynamic"
    shapes = sorted({p.accelerator for p in from_file(str(outputs(stack))).slice_pools})
    assert "tpu7x-256" in shapes and len(shapes) > 1, shapes
    for shape in shapes:
        (code_c, out_c), (code_r, out_r) = _both(stack, {"--accelerator": shape}, outputs)
        assert code_c == 0, out_c
        assert code_r == 0, (shape, out_r)
        assert "work: workload train" in out_r
