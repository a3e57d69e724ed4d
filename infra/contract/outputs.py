"""The stack-outputs contract: the one structure a stack exports and the submitter reads.

The Pulumi program builds it with ``infra.specs.exports.build`` and exports it as the stack
output ``accelstack``; the submitter reads it back with ``load``. Both go through the records
below and their parts (infra/contract/parts.py), so the two sides cannot drift: a field added here is exported and loaded alike,
and ``CONTRACT_VERSION`` changes whenever a field changes meaning or is removed.
Pure data: this module must not import pulumi (the submitter imports it on its fast path).
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.contract import checkpointing as checkpointing_contract
from infra.contract import maintenance as maintenance_contract
from infra.contract import tensorboard as tensorboard_contract
from infra.contract import observability as observability_contract
from infra.contract.parts import ClusterInfo as ClusterInfo
from infra.contract.parts import LocalQueueInfo as LocalQueueInfo
from infra.contract.parts import PathwaysInfo as PathwaysInfo
from infra.contract.parts import SliceClassInfo as SliceClassInfo
from infra.contract.parts import SlicePoolInfo as SlicePoolInfo
from infra.contract.parts import StorageInfo as StorageInfo
from infra.contract.parts import StoreInfo as StoreInfo
from infra.contract.parts import pool_dict
from infra.record import field, record


CONTRACT_VERSION = 3  # 2: queues, priority classes, add-on versions, cached images
# 3: cluster.dnsEndpoint (the control plane's DNS name, or null when the stack has it off)
#    and imageRepository (the stack's workload image repository, or null)
#    and storage (stores, access per namespace, the job service account per namespace)
#    and pathways (the head pool, scratch location and component images, or null); additive:
#    a contract without the key reads as a stack without Pathways
#    and sliceClasses (slices made on demand by GKE ComputeClasses) with, per shape a class
#    makes, a slicePools entry carrying computeClass; additive: absent keys read as a stack
#    without classes
#    and cluster.privateEndpoint, cluster.authorizedNetworks (who may call the IP endpoint);
#    additive: a contract without them reads as unknown
#    and cluster.dnsK8sTokens (whether the DNS endpoint accepts Kubernetes tokens);
#    additive: a contract without it reads as unknown
#    and cluster.releaseChannel, cluster.nodeServiceAccount, cohort (what a pools stack
#    needs of its host: infra/specs/pools.py) and onCluster (set by a pools stack: the
#    standing cluster stack whose cluster it adds pools to); additive: absent reads as
#    unknown (null)
#    and slicePools[].checkpointing (GKE multi-tier checkpointing on the pool: bucket, RAM
#    disk, the pod's memory left), additive: absent reads as off;
#    and cluster.multiKueueOrigin (its Kueue's MultiKueue origin) and cluster.natAddresses
#    (the reserved addresses its Cloud NAT sends from); additive: absent reads as unknown
#    and tensorboard (the stack's Vertex AI TensorBoard instance: project, region,
#    displayName, name); additive: absent reads as none
#    and monitoring (the stack's Cloud Monitoring dashboard: project, dashboard resource
#    name; infra/contract/observability.py); additive: absent reads as none
#    and maintenance (the window and exclusions the stack declares,
#    infra/contract/maintenance.py); additive: absent reads as none declared
OUTPUT_NAME = "accelstack"
# On a pool with ``dranet``, pods claim the node's extra NICs from this ResourceClaimTemplate,
# which the stack creates in every workload namespace (infra/specs/dranet.py).
DRANET_CLAIM_TEMPLATE = "accelstack-netdev"


class ContractError(ValueError):
    """Outputs that are not a valid contract of the version this code reads."""


@record
class StackOutputs:
    stack: str
    cluster: ClusterInfo
    kubeconfig: str
    slice_pools: tuple[SlicePoolInfo, ...]
    workload_namespace: str
    local_queues: tuple[LocalQueueInfo, ...]
    priority_classes: tuple[str, ...]
    jobset_version: str
    kueue_version: str
    cached_images: tuple[str, ...] = ()
    auto_provisioning: Mapping[str, int] = field(default_factory=dict)
    image_repository: str | None = None  # <location>-docker.pkg.dev/<project>/<repository>
    storage: StorageInfo = StorageInfo()
    pathways: PathwaysInfo | None = None
    slice_classes: tuple[SliceClassInfo, ...] = ()
    contract_version: int = CONTRACT_VERSION
    # The Kueue cohort of the stack's ClusterQueues (None: they are in none, the stack has
    # no teams). A pools stack puts its own ClusterQueue in it.
    cohort: str | None = None
    # A pools stack (infra/config/pools.py): the cluster stack whose cluster holds its pools.
    on_cluster: str | None = None
    # Set only on the manager view of a fleet's outputs (infra/contract/fleet.py): the
    # fleet's workers and queues. Never exported by a cluster stack.
    fleet: Any = None
    # The stack's Vertex AI TensorBoard instance (infra/contract/tensorboard.py), or None.
    tensorboard: tensorboard_contract.TensorboardInfo | None = None
    # ML Diagnostics' injection webhook runs on the cluster (infra/specs/ml_diagnostics.py);
    # exported only when true, absent (an older contract) reads as false.
    ml_diagnostics: bool = False
    # The stack's Cloud Monitoring dashboard (infra/contract/observability.py), or None.
    monitoring: observability_contract.MonitoringInfo | None = None
    # The maintenance window and exclusions (infra/contract/maintenance.py); exported only
    # when the stack declares a window, absent (an older contract) reads as none.
    maintenance: maintenance_contract.MaintenanceInfo | None = None

    def slice_class(self, name: str) -> SliceClassInfo | None:
        return next((c for c in self.slice_classes if c.name == name), None)

    def local_queue(self, namespace: str) -> LocalQueueInfo | None:
        for q in self.local_queues:
            if q.namespace == namespace:
                return q
        return None

    def pool(self, name: str) -> SlicePoolInfo | None:
        for p in self.slice_pools:
            if p.name == name:
                return p
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "contractVersion": self.contract_version,
            "stack": self.stack,
            "cluster": {
                "project": self.cluster.project,
                "location": self.cluster.location,
                "name": self.cluster.name,
                "endpoint": self.cluster.endpoint,
                "caCertificate": self.cluster.ca_certificate,
                "zones": list(self.cluster.zones),
                "dnsEndpoint": self.cluster.dns_endpoint,
                "privateEndpoint": self.cluster.private_endpoint,
                "authorizedNetworks": (None if self.cluster.authorized_networks is None
                                       else list(self.cluster.authorized_networks)),
                "dnsK8sTokens": self.cluster.dns_k8s_tokens,
                "releaseChannel": self.cluster.release_channel,
                "nodeServiceAccount": self.cluster.node_service_account,
                **({"multiKueueOrigin": self.cluster.multikueue_origin}
                   if self.cluster.multikueue_origin else {}),
                **({"natAddresses": list(self.cluster.nat_addresses)}
                   if self.cluster.nat_addresses is not None else {}),
            },
            "kubeconfig": self.kubeconfig,
            "slicePools": [pool_dict(p) for p in self.slice_pools],
            "autoProvisioning": dict(self.auto_provisioning),
            "workloadNamespace": self.workload_namespace,
            "localQueues": [{"name": q.name, "namespace": q.namespace,
                             "clusterQueue": q.cluster_queue} for q in self.local_queues],
            "priorityClasses": list(self.priority_classes),
            "jobsetVersion": self.jobset_version,
            "kueueVersion": self.kueue_version,
            "cachedImages": list(self.cached_images),
            "imageRepository": self.image_repository,
            "storage": self.storage.to_dict(),
            "pathways": self.pathways.to_dict() if self.pathways else None,
            **({"sliceClasses": [c.to_dict() for c in self.slice_classes]}
               if self.slice_classes else {}),
            "cohort": self.cohort,
            **({"onCluster": self.on_cluster} if self.on_cluster else {}),
            **({"tensorboard": self.tensorboard.to_dict()} if self.tensorboard else {}),
            **({"mlDiagnostics": True} if self.ml_diagnostics else {}),
            **({"monitoring": self.monitoring.to_dict()} if self.monitoring else {}),
            **({"maintenance": self.maintenance.to_dict()} if self.maintenance else {}),
        }


# ----------------------------------------------------------------------------------
# Loading: every field checked, with the path of the first bad one.


def _need(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: str,
          nullable: bool = False) -> Any:
    if key not in data:
        raise ContractError(f"{path}.{key}: missing")
    value = data[key]
    if value is None and nullable:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise ContractError(f"{path}.{key}: {value!r} is not {kinds[0].__name__}")
    return value


def _str_map(value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ContractError(f"{path}: not a mapping of strings")
    return dict(value)


def load(data: Any) -> StackOutputs:
    """Read a contract from the JSON value of the stack output (or the whole outputs)."""
    if isinstance(data, Mapping) and OUTPUT_NAME in data and "contractVersion" not in data:
        data = data[OUTPUT_NAME]
    if not isinstance(data, Mapping):
        raise ContractError(f"stack outputs: expected an object with an '{OUTPUT_NAME}' output")
    version = data.get("contractVersion")
    if version != CONTRACT_VERSION:
        raise ContractError(
            f"stack outputs: contract version {version!r} is not supported; this version of "
            f"accelstack reads version {CONTRACT_VERSION} (run `pulumi up` with the same "
            "accelstack version, or upgrade the submitter)")
    p = "outputs"
    c = _need(data, "cluster", Mapping, p)
    cluster = ClusterInfo(
        project=_need(c, "project", str, f"{p}.cluster"),
        location=_need(c, "location", str, f"{p}.cluster"),
        name=_need(c, "name", str, f"{p}.cluster"),
        endpoint=_need(c, "endpoint", str, f"{p}.cluster"),
        ca_certificate=_need(c, "caCertificate", str, f"{p}.cluster"),
        zones=tuple(_need(c, "zones", list, f"{p}.cluster")),
        dns_endpoint=_need(c, "dnsEndpoint", str, f"{p}.cluster", nullable=True),
        private_endpoint=(_need(c, "privateEndpoint", bool, f"{p}.cluster", nullable=True)
                          if "privateEndpoint" in c else None),
        authorized_networks=(None if c.get("authorizedNetworks") is None else tuple(
            _str_list(_need(c, "authorizedNetworks", list, f"{p}.cluster"),
                      f"{p}.cluster.authorizedNetworks"))),
        dns_k8s_tokens=(_need(c, "dnsK8sTokens", bool, f"{p}.cluster", nullable=True)
                        if "dnsK8sTokens" in c else None),
        release_channel=_optional_str(c, "releaseChannel", f"{p}.cluster"),
        node_service_account=_optional_str(c, "nodeServiceAccount", f"{p}.cluster"),
        multikueue_origin=_optional_str(c, "multiKueueOrigin", f"{p}.cluster"),
        nat_addresses=(None if c.get("natAddresses") is None else tuple(
            _str_list(_need(c, "natAddresses", list, f"{p}.cluster"),
                      f"{p}.cluster.natAddresses"))),
    )
    pools = []
    for i, raw in enumerate(_need(data, "slicePools", list, p)):
        q = f"{p}.slicePools[{i}]"
        if not isinstance(raw, Mapping):
            raise ContractError(f"{q}: not an object")
        tols = _need(raw, "tolerations", list, q)
        nets = _need(raw, "additionalNetworks", list, q)
        info = SlicePoolInfo(
            name=_need(raw, "name", str, q),
            accelerator=_need(raw, "accelerator", str, q),
            kind=_need(raw, "kind", str, q),
            family=_need(raw, "family", str, q),
            topology=_need(raw, "topology", str, q, nullable=True),
            machine_type=_need(raw, "machineType", str, q),
            chips_per_vm=_need(raw, "chipsPerVm", int, q),
            vms_per_slice=_need(raw, "vmsPerSlice", int, q),
            slice_count=_need(raw, "sliceCount", int, q),
            capacity_mode=_need(raw, "capacityMode", str, q),
            node_pools=tuple(_need(raw, "nodePools", list, q)),
            zones=tuple(_need(raw, "zones", list, q)),
            node_selector=_str_map(_need(raw, "nodeSelector", Mapping, q), f"{q}.nodeSelector"),
            tolerations=tuple(_str_map(t, f"{q}.tolerations[{j}]") for j, t in enumerate(tols)),
            resource_name=_need(raw, "resourceName", str, q, nullable=True),
            networking=_need(raw, "networking", str, q),
            additional_networks=tuple(_str_map(n, f"{q}.additionalNetworks[{j}]")
                                      for j, n in enumerate(nets)),
            kueue_topology_level=(_need(raw, "kueueTopologyLevel", str, q, nullable=True)
                                  if "kueueTopologyLevel" in raw else None),
            local_ssd_gib=_need(raw, "localSsdGiB", int, q) if "localSsdGiB" in raw else 0,
            dranet=_need(raw, "dranet", bool, q) if "dranet" in raw else False,
            compute_class=(_need(raw, "computeClass", str, q)
                           if "computeClass" in raw else None),
            checkpointing=checkpointing_contract.load(raw.get("checkpointing"),
                                                      f"{q}.checkpointing", ContractError),
            slice_topology=(_need(raw, "sliceTopology", str, q)
                            if "sliceTopology" in raw else None),
            block_slice_count=(_need(raw, "blockSliceCount", int, q)
                               if "blockSliceCount" in raw else None),
        )
        if info.local_ssd_gib < 0:
            raise ContractError(f"{q}.localSsdGiB: {info.local_ssd_gib} is negative")
        if info.chips_per_slice != _need(raw, "chipsPerSlice", int, q):
            raise ContractError(f"{q}.chipsPerSlice: does not equal chipsPerVm x vmsPerSlice")
        pools.append(info)
    nap = _need(data, "autoProvisioning", Mapping, p)
    local_queues = []
    for i, raw in enumerate(_need(data, "localQueues", list, p)):
        q = f"{p}.localQueues[{i}]"
        if not isinstance(raw, Mapping):
            raise ContractError(f"{q}: not an object")
        local_queues.append(LocalQueueInfo(_need(raw, "name", str, q),
                                           _need(raw, "namespace", str, q),
                                           _need(raw, "clusterQueue", str, q)))
    return StackOutputs(
        stack=_need(data, "stack", str, p),
        cluster=cluster,
        kubeconfig=_need(data, "kubeconfig", str, p),
        slice_pools=tuple(pools),
        auto_provisioning={str(k): int(v) for k, v in nap.items()},
        workload_namespace=_need(data, "workloadNamespace", str, p),
        local_queues=tuple(local_queues),
        priority_classes=tuple(_str_list(_need(data, "priorityClasses", list, p),
                                         f"{p}.priorityClasses")),
        jobset_version=_need(data, "jobsetVersion", str, p),
        kueue_version=_need(data, "kueueVersion", str, p),
        cached_images=tuple(_str_list(_need(data, "cachedImages", list, p), f"{p}.cachedImages")),
        image_repository=_need(data, "imageRepository", str, p, nullable=True),
        storage=_storage(data.get("storage"), f"{p}.storage"),
        pathways=_pathways(data.get("pathways"), f"{p}.pathways"),
        slice_classes=_slice_classes(data.get("sliceClasses"), f"{p}.sliceClasses"),
        contract_version=version,
        cohort=_optional_str(data, "cohort", p),
        on_cluster=_optional_str(data, "onCluster", p),
        tensorboard=tensorboard_contract.load(data.get("tensorboard"), f"{p}.tensorboard",
                                              ContractError),
        ml_diagnostics=bool(_need(data, "mlDiagnostics", bool, p)) if "mlDiagnostics" in data
        else False,
        monitoring=observability_contract.load(data.get("monitoring"), f"{p}.monitoring",
                                               ContractError),
        maintenance=maintenance_contract.load(data.get("maintenance"), f"{p}.maintenance",
                                              ContractError),
    )


def _optional_str(data: Mapping[str, Any], key: str, path: str) -> str | None:
    """An additive field: absent (an older contract) or null reads as None."""
    return _need(data, key, str, path, nullable=True) if key in data else None


STORE_KINDS = ("gcs", "filestore", "parallelstore", "lustre")
ACCESS_LEVELS = ("read-only", "read-write")


def _storage(data: Any, path: str) -> StorageInfo:
    # Absent on a version-3 contract written without storage (a stack of another branch
    # of version 3): no stores, and pods keep the namespace's default account.
    if data is None:
        return StorageInfo()
    if not isinstance(data, Mapping):
        raise ContractError(f"{path}: not an object")
    stores = []
    for i, raw in enumerate(_need(data, "stores", list, path)):
        q = f"{path}.stores[{i}]"
        if not isinstance(raw, Mapping):
            raise ContractError(f"{q}: not an object")
        kind = _need(raw, "kind", str, q)
        if kind not in STORE_KINDS:
            raise ContractError(f"{q}.kind: {kind!r} is not one of {', '.join(STORE_KINDS)}")
        access = _str_map(_need(raw, "access", Mapping, q), f"{q}.access")
        for ns, level in access.items():
            if level not in ACCESS_LEVELS:
                raise ContractError(f"{q}.access.{ns}: {level!r} is not one of "
                                    f"{', '.join(ACCESS_LEVELS)}")
        stores.append(StoreInfo(_need(raw, "name", str, q), kind, _need(raw, "source", str, q),
                                access))
    return StorageInfo(
        stores=tuple(stores),
        service_accounts=_str_map(_need(data, "serviceAccounts", Mapping, path),
                                  f"{path}.serviceAccounts"),
        gke_version=_need(data, "gkeVersion", str, path, nullable=True),
    )


def _pathways(data: Any, path: str) -> PathwaysInfo | None:
    if data is None:  # off, or a contract written before Pathways was exported
        return None
    if not isinstance(data, Mapping):
        raise ContractError(f"{path}: not an object")
    colocated = data.get("colocatedPythonImage")  # optional (added without a version bump)
    if colocated is not None and not isinstance(colocated, str):
        raise ContractError(f"{path}.colocatedPythonImage: not a string")
    return PathwaysInfo(_need(data, "headPool", str, path), _need(data, "scratch", str, path),
                        _need(data, "serverImage", str, path),
                        _need(data, "proxyImage", str, path), colocated)


def _slice_classes(data: Any, path: str) -> tuple[SliceClassInfo, ...]:
    if data is None:  # a stack without classes, or written before they were exported
        return ()
    if not isinstance(data, list):
        raise ContractError(f"{path}: not a list")
    out = []
    for i, raw in enumerate(data):
        q = f"{path}[{i}]"
        if not isinstance(raw, Mapping):
            raise ContractError(f"{q}: not an object")
        out.append(SliceClassInfo(
            name=_need(raw, "name", str, q),
            shapes=tuple(_str_list(_need(raw, "shapes", list, q), f"{q}.shapes")),
            capacity=tuple(_str_list(_need(raw, "capacity", list, q), f"{q}.capacity")),
            max_chips=_need(raw, "maxChips", int, q),
            max_slices=_need(raw, "maxSlices", int, q),
            zones=tuple(_str_list(_need(raw, "zones", list, q), f"{q}.zones"))))
    return tuple(out)


def _str_list(value: list[Any], path: str) -> list[str]:
    if not all(isinstance(v, str) for v in value):
        raise ContractError(f"{path}: not a list of strings")
    return list(value)
