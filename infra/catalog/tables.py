"""The accelerator catalog: the one table of TPU, GPU and CPU slice types, and its lookups.

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
from functools import lru_cache
from typing import Any, Iterator

from infra.catalog import machine_shapes
from infra.lazy_re import later
from infra.record import record
# The facts the entries are built from, re-exported: readers of the catalog look them up here.
from infra.catalog.families import GPU_MODELS as GPU_MODELS
from infra.catalog.families import TPU_GENERATIONS as TPU_GENERATIONS
from infra.catalog.families import GpuModel as GpuModel
from infra.catalog.families import TpuGeneration as TpuGeneration
from infra.catalog.labels import ARCH_LABEL as ARCH_LABEL
from infra.catalog.labels import ARM64 as ARM64
from infra.catalog.labels import ARM_CPU_SERIES as ARM_CPU_SERIES
from infra.catalog.labels import ARM_TAINT as ARM_TAINT
from infra.catalog.labels import GPU_ACCELERATOR_LABEL as GPU_ACCELERATOR_LABEL
from infra.catalog.labels import GPU_RESOURCE as GPU_RESOURCE
from infra.catalog.labels import GPU_TAINT as GPU_TAINT
from infra.catalog.labels import MACHINE_TYPE_LABEL as MACHINE_TYPE_LABEL
from infra.catalog.labels import SINGLE_VM_SUFFIX as SINGLE_VM_SUFFIX
from infra.catalog.labels import TPU_ACCELERATOR_LABEL as TPU_ACCELERATOR_LABEL
from infra.catalog.labels import TPU_RESOURCE as TPU_RESOURCE
from infra.catalog.labels import TPU_TAINT as TPU_TAINT
from infra.catalog.labels import TPU_TOPOLOGY_LABEL as TPU_TOPOLOGY_LABEL
from infra.catalog.labels import Taint as Taint
from infra.catalog.machines import CPU_GB_PER_VCPU as CPU_GB_PER_VCPU
from infra.catalog.machines import LOCAL_SSD_DISK_GIB as LOCAL_SSD_DISK_GIB
from infra.catalog.machines import LOCAL_SSD_DISKS as LOCAL_SSD_DISKS
from infra.catalog.machines import MACHINE_SHAPES as MACHINE_SHAPES
from infra.catalog.machines import VmShape as VmShape
from infra.catalog.machines import local_ssd_disks as local_ssd_disks
from infra.catalog.machines import local_ssd_gib as local_ssd_gib
from infra.catalog.machines import vm_shape as vm_shape
from infra.catalog.topology import dims, is_valid_3d as is_valid_3d, product, squareness
from infra.catalog.topology import topologies as topologies, tpu_shapes
from infra.catalog.topology import sub_blocks as _sub_blocks
_CPU_RE = later(r"^(?P<machine>(?P<series>[a-z][a-z0-9]*)-(?P<shape>[a-z]+)-(?P<vcpus>\d+))"
                     r"-(?P<vms>\d+)\Z")
CPU_FAMILY = "cpu"


@record
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
            "subBlocks": sub_blocks(self),
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
    shapes = tpu_shapes(gen)
    default_for_count: dict[int, str] = {}
    for s in shapes:
        if s.single_vm_variant:
            continue
        chips = product(dims(s.topology))
        best = default_for_count.get(chips)
        if best is None or squareness(dims(s.topology)) < squareness(dims(best)):
            default_for_count[chips] = s.topology
    for s in shapes:
        chips = product(dims(s.topology))
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


def sub_blocks(accel: Accelerator) -> int | None:
    """The sub-blocks a dynamic slice of this shape joins (TPU7x 4x4x4 cubes), or None
    when dynamic slicing does not make it (infra/catalog/families.py sub_block)."""
    if accel.kind != "tpu" or accel.topology is None:
        return None
    return _sub_blocks(generation(accel.family), accel.topology)


def sub_block_accelerator(family: str) -> Accelerator | None:
    """The catalog entry of one sub-block of a generation (tpu7x-4x4x4), or None."""
    gen = generation(family)
    if gen.sub_block is None:
        return None
    return resolve(f"{gen.prefixes[0]}-{gen.sub_block}")


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
