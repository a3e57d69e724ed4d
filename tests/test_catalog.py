"""The accelerator catalog: stated facts per family, GKE's topology rules, and invariants
that must hold for every entry (Hypothesis)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infra.catalog import tables as catalog
from infra.catalog.tables import UnknownAccelerator, all_accelerators, resolve

ROOT = Path(__file__).resolve().parent.parent

TPU_SEL = "cloud.google.com/gke-tpu-accelerator"
TOPO_SEL = "cloud.google.com/gke-tpu-topology"
GPU_SEL = "cloud.google.com/gke-accelerator"
TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}

ENTRIES = list(all_accelerators())
TPU_ENTRIES = [e for e in ENTRIES if e.kind == "tpu"]
ENTRY = st.sampled_from(ENTRIES)
TPU_ENTRY = st.sampled_from(TPU_ENTRIES)

# ---------------------------------------------------------------------------------------
# Stated facts.
# (name asked, canonical name, family, machine type, topology, chips/VM, VMs, accelerator label)

TPU_FACTS = [
    ("v4-8", "v4-8", "v4", "ct4p-hightpu-4t", "2x2x1", 4, 1, "tpu-v4-podslice"),
    ("v4-16", "v4-16", "v4", "ct4p-hightpu-4t", "2x2x2", 4, 2, "tpu-v4-podslice"),
    ("v4-32", "v4-32", "v4", "ct4p-hightpu-4t", "2x2x4", 4, 4, "tpu-v4-podslice"),
    ("v4-128", "v4-128", "v4", "ct4p-hightpu-4t", "4x4x4", 4, 16, "tpu-v4-podslice"),
    ("v5p-8", "v5p-8", "v5p", "ct5p-hightpu-4t", "2x2x1", 4, 1, "tpu-v5p-slice"),
    ("v5p-128", "v5p-128", "v5p", "ct5p-hightpu-4t", "4x4x4", 4, 16, "tpu-v5p-slice"),
    ("v5p-4x4x4", "v5p-128", "v5p", "ct5p-hightpu-4t", "4x4x4", 4, 16, "tpu-v5p-slice"),
    ("v5litepod-1", "v5litepod-1", "v5e", "ct5lp-hightpu-1t", "1x1", 1, 1,
     "tpu-v5-lite-podslice"),
    ("v5litepod-4", "v5litepod-4", "v5e", "ct5lp-hightpu-4t", "2x2", 4, 1,
     "tpu-v5-lite-podslice"),
    ("v5litepod-8", "v5litepod-8", "v5e", "ct5lp-hightpu-4t", "2x4", 4, 2,
     "tpu-v5-lite-podslice"),
    ("v5litepod-8-1vm", "v5litepod-8-1vm", "v5e", "ct5lp-hightpu-8t", "2x4", 8, 1,
     "tpu-v5-lite-podslice"),
    ("v5litepod-16", "v5litepod-16", "v5e", "ct5lp-hightpu-4t", "4x4", 4, 4,
     "tpu-v5-lite-podslice"),
    ("v5e-16", "v5litepod-16", "v5e", "ct5lp-hightpu-4t", "4x4", 4, 4, "tpu-v5-lite-podslice"),
    ("v5litepod-256", "v5litepod-256", "v5e", "ct5lp-hightpu-4t", "16x16", 4, 64,
     "tpu-v5-lite-podslice"),
    ("v6e-1", "v6e-1", "v6e", "ct6e-standard-1t", "1x1", 1, 1, "tpu-v6e-slice"),
    ("v6e-8-1vm", "v6e-8-1vm", "v6e", "ct6e-standard-8t", "2x4", 8, 1, "tpu-v6e-slice"),
    ("v6e-8x16", "v6e-128", "v6e", "ct6e-standard-4t", "8x16", 4, 32, "tpu-v6e-slice"),
    ("v6e-256", "v6e-256", "v6e", "ct6e-standard-4t", "16x16", 4, 64, "tpu-v6e-slice"),
    ("tpu7x-2", "tpu7x-2", "tpu7x", "tpu7x-standard-1t", "1x1x1", 1, 1, "tpu7x"),
    ("tpu7x-8", "tpu7x-8", "tpu7x", "tpu7x-standard-4t", "2x2x1", 4, 1, "tpu7x"),
    ("tpu7x-4x4x8", "tpu7x-256", "tpu7x", "tpu7x-standard-4t", "4x4x8", 4, 32, "tpu7x"),
    ("tpu7-2", "tpu7-2", "tpu7", "tpu7-standard-1t", "1x1x1", 1, 1, "tpu7"),
    ("tpu7-8", "tpu7-8", "tpu7", "tpu7-standard-4t", "2x2x1", 4, 1, "tpu7"),
    # TPU7 multi-host shapes, both name forms (xpk: AI-Hypercomputer/xpk
    # src/xpk/core/system_characteristics.py, prefix tpu7, machine tpu7-standard-4t,
    # generate_tpu_topologies(max_cubes=4), 2 TensorCores per chip).
    ("tpu7-16", "tpu7-16", "tpu7", "tpu7-standard-4t", "2x2x2", 4, 2, "tpu7"),
    ("tpu7-2x2x2", "tpu7-16", "tpu7", "tpu7-standard-4t", "2x2x2", 4, 2, "tpu7"),
    ("tpu7-32", "tpu7-32", "tpu7", "tpu7-standard-4t", "2x2x4", 4, 4, "tpu7"),
    ("tpu7-2x2x4", "tpu7-32", "tpu7", "tpu7-standard-4t", "2x2x4", 4, 4, "tpu7"),
    ("tpu7-64", "tpu7-64", "tpu7", "tpu7-standard-4t", "2x4x4", 4, 8, "tpu7"),
    ("tpu7-2x4x4", "tpu7-64", "tpu7", "tpu7-standard-4t", "2x4x4", 4, 8, "tpu7"),
    ("tpu7-128", "tpu7-128", "tpu7", "tpu7-standard-4t", "4x4x4", 4, 16, "tpu7"),
    ("tpu7-4x4x4", "tpu7-128", "tpu7", "tpu7-standard-4t", "4x4x4", 4, 16, "tpu7"),
    ("tpu7-256", "tpu7-256", "tpu7", "tpu7-standard-4t", "4x4x8", 4, 32, "tpu7"),
    ("tpu7-4x4x8", "tpu7-256", "tpu7", "tpu7-standard-4t", "4x4x8", 4, 32, "tpu7"),
    ("tpu7-384", "tpu7-384", "tpu7", "tpu7-standard-4t", "4x4x12", 4, 48, "tpu7"),
    ("tpu7-4x4x12", "tpu7-384", "tpu7", "tpu7-standard-4t", "4x4x12", 4, 48, "tpu7"),
    # 512 TensorCores is 4x8x8 (the more cube-like shape; xpk's default too); 4x4x16 only
    # in topology form.
    ("tpu7-512", "tpu7-512", "tpu7", "tpu7-standard-4t", "4x8x8", 4, 64, "tpu7"),
    ("tpu7-4x8x8", "tpu7-512", "tpu7", "tpu7-standard-4t", "4x8x8", 4, 64, "tpu7"),
    ("tpu7-4x4x16", "tpu7-4x4x16", "tpu7", "tpu7-standard-4t", "4x4x16", 4, 64, "tpu7"),
]


@pytest.mark.parametrize(
    "asked, name, family, machine, topology, per_vm, vms, label", TPU_FACTS,
    ids=[f[0] for f in TPU_FACTS])
def test_tpu_facts(asked: str, name: str, family: str, machine: str, topology: str,
                   per_vm: int, vms: int, label: str) -> None:
    e = resolve(asked)
    assert (e.name, e.kind, e.family, e.machine_type, e.topology) == (
        name, "tpu", family, machine, topology)
    assert (e.chips_per_vm, e.vms_per_slice, e.chips) == (per_vm, vms, per_vm * vms)
    assert e.multi_host is (vms > 1)
    assert e.node_selector == {TPU_SEL: label, TOPO_SEL: topology}
    assert e.resource_name == "google.com/tpu"
    assert e.taint is not None and e.taint.to_dict() == TPU_TAINT
    assert e.taint.toleration() == {"key": "google.com/tpu", "operator": "Equal",
                                    "value": "present", "effect": "NoSchedule"}
    assert e.networking == "none"


# (name, family, machine type, GPUs/VM, accelerator label, networking)
GPU_FACTS = [
    ("l4-1", "g2", "g2-standard-12", 1, "nvidia-l4", "none"),
    ("l4-2", "g2", "g2-standard-24", 2, "nvidia-l4", "none"),
    ("l4-4", "g2", "g2-standard-48", 4, "nvidia-l4", "none"),
    ("l4-8", "g2", "g2-standard-96", 8, "nvidia-l4", "none"),
    ("a100-40gb-1", "a2", "a2-highgpu-1g", 1, "nvidia-tesla-a100", "none"),
    ("a100-40gb-2", "a2", "a2-highgpu-2g", 2, "nvidia-tesla-a100", "none"),
    ("a100-40gb-4", "a2", "a2-highgpu-4g", 4, "nvidia-tesla-a100", "none"),
    ("a100-40gb-8", "a2", "a2-highgpu-8g", 8, "nvidia-tesla-a100", "none"),
    ("h100-80gb-8", "a3-high", "a3-highgpu-8g", 8, "nvidia-h100-80gb", "tcpx"),
    ("h100-mega-80gb-8", "a3-mega", "a3-megagpu-8g", 8, "nvidia-h100-mega-80gb", "tcpxo"),
    ("h200-141gb-8", "a3-ultra", "a3-ultragpu-8g", 8, "nvidia-h200-141gb", "rdma"),
    ("b200-8", "a4", "a4-highgpu-8g", 8, "nvidia-b200", "rdma"),
    ("gb200-4", "a4x", "a4x-highgpu-4g", 4, "nvidia-gb200", "rdma"),
    ("gb200-4-nolssd", "a4x", "a4x-highgpu-4g-nolssd", 4, "nvidia-gb200", "rdma"),
]
ARM = {"a4x"}  # GB200 hosts are Arm (Grace); xpk builds their images for linux/arm64
ARM_TAINT = {"key": "kubernetes.io/arch", "value": "arm64", "effect": "NoSchedule"}


@pytest.mark.parametrize("name, family, machine, gpus, label, networking", GPU_FACTS,
                         ids=[f[0] for f in GPU_FACTS])
def test_gpu_facts(name: str, family: str, machine: str, gpus: int, label: str,
                   networking: str) -> None:
    e = resolve(name)
    assert (e.name, e.kind, e.family, e.machine_type, e.topology) == (
        name, "gpu", family, machine, None)
    assert (e.chips_per_vm, e.vms_per_slice, e.chips, e.multi_host) == (gpus, 1, gpus, False)
    if family in ARM:
        # Arm nodes: GKE taints them kubernetes.io/arch=arm64:NoSchedule; the two A4X
        # machines share their GPU label, so the machine type tells their pools apart.
        assert e.node_selector == {GPU_SEL: label, "kubernetes.io/arch": "arm64",
                                   "node.kubernetes.io/instance-type": machine}
        assert [t.to_dict() for t in e.taints] == [GPU_TAINT, ARM_TAINT]
        assert e.arch == "arm64"
    else:
        assert e.node_selector == {GPU_SEL: label}
        assert [t.to_dict() for t in e.taints] == [GPU_TAINT]
        assert e.arch == "amd64"
    assert e.resource_name == "nvidia.com/gpu"
    assert e.taint is not None and e.taint.to_dict() == GPU_TAINT
    assert e.networking == networking
    assert resolve(machine) is e  # the machine type is an accepted name


def test_gpu_catalog_is_exactly_these_machines() -> None:
    assert sorted(e.name for e in ENTRIES if e.kind == "gpu") == sorted(f[0] for f in GPU_FACTS)


def test_cpu_pool() -> None:
    e = resolve("n2-standard-32-4")
    assert (e.name, e.kind, e.family, e.machine_type, e.topology) == (
        "n2-standard-32-4", "cpu", "cpu", "n2-standard-32", None)
    assert (e.chips_per_vm, e.vms_per_slice, e.chips, e.multi_host) == (32, 4, 128, True)
    assert e.node_selector == {"node.kubernetes.io/instance-type": "n2-standard-32"}
    assert (e.resource_name, e.taint, e.networking) == (None, None, "none")
    assert (e.arch, e.taints) == ("amd64", ())


@pytest.mark.parametrize("name", ["c4a-standard-8-2", "t2a-standard-4-1", "c4a-highmem-32-1"])
def test_arm_cpu_pools_select_and_tolerate_arm64(name: str) -> None:
    # Axion (C4A) and Ampere Altra (T2A) are Arm: GKE taints their nodes
    # kubernetes.io/arch=arm64:NoSchedule.
    e = resolve(name)
    assert e.arch == "arm64"
    assert e.node_selector["kubernetes.io/arch"] == "arm64"
    assert [t.to_dict() for t in e.taints] == [ARM_TAINT]


def test_tpus_are_x86_hosts() -> None:
    # xpk builds every TPU image for linux/amd64, TPU7 and TPU7x included.
    assert {e.arch for e in TPU_ENTRIES} == {"amd64"}
    assert all("kubernetes.io/arch" not in e.node_selector for e in TPU_ENTRIES)


def test_families() -> None:
    assert catalog.families() == ["v4", "v5e", "v5p", "v6e", "tpu7x", "tpu7", "g2", "a2",
                                  "a3-high", "a3-mega", "a3-ultra", "a4", "a4x", "cpu"]


def test_single_vm_machine_type_is_an_alias() -> None:
    assert resolve("ct5lp-hightpu-8t").name == "v5litepod-8-1vm"
    assert resolve("ct6e-standard-8t").name == "v6e-8-1vm"


# ---------------------------------------------------------------------------------------
# Topology rules.

SHAPES_2D = ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"]
MAX_CHIPS = {"v4": 4096, "v5p": 6144, "tpu7x": 9216, "tpu7": 256}
SUB_CUBES = {"2x2x1", "2x2x2", "2x2x4", "2x4x4"}


def _expected_3d(family: str) -> set[str]:
    """GKE's rule, enumerated independently of the catalog."""
    limit = MAX_CHIPS[family]
    out = set(SUB_CUBES) | ({"1x1x1"} if family in ("tpu7x", "tpu7") else set())
    for a in range(4, limit + 1, 4):
        for b in range(a, limit // a + 1, 4):
            for c in range(b, limit // (a * b) + 1, 4):
                out.add(f"{a}x{b}x{c}")
    return out


def _expected_valid_3d(family: str, a: int, b: int, c: int) -> bool:
    shape = f"{a}x{b}x{c}"
    if shape in SUB_CUBES or (family in ("tpu7x", "tpu7") and shape == "1x1x1"):
        return True
    return (a <= b <= c and a % 4 == 0 and b % 4 == 0 and c % 4 == 0
            and a * b * c <= MAX_CHIPS[family])


@pytest.mark.parametrize("family", ["v5e", "v6e"])
def test_2d_generations_offer_exactly_the_documented_shapes(family: str) -> None:
    assert catalog.topologies(catalog.generation(family)) == SHAPES_2D


@pytest.mark.parametrize("family", ["v4", "v5p", "tpu7x", "tpu7"])
def test_3d_topologies_follow_gke_rule(family: str) -> None:
    gen = catalog.generation(family)
    tops = catalog.topologies(gen)
    assert len(tops) == len(set(tops))
    assert set(tops) == _expected_3d(family)
    # Smallest first.
    sizes = [math.prod(int(d) for d in t.split("x")) for t in tops]
    assert sizes == sorted(sizes)


def test_tpu7_offers_xpks_shapes() -> None:
    assert catalog.topologies(catalog.generation("tpu7")) == [
        "1x1x1", "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x4x12", "4x8x8",
        "4x4x16"]
    # Multi-host TPU7 and TPU7x slices are placed by a workload policy, as in xpk.
    assert catalog.needs_workload_policy(resolve("tpu7-128"))
    assert catalog.needs_workload_policy(resolve("tpu7x-128"))
    assert not catalog.needs_workload_policy(resolve("tpu7-8"))
    assert not catalog.needs_workload_policy(resolve("v5p-128"))


@pytest.mark.parametrize("family", ["v4", "v5p", "tpu7x", "tpu7"])
@given(a=st.integers(1, 40), b=st.integers(1, 40), c=st.integers(1, 40))
def test_3d_topology_form_accepted_iff_rule_holds(family: str, a: int, b: int, c: int) -> None:
    name = f"{family}-{a}x{b}x{c}"
    expected = _expected_valid_3d(family, a, b, c)
    assert catalog.is_valid_3d(catalog.generation(family), (a, b, c)) is expected
    if expected:
        assert resolve(name).topology == f"{a}x{b}x{c}"
    else:
        with pytest.raises(UnknownAccelerator):
            resolve(name)


@pytest.mark.parametrize("family", ["v4", "v5p", "tpu7x", "tpu7"])
def test_3d_small_shapes_exhaustively(family: str) -> None:
    # Every shape up to 12 on a side, so the sub-cubes and near misses are always covered.
    # (Rejections through resolve() are covered by the Hypothesis test; each is slow.)
    gen = catalog.generation(family)
    offered = {e.topology for e in TPU_ENTRIES if e.family == family}
    for a, b, c in itertools.product(range(1, 13), repeat=3):
        shape = f"{a}x{b}x{c}"
        expected = _expected_valid_3d(family, a, b, c)
        assert catalog.is_valid_3d(gen, (a, b, c)) is expected, shape
        assert (shape in offered) is expected, shape
        if expected:
            assert resolve(f"{family}-{shape}").topology == shape


def test_is_valid_3d_agrees_with_topologies_for_tpu7() -> None:
    # Regression: is_valid_3d used to accept the multi-VM sub-cubes for single-VM-only tpu7.
    gen = catalog.generation("tpu7")
    tops = set(catalog.topologies(gen))
    for dims in itertools.product(range(1, 9), repeat=3):
        assert catalog.is_valid_3d(gen, dims) is ("x".join(map(str, dims)) in tops), dims


@pytest.mark.parametrize("family, prefix", [("v5e", "v5litepod"), ("v5e", "v5e"),
                                            ("v6e", "v6e")])
@given(a=st.integers(1, 32), b=st.integers(1, 32))
def test_2d_topology_form_accepted_iff_documented(family: str, prefix: str, a: int,
                                                  b: int) -> None:
    shape = f"{a}x{b}"
    if shape in SHAPES_2D:
        e = resolve(f"{prefix}-{shape}")
        assert (e.family, e.topology) == (family, shape)
    else:
        with pytest.raises(UnknownAccelerator):
            resolve(f"{prefix}-{shape}")


@pytest.mark.parametrize("name, family", [
    ("v5p-12", "v5p"), ("v5p-2x2x3", "v5p"), ("v4-4x4x6", "v4"), ("v6e-3", "v6e"),
    ("v5litepod-2x8", "v5e"), ("v5p-8x4x4", "v5p"), ("tpu7x-3", "tpu7x"), ("v4-4", "v4"),
])
def test_invalid_names_are_rejected_with_suggestions(name: str, family: str) -> None:
    with pytest.raises(UnknownAccelerator) as info:
        resolve(name)
    err = info.value
    assert err.name == name
    assert err.suggestions
    assert all(resolve(s).family == family for s in err.suggestions)
    assert str(err).startswith(f"'{name}' is not a ")


@pytest.mark.parametrize("name, message", [
    ("v5p-12", "'v5p-12' is not a TPU v5p slice; did you mean v5p-8 or v5p-16?"),
    ("v6e-3", "'v6e-3' is not a TPU v6e (Trillium) slice; did you mean v6e-1 or v6e-4?"),
    ("tpu7x-3", "'tpu7x-3' is not a TPU7x (Ironwood) slice; did you mean tpu7x-2 or tpu7x-8?"),
    ("v4-4", "'v4-4' is not a TPU v4 slice; did you mean v4-8?"),
    ("foo", "'foo' is not a known accelerator"),
])
def test_unknown_message(name: str, message: str) -> None:
    with pytest.raises(UnknownAccelerator) as info:
        resolve(name)
    assert str(info.value) == message


@pytest.mark.parametrize("name, message", [
    # Regression: the article was hard-coded ("is not an G2 (L4) machine").
    ("l4-3", "'l4-3' is not a G2 (L4) machine; did you mean l4-2 or l4-4?"),
    ("h100-80gb-4", "'h100-80gb-4' is not an A3 High (H100 80GB) machine; "
                    "did you mean h100-80gb-8?"),
])
def test_unknown_gpu_message(name: str, message: str) -> None:
    with pytest.raises(UnknownAccelerator) as info:
        resolve(name)
    assert str(info.value) == message


def test_unknown_gpu_count_suggests_neighbours() -> None:
    with pytest.raises(UnknownAccelerator) as info:
        resolve("a100-40gb-3")
    assert str(info.value) == ("'a100-40gb-3' is not an A2 (A100 40GB) machine; "
                               "did you mean a100-40gb-2 or a100-40gb-4?")


# ---------------------------------------------------------------------------------------
# Count form: the default topology for a chip count is the most cube-like.

@pytest.mark.parametrize("name, topology", [
    ("v5p-256", "4x4x8"), ("v5p-512", "4x8x8"), ("v5p-1024", "8x8x8"),
    ("v5p-2048", "8x8x16"), ("v5p-4096", "8x16x16"), ("v4-64", "2x4x4"),
    ("tpu7x-128", "4x4x4"),
])
def test_count_form_default_topology(name: str, topology: str) -> None:
    e = resolve(name)
    assert (e.name, e.topology) == (name, topology)
    assert resolve(f"{name.split('-')[0]}-{topology}") is e


@pytest.mark.parametrize("name, chips, default", [
    ("v5p-4x4x16", 256, "v5p-512"), ("v5p-4x4x32", 512, "v5p-1024"),
    ("v4-4x4x16", 256, "v4-512"), ("tpu7x-4x4x16", 256, "tpu7x-512"),
])
def test_non_default_topology_keeps_topology_form_name(name: str, chips: int,
                                                       default: str) -> None:
    e = resolve(name)
    assert (e.name, e.chips, e.aliases) == (name, chips, ())
    assert resolve(default).name == default and resolve(default) is not e
    assert resolve(default).chips == chips


# ---------------------------------------------------------------------------------------
# Properties over every catalog entry.

def _accepted(e: catalog.Accelerator) -> tuple[str, ...]:
    return (e.name, *e.aliases)


@given(ENTRY)
def test_every_accepted_name_resolves_to_its_entry(e: catalog.Accelerator) -> None:
    for n in _accepted(e):
        assert resolve(n) == e


@given(ENTRY, st.sampled_from(["", " ", "\t", "  \n"]), st.sampled_from(["", " ", "\n"]),
       st.booleans())
def test_resolve_is_case_insensitive_and_strips(e: catalog.Accelerator, lead: str,
                                                trail: str, upper: bool) -> None:
    name = e.name.upper() if upper else e.name.title()
    assert resolve(f"{lead}{name}{trail}") == e


@given(TPU_ENTRY)
def test_vms_times_chips_per_vm_is_topology_size(e: catalog.Accelerator) -> None:
    assert e.topology is not None
    assert e.vms_per_slice * e.chips_per_vm == math.prod(int(d) for d in e.topology.split("x"))
    assert e.chips == e.vms_per_slice * e.chips_per_vm


@given(TPU_ENTRY)
def test_count_and_topology_forms_resolve_alike(e: catalog.Accelerator) -> None:
    gen = catalog.generation(e.family)
    suffix = "-1vm" if e.name.endswith("-1vm") else ""
    count = e.chips * gen.cores_per_chip
    by_topology = resolve(f"{gen.prefixes[0]}-{e.topology}{suffix}")
    by_count = resolve(f"{gen.prefixes[0]}-{count}{suffix}")
    assert by_topology == e
    if e.name == f"{gen.prefixes[0]}-{count}{suffix}":
        assert by_count == e
    else:
        # A non-default shape: the count name is the most cube-like shape of that size.
        assert e.name == f"{gen.prefixes[0]}-{e.topology}{suffix}"
        assert by_count.chips == e.chips and by_count != e
        assert max(map(int, by_count.topology.split("x"))) <= max(  # type: ignore[union-attr]
            map(int, e.topology.split("x")))  # type: ignore[union-attr]
    for prefix in gen.prefixes[1:]:
        assert resolve(f"{prefix}-{e.topology}{suffix}") == e


@given(TPU_ENTRY)
def test_tpu_machine_and_vms(e: catalog.Accelerator) -> None:
    gen = catalog.generation(e.family)
    if e.vms_per_slice > 1:
        assert (e.machine_type, e.chips_per_vm) == (gen.host_machine, 4)
    else:
        assert e.chips_per_vm == e.chips


def test_names_are_unique_across_entries() -> None:
    names = [n for e in ENTRIES for n in _accepted(e)]
    assert len(names) == len(set(names))
    assert len({e.name for e in ENTRIES}) == len(ENTRIES)


REQUIRED_KEYS = ["name", "family", "machineType", "topology", "chipsPerVm", "vmsPerSlice",
                 "chips", "nodeSelector", "resourceName"]


@given(ENTRY)
def test_to_dict(e: catalog.Accelerator) -> None:
    d = e.to_dict()
    assert set(REQUIRED_KEYS) <= set(d)
    assert (d["name"], d["family"], d["machineType"]) == (e.name, e.family, e.machine_type)
    assert (d["chipsPerVm"], d["vmsPerSlice"], d["chips"]) == (
        e.chips_per_vm, e.vms_per_slice, e.chips_per_vm * e.vms_per_slice)
    assert isinstance(d["nodeSelector"], dict) and d["nodeSelector"] == e.node_selector
    assert d["resourceName"] == e.resource_name
    if e.kind == "tpu":
        assert d["topology"] is not None and d["nodeSelector"][TOPO_SEL] == d["topology"]
    else:
        assert d["topology"] is None


@given(ENTRY)
def test_multi_host_iff_more_than_one_vm(e: catalog.Accelerator) -> None:
    assert e.multi_host is (e.vms_per_slice > 1)
    assert e.to_dict()["multiHost"] is (e.vms_per_slice > 1)


def test_catalog_imports_no_pulumi() -> None:
    code = ("import infra.catalog.tables, sys; "
            "assert not any(m.startswith('pulumi') for m in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_local_ssd_facts() -> None:
    # Only machines whose Local SSD disk count is sourced (infra/catalog/tables.py LOCAL_SSD_DISKS)
    assert {m: catalog.local_ssd_disks(m) for m in catalog.LOCAL_SSD_DISKS} == {
        "a3-highgpu-8g": 16, "a3-megagpu-8g": 16, "a3-ultragpu-8g": 32}
    assert catalog.local_ssd_gib("a3-ultragpu-8g") == 12_000
    assert catalog.local_ssd_gib("a3-megagpu-8g") == 6_000
    for accel in catalog.all_accelerators():
        if accel.kind != "gpu" or accel.family not in ("a3-high", "a3-mega", "a3-ultra"):
            assert catalog.local_ssd_disks(accel.machine_type) == 0, accel.name
