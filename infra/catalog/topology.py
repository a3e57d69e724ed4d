"""TPU slice topologies: computed from GKE's rules, never listed by hand (but for 2-D
generations, whose shapes GKE lists), and the VM shapes each topology is made of.
"""

from __future__ import annotations


from infra.catalog.families import TpuGeneration
from infra.record import record


def dims(topology: str) -> tuple[int, ...]:
    return tuple(int(x) for x in topology.split("x"))


def product(dims: tuple[int, ...]) -> int:
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
    return product(dims) <= gen.max_chips


def sub_blocks(gen: TpuGeneration, topology: str) -> int | None:
    """How many of the generation's sub-blocks a dynamic slice of ``topology`` joins, or
    None when dynamic slicing cannot make that shape: each side a multiple of the
    sub-block's, sides non-decreasing, at most ``max_sub_blocks`` (families.py)."""
    if gen.sub_block is None:
        return None
    shape, block = dims(topology), dims(gen.sub_block)
    if len(shape) != len(block) or list(shape) != sorted(shape):
        return None
    if any(d < b or d % b for d, b in zip(shape, block)):
        return None
    count = product(shape) // product(block)
    return count if count <= gen.max_sub_blocks else None


def topologies(gen: TpuGeneration) -> list[str]:
    """Every slice shape of a generation, smallest first."""
    if gen.dims == 2:
        return list(gen.shapes_2d)
    found: list[tuple[int, ...]] = [dims(s) for s in gen.single_vm]
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
    found.sort(key=lambda d: (product(d), max(d), d))
    return ["x".join(map(str, d)) for d in found]


def squareness(dims: tuple[int, ...]) -> tuple[int, ...]:
    # The default shape for a chip count is the most cube-like one.
    return (max(dims), tuple(sorted(dims, reverse=True)))  # type: ignore[return-value]


@record
class Shape:
    gen: TpuGeneration
    topology: str
    machine_type: str
    chips_per_vm: int
    vms: int
    single_vm_variant: bool  # a single-VM shape that shares its count name with a multi-VM one


def tpu_shapes(gen: TpuGeneration) -> list[Shape]:
    out: list[Shape] = []
    for topo in topologies(gen):
        chips = product(dims(topo))
        single = gen.single_vm.get(topo)
        if single is not None and single != gen.host_machine:
            # A dedicated single-VM machine (ct5lp-hightpu-8t holds a whole 2x4 slice).
            out.append(Shape(gen, topo, single, chips, 1, single_vm_variant=chips > 4))
            if chips <= 4:
                continue
        if chips < 4:
            continue
        out.append(Shape(gen, topo, gen.host_machine, 4, chips // 4, single_vm_variant=False))
    return out


