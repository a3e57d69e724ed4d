"""The accelerator catalog: the one table of TPU, GPU and CPU facts.

Node pools, Kueue quotas, the stack-outputs contract and the workload renderer all read
their machine types, topologies, node labels, taints and resource names from here, so a
fact is stated once. The module is pure data plus arithmetic: it must never import
pulumi, a cloud SDK or a Kubernetes client (the submitter imports it on its fast path).

Names mean what they mean in xpk: ``v5p-8`` is a 2x2x1 slice of four chips on one VM
(count form counts TensorCores on v4, v5p and TPU7x, chips on v5e and v6e), and
``v5litepod-16`` is a 4x4 slice of four ct5lp-hightpu-4t VMs. Topology form (``v5p-4x4x4``,
``v6e-8x16``) is accepted for every TPU generation. Shapes GKE offers that xpk has no
name for get one here: the single-VM 2x4 slices of v5e and v6e are ``v5litepod-8-1vm``
and ``v6e-8-1vm`` (the plain names are the two-VM slices, as in xpk).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator

from infra.catalog import machine_shapes

TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
GPU_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
MACHINE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ARCH_LABEL = "kubernetes.io/arch"  # set by the kubelet on every node: amd64 or arm64
TPU_RESOURCE = "google.com/tpu"
GPU_RESOURCE = "nvidia.com/gpu"

SINGLE_VM_SUFFIX = "-1vm"


@dataclass(frozen=True)
class Taint:
    """A node taint as GKE writes it on accelerator nodes."""

    key: str
    value: str
    effect: str = "NoSchedule"

    def toleration(self) -> dict[str, str]:
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "effect": self.effect}


# GKE taints every TPU node and every GPU node (in clusters that also have non-accelerator
# pools) so that only pods that ask for the accelerator land there.
TPU_TAINT = Taint("google.com/tpu", "present")
GPU_TAINT = Taint("nvidia.com/gpu", "present")
# GKE taints every Arm node kubernetes.io/arch=arm64:NoSchedule so that x86 images never
# land there (https://cloud.google.com/kubernetes-engine/docs/how-to/prepare-arm-workloads-for-deployment).
# GKE adds the matching toleration only to pods that select arm64 themselves; Kueue
# flavors and DaemonSets must state it.
ARM64 = "arm64"
ARM_TAINT = Taint(ARCH_LABEL, ARM64)
# Arm CPU series: Axion (C4A) and Ampere Altra (T2A).
ARM_CPU_SERIES = ("c4a", "t2a")


@dataclass(frozen=True)
class TpuGeneration:
    """What GKE states about one Cloud TPU generation."""

    family: str  # our family id, e.g. "v5p"
    prefixes: tuple[str, ...]  # accepted name prefixes; the first is canonical
    gke_accelerator: str  # value of cloud.google.com/gke-tpu-accelerator
    dims: int  # 2 (v5e, v6e) or 3 (v4, v5p, TPU7x)
    cores_per_chip: int  # TensorCores per chip; count-form names count cores
    max_chips: int  # the largest slice GKE accepts
    host_machine: str  # the 4-chip VM that makes up multi-host slices
    # Single-VM shapes: topology -> machine type. A shape listed here with the host
    # machine's chip count is *also* a single-host slice on host_machine.
    single_vm: dict[str, str] = field(default_factory=dict)
    # 2-D generations: the slice shapes GKE documents.
    shapes_2d: tuple[str, ...] = ()
    min_gke_version: str = ""
    single_vm_only: bool = False  # only 2x2x1 on the host machine, no multi-host shapes
    # Multi-host slices are placed by a HIGH_THROUGHPUT workload policy (xpk:
    # tpu_type_requires_workload_policy for TPU7x and TPU7) instead of a tpu_topology.
    workload_policy: bool = False


TPU_GENERATIONS: tuple[TpuGeneration, ...] = (
    TpuGeneration(
        family="v4",
        prefixes=("v4",),
        gke_accelerator="tpu-v4-podslice",
        dims=3,
        cores_per_chip=2,
        max_chips=4096,
        host_machine="ct4p-hightpu-4t",
    ),
    TpuGeneration(
        family="v5e",
        prefixes=("v5litepod", "v5e"),
        gke_accelerator="tpu-v5-lite-podslice",
        dims=2,
        cores_per_chip=1,
        max_chips=256,
        host_machine="ct5lp-hightpu-4t",
        single_vm={"1x1": "ct5lp-hightpu-1t", "2x2": "ct5lp-hightpu-4t", "2x4": "ct5lp-hightpu-8t"},
        shapes_2d=("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"),
    ),
    TpuGeneration(
        family="v5p",
        prefixes=("v5p",),
        gke_accelerator="tpu-v5p-slice",
        dims=3,
        cores_per_chip=2,
        max_chips=6144,  # the largest v5p slice shape, 16x16x24
        host_machine="ct5p-hightpu-4t",
    ),
    TpuGeneration(
        family="v6e",
        prefixes=("v6e",),
        gke_accelerator="tpu-v6e-slice",
        dims=2,
        cores_per_chip=1,
        max_chips=256,
        host_machine="ct6e-standard-4t",
        single_vm={"1x1": "ct6e-standard-1t", "2x2": "ct6e-standard-4t", "2x4": "ct6e-standard-8t"},
        shapes_2d=("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"),
    ),
    TpuGeneration(
        family="tpu7x",
        prefixes=("tpu7x",),
        gke_accelerator="tpu7x",
        dims=3,
        cores_per_chip=2,
        max_chips=9216,
        host_machine="tpu7x-standard-4t",
        single_vm={"1x1x1": "tpu7x-standard-1t"},
        min_gke_version="1.34.0-gke.2201000",
        workload_policy=True,
    ),
    # TPU7: machine types tpu7-standard-1t and tpu7-standard-4t (label value tpu7). Its
    # multi-host shapes are those of xpk's catalog (AI-Hypercomputer/xpk,
    # src/xpk/core/system_characteristics.py: generate_tpu_topologies(max_cubes=4), i.e.
    # the sub-cubes and 4x4x4, 4x4x8, 4x4x12, 4x4x16, 4x8x8: at most 4 cubes of 64 chips).
    TpuGeneration(
        family="tpu7",
        prefixes=("tpu7",),
        gke_accelerator="tpu7",
        dims=3,
        cores_per_chip=2,
        max_chips=256,
        host_machine="tpu7-standard-4t",
        single_vm={"1x1x1": "tpu7-standard-1t"},
        workload_policy=True,
    ),
)


@dataclass(frozen=True)
class GpuModel:
    """One GPU machine family as GKE runs it."""

    family: str  # e.g. "a3-mega"
    name_prefix: str  # xpk's name: f"{name_prefix}-{gpus}"
    gke_accelerator: str  # value of cloud.google.com/gke-accelerator
    machines: dict[int, str]  # GPUs per VM -> machine type
    networking: str  # "none", "tcpx", "tcpxo" or "rdma"
    display: str  # how messages name the family
    arm_host: bool = False
    # Other machine types of the same GPUs, as (name suffix, machine type): xpk's
    # gb200-4-nolssd is an a4x-highgpu-4g-nolssd (no local SSD).
    variants: tuple[tuple[str, str], ...] = ()


GPU_MODELS: tuple[GpuModel, ...] = (
    GpuModel("g2", "l4", "nvidia-l4",
             {1: "g2-standard-12", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
             "none", "G2 (L4)"),
    GpuModel("a2", "a100-40gb", "nvidia-tesla-a100",
             {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g", 8: "a2-highgpu-8g"},
             "none", "A2 (A100 40GB)"),
    GpuModel("a3-high", "h100-80gb", "nvidia-h100-80gb", {8: "a3-highgpu-8g"}, "tcpx",
             "A3 High (H100 80GB)"),
    GpuModel("a3-mega", "h100-mega-80gb", "nvidia-h100-mega-80gb", {8: "a3-megagpu-8g"},
             "tcpxo", "A3 Mega (H100 80GB)"),
    GpuModel("a3-ultra", "h200-141gb", "nvidia-h200-141gb", {8: "a3-ultragpu-8g"}, "rdma",
             "A3 Ultra (H200 141GB)"),
    GpuModel("a4", "b200", "nvidia-b200", {8: "a4-highgpu-8g"}, "rdma", "A4 (B200)"),
    GpuModel("a4x", "gb200", "nvidia-gb200", {4: "a4x-highgpu-4g"}, "rdma", "A4X (GB200)",
             arm_host=True, variants=(("nolssd", "a4x-highgpu-4g-nolssd"),)),
)

@dataclass(frozen=True)
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
_CPU_RE = re.compile(r"^(?P<machine>(?P<series>[a-z][a-z0-9]*)-(?P<shape>[a-z]+)-(?P<vcpus>\d+))"
                     r"-(?P<vms>\d+)\Z")
CPU_FAMILY = "cpu"


@dataclass(frozen=True)
class Accelerator:
    """One slice type: what a node pool of it is made of and how pods find it."""

    name: str
    kind: str  # "tpu", "gpu" or "cpu"
    family: str
    machine_type: str
    topology: str | None
    chips_per_vm: int  # vCPUs per VM for CPU entries
    vms_per_slice: int
    gke_accelerator: str | None
    resource_name: str | None
    taint: Taint | None
    networking: str = "none"
    aliases: tuple[str, ...] = ()
    arch: str = "amd64"  # the node's kubernetes.io/arch
    # Also select the machine type: GPU machines that share their GPU label (a4x-highgpu-4g
    # and its -nolssd variant) are told apart by node.kubernetes.io/instance-type.
    select_machine: bool = False

    @property
    def chips(self) -> int:
        return self.chips_per_vm * self.vms_per_slice

    @property
    def multi_host(self) -> bool:
        return self.vms_per_slice > 1

    @property
    def taints(self) -> tuple[Taint, ...]:
        """Every taint GKE puts on this machine's nodes."""
        out = (self.taint,) if self.taint else ()
        return out + ((ARM_TAINT,) if self.arch == ARM64 else ())

    @property
    def node_selector(self) -> dict[str, str]:
        arch = {ARCH_LABEL: ARM64} if self.arch == ARM64 else {}
        if self.kind == "tpu":
            assert self.gke_accelerator and self.topology
            return {TPU_ACCELERATOR_LABEL: self.gke_accelerator, TPU_TOPOLOGY_LABEL: self.topology}
        if self.kind == "gpu":
            assert self.gke_accelerator
            machine = {MACHINE_TYPE_LABEL: self.machine_type} if self.select_machine else {}
            return {GPU_ACCELERATOR_LABEL: self.gke_accelerator, **machine, **arch}
        return {MACHINE_TYPE_LABEL: self.machine_type, **arch}

    def to_dict(self) -> dict[str, Any]:
        """The entry as the CLI prints it and the outputs contract carries it (camelCase)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "family": self.family,
            "machineType": self.machine_type,
            "topology": self.topology,
            "chipsPerVm": self.chips_per_vm,
            "vmsPerSlice": self.vms_per_slice,
            "chips": self.chips,
            "multiHost": self.multi_host,
            "gkeAccelerator": self.gke_accelerator,
            "nodeSelector": self.node_selector,
            "taint": self.taint.to_dict() if self.taint else None,
            "resourceName": self.resource_name,
            "networking": self.networking,
            "aliases": list(self.aliases),
            "arch": self.arch,
        }


class UnknownAccelerator(ValueError):
    """A name that is not in the catalog; carries the closest valid names."""

    def __init__(self, name: str, reason: str, suggestions: list[str]) -> None:
        self.name = name
        self.reason = reason
        self.suggestions = suggestions
        hint = ""
        if suggestions:
            hint = "; did you mean " + _or_list(suggestions) + "?"
        super().__init__(f"{reason}{hint}")


def _article(word: str) -> str:
    return "an" if word[:1] in "AEIOU" else "a"


def _or_list(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


# ----------------------------------------------------------------------------------
# Topologies: computed from GKE's rules, never listed by hand (but for 2-D generations,
# whose shapes GKE lists).


def _dims(topology: str) -> tuple[int, ...]:
    return tuple(int(x) for x in topology.split("x"))


def _product(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def is_valid_3d(gen: TpuGeneration, dims: tuple[int, ...]) -> bool:
    """GKE's rule for v4, v5p and TPU7x slices.

    A slice is AxBxC with A <= B <= C, and either all three are multiples of 4, or it is
    one of the sub-cube shapes 2x2x1 (one VM), 2x2x2, 2x2x4 or 2x4x4. It may hold at most
    the generation's pod size of chips. TPU7x also has a single-chip 1x1x1 VM.
    """
    if len(dims) != 3 or any(d < 1 for d in dims):
        return False
    shape = "x".join(map(str, dims))
    if shape in gen.single_vm or shape == "2x2x1":
        return True
    if gen.single_vm_only:
        return False
    if shape in ("2x2x2", "2x2x4", "2x4x4"):
        return True
    a, b, c = dims
    if not a <= b <= c:
        return False
    if any(d % 4 for d in dims):
        return False
    return _product(dims) <= gen.max_chips


def topologies(gen: TpuGeneration) -> list[str]:
    """Every slice shape of a generation, smallest first."""
    if gen.dims == 2:
        return list(gen.shapes_2d)
    found: list[tuple[int, ...]] = [_dims(s) for s in gen.single_vm]
    if gen.single_vm_only:
        return ["x".join(map(str, d)) for d in found + [(2, 2, 1)]]
    found += [(2, 2, 1), (2, 2, 2), (2, 2, 4), (2, 4, 4)]
    limit = gen.max_chips
    for a in range(4, 10_000, 4):
        if a * a * a > limit:
            break
        for b in range(a, 10_000, 4):
            if a * b * b > limit:
                break
            for c in range(b, 10_000, 4):
                if a * b * c > limit:
                    break
                found.append((a, b, c))
    found.sort(key=lambda d: (_product(d), max(d), d))
    return ["x".join(map(str, d)) for d in found]


def _squareness(dims: tuple[int, ...]) -> tuple[int, ...]:
    # The default shape for a chip count is the most cube-like one.
    return (max(dims), tuple(sorted(dims, reverse=True)))  # type: ignore[return-value]


@dataclass(frozen=True)
class _Shape:
    gen: TpuGeneration
    topology: str
    machine_type: str
    chips_per_vm: int
    vms: int
    single_vm_variant: bool  # a single-VM shape that shares its count name with a multi-VM one


def _tpu_shapes(gen: TpuGeneration) -> list[_Shape]:
    out: list[_Shape] = []
    for topo in topologies(gen):
        chips = _product(_dims(topo))
        single = gen.single_vm.get(topo)
        if single is not None and single != gen.host_machine:
            # A dedicated single-VM machine (ct5lp-hightpu-8t holds a whole 2x4 slice).
            out.append(_Shape(gen, topo, single, chips, 1, single_vm_variant=chips > 4))
            if chips <= 4:
                continue
        if chips < 4:
            continue
        out.append(_Shape(gen, topo, gen.host_machine, 4, chips // 4, single_vm_variant=False))
    return out


@lru_cache(maxsize=None)
def _tpu_table() -> tuple[dict[str, Accelerator], dict[str, str]]:
    """(canonical name -> entry, every accepted name -> canonical name), all generations."""
    entries: dict[str, Accelerator] = {}
    names: dict[str, str] = {}
    for gen in TPU_GENERATIONS:
        e, n = _gen_table(gen)
        entries.update(e)
        names.update(n)
    return entries, names


def _gen_table(gen: TpuGeneration) -> tuple[dict[str, Accelerator], dict[str, str]]:
    return _family_table(gen.family)


@lru_cache(maxsize=None)
def _family_table(family: str) -> tuple[dict[str, Accelerator], dict[str, str]]:
    """One generation's entries; built on first use (the submitter resolves one name)."""
    gen = generation(family)
    entries: dict[str, Accelerator] = {}
    names: dict[str, str] = {}
    shapes = _tpu_shapes(gen)
    default_for_count: dict[int, str] = {}
    for s in shapes:
        if s.single_vm_variant:
            continue
        chips = _product(_dims(s.topology))
        best = default_for_count.get(chips)
        if best is None or _squareness(_dims(s.topology)) < _squareness(_dims(best)):
            default_for_count[chips] = s.topology
    for s in shapes:
        chips = _product(_dims(s.topology))
        count = chips * gen.cores_per_chip
        suffix = SINGLE_VM_SUFFIX if s.single_vm_variant else ""
        topo_names = [f"{p}-{s.topology}{suffix}" for p in gen.prefixes]
        count_names = [f"{p}-{count}{suffix}" for p in gen.prefixes]
        is_default = s.single_vm_variant or default_for_count.get(chips) == s.topology
        primary = count_names[0] if is_default else topo_names[0]
        accepted = topo_names + (count_names if is_default else [])
        if s.single_vm_variant:
            accepted.append(s.machine_type)
        aliases = tuple(n for n in accepted if n != primary)
        entries[primary] = Accelerator(
            name=primary,
            kind="tpu",
            family=gen.family,
            machine_type=s.machine_type,
            topology=s.topology,
            chips_per_vm=s.chips_per_vm,
            vms_per_slice=s.vms,
            gke_accelerator=gen.gke_accelerator,
            resource_name=TPU_RESOURCE,
            taint=TPU_TAINT,
            aliases=aliases,
        )
        for n in (primary, *aliases):
            names[n] = primary
    return entries, names


