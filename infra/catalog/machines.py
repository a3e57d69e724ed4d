"""Machine types as Compute Engine states them: vCPUs and memory of the accelerator machine
types, the Local SSD that comes with them, and memory per vCPU of the CPU series.
"""

from __future__ import annotations

import re

from infra.record import record




@record
class VmShape:
    """The vCPUs and memory of one machine type, as Compute Engine states them."""

    vcpus: int
    memory_gb: float  # Compute Engine's "GB"; read as 10^9 bytes, the smaller reading


# vCPUs and memory of every accelerator machine type above. Pod requests and Kueue's CPU
# and memory quotas on accelerator pools are derived from these (infra/catalog/pod_resources.py).
# TPUs: https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus (machine type
# table), https://cloud.google.com/tpu/docs/tpu7x (4-chip VMs of v5p, v6e and TPU7x:
# 208/448, 180/720, 224/960). GPUs:
# https://cloud.google.com/compute/docs/accelerator-optimized-machines (A3: 208 vCPUs,
# 1,872 GB). tpu7x-standard-1t and the TPU7 machines have no published vCPU/memory
# figures: they are absent here, so their pods get no default CPU/memory and --cpu or
# --memory on them is refused (see pod_resources.py).
MACHINE_SHAPES: dict[str, VmShape] = {
    "ct4p-hightpu-4t": VmShape(240, 407),
    "ct5lp-hightpu-1t": VmShape(24, 48),
    "ct5lp-hightpu-4t": VmShape(112, 192),
    "ct5lp-hightpu-8t": VmShape(224, 384),
    "ct5p-hightpu-4t": VmShape(208, 448),
    "ct6e-standard-1t": VmShape(44, 176),
    "ct6e-standard-4t": VmShape(180, 720),
    "ct6e-standard-8t": VmShape(180, 1440),
    "tpu7x-standard-4t": VmShape(224, 960),
    "g2-standard-12": VmShape(12, 48),
    "g2-standard-24": VmShape(24, 96),
    "g2-standard-48": VmShape(48, 192),
    "g2-standard-96": VmShape(96, 384),
    "a2-highgpu-1g": VmShape(12, 85),
    "a2-highgpu-2g": VmShape(24, 170),
    "a2-highgpu-4g": VmShape(48, 340),
    "a2-highgpu-8g": VmShape(96, 680),
    "a3-highgpu-8g": VmShape(208, 1872),
    "a3-megagpu-8g": VmShape(208, 1872),
    "a3-ultragpu-8g": VmShape(224, 2952),
    "a4-highgpu-8g": VmShape(224, 3968),
    "a4x-highgpu-4g": VmShape(140, 884),
    "a4x-highgpu-4g-nolssd": VmShape(140, 884),  # same VM without Local SSD
}


# Local SSD disks that come with a machine type and that the stack's node pools give to
# GKE as the nodes' ephemeral storage (emptyDirs, container layers, logs): machine type ->
# disks of LOCAL_SSD_DISK_GIB each. Compute Engine attaches a fixed number of Local SSD
# disks to every A3 machine ("A4X, A4, A3 ... every machine type comes with Local SSD
# storage", https://cloud.google.com/compute/docs/disks/add-local-ssd); the counts are
# those GKE's A3 node pools are created with (`--ephemeral-storage-local-ssd=count=16` on
# a3-highgpu-8g and a3-megagpu-8g, `count=32` on a3-ultragpu-8g; the same counts in
# GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/disk_definitions.tf).
# Not listed, so their pools keep GKE's default and jobs there get no file cache:
# - a4-highgpu-8g and a4x-highgpu-4g: they come with Local SSD, but no source found gives
#   the disk count GKE expects for them, and a wrong count fails node pool creation;
# - a4x-highgpu-4g-nolssd: no Local SSD (the point of the variant);
# - G2 and A2: Local SSD is optional there (first- and second-generation rules: the count
#   is chosen at creation and billed), and the stack attaches none;
# - TPU VMs (ct4p, ct5lp, ct5p, ct6e, tpu7x, tpu7): no Cloud TPU or GKE page we found
#   offers Local SSD on a TPU machine type; their ephemeral storage is the boot disk;
# - CPU pools: only the -lssd shapes of C3/C4-class series have Local SSD, and the
#   catalog's CPU pools are the plain shapes.
LOCAL_SSD_DISK_GIB = 375
LOCAL_SSD_DISKS: dict[str, int] = {
    "a3-highgpu-8g": 16,
    "a3-megagpu-8g": 16,
    "a3-ultragpu-8g": 32,
}


def local_ssd_disks(machine_type: str) -> int:
    """Local SSD disks a node of this machine type gives to ephemeral storage (0: none)."""
    return LOCAL_SSD_DISKS.get(machine_type, 0)


def local_ssd_gib(machine_type: str) -> int:
    """Local SSD ephemeral storage of one node, in GiB (0: the boot disk only)."""
    return local_ssd_disks(machine_type) * LOCAL_SSD_DISK_GIB


def vm_shape(machine_type: str) -> VmShape | None:
    """vCPUs and memory of a machine type: the table above, or a predefined CPU shape
    (<series>-<shape>-<vCPUs> at the series-shape's GB per vCPU); None when unknown."""
    known = MACHINE_SHAPES.get(machine_type)
    if known is not None:
        return known
    m = re.match(r"^(?P<ss>[a-z][a-z0-9]*-[a-z]+)-(?P<vcpus>\d+)\Z", machine_type)
    if m and m.group("ss") in CPU_GB_PER_VCPU:
        vcpus = int(m.group("vcpus"))
        return VmShape(vcpus, CPU_GB_PER_VCPU[m.group("ss")] * vcpus)
    return None


# CPU pools are named <machine type>-<VMs>, as in xpk (n2-standard-32-4 is four VMs).
# Memory per vCPU of the predefined shapes (Compute Engine machine families); quotas use
# it, so only series-shapes listed here are accepted.
CPU_GB_PER_VCPU: dict[str, float] = {
    "n1-standard": 3.75, "n1-highmem": 6.5, "n1-highcpu": 0.9,
    "n2-standard": 4, "n2-highmem": 8, "n2-highcpu": 1,
    "n2d-standard": 4, "n2d-highmem": 8, "n2d-highcpu": 1,
    "n4-standard": 4, "n4-highmem": 8, "n4-highcpu": 2,
    "e2-standard": 4, "e2-highmem": 8, "e2-highcpu": 1,
    "c2-standard": 4,
    "c2d-standard": 4, "c2d-highmem": 8, "c2d-highcpu": 2,
    "c3-standard": 4, "c3-highmem": 8, "c3-highcpu": 2,
    "c3d-standard": 4, "c3d-highmem": 8,
    "c4-standard": 3.75, "c4-highmem": 7.75, "c4-highcpu": 2,
    "c4a-standard": 4, "c4a-highmem": 8, "c4a-highcpu": 2,
    "c4d-standard": 3.875, "c4d-highmem": 7.875, "c4d-highcpu": 1.875,
    "t2d-standard": 4, "t2a-standard": 4,
}
