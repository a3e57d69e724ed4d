"""A stack's cost per hour from its typed config and the price table: pure arithmetic.

What a stack holds while it stands, each part at its largest size: a slice pool (slices x
VMs per slice; a TPU pool priced per chip), the system pool (its maximum nodes in every
zone: GKE's ``max_node_count`` is per zone), the Pathways head pool, and GKE's cluster fee
(a pools stack adds pools to another stack's cluster and pays no fee of its own). Slice
classes hold nothing while idle, so they stay out of the total: each gets a range, from
its cheapest to its dearest priority, per slice and at its limits.

Capacity modes: a reservation is priced as committed use (the table's 1-year committed
figure, or the on-demand rate where it has none) and labelled so, never as free; queued
provisioning is priced at flex-start rates. A part whose price is not in the table is
unknown: it is listed, never counted as zero, and a total with unknown parts says so.
"""

from __future__ import annotations

from typing import Any, Iterable

from infra.catalog.tables import Accelerator
from infra.config.slice_classes import SliceClass
from infra.config.slices import SlicePool
from infra.config.stack import StackConfig
from infra.cost.table import CLUSTER_FEE, Price, Table
from infra.record import record


@record
class Rate:
    """What one unit of a thing costs in one capacity mode, or why that is unknown."""

    item: str
    unit: str
    mode: str  # the capacity mode as configured
    price: Price | None
    label: str  # how the mode is priced ("spot", "reservation, priced as ...")

    def missing(self, region: str | None) -> str:
        where = f" in {region}" if region else ""
        return f"no {self.item} {self.label} price{where} in the table"


def rate(table: Table, accel: Accelerator, mode: str, region: str | None) -> Rate:
    """The rate of one unit of ``accel`` (a TPU chip, or a whole VM) in ``mode``."""
    item, unit = ((f"tpu/{accel.family}", "chip-hour") if accel.kind == "tpu"
                  else (f"vm/{accel.machine_type}", "vm-hour"))
    return _rate(table, item, unit, mode, region)


def _rate(table: Table, item: str, unit: str, mode: str, region: str | None) -> Rate:
    if mode == "reservation":
        for committed in ("committed-1y", "on-demand"):
            found = table.find(item, region, committed)
            if found is not None:
                return Rate(item, unit, mode, found,
                            f"reservation, priced as committed use ({committed} rate)")
        return Rate(item, unit, mode, None, "reservation (committed-1y or on-demand)")
    if mode == "queued":
        return Rate(item, unit, mode, table.find(item, region, "flex-start"),
                    "queued provisioning, at flex-start rates")
    return Rate(item, unit, mode, table.find(item, region, mode), mode)


def units(accel: Accelerator, slices: int) -> int:
    """Priced units in ``slices`` slices: chips of a TPU, VMs otherwise."""
    return slices * (accel.chips if accel.kind == "tpu" else accel.vms_per_slice)


@record
class Line:
    """One standing part of a stack and what it costs per hour at its largest size."""

    part: str  # "pool v5p-128", "system pool", "cluster fee"
    size: str  # what is priced: "16 VMs (64 chips), 64 chip-hours per hour"
    label: str  # the mode as priced
    per_hour: float | None  # None: unknown
    basis: str  # "64 x $4.20/chip-hour (SOURCE (DATE))", or why it is unknown

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part, "size": self.size, "mode": self.label,
                "perHour": _round(self.per_hour), "basis": self.basis}


@record
class ClassRange:
    """A slice class: from its cheapest to its dearest priority, per slice and when full."""

    name: str
    slice_low: float | None
    slice_high: float | None
    full_chips: int  # chips at its limits (chips and slices at once)
    full_low: float | None
    full_high: float | None
    unknown: tuple[str, ...]  # the shape/mode pairs the table has no price for

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.name,
                "perSlice": {"low": _round(self.slice_low), "high": _round(self.slice_high)},
                "atLimits": {"chips": self.full_chips, "low": _round(self.full_low),
                             "high": _round(self.full_high)},
                "unknown": list(self.unknown)}


@record
class Figures:
    """What a stack costs per hour while it stands, part by part."""

    kind: str  # "cluster", "pools" or "fleet"
    table_as_of: str
    lines: tuple[Line, ...] = ()
    classes: tuple[ClassRange, ...] = ()

    @property
    def known_total(self) -> float:
        return sum(line.per_hour for line in self.lines if line.per_hour is not None)

    @property
    def unknown(self) -> tuple[str, ...]:
        return tuple(line.part for line in self.lines if line.per_hour is None)

    def total_text(self) -> str:
        return total_text(self.known_total, self.unknown)

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "fleet":
            return {"priceTableAsOf": self.table_as_of, "kind": self.kind, "perHour": None,
                    "note": "a fleet stack prices nothing of its own"}
        return {"priceTableAsOf": self.table_as_of, "kind": self.kind,
                "perHour": {"total": round(self.known_total, 4),
                            "complete": not self.unknown, "unknownParts": list(self.unknown)},
                "lines": [line.to_dict() for line in self.lines],
                "sliceClasses": [c.to_dict() for c in self.classes]}