@lru_cache(maxsize=None)
def _gpu_table() -> dict[str, Accelerator]:
    out: dict[str, Accelerator] = {}
    for m in GPU_MODELS:
        shapes = [(f"{m.name_prefix}-{gpus}", gpus, machine) for gpus, machine in m.machines.items()]
        for suffix, machine in m.variants:
            gpus = next(g for g, base in m.machines.items() if machine.startswith(base))
            shapes.append((f"{m.name_prefix}-{gpus}-{suffix}", gpus, machine))
        for name, gpus, machine in shapes:
            out[name] = Accelerator(
                name=name,
                kind="gpu",
                family=m.family,
                machine_type=machine,
                topology=None,
                chips_per_vm=gpus,
                vms_per_slice=1,
                gke_accelerator=m.gke_accelerator,
                resource_name=GPU_RESOURCE,
                taint=GPU_TAINT,
                networking=m.networking,
                aliases=(machine,),
                arch=ARM64 if m.arm_host else "amd64",
                select_machine=bool(m.variants),
            )
    return out


def _cpu_entry(name: str) -> Accelerator | None:
    m = _CPU_RE.match(name)
    if not m or f"{m.group('series')}-{m.group('shape')}" not in CPU_GB_PER_VCPU:
        return None
    vcpus, vms = int(m.group("vcpus")), int(m.group("vms"))
    if vcpus < 1 or vms < 1 or not machine_shapes.exists(m.group("machine")):
        return None
    return Accelerator(
        name=name,
        kind="cpu",
        family=CPU_FAMILY,
        machine_type=m.group("machine"),
        topology=None,
        chips_per_vm=vcpus,
        vms_per_slice=vms,
        gke_accelerator=None,
        resource_name=None,
        taint=None,
        arch=ARM64 if m.group("series") in ARM_CPU_SERIES else "amd64",
    )


