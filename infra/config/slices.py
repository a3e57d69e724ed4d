"""The ``slices`` section of the stack config: pools of identical TPU, GPU or CPU slices.

Each entry is resolved through the accelerator catalog and checked against the capacity
rules GKE enforces on node pools (capacity modes, placement, zones, minimum versions)
before anything is declared. Sits above the cluster layer (it takes the zones and the
GKE version parsed there as plain values) and below the add-ons, whose queues and image
cache name these pools. An entry's ``capacity`` is parsed in infra/config/capacity.py, its
``dranet`` in infra/config/dranet.py. Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from infra.catalog import boot_disks
from infra.catalog import tables as catalog
from infra.config import dranet as config_dranet
from infra.config import dynamic_slicing as config_dynamic
from infra.config import gpu as config_gpu
from infra.config import pool_settings
from infra.config import maintenance as config_maintenance
from infra.catalog.gke_versions import GkeVersion, below, shown
from infra.catalog.tables import Accelerator
from infra.config.capacity import (FLEX_START_PAGE, FLEX_START_TPU, MIN_VERSION_FLEX_START,
                                   MIN_VERSION_FLEX_START_GPU, Capacity, parse_capacity)
from infra.config.fields import (MAX_NODES_PER_CLUSTER, MAX_NODES_PER_POOL_ZONE, check_gke_name,
                                 check_max_pods, parse_labels)
from infra.config.errors import one_of, show
from infra.config.reader import Reader
from infra.record import field, record, replace

GPU_DRIVER_VERSIONS = ("DEFAULT", "LATEST", "INSTALLATION_DISABLED")
PLACEMENTS = ("auto", "compact", "none")
DISK_TYPES = boot_disks.ALL_TYPES  # which of them a machine takes: infra/catalog/boot_disks.py
SLICE_KEYS = ("name", "accelerator", "count", "capacity", "zones", "placement", "minCount",
              "diskSizeGb", "diskType", "gpuDriverVersion", "labels", "secondaryBootDisk",
              "maxPodsPerNode", "dranet", "dynamicSlicing", "upgrade") + pool_settings.KEYS

# Pods per node on accelerator pools. A TPU host runs one workload pod beside a few GKE
# system pods; xpk creates TPU node pools with --max-pods-per-node 15
# (AI-Hypercomputer/xpk, src/xpk/core/nodepool.py), and so does the TPU Provisioner
# (GoogleCloudPlatform/ai-on-gke, tpu-provisioner/internal/cloud/gke.go: maxPodsPerNode). GPU VMs may run a pod per GPU (8)
# beside GKE's GPU daemons (device plugin, driver installer, NCCL plugin installers), so
# they get 32. Each node reserves a pods range of at least twice its max pods, so 15
# takes a /27 instead of the /24 of GKE's default 110. CPU pools keep GKE's default.
DEFAULT_MAX_PODS = {"tpu": 15, "gpu": 32}
# GKE minimum versions stated in its docs, checked against the version the nodes run: the
# pinned gkeVersion, else the release channel's default (infra/catalog/gke_versions.py).
# Flex-start's are in infra/config/capacity.py, DRANET's in infra/config/dranet.py.
MIN_VERSION_TPU7X = (1, 34, 0, 2201000)

_DISK_IMAGE = re.compile(r"^(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/)?global/images/"
                         r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z")


@record
class SlicePool:
    """One entry of ``slices``: ``count`` identical slices of one accelerator."""

    name: str
    accelerator: Accelerator
    count: int
    capacity: Capacity
    zones: tuple[str, ...]
    placement: str  # "compact" or "none", resolved from "auto"
    min_count: int  # single-host pools: autoscaling floor, in VMs
    disk_size_gb: int
    disk_type: str
    gpu_driver_version: str
    labels: Mapping[str, str] = field(default_factory=dict)
    secondary_boot_disk: str | None = None  # disk image with pre-loaded container images
    max_pods_per_node: int | None = None  # None: GKE's default (110)
    dranet: bool = False  # GKE managed DRANET (infra/specs/dranet.py)
    # The pools stack that adds this pool to another stack's cluster (infra/specs/pools.py):
    # its nodes are tainted and selected by pool, so neither stack's work lands on the
    # other's nodes of the same slice type. None in a cluster stack.
    pools_stack: str | None = None
    # TPU7x sub-blocks joined into slices by GKE's slice controller
    # (infra/config/dynamic_slicing.py); None for a pool of fixed slices.
    dynamic: config_dynamic.DynamicSlicing | None = None
    # What adopted clusters carry (infra/config/pool_settings.py, docs/adopt.md).
    settings: pool_settings.PoolSettings = pool_settings.PoolSettings()
    # Another team's pool on a cluster an in-cluster stack references (infra/config/
    # in_cluster.py): its nodes carry GKE's labels only, never the stack's.
    foreign: bool = False
    # ``upgrade``: strategy, auto-upgrade and auto-repair (infra/config/maintenance.py)
    upgrade: config_maintenance.Upgrade = field(default_factory=config_maintenance.Upgrade)

    @property
    def chips(self) -> int:
        return self.count * self.accelerator.chips

    @property
    def nodes(self) -> int:
        """Nodes of the pool at full size."""
        return self.count * self.accelerator.vms_per_slice

    @property
    def one_pool_per_slice(self) -> bool:
        """Multi-host TPU slices get a node pool each; everything else shares one pool."""
        return self.accelerator.kind == "tpu" and self.accelerator.multi_host

    def node_pool_names(self) -> list[str]:
        if self.settings.node_pool_names:  # an adopted pool keeps its name
            return list(self.settings.node_pool_names)
        if self.one_pool_per_slice:
            return [f"{self.name}-{i}" for i in range(self.count)]
        return [self.name]


def parse_slices(r: Reader, items: Sequence[Any], zones: Sequence[str],
                 version: GkeVersion | None, channel: str | None = None
                 ) -> tuple[list[SlicePool], set[str]]:
    """The pools of ``slices``, and the names of entries that did not parse (so that the
    queues and the image cache do not report their references to them a second time).
    Every pool name, and every node pool name they make, is unique and not 'system'.
    ``channel``: the release channel (dynamic slicing pools need RAPID)."""
    pools: list[SlicePool] = []
    unresolved: set[str] = set()
    seen: dict[str, int] = {}
    names: dict[str, int] = {}
    sub_blocks: dict[str, str] = {}  # reservation sub-block path -> where it is named
    for i, item in enumerate(items):
        pool = _slice(r, item, f"slices[{i}]", list(zones), version, channel, sub_blocks)
        if pool is None:
            name = item.get("name", item.get("accelerator")) if isinstance(item, Mapping) \
                else None
            # a slice without a usable name still counts as one that did not parse
            unresolved.add(name if isinstance(name, str) else f"slices[{i}]")
            continue
        pools.append(pool)
        clash = False
        for np_name in pool.node_pool_names():
            if np_name == "system":
                r.fail(f"slices[{i}].name", "'system' is the name of the stack's system node "
                       "pool; give the slice pool another name")
                clash = True
                break
            if np_name in seen:
                r.fail(f"slices[{i}].name", f"node pool name {show(np_name)} is already used"
                       f" by slices[{seen[np_name]}]; give each pool its own name")
                clash = True
                break
            seen[np_name] = i
        if not clash and pool.name in names:
            r.fail(f"slices[{i}].name", f"{show(pool.name)} is already the name of "
                   f"slices[{names[pool.name]}]; give each pool its own name (queues and the "
                   "image cache refer to pools by name)")
        names.setdefault(pool.name, i)
    return pools, unresolved




def _slice(r: Reader, item: Any, path: str, zones: list[str], version: GkeVersion | None,
           channel: str | None = None, sub_blocks: dict[str, str] | None = None
           ) -> SlicePool | None:
    before = len(r.problems)
    raw = r.obj(item, path, SLICE_KEYS)
    if not raw:
        if item is not None and before == len(r.problems):
            r.fail(path, "is empty; a slice pool needs at least an accelerator")
        return None
    accel_name = r.get(raw, "accelerator", path, str, required=True)
    accel: Accelerator | None = None
    if accel_name is not None:
        try:
            accel = catalog.resolve(accel_name)
        except catalog.UnknownAccelerator as e:
            r.fail(f"{path}.accelerator", str(e))
    count = r.get(raw, "count", path, int, default=1)
    r.check(count >= 1, f"{path}.count", f"{count} is below 1")
    capacity = parse_capacity(r, raw.get("capacity"), f"{path}.capacity")
    pool_zones = r.get(raw, "zones", path, list, default=zones[:1])
    for j, z in enumerate(pool_zones):
        if z not in zones:
            r.fail(f"{path}.zones[{j}]", f"{show(z)} is not one of the stack's zones "
                   f"({one_of(zones)})")
    if "zones" in raw and not pool_zones:
        r.fail(f"{path}.zones", "must list at least one zone")
    placement = r.get(raw, "placement", path, str, default="auto")
    if placement not in PLACEMENTS:
        r.fail(f"{path}.placement", f"{show(placement)} is not a placement; allowed: "
               f"{one_of(PLACEMENTS)}")
    min_count = r.get(raw, "minCount", path, int)
    disk = r.get(raw, "diskSizeGb", path, int, default=200)
    r.check(disk >= 10, f"{path}.diskSizeGb", f"{disk} is below GKE's 10 GB minimum")
    disk_type = r.get(raw, "diskType", path, str)
    if disk_type is not None and disk_type not in DISK_TYPES:
        r.fail(f"{path}.diskType", f"{show(disk_type)} is not a boot disk type; allowed: "
               f"{one_of(DISK_TYPES)}")
    driver = r.get(raw, "gpuDriverVersion", path, str, default="LATEST")
    if driver not in GPU_DRIVER_VERSIONS:
        r.fail(f"{path}.gpuDriverVersion", f"{show(driver)} is not a GKE GPU driver version; "
               f"allowed: {one_of(GPU_DRIVER_VERSIONS)}")
    labels = parse_labels(r, raw.get("labels"), f"{path}.labels")
    boot_disk = r.get(raw, "secondaryBootDisk", path, str)
    if boot_disk is not None and not _DISK_IMAGE.match(boot_disk):
        r.fail(f"{path}.secondaryBootDisk", f"{show(boot_disk)} is not a disk image "
               "(global/images/NAME or projects/PROJECT/global/images/NAME)")
    name = r.get(raw, "name", path, str, default=accel.name if accel else None)
    if accel is None or capacity is None or name is None or len(r.problems) > before:
        return None
    dynamic = None
    if "dynamicSlicing" in raw:
        config_dynamic.check_cluster(r, f"{path}.dynamicSlicing", channel, version)
        dynamic = config_dynamic.parse(
            r, raw["dynamicSlicing"], path, accel, capacity.mode, capacity.reservation,
            capacity.block, count if "count" in raw else None,
            {} if sub_blocks is None else sub_blocks)
        if dynamic is None or len(r.problems) > before:
            return None
        count = len(dynamic.sub_blocks)

    disk_type = _boot_disk(r, f"{path}.diskType", accel, disk_type)
    # GKE's node limits, checked before anything iterates over the slices.
    nodes = count * accel.vms_per_slice
    if nodes > MAX_NODES_PER_CLUSTER:
        r.fail(f"{path}.count", f"{count} x {accel.name} ({accel.vms_per_slice} VMs each) is "
               f"{nodes:,} nodes; GKE allows at most {MAX_NODES_PER_CLUSTER:,} nodes in a "
               "cluster")
        return None
    if not (accel.kind == "tpu" and accel.multi_host):
        per_zone = MAX_NODES_PER_POOL_ZONE * max(1, len(pool_zones))
        if nodes > per_zone:
            r.fail(f"{path}.count", f"{count} x {accel.name} is {nodes:,} VMs in one node pool "
                   f"over {len(pool_zones)} zone(s); GKE allows at most "
                   f"{MAX_NODES_PER_POOL_ZONE:,} nodes per node pool per zone")
            return None
    max_pods = check_max_pods(r, raw, path)
    if max_pods is None and "maxPodsPerNode" not in raw:
        max_pods = DEFAULT_MAX_PODS.get(accel.kind)

    suffix_len = len(f"-{count - 1}") if accel.kind == "tpu" and accel.multi_host else 0
    check_gke_name(r, f"{path}.name", name, limit=40 - suffix_len)
    if accel.kind != "gpu" and "gpuDriverVersion" in raw:
        r.fail(f"{path}.gpuDriverVersion", f"applies to GPU pools only, not {accel.name}")
    maintenance = capacity.host_maintenance_interval
    if accel.kind == "gpu":
        config_gpu.check(r, path, accel, capacity.mode, version, maintenance)
        if maintenance is None:
            maintenance = config_gpu.default_host_maintenance(accel, capacity.mode)
            capacity = replace(capacity, host_maintenance_interval=maintenance)
    elif maintenance is not None:
        r.fail(f"{path}.capacity.hostMaintenanceInterval", f"applies to GPU pools only, not "
               f"{accel.name}")

    # The capacity rules GKE enforces, checked before anything is declared.
    mode = capacity.mode
    if placement == "auto":
        placement = _default_placement(accel, mode)
    if placement == "compact" and len(pool_zones) > 1:
        r.fail(f"{path}.zones", f"{one_of(pool_zones)}: compact placement needs a single zone "
               "(GKE places a compact node pool's nodes in one zone)")
    elif accel.kind == "tpu" and accel.multi_host and len(pool_zones) > 1:
        r.fail(f"{path}.zones", f"{one_of(pool_zones)}: a multi-host TPU slice lives in one "
               "zone; list a single zone")
    multi = accel.kind == "tpu" and accel.multi_host
    if placement == "compact" and mode == "queued" and not multi:
        r.fail(f"{path}.placement", "compact placement is not supported with queued "
               "provisioning (GKE: queued provisioning node pools take no compact placement "
               "policy; only a multi-host TPU slice keeps its topology placement)")
    if accel.kind == "tpu" and accel.multi_host and placement != "compact":
        r.fail(f"{path}.placement", f"{show(placement)}: a multi-host TPU slice "
               f"({accel.name}) is placed as one compact unit with its topology; remove "
               "placement or set it to compact")
    if catalog.needs_workload_policy(accel) and mode == "queued":
        gen = "TPU7x" if accel.family == "tpu7x" else "TPU7"
        r.fail(f"{path}.capacity.mode", "queued provisioning does not support multi-host "
               f"{gen} slices, which need a workload policy; use spot, reservation or "
               "on-demand")
    if mode == "flex-start" and accel.kind == "tpu" and accel.family not in FLEX_START_TPU:
        r.fail(f"{path}.capacity.mode", f"flex-start does not support {accel.name} (GKE "
               f"supports flex-start on TPU {one_of(FLEX_START_TPU)} only: {FLEX_START_PAGE})")
    if min_count is not None:
        if multi:
            r.fail(f"{path}.minCount", f"multi-host TPU slices ({accel.name}) are created "
                   "whole; minCount applies to single-host and GPU pools only")
        elif capacity.autoscales_from_zero and min_count != 0:
            r.fail(f"{path}.minCount", f"{min_count}: {mode} pools must autoscale from zero "
                   "(GKE: flex-start and queued provisioning need --num-nodes=0 with "
                   "autoscaling)")
        elif not 0 <= min_count <= count:
            r.fail(f"{path}.minCount", f"{min_count} is outside 0-{count} (count)")
    if min_count is None:
        min_count = count if mode == "reservation" else 0
    if version is not None:
        least = MIN_VERSION_FLEX_START if accel.kind == "tpu" else MIN_VERSION_FLEX_START_GPU
        if mode in ("flex-start", "queued") and below(version.text, shown(least)):
            r.fail(f"{path}.capacity.mode", f"{mode} needs GKE {shown(least)} or later; "
                   f"{version.said()}")
        if accel.family == "tpu7x" and below(version.text, shown(MIN_VERSION_TPU7X)):
            r.fail(f"{path}.accelerator", f"TPU7x (Ironwood) needs GKE 1.34.0-gke.2201000 or "
                   f"later; {version.said()}")
    dranet = config_dranet.parse(r, raw, path, accel, version)
    settings = pool_settings.parse(r, raw, path, accel.kind, count, multi)
    upgrade = config_maintenance.parse_upgrade(
        r, raw.get("upgrade"), path, mode=mode, channel=channel,
        multi_host=accel.kind == "tpu" and accel.multi_host)
    if len(r.problems) > before:
        return None
    return SlicePool(
        name=name, accelerator=accel, count=count, capacity=capacity, zones=tuple(pool_zones),
        placement=placement, min_count=min_count, disk_size_gb=disk, disk_type=disk_type,
        gpu_driver_version=driver, labels=labels, secondary_boot_disk=boot_disk,
        max_pods_per_node=max_pods, dranet=dranet, dynamic=dynamic, settings=settings,
        upgrade=upgrade,
    )


def _boot_disk(r: Reader, path: str, accel: Accelerator, disk_type: str | None) -> str:
    """The pool's boot disk type: the configured one if its machine series takes it (else a
    problem naming the types it takes), or the series' default (infra/catalog/boot_disks.py)."""
    allowed = boot_disks.allowed(accel.machine_type)
    if disk_type is None:
        return boot_disks.default(accel.machine_type)
    if allowed is not None and disk_type not in allowed:
        r.fail(path, f"{show(disk_type)}: {accel.machine_type} ({accel.name}) cannot boot from "
               f"it; allowed: {one_of(allowed)} (Compute Engine's supported disk types for "
               "the machine series)")
    return disk_type


def _default_placement(accel: Accelerator, mode: str) -> str:
    if accel.kind == "tpu":
        return "compact" if accel.multi_host else "none"
    if accel.kind == "gpu" and accel.networking != "none" and mode in ("on-demand", "reservation"):
        # GPUDirect machines are placed close together; flex-start and queued capacity is
        # placed by DWS itself and spot capacity is taken wherever it is.
        return "compact"
    return "none"

