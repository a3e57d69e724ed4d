"""The parts of a stack's outputs contract (infra/contract/outputs.py holds the whole and its
loading): the cluster, each slice pool and slice class, the LocalQueues, the stores and
Pathways. Pure data, read by the submitter on its fast path.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.contract.checkpointing import CheckpointTierInfo
from infra.record import field, record


@record
class ClusterInfo:
    project: str
    location: str
    name: str
    endpoint: str
    ca_certificate: str
    zones: tuple[str, ...]
    dns_endpoint: str | None = None
    # Who may call the control plane's IP endpoint: privateEndpoint (reachable only inside
    # the cluster's VPC network) and the master authorized networks' CIDRs the stack
    # declares (None: it declares none, or holds them as a Pulumi secret, which the outputs
    # never show). A fleet checks its manager is let in (infra/specs/fleet/checks.py).
    # Optional when loading: an older contract reads as unknown (None, None).
    private_endpoint: bool | None = None
    authorized_networks: tuple[str, ...] | None = None
    # Whether the DNS endpoint accepts Kubernetes (ServiceAccount) tokens (the stack's
    # dnsEndpoint.k8sTokens): how a fleet's manager reaches a worker whose IP endpoint is
    # private. Optional when loading: an older contract reads as unknown (None).
    dns_k8s_tokens: bool | None = None
    # The release channel (None: none, or a contract written before it was exported) and
    # the nodes' service account email: a pools stack checks version floors against the
    # channel and runs its nodes as the host's (infra/specs/pools.py). Optional when loading.
    release_channel: str | None = None
    node_service_account: str | None = None
    # The MultiKueue origin of the cluster's Kueue (infra/specs/fleet/origin.py): a fleet
    # checks its manager has one of its own. Optional when loading: older reads as None.
    multikueue_origin: str | None = None
    # The addresses the cluster's Cloud NAT sends from, reserved by the stack (CIDRs, /32):
    # a fleet lets its manager in through its workers' authorized networks with them.
    # Optional when loading: absent (older contracts, NAT off) reads as None.
    nat_addresses: tuple[str, ...] | None = None


@record
class SlicePoolInfo:
    name: str
    accelerator: str
    kind: str
    family: str
    topology: str | None
    machine_type: str
    chips_per_vm: int
    vms_per_slice: int
    slice_count: int
    capacity_mode: str
    node_pools: tuple[str, ...]
    zones: tuple[str, ...]
    node_selector: Mapping[str, str]
    tolerations: tuple[Mapping[str, str], ...]
    resource_name: str | None
    networking: str
    additional_networks: tuple[Mapping[str, str], ...] = ()
    # The topology level workloads on this pool ask Kueue for, when the pool's flavor uses
    # topology-aware scheduling (infra/specs/tas.py); None otherwise.
    kueue_topology_level: str | None = None
    # Local SSD ephemeral storage of one node in GiB (infra/catalog/tables.py LOCAL_SSD_DISKS);
    # 0 when the nodes' ephemeral storage is the boot disk. Optional when loading (older
    # stacks of the same contract version do not export it: read as 0).
    local_ssd_gib: int = 0
    # GKE managed DRANET on the pool's nodes: pods claim the extra NICs (infra/specs/dranet.py).
    # Optional in loaded outputs (absent means off), so older outputs still load.
    dranet: bool = False
    # The slice class (GKE ComputeClass) that makes this shape on demand; None for a fixed
    # pool. A class entry has no node pools (GKE creates one per slice) and its
    # ``slice_count`` is the most slices of this shape the class may hold at once.
    # Written only for class entries, and optional when loading.
    compute_class: str | None = None
    # GKE multi-tier checkpointing on the pool's nodes (infra/contract/checkpointing.py);
    # written only when on, optional when loading.
    checkpointing: CheckpointTierInfo | None = None
    # Dynamic slicing (TPU7x sub-blocks, infra/specs/dynamic_slicing.py): the slice shape
    # GKE's slice controller joins the pool's sub-blocks into, which a workload on this
    # entry asks for (annotation cloud.google.com/gke-tpu-slice-topology). One entry per
    # shape the pool offers; ``slice_count`` is how many such slices its sub-blocks make at
    # once. None for fixed slices. Written only for such entries, optional when loading.
    slice_topology: str | None = None
    # The most slices of ``slice_topology`` one workload may ask for: every pod of a
    # workload's replicated job (all its slices) must be placed in one reservation block
    # (the slice controller's JobSet webhook asks Kueue for cloud.google.com/gce-topology-
    # block, and Kueue's JobSet pod set counts replicas x pods), so this is what the
    # fullest block's sub-blocks make. Written only for dynamic slicing entries, optional
    # when loading (absent: ``slice_count`` bounds a workload).
    block_slice_count: int | None = None

    @property
    def chips_per_slice(self) -> int:
        return self.chips_per_vm * self.vms_per_slice


@record
class SliceClassInfo:
    """A slice class: the shapes it makes, the capacity it tries in order (spot,
    flex-start, on-demand, reservation:NAME) and its limits at once."""

    name: str
    shapes: tuple[str, ...]
    capacity: tuple[str, ...]
    max_chips: int
    max_slices: int
    zones: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "shapes": list(self.shapes), "capacity": list(self.capacity),
                "maxChips": self.max_chips, "maxSlices": self.max_slices,
                "zones": list(self.zones)}


@record
class LocalQueueInfo:
    name: str
    namespace: str
    cluster_queue: str


@record
class StoreInfo:
    """A store jobs may mount: ``source`` is the bucket (gcs) or the claim's name in each
    namespace with access (filestore, parallelstore, lustre)."""

    name: str
    kind: str
    source: str
    access: Mapping[str, str]  # namespace -> read-only | read-write


@record
class StorageInfo:
    stores: tuple[StoreInfo, ...] = ()
    service_accounts: Mapping[str, str] = field(default_factory=dict)  # namespace -> KSA
    gke_version: str | None = None  # the version the stack pins, if it pins one

    def store(self, name: str) -> StoreInfo | None:
        return next((s for s in self.stores if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"stores": [{"name": s.name, "kind": s.kind, "source": s.source,
                            "access": dict(s.access)} for s in self.stores],
                "serviceAccounts": dict(self.service_accounts),
                "gkeVersion": self.gke_version}


@record
class PathwaysInfo:
    """The stack's Pathways set-up: the CPU pool for the head (one of ``slicePools``),
    the gs:// scratch location and the pinned server and proxy images."""

    head_pool: str
    scratch: str
    server_image: str
    proxy_image: str
    # The colocated Python sidecar's image (pathways.images.colocatedPython); optional and
    # written only when set, so contracts without it read and print as before.
    colocated_python_image: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"headPool": self.head_pool, "scratch": self.scratch,
               "serverImage": self.server_image, "proxyImage": self.proxy_image}
        if self.colocated_python_image is not None:
            out["colocatedPythonImage"] = self.colocated_python_image
        return out