# Examples listed by `submit accelerators`; any <machine type>-<VMs> of a known series resolves.
CPU_EXAMPLES = ("n2-standard-32-1", "n2-standard-32-4", "n2-standard-64-1", "n2-highmem-32-1",
                "c3-standard-88-1", "c4-standard-96-1")


def memory_gb(accel: Accelerator) -> float:
    """Memory of one VM of a CPU entry, from its series-shape's GB per vCPU."""
    series_shape = accel.machine_type.rsplit("-", 1)[0]
    return CPU_GB_PER_VCPU[series_shape] * accel.chips_per_vm


def families() -> list[str]:
    return [g.family for g in TPU_GENERATIONS] + [m.family for m in GPU_MODELS] + [CPU_FAMILY]


def all_accelerators() -> Iterator[Accelerator]:
    """The whole catalog: every TPU shape, every GPU machine, and CPU examples."""
    yield from _tpu_table()[0].values()
    yield from _gpu_table().values()
    for name in CPU_EXAMPLES:
        entry = _cpu_entry(name)
        assert entry is not None
        yield entry


def needs_workload_policy(accel: Accelerator) -> bool:
    """A multi-host TPU slice of a generation placed by a workload policy."""
    if accel.kind != "tpu" or not accel.multi_host:
        return False
    return generation(accel.family).workload_policy