def total_text(known: float, unknown: Iterable[str]) -> str:
    """``$12.34/hour``, or ``at least $12.34/hour + unknown (2 parts unpriced: a, b)``."""
    parts = list(unknown)
    if not parts:
        return f"{usd(known)}/hour"
    lead = f"at least {usd(known)}/hour + unknown" if known else "unknown"
    return (f"{lead} ({len(parts)} part"
            f"{'s' if len(parts) != 1 else ''} unpriced: {', '.join(parts)})")


def usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _line(part: str, size: str, n: int, r: Rate, region: str | None) -> Line:
    if r.price is None:
        return Line(part, size, r.label, None, f"unknown: {r.missing(region)}")
    return Line(part, size, r.label, n * r.price.usd,
                f"{n} x ${r.price.usd:g}/{r.unit} ({r.item}, {r.price.cite()})")


def pool_line(table: Table, pool: SlicePool, region: str | None, part: str) -> Line:
    """A slice pool at its largest size: every slice of it, every VM of each."""
    accel = pool.accelerator
    n = units(accel, pool.count)
    vms = pool.count * accel.vms_per_slice
    size = (f"{pool.count} x {accel.name}: {vms} VMs, {n} chips" if accel.kind == "tpu"
            else f"{pool.count} x {accel.name}: {vms} x {accel.machine_type}")
    return _line(part, size, n, rate(table, accel, pool.capacity.mode, region), region)


def class_range(table: Table, cls: SliceClass, region: str | None) -> ClassRange:
    """Every shape of the class in every one of its capacity modes, cheapest to dearest."""
    per_slice: list[float] = []
    per_chip: list[float] = []
    unknown: list[str] = []
    for shape in cls.shapes:
        for cap in cls.capacity:
            r = rate(table, shape, cap.mode, region)
            if r.price is None:
                unknown.append(f"{shape.name} {r.label}")
                continue
            cost = units(shape, 1) * r.price.usd
            per_slice.append(cost)
            per_chip.append(cost / shape.chips)
    full = min(cls.max_chips, cls.max_slices * max(s.chips for s in cls.shapes))
    return ClassRange(cls.name, min(per_slice, default=None), max(per_slice, default=None),
                      full, full * min(per_chip) if per_chip else None,
                      full * max(per_chip) if per_chip else None,
                      tuple(dict.fromkeys(unknown)))


def price_stack(cfg: StackConfig, table: Table, *, pools_only: bool = False) -> Figures:
    """A cluster stack's figures; ``pools_only`` for a pools stack (its own slice pools and
    classes on another stack's cluster: no system pool, no cluster fee)."""
    region = cfg.region
    head = cfg.pathways.head_pool if cfg.pathways else None
    lines = [pool_line(table, p, region,
                       f"{'Pathways head pool' if p.name == head else 'pool'} {p.name}")
             for p in cfg.slices if not p.foreign]  # another team's pools are theirs
    in_cluster = cfg.adopt.controller_pool is not None  # no GCP resource of its own
    if not pools_only and not in_cluster:
        sp = cfg.system_pool
        # max_node_count is "Maximum number of nodes for one location in the node pool"
        # (google.container.v1.NodePoolAutoscaling; https://cloud.google.com/php/docs/
        # reference/cloud-container/latest/V1.NodePoolAutoscaling): one per zone.
        nodes = sp.max_nodes * len(cfg.zones)
        lines.append(_line("system pool", f"{nodes} x {sp.machine_type} ({sp.max_nodes} "
                           f"per zone, {len(cfg.zones)} zone{'s' if len(cfg.zones) != 1 else ''})",
                           nodes, _rate(table, f"vm/{sp.machine_type}", "vm-hour",
                                        "on-demand", region), region))
        lines.append(_line("cluster fee", "1 regional cluster", 1,
                           _rate(table, CLUSTER_FEE, "cluster-hour", "on-demand", region),
                           region))
    classes = tuple(class_range(table, c, region) for c in cfg.slice_classes)
    return Figures("pools" if pools_only else "in-cluster" if in_cluster else "cluster",
                   table.as_of.isoformat(),
                   tuple(lines), classes)


def price_fleet(table: Table) -> Figures:
    """A fleet stack declares no cluster and no pool: it prices nothing of its own (its
    workers' stacks carry their own figures)."""
    return Figures("fleet", table.as_of.isoformat())


def summary_lines(fig: Figures) -> list[str]:
    """The figures as the preview prints them, one line per part."""
    if fig.kind == "fleet":
        return ["cost: a fleet stack prices nothing of its own (see its workers' stacks)"]
    out = [f"cost: {fig.total_text()} while it stands (price table of {fig.table_as_of})"]
    for line in fig.lines:
        out.append(f"  {usd(line.per_hour) + '/hour':>16}  {line.part}: {line.size}; "
                   f"{line.label}; {line.basis}")
    for c in fig.classes:
        missing = f"; unpriced: {', '.join(c.unknown)}" if c.unknown else ""
        out.append(f"  slice class {c.name}: {_span(c.slice_low, c.slice_high)}/hour per "
                   f"slice, {_span(c.full_low, c.full_high)}/hour at its limits "
                   f"({c.full_chips} chips); nothing while idle{missing}")
    return out


def _span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "unknown"
    return usd(low) if low == high else f"{usd(low)}-{usd(high)}"