def pool_dict(p: SlicePoolInfo) -> dict[str, Any]:
    return {
        "name": p.name,
        "accelerator": p.accelerator,
        "kind": p.kind,
        "family": p.family,
        "topology": p.topology,
        "machineType": p.machine_type,
        "chipsPerVm": p.chips_per_vm,
        "vmsPerSlice": p.vms_per_slice,
        "chipsPerSlice": p.chips_per_slice,
        "sliceCount": p.slice_count,
        "capacityMode": p.capacity_mode,
        "nodePools": list(p.node_pools),
        "zones": list(p.zones),
        "nodeSelector": dict(p.node_selector),
        "tolerations": [dict(t) for t in p.tolerations],
        "resourceName": p.resource_name,
        "networking": p.networking,
        "additionalNetworks": [dict(n) for n in p.additional_networks],
        "kueueTopologyLevel": p.kueue_topology_level,
        "localSsdGiB": p.local_ssd_gib,
        "dranet": p.dranet,
        **({"computeClass": p.compute_class} if p.compute_class else {}),
        **({"checkpointing": p.checkpointing.to_dict()} if p.checkpointing else {}),
        **({"sliceTopology": p.slice_topology} if p.slice_topology else {}),
        **({"blockSliceCount": p.block_slice_count}
           if p.block_slice_count is not None else {}),
    }
