"""The fleet's outputs contract: what a fleet stack exports and the submitter reads.

A fleet stack (``accelstack:fleet``, docs/fleets.md) exports the output ``accelstackFleet``:
the manager's and every worker's cluster contract (``infra.contract.outputs``) as the
fleet read them through StackReferences, and the queues it mirrored. The submitter turns it
into a *manager view*, a ``StackOutputs`` whose pools are the workers' pools and whose queues
are the manager's, so `submit workload` renders and checks as for one cluster and sends the
workload to the manager, which MultiKueue dispatches to a worker.
Pure data: must not import pulumi.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.contract.outputs import (ContractError, LocalQueueInfo, SlicePoolInfo,
                                    StackOutputs, StorageInfo, load)
from infra.record import record, replace

FLEET_OUTPUT_NAME = "accelstackFleet"
FLEET_CONTRACT_VERSION = 1  # workers[].managerVia is additive: absent reads as unknown


@record
class FleetWorker:
    """A worker cluster: its name in the fleet (the MultiKueueCluster's name, and so the
    Workload's ``status.clusterName``), its stack and its own contract."""

    name: str
    stack: str
    outputs: StackOutputs
    # How the manager reaches the worker's control plane: "dns" (its DNS endpoint, with a
    # ServiceAccount token) or "ip" (its IP endpoint and CA). None in an older contract.
    manager_via: str | None = None

    @property
    def region(self) -> str:
        return self.outputs.cluster.location

    def accelerator_pools(self) -> tuple[SlicePoolInfo, ...]:
        return fleet_pools(self.outputs)


@record
class FleetQueue:
    """A LocalQueue of the manager: ``workers`` are where MultiKueue may send its workloads
    (every worker, one worker, or the workers of one region)."""

    namespace: str
    name: str
    cluster_queue: str
    workers: tuple[str, ...]
    scope: str  # "all", "worker:<name>" or "region:<region>"


@record
class FleetInfo:
    name: str
    stack: str
    manager_stack: str
    workers: tuple[FleetWorker, ...]
    queues: tuple[FleetQueue, ...]
    kueue_version: str
    jobset_version: str
    contract_version: int = FLEET_CONTRACT_VERSION

    def worker(self, name: str) -> FleetWorker | None:
        return next((w for w in self.workers if w.name == name), None)

    def regions(self) -> tuple[str, ...]:
        return tuple(sorted({w.region for w in self.workers}))

    def queue_for(self, namespace: str, scope: str) -> FleetQueue | None:
        return next((q for q in self.queues if q.namespace == namespace and q.scope == scope),
                    None)

    def to_dict(self, manager: StackOutputs) -> dict[str, Any]:
        return {
            "fleetContractVersion": self.contract_version,
            "name": self.name,
            "stack": self.stack,
            "managerStack": self.manager_stack,
            "manager": manager.to_dict(),
            "workers": [{"name": w.name, "stack": w.stack, "outputs": w.outputs.to_dict(),
                         **({"managerVia": w.manager_via} if w.manager_via else {})}
                        for w in self.workers],
            "queues": [{"namespace": q.namespace, "name": q.name,
                        "clusterQueue": q.cluster_queue, "workers": list(q.workers),
                        "scope": q.scope} for q in self.queues],
            "kueueVersion": self.kueue_version,
            "jobsetVersion": self.jobset_version,
        }


def fleet_pools(outputs: StackOutputs) -> tuple[SlicePoolInfo, ...]:
    """The pools a fleet dispatches to: TPU and GPU node pools. CPU pools and the shapes of
    a slice class (GKE ComputeClasses, made on demand per cluster) stay the worker's own,
    and so do pools whose pods claim DRA devices (GKE managed DRANET's NICs, A4X's IMEX
    channel): Kueue admits such a workload only where its Configuration maps the device
    class to a quota resource (infra/specs/kueue_dra.py), which the manager's does not,
    and MultiKueue would not copy the ComputeDomain an A4X workload needs."""
    return tuple(p for p in outputs.slice_pools
                 if p.kind != "cpu" and p.resource_name is not None and p.compute_class is None
                 and not p.dranet and p.family != "a4x")


def pool_key(pool: SlicePoolInfo) -> str:
    """The manager's flavor (and the manager view's pool) for a worker pool: one per
    accelerator and capacity mode, the name a worker's own Kueue flavor has
    (infra/specs/kueue.py flavor keys)."""
    return f"{pool.accelerator}-{pool.capacity_mode}"


def placement(pool: SlicePoolInfo) -> tuple[Any, ...]:
    """What a pod rendered for ``pool`` carries that depends on the pool: two workers'
    pools of the same key must agree on it for one render to run on either."""
    return (pool.accelerator, pool.resource_name, pool.chips_per_vm, pool.vms_per_slice,
            tuple(sorted(pool.node_selector.items())),
            tuple(sorted(tuple(sorted(t.items())) for t in pool.tolerations)),
            pool.networking, pool.kueue_topology_level, pool.dranet, pool.local_ssd_gib)


def offering(fleet: FleetInfo, key: str) -> list[FleetWorker]:
    """The workers with a pool of flavor ``key``, in fleet order."""
    return [w for w in fleet.workers if any(pool_key(p) == key for p in w.accelerator_pools())]


def manager_view(fleet: FleetInfo, manager: StackOutputs) -> StackOutputs:
    """The contract the renderer and the commands use for a fleet: the manager's cluster and
    kubeconfig, one pool per flavor key (its slice count the most one worker holds, so a
    workload no worker can run is refused), the manager's queues in the mirrored
    namespaces, no stores (each worker's are its own) and no image repository."""
    pools: dict[str, SlicePoolInfo] = {}
    for w in fleet.workers:
        for p in w.accelerator_pools():
            key = pool_key(p)
            seen = pools.get(key)
            if seen is None or p.slice_count > seen.slice_count:
                pools[key] = replace(p, name=key, node_pools=(), zones=())
    queues = tuple(LocalQueueInfo(q.name, q.namespace, q.cluster_queue)
                   for q in fleet.queues if q.scope == "all")
    namespaces = [q.namespace for q in queues]
    return replace(
        manager, stack=fleet.stack, slice_pools=tuple(pools.values()),
        workload_namespace=namespaces[0] if namespaces else manager.workload_namespace,
        local_queues=queues, auto_provisioning={}, image_repository=None,
        storage=StorageInfo(), pathways=None, cached_images=(), slice_classes=(),
        fleet=fleet)


# ----------------------------------------------------------------------------------
# Loading

# Keys of the cluster contract whose value may be null: a value read back from the engine
# (a StackReference's outputs) loses null-valued keys and turns whole numbers into floats
# (its properties travel as protobuf Struct values), so ``from_engine`` puts both back
# before ``load`` checks the contract.
_NULLABLE_TOP = ("imageRepository", "pathways")
_NULLABLE_CLUSTER = ("dnsEndpoint",)
_NULLABLE_POOL = ("topology", "resourceName")


def from_engine(value: Any) -> Any:
    """A cluster contract as a StackReference reads it, made loadable again."""
    def ints(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, Mapping):
            return {k: ints(x) for k, x in v.items()}
        if isinstance(v, list):
            return [ints(x) for x in v]
        return v
    data = ints(value)
    if not isinstance(data, dict):
        return data
    for key in _NULLABLE_TOP:
        data.setdefault(key, None)
    if isinstance(data.get("cluster"), dict):
        for key in _NULLABLE_CLUSTER:
            data["cluster"].setdefault(key, None)
    for pool in data.get("slicePools") or []:
        if isinstance(pool, dict):
            for key in _NULLABLE_POOL:
                pool.setdefault(key, None)
    if isinstance(data.get("storage"), dict):
        data["storage"].setdefault("gkeVersion", None)
    return data


def is_fleet(data: Any) -> bool:
    return isinstance(data, Mapping) and (FLEET_OUTPUT_NAME in data
                                          or "fleetContractVersion" in data)


def _need(data: Mapping[str, Any], key: str, kind: type, path: str) -> Any:
    if key not in data:
        raise ContractError(f"{path}.{key}: missing")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ContractError(f"{path}.{key}: {type(value).__name__} is not {kind.__name__}")
    return value


def load_fleet(data: Any) -> StackOutputs:
    """The manager view of a fleet's outputs (the whole outputs or the fleet output)."""
    if isinstance(data, Mapping) and FLEET_OUTPUT_NAME in data:
        data = data[FLEET_OUTPUT_NAME]
    if not isinstance(data, Mapping):
        raise ContractError(f"fleet outputs: expected an object with an "
                            f"'{FLEET_OUTPUT_NAME}' output")
    version = data.get("fleetContractVersion")
    if version != FLEET_CONTRACT_VERSION:
        raise ContractError(
            f"fleet outputs: fleet contract version {version!r} is not supported; this "
            f"version of accelstack reads version {FLEET_CONTRACT_VERSION}")
    p = "fleet"
    manager = _nested(_need(data, "manager", Mapping, p), f"{p}.manager")
    workers = []
    for i, raw in enumerate(_need(data, "workers", list, p)):
        q = f"{p}.workers[{i}]"
        if not isinstance(raw, Mapping):
            raise ContractError(f"{q}: not an object")
        via = _need(raw, "managerVia", str, q) if "managerVia" in raw else None
        if via not in (None, "dns", "ip"):
            raise ContractError(f"{q}.managerVia: {via!r} is not dns or ip")
        workers.append(FleetWorker(_need(raw, "name", str, q), _need(raw, "stack", str, q),
                                   _nested(_need(raw, "outputs", Mapping, q), f"{q}.outputs"),
                                   via))
    queues = []
    for i, raw in enumerate(_need(data, "queues", list, p)):
        q = f"{p}.queues[{i}]"
        if not isinstance(raw, Mapping):
            raise ContractError(f"{q}: not an object")
        names = _need(raw, "workers", list, q)
        if not all(isinstance(n, str) for n in names):
            raise ContractError(f"{q}.workers: not a list of strings")
        queues.append(FleetQueue(_need(raw, "namespace", str, q), _need(raw, "name", str, q),
                                 _need(raw, "clusterQueue", str, q), tuple(names),
                                 _need(raw, "scope", str, q)))
    fleet = FleetInfo(
        name=_need(data, "name", str, p), stack=_need(data, "stack", str, p),
        manager_stack=_need(data, "managerStack", str, p), workers=tuple(workers),
        queues=tuple(queues), kueue_version=_need(data, "kueueVersion", str, p),
        jobset_version=_need(data, "jobsetVersion", str, p), contract_version=version)
    return manager_view(fleet, manager)


def _nested(data: Mapping[str, Any], path: str) -> StackOutputs:
    if "kubeconfig" in data and not isinstance(data["kubeconfig"], str):
        # The contract's own message would quote the value: a kubeconfig's credentials.
        raise ContractError(f"{path}.kubeconfig: not a string (its content is not shown: it "
                            "holds credentials)")
    try:
        return load(data)
    except ContractError as e:
        raise ContractError(f"{path}: {e}") from None