def generation(family: str) -> TpuGeneration:
    for g in TPU_GENERATIONS:
        if g.family == family:
            return g
    raise KeyError(family)


def _prefix_of(name: str) -> TpuGeneration | None:
    head = name.split("-", 1)[0]
    for g in TPU_GENERATIONS:
        if head in g.prefixes:
            return g
    return None


def resolve(name: str) -> Accelerator:
    """Look up a slice type by any accepted name; raise UnknownAccelerator otherwise."""
    key = name.strip().lower()
    gen = _prefix_of(key)
    if gen is not None:
        entries, names = _gen_table(gen)
        if key in names:
            return entries[names[key]]
    tpus, tpu_names = _tpu_table()  # machine-type aliases such as ct5lp-hightpu-8t
    if key in tpu_names:
        return tpus[tpu_names[key]]
    gpus = _gpu_table()
    if key in gpus:
        return gpus[key]
    for entry in gpus.values():
        if key in entry.aliases:
            return entry
    cpu = _cpu_entry(key)
    if cpu is not None:
        return cpu
    raise _unknown(name, key)


def _unknown(original: str, key: str) -> UnknownAccelerator:
    gen = _prefix_of(key)
    if gen is not None:
        label = {"v5e": "TPU v5e", "v6e": "TPU v6e (Trillium)", "tpu7x": "TPU7x (Ironwood)",
                 "tpu7": "TPU7"}.get(
            gen.family, f"TPU {gen.family}")
        pool = [n for n, c in _tpu_table()[1].items()
                if _prefix_of(n) is gen and n.split("-", 1)[0] == key.split("-", 1)[0]]
        return UnknownAccelerator(original, f"'{original}' is not a {label} slice",
                                  _closest(key, pool))
    gpu_names = list(_gpu_table())
    for m in GPU_MODELS:
        if key.startswith(m.name_prefix + "-"):
            same = [n for n in gpu_names if n.startswith(m.name_prefix + "-")]
            return UnknownAccelerator(original, f"'{original}' is not {_article(m.display)} {m.display} machine",
                                      _closest(key, same))
    cpu = _CPU_RE.match(key)
    if cpu and any(k.split("-")[0] == cpu.group("series") for k in CPU_GB_PER_VCPU):
        # A CPU pool of a known series whose shape or size does not exist (n2-standard-30-4).
        machine = cpu.group("machine")
        reason = machine_shapes.problem(machine) or f"{machine!r} is not a machine type"
        return UnknownAccelerator(original, f"'{original}' is not a CPU pool: {reason}", [])
    everything = list(_tpu_table()[1]) + gpu_names + list(CPU_EXAMPLES)
    return UnknownAccelerator(original, f"'{original}' is not a known accelerator",
                              _closest(key, everything))


def _closest(key: str, pool: list[str]) -> list[str]:
    """Nearest names: by number for count-form names, else by spelling."""
    m = re.match(r"^([a-z0-9-]+?)-(\d+)$", key)
    if m:
        prefix, n = m.group(1), int(m.group(2))
        numbered = []
        for cand in pool:
            cm = re.match(rf"^{re.escape(prefix)}-(\d+)$", cand)
            if cm:
                numbered.append((int(cm.group(1)), cand))
        if numbered:
            below = [c for c in numbered if c[0] < n]
            above = [c for c in numbered if c[0] > n]
            picks = []
            if below:
                picks.append(max(below)[1])
            if above:
                picks.append(min(above)[1])
            return picks
    import difflib  # only for a name that did not resolve: not on the render path

    return difflib.get_close_matches(key, pool, n=3, cutoff=0.5)
