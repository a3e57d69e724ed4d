"""A slice pool's ``dynamicSlicing`` section: TPU7x sub-blocks that GKE joins into slices.

An All Capacity mode reservation hands out TPU7x capacity as sub-blocks: 4x4x4 cubes of
16 VMs whose inter-chip links are not connected. The stack declares one node pool per
sub-block (bound to it by its full reservation path) and GKE's slice controller connects
the sub-blocks a workload is given into the slice shape it asked for, when it is
scheduled. The pool names the sub-blocks and the shapes its workloads may ask for; every
GKE rule that would otherwise fail at apply or at scheduling time is checked here, with
its source:

- GKE "Configure TPUs with GKE dynamic slicing" (https://docs.cloud.google.com/
  kubernetes-engine/docs/how-to/use-gke-dynamic-slicing, Requirements): a Standard
  cluster on the Rapid channel, 1.35.2-gke.1842000 or later for slices of 4x4x4 and
  larger; TPU7x; Container-Optimized OS nodes; All Capacity mode reservations; JobSet
  v0.10.1 or later.
- Slice shapes 4i x 4j x 4k, i <= j <= k, at most 144 sub-blocks, and Kueue 0.15.2 or
  later: AI-Hypercomputer/xpk src/xpk/core/scheduling.py (_check_super_slicing_topology,
  _SUPER_SLICING_MINIMUM_KUEUE_VERSION); the arithmetic lives in the catalog
  (infra/catalog/topology.py sub_blocks).
- A sub-block backs one node pool: GKE maps "a node pool directly to a sub-block" (same
  page, "What is dynamic slicing?"), so a sub-block named twice is refused.

Pure; no pulumi. infra/config/slices.py calls ``parse`` for an entry that has the key.
"""

from __future__ import annotations

from typing import Any, MutableMapping, Sequence

from infra.catalog import tables as catalog
from infra.catalog.gke_versions import GkeVersion, below, shown, version_tuple
from infra.catalog.tables import Accelerator
from infra.config.errors import one_of, show
from infra.config.fields import GKE_NAME
from infra.config.reader import Reader
from infra.record import record

KEYS = ("reservationBlocks", "shapes", "imageType")
BLOCK_KEYS = ("name", "subBlocks")
PAGE = "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/use-gke-dynamic-slicing"
CHANNEL = "RAPID"
MIN_VERSION = (1, 35, 2, 1842000)  # super-slicing: slices of 4x4x4 and larger
MIN_KUEUE = (0, 15, 2)
MIN_JOBSET = (0, 10, 1)
# GKE's node image types of Container-Optimized OS (the stack's nodes run COS_CONTAINERD:
# infra/specs/nodepool.py IMAGE_TYPE); the field is only there to refuse another image.
COS_IMAGES = ("COS_CONTAINERD",)


@record
class SubBlock:
    """One reservation sub-block, the capacity of one node pool."""

    block: str
    name: str

    def path(self, reservation: str) -> str:
        """Its full path, the value a node pool's reservation affinity names."""
        return f"{reservation}/reservationBlocks/{self.block}/reservationSubBlocks/{self.name}"


@record
class DynamicSlicing:
    """A pool's sub-blocks (node pool i consumes ``sub_blocks[i]``) and the slice shapes
    (topologies, smallest first) its workloads may ask the slice controller for."""

    sub_blocks: tuple[SubBlock, ...]
    shapes: tuple[str, ...]


def sub_blocks_per_block(subs: Sequence[SubBlock]) -> dict[str, int]:
    """How many of ``subs`` each reservation block holds (a slice's sub-blocks share one)."""
    out: dict[str, int] = {}
    for sb in subs:
        out[sb.block] = out.get(sb.block, 0) + 1
    return out


