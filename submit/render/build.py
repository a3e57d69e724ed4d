"""A workload's options checked against the stack: ``build_spec`` turns the CLI's raw option
values and the stack's outputs contract into a frozen WorkloadSpec (submit.render.spec), or
raises SpecError naming the option, the value and what is allowed.

Each step reads top to bottom in the order the checks run: the options alone, the pool and
the workload's shape on it, Pathways, the name's length, the queue and priority, then the
values that become the pod (resources, env, config file, mounts).
Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from infra.catalog import pod_resources
from infra.catalog import tables as catalog
from infra.catalog.labels import ARCH_LABEL, ARM64
from infra.contract.outputs import SlicePoolInfo, StackOutputs
from submit.render.option_checks import check_options
from submit.render.spec import (
    CONFIG_MOUNT, DEFAULT_MAX_RESTARTS, DEFAULT_PRIORITY, DEFAULT_RESTART_EXIT_CODES,
    DEFAULT_TERMINATION_GRACE_SECONDS, NONE, POD_NAME_SUFFIX, EnvVar, SpecError, WorkloadSpec,
    hostname_budget, parse_capabilities, parse_env, parse_env_file, parse_exit_codes,
    parse_grace, parse_pull_secrets, parse_secret_env, parse_ttl, read_config_file)

if TYPE_CHECKING:
    from submit.render import mounts as mounts_mod
    from submit.render.checkpointing import LocalCheckpoint
    from submit.render.pathways_options import PathwaysSpec


def _named(p: SlicePoolInfo) -> str:
    return f"{p.name} (class)" if p.compute_class else p.name


def nearest_offers(outputs: StackOutputs, wanted: catalog.Accelerator, most: int = 6) -> str:
    """The slice types the stack's pools and classes offer, nearest to ``wanted`` first
    (same kind, same family, then the closest chip count); classes are named as such."""
    offers: dict[str, SlicePoolInfo] = {}
    for p in outputs.slice_pools:
        offers.setdefault(p.accelerator, p)

    def distance(p: SlicePoolInfo) -> tuple[bool, bool, float, str]:
        chips = p.chips_per_slice
        ratio = max(chips, wanted.chips) / max(1, min(chips, wanted.chips))
        return (p.kind != wanted.kind, p.family != wanted.family, ratio, p.accelerator)

    ranked = sorted(offers.values(), key=distance)
    shown = [p.accelerator + (f" (class {p.compute_class})" if p.compute_class else "")
             for p in ranked[:most]]
    return ", ".join(shown) or "none"


def pick_pool(outputs: StackOutputs, accelerator: str, pool_name: str | None) -> SlicePoolInfo:
    try:
        accel = catalog.resolve(accelerator)
    except catalog.UnknownAccelerator as e:
        raise SpecError("--accelerator", str(e)) from None
    pools = [p for p in outputs.slice_pools if p.accelerator == accel.name]
    if not pools and outputs.fleet is not None:
        from submit.render import fleet as fleet_route

        raise fleet_route.no_pool(outputs.fleet, accelerator)
    if not pools:
        raise SpecError("--accelerator", f"{accelerator!r} ({accel.name}) is not a slice type "
                        f"of stack {outputs.stack!r}; it has: {nearest_offers(outputs, accel)}")
    if pool_name is not None:
        chosen = [p for p in pools if p.name == pool_name]
        if not chosen:
            names = ", ".join(_named(p) for p in pools)
            raise SpecError("--pool", f"{pool_name!r} is not a {accel.name} pool of stack "
                            f"{outputs.stack!r}; its {accel.name} pools: {names}")
        return chosen[0]
    if len(pools) > 1:
        names = ", ".join(f"{p.name} ({p.capacity_mode})" for p in pools)
        raise SpecError("--pool", f"stack {outputs.stack!r} has several {accel.name} pools; "
                        f"choose one of: {names}")
    return pools[0]


def build_spec(
    outputs: StackOutputs, *, workload: str, accelerator: str, image: str | None,
    command: str | None = None, num_slices: int | None = None, num_nodes: int | None = None,
    pool: str | None = None, namespace: str | None = None, queue: str | None = None,
    env: Sequence[str] = (), env_file: str | None = None, secret_env: Sequence[str] = (),
    priority: str | None = None, max_restarts: int = DEFAULT_MAX_RESTARTS,
    restart_on_exit_codes: str | None = None, ttl: str | int | None = None,
    termination_grace_period: str | int | None = None,
    config_file: str | None = None, shm_size: str | None = None,
    cpu: str | None = None, memory: str | None = None,
    mount_service_account_token: bool = False, add_capability: Sequence[str] = (),
    mount: Sequence[str] = (), pathways: bool = False, headless: bool = False,
    elastic_slices: int | None = None, node_version: str | None = None,
    fleet_worker: str | None = None, fleet_region: str | None = None,
    local_checkpoint_dir: str | None = None,
    stack_traces: bool = False, xla_dump: str | None = None, debug_logs: bool = False,
    image_pull_secret: Sequence[str] = (), tensorboard: str | None = None,
    pathways_server_image: str | None = None, pathways_proxy_image: str | None = None,
    pathways_colocated_python: bool = False,
    pathways_colocated_python_image: str | None = None,
    pathways_server_arg: Sequence[str] = (), pathways_proxy_arg: Sequence[str] = (),
    pathways_worker_arg: Sequence[str] = (),
    parallel_containers: int | None = None,
    ml_diagnostics: bool = False,
    goodput: bool = False,
) -> WorkloadSpec:
    """Check every option against the stack and return the workload to render.

    ``None`` for priority, ttl, termination_grace_period and restart_on_exit_codes means
    the default (DEFAULT_*). ``node_version``: the GKE version the pool's nodes report,
    when the submitter read it from the cluster (version floors of --mount)."""
    check_options(
        workload=workload, accelerator=accelerator, image=image, command=command,
        num_slices=num_slices, num_nodes=num_nodes, namespace=namespace, queue=queue, env=env,
        env_file=env_file, secret_env=secret_env, priority=priority, max_restarts=max_restarts,
        restart_on_exit_codes=restart_on_exit_codes, ttl=ttl,
        termination_grace_period=termination_grace_period, config_file=config_file,
        shm_size=shm_size, cpu=cpu, memory=memory, add_capability=add_capability,
        pathways=pathways, headless=headless, elastic_slices=elastic_slices, mount=mount,
        fleet_worker=fleet_worker, fleet_region=fleet_region, stack_traces=stack_traces,
        xla_dump=xla_dump, debug_logs=debug_logs, image_pull_secret=image_pull_secret,
        tensorboard=tensorboard, pathways_server_image=pathways_server_image, pathways_proxy_image=pathways_proxy_image,
        pathways_colocated_python=pathways_colocated_python,
        pathways_colocated_python_image=pathways_colocated_python_image,
        pathways_server_arg=pathways_server_arg, pathways_proxy_arg=pathways_proxy_arg,
        pathways_worker_arg=pathways_worker_arg, parallel_containers=parallel_containers,
        local_checkpoint_dir=local_checkpoint_dir)
    passthrough = {  # the given --pathways-* pass-through options (pathways_options)
        "pathways_server_image": pathways_server_image,
        "pathways_proxy_image": pathways_proxy_image,
        "pathways_colocated_python": pathways_colocated_python,
        "pathways_colocated_python_image": pathways_colocated_python_image,
        "pathways_server_arg": pathways_server_arg, "pathways_proxy_arg": pathways_proxy_arg,
        "pathways_worker_arg": pathways_worker_arg}
    if image is None and not (pathways and headless):
        raise SpecError("--image", "is required (or --script-dir with --base-image)")
    chosen = pick_pool(outputs, accelerator, pool)
    if parallel_containers is not None:  # late: --parallel-containers only
        from submit.render import parallel_containers as parallel

        try:
            parallel.check_pool(parallel_containers, family=chosen.family,
                                accelerator=chosen.accelerator,
                                chips_per_vm=chosen.chips_per_vm)
        except parallel.ParallelContainersError as e:
            raise SpecError(e.option, e.message) from None
    replicas, parallelism = _shape(chosen, num_slices, num_nodes)
    pathways_spec = (_pathways(outputs, chosen, replicas, headless, elastic_slices,
                               passthrough) if pathways else None)
    _check_name_fits(workload, replicas, parallelism, chosen.kind, pathways)
    ns, q = _namespace_and_queue(outputs, namespace, queue)
    if chosen.slice_topology:  # late: dynamic slicing pools only
        from submit.render import dynamic_slicing

        dynamic_slicing.check(workload, chosen.slice_topology, pathways, ns, chosen.kind)
    managed_by: str | None = None
    able: tuple[str, ...] = ()
    if outputs.fleet is not None:
        from submit.render import fleet as fleet_route  # late: fleets only

        q, able = fleet_route.route(outputs.fleet, chosen, ns, queue, replicas, parallelism,
                                    fleet_worker, fleet_region)
        managed_by = fleet_route.MULTIKUEUE
    elif fleet_worker is not None or fleet_region is not None:
        raise SpecError("--fleet-worker" if fleet_worker else "--fleet-region",
                        f"stack {outputs.stack!r} is not a fleet; give a fleet's --stack or "
                        "--outputs (docs/fleets.md)")
    priority = _priority(outputs, priority)
    reserved = chosen.checkpointing.ram_disk_mi if chosen.checkpointing else 0
    too_big = pod_resources.check_request(chosen.machine_type, cpu, memory, reserved)
    if too_big is not None:
        raise SpecError(*too_big)
    ttl_seconds = parse_ttl(ttl)
    grace = parse_grace(termination_grace_period)
    if grace is None:
        grace = DEFAULT_TERMINATION_GRACE_SECONDS
    if restart_on_exit_codes is None:
        restart_on_exit_codes = DEFAULT_RESTART_EXIT_CODES
    capabilities = parse_capabilities(add_capability)
    env_vars = _env(env, env_file, secret_env)
    cfg_name, cfg_data = read_config_file(config_file) if config_file else (None, None)
    checked = _mounts(mount, outputs, ns, chosen, replicas, node_version)
    local = (_local_checkpoint(local_checkpoint_dir, outputs, chosen, replicas, pathways_spec,
                               checked) if local_checkpoint_dir is not None else None)
    diagnostics = None
    if stack_traces or xla_dump is not None or debug_logs or tensorboard is not None:
        from submit.render.diagnostics import options as diag  # late: these options only
        from submit.render.mounts import uses_host_network

        diagnostics = diag.build(
            namespace=ns, storage=outputs.storage, pool_kind=chosen.kind,
            host_network=uses_host_network(chosen.kind, chosen.vms_per_slice, replicas),
            arm=chosen.node_selector.get(ARCH_LABEL) == ARM64, node_version=node_version,
            stack_traces=stack_traces, xla_dump=xla_dump, debug_logs=debug_logs,
            tensorboard=tensorboard, vertex_tensorboard=outputs.tensorboard)
    if ml_diagnostics:
        from submit.render.diagnostics import ml_diagnostics as mld  # late: that option only

        refused = mld.refusal(outputs.ml_diagnostics)
        if refused:
            raise SpecError("--ml-diagnostics", refused)
    if goodput and (outputs.monitoring is None or not outputs.monitoring.goodput):
        # The stack gives its job identities the roles to record goodput (its observability,
        # on by default: docs/observability.md); the variables come with the option.
        raise SpecError("--goodput", f"stack {outputs.stack} does not give its job "
                        "identities the roles to record goodput (roles/logging.logWriter, "
                        "roles/monitoring.metricWriter); its observability is off or its "
                        "outputs predate it: run `pulumi up` with observability on")

    return WorkloadSpec(
        name=workload, namespace=ns, queue=q, pool=chosen, replicas=replicas,
        parallelism=parallelism, image=image or "", command=command, env=env_vars,
        priority=None if priority == NONE else priority, max_restarts=max_restarts,
        retriable_exit_codes=parse_exit_codes(restart_on_exit_codes), ttl_seconds=ttl_seconds,
        termination_grace_seconds=grace, config_file_name=cfg_name,
        config_file_data=cfg_data, shm_size=shm_size, cpu=cpu, memory=memory,
        mount_service_account_token=mount_service_account_token, capabilities=capabilities,
        mounts=checked, service_account=outputs.storage.service_accounts.get(ns),
        pathways=pathways_spec, managed_by=managed_by, fleet_workers=able,
        local_checkpoint=local,
        diagnostics=diagnostics, image_pull_secrets=parse_pull_secrets(image_pull_secret),
        parallel_containers=parallel_containers or 1,
        ml_diagnostics=ml_diagnostics,
    )


def _shape(chosen: SlicePoolInfo, num_slices: int | None, num_nodes: int | None
           ) -> tuple[int, int]:
    """(replicas, parallelism): slices x VMs per slice on TPUs, 1 x nodes on GPU and CPU."""
    dws = chosen.capacity_mode in ("flex-start", "queued")
    if chosen.kind == "tpu":
        if num_nodes is not None:
            raise SpecError("--num-nodes", f"applies to GPU and CPU pools; {chosen.accelerator} "
                            "is a TPU slice: use --num-slices")
        replicas = 1 if num_slices is None else num_slices
        parallelism = chosen.vms_per_slice
        if replicas > chosen.slice_count and not dws:
            where = (f"class {chosen.name} may hold at once" if chosen.compute_class
                     else f"pool {chosen.name} has")
            raise SpecError("--num-slices", f"{replicas} is more than the {chosen.slice_count} "
                            f"{chosen.accelerator} slices {where}")
        if chosen.block_slice_count is not None and replicas > chosen.block_slice_count:
            # A dynamic slice: one workload's slices share a reservation block
            # (infra/contract/parts.py block_slice_count).
            raise SpecError("--num-slices", f"{replicas} is more than the "
                            f"{chosen.block_slice_count} {chosen.slice_topology} slices one "
                            f"reservation block of pool {chosen.name} makes; a workload's "
                            "dynamic slices all come from one block")
        if replicas > 1 and chosen.vms_per_slice == 1:
            # https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-multislice
            raise SpecError("--num-slices", f"{replicas}: {chosen.accelerator} is a single-host "
                            "slice, and GKE's Multislice supports only multi-host TPU slice "
                            "node pools; run one slice per workload, or use a multi-host slice")
        return replicas, parallelism
    if num_slices is not None:
        raise SpecError("--num-slices", f"applies to TPU slices; {chosen.accelerator} is a "
                        f"{chosen.kind.upper()} pool: use --num-nodes")
    replicas, parallelism = 1, 1 if num_nodes is None else num_nodes
    limit = chosen.slice_count * chosen.vms_per_slice
    if parallelism > limit and not dws:
        where = "class" if chosen.compute_class else "pool"
        raise SpecError("--num-nodes", f"{parallelism} is more than the {limit} nodes {where} "
                        f"{chosen.name} can hold")
    return replicas, parallelism


def _pathways(outputs: StackOutputs, chosen: SlicePoolInfo, replicas: int, headless: bool,
              elastic_slices: int | None, passthrough: dict[str, Any]) -> PathwaysSpec:
    from submit.render import pathways_options  # late: --pathways only
    from submit.render.pathways_options import PathwaysError

    try:
        return pathways_options.check(
            outputs, chosen, replicas, headless=headless, elastic_slices=elastic_slices,
            **pathways_options.passthrough_kwargs({k: v for k, v in passthrough.items() if v}))
    except PathwaysError as e:
        raise SpecError(e.option, e.message) from None


def _check_name_fits(workload: str, replicas: int, parallelism: int, kind: str,
                     pathways: bool) -> None:
    budget = hostname_budget(replicas, parallelism, kind)
    if pathways:  # pods <name>-pathways-head-0-0 and <name>-worker-<slice>-<host>
        suffix = max(len("-pathways-head-0-0"), len(f"-worker-{replicas - 1}-{parallelism - 1}"))
        budget = 63 - suffix - POD_NAME_SUFFIX
    if len(workload) > budget:
        raise SpecError("--workload", f"{workload!r} is {len(workload)} characters; with "
                        f"{replicas} x {parallelism} pods the name may have at most {budget} so "
                        "that every pod name stays within 63 characters")


def _namespace_and_queue(outputs: StackOutputs, namespace: str | None, queue: str | None
                         ) -> tuple[str, str]:
    ns = namespace or outputs.workload_namespace
    if queue is None:
        lq = outputs.local_queue(ns)
        if lq is None:
            known = ", ".join(sorted({x.namespace for x in outputs.local_queues}))
            raise SpecError("--namespace", f"{ns!r} has no LocalQueue in stack "
                            f"{outputs.stack!r}; namespaces with queues: {known}")
        return ns, lq.name
    if not any(x.name == queue and x.namespace == ns for x in outputs.local_queues):
        known = ", ".join(x.name for x in outputs.local_queues if x.namespace == ns) or "none"
        raise SpecError("--queue", f"{queue!r} is not a LocalQueue of stack {outputs.stack!r} "
                        f"in namespace {ns!r}; its queues there: {known}")
    return ns, queue


def _priority(outputs: StackOutputs, priority: str | None) -> str:
    if priority is None:
        # A stack without the default class still renders (with Kueue's priority 0).
        priority = DEFAULT_PRIORITY if DEFAULT_PRIORITY in outputs.priority_classes else NONE
    if priority != NONE and priority not in outputs.priority_classes:
        allowed = f"{', '.join(outputs.priority_classes)}, or '{NONE}'"
        import difflib  # late: only this error needs it

        close = difflib.get_close_matches(priority, outputs.priority_classes, n=1, cutoff=0.6)
        raise SpecError("--priority", f"{priority!r} is not a priority class of the stack; "
                        + (f"did you mean {close[0]}? (allowed: {allowed})" if close
                           else f"allowed: {allowed}"))
    return priority


def _env(env: Sequence[str], env_file: str | None, secret_env: Sequence[str]
         ) -> tuple[EnvVar, ...]:
    env_vars = parse_env_file(env_file) if env_file else []
    env_vars += parse_env(env) + parse_secret_env(secret_env)
    seen: dict[str, EnvVar] = {}
    for var in env_vars:  # later definitions win, as with docker --env-file then --env
        seen[var.name] = var
    return tuple(seen.values())


def _mounts(mount: Sequence[str], outputs: StackOutputs, ns: str, chosen: SlicePoolInfo,
            replicas: int, node_version: str | None) -> tuple[mounts_mod.Mount, ...]:
    if not mount:
        return ()
    from submit.render import mounts as mounts_mod  # late: --mount only

    try:
        return mounts_mod.parse(
            mount, outputs.storage, ns, reserved=("/dev/shm", CONFIG_MOUNT),
            host_network=mounts_mod.uses_host_network(chosen.kind, chosen.vms_per_slice,
                                                      replicas),
            pool_kind=chosen.kind, arm=chosen.node_selector.get(ARCH_LABEL) == ARM64,
            node_version=node_version)
    except mounts_mod.MountError as e:
        raise SpecError("--mount", str(e)) from None


def _local_checkpoint(path: str, outputs: StackOutputs, chosen: SlicePoolInfo, replicas: int,
                      pathways: PathwaysSpec | None, mounts: Sequence[mounts_mod.Mount]
                      ) -> LocalCheckpoint:
    from submit.render import checkpointing  # late: --local-checkpoint-dir only

    sidecar = pathways is not None and pathways.colocated_python_image is not None
    taken = ("/dev/shm", CONFIG_MOUNT, *(m.path for m in mounts))
    if sidecar:  # the colocated Python sidecar's shared-memory directory
        from submit.render.pathways import SIDECAR_SHM

        taken += (SIDECAR_SHM,)
    return checkpointing.check(path, outputs, chosen, replicas, pathways=pathways is not None,
                               taken=taken, colocated_python=sidecar)
