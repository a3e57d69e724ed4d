"""The accelerator families: what GKE and Compute Engine state about each Cloud TPU
generation and each GPU machine family. The rows every catalog entry is derived from.
"""

from __future__ import annotations


from infra.record import field, record




@record
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
    # Dynamic slicing (TPU7x): the sub-block a node pool holds (one 4x4x4 cube of 16 VMs)
    # and the most sub-blocks GKE's slice controller joins into one slice. GKE: "For
    # Ironwood (TPU7x) it represents a 16-node group of TPU VMs with a 4x4x4 topology ...
    # a node pool maps directly to a sub-block" (https://docs.cloud.google.com/
    # kubernetes-engine/docs/how-to/use-gke-dynamic-slicing); slices of 4i x 4j x 4k with
    # i <= j <= k and i*j*k <= 144 (AI-Hypercomputer/xpk src/xpk/core/scheduling.py
    # _SUPER_SLICING_MAX_CUBES, _check_super_slicing_topology; 144 x 64 = 9,216 chips,
    # the generation's largest slice). None and 0 for generations without it.
    sub_block: str | None = None
    max_sub_blocks: int = 0


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
        sub_block="4x4x4",
        max_sub_blocks=144,
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


@record
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