def parse(r: Reader, value: Any, entry: str, accel: Accelerator, mode: str,
          reservation: str | None, block: str | None, count: int | None,
          used: MutableMapping[str, str]) -> DynamicSlicing | None:
    """The section of the slice entry at ``entry`` (of ``accel``); ``count`` is the entry's
    own count when it gives one; ``used`` maps each sub-block path already claimed to where
    (across the stack's pools). None when refused (the problems are on ``r``)."""
    before = len(r.problems)
    path = f"{entry}.dynamicSlicing"
    raw = r.obj(value, path, KEYS)
    if not raw:
        if before == len(r.problems):
            r.fail(path, "is empty; list the reservation's sub-blocks (reservationBlocks) "
                   "and the slice shapes workloads may ask for (shapes)")
        return None
    sub_block = catalog.sub_block_accelerator(accel.family) if accel.kind == "tpu" else None
    if sub_block is None or sub_block.name != accel.name:
        wanted = "tpu7x-4x4x4"
        r.fail(f"{entry}.accelerator",
               f"{show(accel.name)}: a dynamic slicing pool holds sub-blocks; set accelerator "
               f"to {wanted} (one 4x4x4 TPU7x cube per node pool; GKE: {PAGE})")
    if mode != "reservation":
        r.fail(f"{entry}.capacity.mode",
               f"{show(mode)}: dynamic slicing runs on sub-blocks of an All Capacity mode "
               f"reservation; set mode: reservation ({PAGE}, Requirements)")
    if block is not None:
        r.fail(f"{entry}.capacity.block",
               "a dynamic slicing pool names its blocks under dynamicSlicing."
               "reservationBlocks; remove capacity.block")
    image = r.get(raw, "imageType", path, str, default=COS_IMAGES[0])
    if image.upper() not in COS_IMAGES:
        r.fail(f"{path}.imageType", f"{show(image)}: dynamic slicing needs Container-Optimized "
               f"OS nodes (GKE: {PAGE}, Requirements); allowed: {one_of(COS_IMAGES)}")
    listed = len(r.problems)
    subs = _sub_blocks(r, raw, path, reservation or "", used)
    if count is not None and subs and count != len(subs):
        r.fail(f"{entry}.count",
               f"{count} differs from the {len(subs)} sub-blocks listed under "
               "dynamicSlicing.reservationBlocks; remove count (one node pool per sub-block)")
    per_block = sub_blocks_per_block(subs)
    # A refused sub-block leaves the count unknown: shapes are not measured against it.
    most = max(per_block.values(), default=0) if len(r.problems) == listed else None
    shapes = _shapes(r, raw, path, accel, most)
    if len(r.problems) > before:
        return None
    return DynamicSlicing(sub_blocks=tuple(subs), shapes=tuple(shapes))


def _sub_blocks(r: Reader, raw: dict[str, Any], path: str, reservation: str,
                used: MutableMapping[str, str]) -> list[SubBlock]:
    out: list[SubBlock] = []
    blocks = r.get(raw, "reservationBlocks", path, list, required=True) or []
    if "reservationBlocks" in raw and not blocks:
        r.fail(f"{path}.reservationBlocks", "must list at least one reservation block")
    for j, item in enumerate(blocks):
        where = f"{path}.reservationBlocks[{j}]"
        entry = r.obj(item, where, BLOCK_KEYS)
        name = r.get(entry, "name", where, str, required=True)
        names = r.get(entry, "subBlocks", where, list, required=True) or []
        if name is not None and not GKE_NAME.match(name):
            r.fail(f"{where}.name", f"{show(name)} is not a reservation block name")
            name = None
        if "subBlocks" in entry and not names:
            r.fail(f"{where}.subBlocks", "must list at least one sub-block")
        for k, sub in enumerate(names):
            at = f"{where}.subBlocks[{k}]"
            if not isinstance(sub, str) or not GKE_NAME.match(sub):
                r.fail(at, f"{show(sub)} is not a reservation sub-block name")
                continue
            if name is None:
                continue
            found = SubBlock(block=name, name=sub)
            key = found.path(reservation)
            if key in used:
                r.fail(at, f"sub-block {show(f'{name}/{sub}')} is already used by {used[key]}; "
                       "a sub-block backs one node pool (GKE maps a node pool to a sub-block)")
                continue
            used[key] = at
            out.append(found)
    return out


