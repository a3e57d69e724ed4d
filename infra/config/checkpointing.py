"""Config of GKE multi-tier checkpointing (MTC): which pools keep checkpoints in RAM, the
bucket they are backed up to, and the RAM disk each node gives up for them.

``accelstack:checkpointing`` names TPU slice pools, a Cloud Storage store of the stack (the
backup tier) and either the RAM disk size or the checkpoint size it is computed from. Every
rule GKE, the MTC controller and MaxText document is checked here, before anything is
declared (sources beside each rule). Sits above the storage layer (it names a store) and
the slices (it names pools). Pure; no pulumi.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from infra.catalog import pod_resources
from infra.catalog.gke_versions import GkeVersion, below
from infra.config.errors import did_you_mean, one_of, show
from infra.config.reader import Reader
from infra.config.slices import SlicePool
from infra.config.storage import Storage
from infra.record import record

KEYS = ("pools", "store", "ramDisk", "checkpointSize", "backupIntervalMinutes")

# "Multi-Tier Checkpointing requires GKE cluster version 1.32.4-gke.1415000 or later"
# (GKE: kubernetes-engine/docs/how-to/machine-learning/training/multi-tier-checkpointing,
# Requirements). MaxText's guide names 1.32.3-gke.1170000 for existing clusters but calls
# 1.32.4-gke.1415000 the "minimum for new clusters", and the stack creates its cluster, so
# the GKE page's floor holds.
MIN_VERSION = "1.32.4-gke.1415000"
# MaxText documents MTC ("emergency checkpointing") for TPU v4, v5e, v5p and v6e, on a
# multi-slice workload (AI-Hypercomputer/maxtext docs, guides/checkpointing_solutions,
# "Assumptions": supported TPU types; "Multi-Slice Workload").
FAMILIES = ("v4", "v5e", "v5p", "v6e")
MIN_SLICES = 2
# The RAM disk per host: 2 x (checkpoint size / hosts in the slice), plus a 10-15% buffer;
# the guide's worked example adds 15% (MaxText, "Calculating ramdisk size per host").
SIZE_FACTOR = 2
BUFFER = 0.15
# What a pod on a checkpointing pool keeps at least, beside the RAM disk: the project's own
# floor for the DaemonSets' headroom (infra/catalog/pod_resources.py), so a pod is never
# sized at nearly nothing. A choice of ours; no source gives a figure (docs/limits.md).
MIN_POD_MEMORY_MI = pod_resources.MIN_HEADROOM_MI


@record
class Checkpointing:
    """Multi-tier checkpointing of the stack; ``ram_disk_mi`` maps each pool to the RAM
    disk (MiB) on each of its nodes."""

    pools: tuple[str, ...]
    store: str
    bucket: str
    ram_disk_mi: tuple[tuple[str, int], ...]
    backup_interval_minutes: int | None = None
    # An existing bucket (a store with create: false): its hierarchical namespace can only
    # be read from Cloud Storage, so the program checks it at deploy time
    # (infra/components/checkpointing.py).
    existing_bucket: bool = False

    def ram_disk(self, pool: str) -> int:
        return dict(self.ram_disk_mi).get(pool, 0)


def ram_disk_for(checkpoint_mi: float, hosts: int) -> int:
    """The documented sizing rule, in whole MiB: 2 x (checkpoint / hosts) x 1.15."""
    return math.ceil(SIZE_FACTOR * checkpoint_mi / hosts * (1 + BUFFER))


def pod_memory_left(pool: SlicePool, ram_disk_mi: int) -> int | None:
    """MiB a workload pod on ``pool`` keeps beside a RAM disk of ``ram_disk_mi`` (None when
    the machine's memory is not published)."""
    share = pod_resources.pod_share(pool.accelerator.machine_type, reserved_mi=ram_disk_mi)
    return share.memory_mi if share is not None else None


def _size(r: Reader, raw: dict[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    mi = pod_resources.memory_mi(str(value)) if isinstance(value, str) else None
    if mi is None or mi <= 0:
        r.fail(f"checkpointing.{key}", f"{show(value)} is not a memory size (a Kubernetes "
               "quantity such as 60Gi or 840G)")
        return None
    return mi


# Slice classes (GKE ComputeClasses) cannot take MTC: the controller would place its driver
# on a class's nodes (a CheckpointConfiguration's nodeSelector becomes the driver
# DaemonSet's, pkg/multitier-controller/utils.go), but GKE's MTC page documents it only on
# node pools created for it, and no source says it works on node pools GKE auto-creates
# for a ComputeClass (docs/limits.md).
CLASS_REFUSAL = ("is a slice class; multi-tier checkpointing is documented only on node "
                 "pools the stack creates, not on node pools GKE auto-creates for a "
                 "ComputeClass; name a slice pool (slices) instead")


def _pools(r: Reader, raw: dict[str, Any], pools: Sequence[SlicePool],
           classes: Sequence[str] = ()) -> list[SlicePool]:
    names = r.get(raw, "pools", "checkpointing", list, required=True) or []
    if "pools" in raw and isinstance(raw["pools"], list) and not names:
        r.fail("checkpointing.pools", "is empty; name the slice pools whose nodes keep "
               "checkpoints in RAM")
    by_name = {p.name: p for p in pools}
    out: list[SlicePool] = []
    for i, name in enumerate(names):
        path = f"checkpointing.pools[{i}]"
        pool = by_name.get(name) if isinstance(name, str) else None
        if pool is None and name in classes:
            r.fail(path, f"{show(name)} {CLASS_REFUSAL}")
            continue
        if pool is None:
            r.fail(path, f"{show(name)} names no slice pool of this stack"
                   f"{did_you_mean(str(name), by_name)} (pools: {one_of(by_name)})")
            continue
        if pool in out:
            r.fail(path, f"{show(name)} is listed twice")
            continue
        a = pool.accelerator
        if a.kind != "tpu" or a.family not in FAMILIES:
            r.fail(path, f"pool {name!r} is {a.name}; multi-tier checkpointing is documented "
                   f"for TPU {', '.join(FAMILIES)} (MaxText, multi-tier checkpointing guide)")
            continue
        if pool.count < MIN_SLICES:
            r.fail(path, f"pool {name!r} has {pool.count} slice; checkpoints are replicated "
                   f"across slices, so it needs {MIN_SLICES} or more (MaxText: a multi-slice "
                   "workload)")
            continue
        out.append(pool)
    for pool in out:
        # Pods select a pool by slice type and capacity (infra/specs/nodepool.py), and Kueue
        # counts those pools' memory as one flavor: they must all give up the same RAM.
        for other in pools:
            if (other.name not in names and other.accelerator.name == pool.accelerator.name
                    and other.capacity.mode == pool.capacity.mode
                    and other.pools_stack is None):
                r.fail("checkpointing.pools", f"pool {pool.name!r} shares its slice type and "
                       f"capacity with pool {other.name!r}, which is not listed; pods and "
                       "Kueue's quota cannot tell their nodes apart, so list both or neither")
    return out


def parse_checkpointing(r: Reader, value: Any, pools: Sequence[SlicePool], storage: Storage,
                        version: GkeVersion | None,
                        classes: Sequence[str] = ()) -> Checkpointing | None:
    if value is None:
        return None
    raw = r.obj(value, "checkpointing", KEYS)
    if not raw:
        return None
    before = len(r.problems)
    chosen = _pools(r, raw, pools, classes)
    store_name = r.get(raw, "store", "checkpointing", str, required=True)
    bucket = None
    existing = False
    if store_name is not None:
        store = storage.store(store_name)
        gcs = [s.name for s in storage.stores if s.kind == "gcs"]
        if store is None or store.kind != "gcs":
            r.fail("checkpointing.store", f"{show(store_name)} is not a Cloud Storage store "
                   f"of storage.stores{did_you_mean(store_name, gcs)} (gcs stores: "
                   f"{one_of(gcs) or 'none'})")
        elif store.create and not store.hierarchical_namespace:
            r.fail("checkpointing.store", f"store {store_name!r} has no hierarchical "
                   "namespace; multi-tier checkpointing backs up only to a bucket with one "
                   "(set hierarchicalNamespace: true on the store)")
        else:
            bucket, existing = store.bucket, not store.create
    ram = _size(r, raw, "ramDisk")
    checkpoint = _size(r, raw, "checkpointSize")
    if ("ramDisk" in raw) == ("checkpointSize" in raw):
        r.fail("checkpointing", "give exactly one of ramDisk (per node) and checkpointSize "
               "(the whole checkpoint, from which the RAM disk is computed)")
    interval = r.get(raw, "backupIntervalMinutes", "checkpointing", int)
    if interval is not None and interval < 1:
        r.fail("checkpointing.backupIntervalMinutes", f"{interval} is not a number of "
               "minutes (1 or more)")
    if version is not None and below(version.text, MIN_VERSION):
        r.fail("checkpointing", f"multi-tier checkpointing needs GKE {MIN_VERSION} or later; "
               f"{version.said()}")
    sizes: list[tuple[str, int]] = []
    for pool in chosen:
        if ram is not None:
            mi = math.ceil(ram)
        elif checkpoint is not None:
            mi = ram_disk_for(checkpoint, pool.accelerator.vms_per_slice)
        else:
            continue
        left = pod_memory_left(pool, mi)
        if left is not None and left < MIN_POD_MEMORY_MI:
            full = pod_resources.pod_share(pool.accelerator.machine_type)
            assert full is not None
            r.fail("checkpointing", f"a RAM disk of {mi}Mi on pool {pool.name!r} does not fit "
                   f"beside the pod: a {pool.accelerator.machine_type} pod has "
                   f"{full.memory_mi}Mi and must keep at least {MIN_POD_MEMORY_MI}Mi")
            continue
        sizes.append((pool.name, mi))
    if len(r.problems) > before or bucket is None or store_name is None:
        return None
    return Checkpointing(pools=tuple(p.name for p in chosen), store=store_name, bucket=bucket,
                         ram_disk_mi=tuple(sizes), backup_interval_minutes=interval,
                         existing_bucket=existing)