def _shapes(r: Reader, raw: dict[str, Any], path: str, accel: Accelerator,
            most: int | None) -> list[str]:
    """The shapes, smallest first; ``most``: the most sub-blocks the pool has in one
    block (None: not known)."""
    shapes = r.get(raw, "shapes", path, list, required=True) or []
    if "shapes" in raw and not shapes:
        r.fail(f"{path}.shapes", "must list at least one slice shape, such as 4x4x4")
    gen = catalog.generation(accel.family) if accel.kind == "tpu" else None
    out: list[str] = []
    for k, shape in enumerate(shapes):
        at = f"{path}.shapes[{k}]"
        text = str(shape).strip().lower()
        if not isinstance(shape, str) or gen is None or gen.sub_block is None:
            r.fail(at, f"{show(shape)} is not a slice shape such as 4x4x8")
            continue
        if text.startswith(f"{gen.prefixes[0]}-"):
            text = text.split("-", 1)[1]  # tpu7x-4x8x8 names the shape 4x8x8
        needed = _needed(gen, text)
        if needed is None:
            r.fail(at, f"{show(shape)} is not a dynamic slice shape: 4i x 4j x 4k (multiples "
                   f"of the {gen.sub_block} sub-block), i <= j <= k, at most "
                   f"{gen.max_sub_blocks} sub-blocks (e.g. 4x4x4, 4x4x8, 4x8x8, 8x8x8)")
            continue
        if most is not None and needed > most:
            # GKE's TPU slice controller (tpu-slice-controller, its JobSet webhook:
            # annotateReplicatedJobWithTopology) asks Kueue for all of a slice's pods
            # in one cloud.google.com/gce-topology-block (podset-required-topology), so a
            # slice is made of the sub-blocks of one reservation block. GKE's All Capacity
            # mode page agrees: a block holds 144 sub-blocks (9,216 chips), the largest
            # dynamic slice (https://docs.cloud.google.com/kubernetes-engine/docs/how-to/
            # tpu-all-capacity-mode, terminology table).
            r.fail(at, f"{show(shape)} joins {needed} sub-blocks; the pool declares at most "
                   f"{most} in one reservation block (dynamicSlicing.reservationBlocks;"
                   " a slice's sub-blocks share a block)")
            continue
        if text in out:
            r.fail(at, f"{show(shape)} is listed twice")
            continue
        out.append(text)
    out.sort(key=lambda s: (catalog.resolve(f"{gen.prefixes[0]}-{s}").chips if gen else 0, s))
    return out


def _needed(gen: catalog.TpuGeneration, text: str) -> int | None:
    """The sub-blocks a slice of ``text`` joins (the catalog's rule), or None."""
    parts = text.split("x")
    if len(parts) != gen.dims or not all(p.isdigit() and int(p) > 0 for p in parts):
        return None
    try:
        entry = catalog.resolve(f"{gen.prefixes[0]}-{text}")
    except catalog.UnknownAccelerator:
        return None  # not a slice of the generation at all (e.g. 8x4x4)
    return catalog.sub_blocks(entry)


def check_cluster(r: Reader, path: str, channel: str | None, version: GkeVersion | None) -> None:
    """The cluster a dynamic slicing pool needs: the Rapid channel, a version new enough."""
    if channel != CHANNEL:
        r.fail(path, f"dynamic slicing needs the {CHANNEL} release channel (GKE: {PAGE}, "
               f"Requirements); releaseChannel is {channel or 'unset'}: set releaseChannel: "
               f"{CHANNEL}")
    least = shown(MIN_VERSION)
    if version is not None and below(version.text, least):
        r.fail(path, f"dynamic slicing (slices of 4x4x4 and larger) needs GKE {least} or "
               f"later ({PAGE}, Requirements); {version.said()}")


def check_addons(r: Reader, jobset_version: str, kueue_version: str) -> None:
    """JobSet and Kueue versions new enough for the slice controller's admission check."""
    for key, have, least, source in (
            ("addons.jobsetVersion", jobset_version, MIN_JOBSET, PAGE),
            ("addons.kueueVersion", kueue_version, MIN_KUEUE,
             "AI-Hypercomputer/xpk src/xpk/core/scheduling.py")):
        if version_tuple(have)[:3] < least:
            r.fail(key, f"{show(have)}: a dynamic slicing pool needs "
                   f"v{'.'.join(map(str, least))} or later ({source})")
