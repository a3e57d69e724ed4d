"""The cost part of a preview: a stack's figures (infra.cost.price) from its evaluation, and
what changed in them against the snapshot, in $/hour, for the pull-request diff."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from infra.config.fleet import FleetConfig
from infra.config.pools import PoolsConfig
from infra.cost import price, table as prices
from infra.preview import harness


def figures(path: Path, ev: harness.Evaluation, tbl: prices.Table | None = None,
            host: dict[str, Any] | None = None) -> price.Figures:
    """What the evaluated stack costs per hour while it stands. ``host``: a pools stack's
    host outputs when the caller has them already (`submit run` evaluated them)."""
    tbl = tbl or prices.shipped()
    cfg = ev.config
    if isinstance(cfg, FleetConfig):
        return price.price_fleet(tbl)
    if isinstance(cfg, PoolsConfig):
        from infra.specs import pools as pools_spec

        # The pools are parsed against their host (its region and zones), as the program does.
        if host is None:
            host = harness.referenced_outputs(path.parent, cfg.host_stack) or {}
        plan = pools_spec.plan(cfg, host.get("accelstack"))
        return price.price_stack(plan.cfg, tbl, pools_only=True)
    return price.price_stack(cfg, tbl)


def summary_lines(cost: dict[str, Any]) -> list[str]:
    """The summary lines of a preview document's ``cost`` (as a snapshot holds it)."""
    fig = price.Figures(
        cost["kind"], cost["priceTableAsOf"],
        tuple(price.Line(x["part"], x["size"], x["mode"], x["perHour"], x["basis"])
              for x in cost.get("lines", [])),
        tuple(price.ClassRange(c["class"], c["perSlice"]["low"], c["perSlice"]["high"],
                               c["atLimits"]["chips"], c["atLimits"]["low"],
                               c["atLimits"]["high"], tuple(c["unknown"]))
              for c in cost.get("sliceClasses", [])))
    return price.summary_lines(fig)


def table_warnings(today: date | None = None) -> list[str]:
    """A warning when the shipped price table is older than its set age. ``today`` is the
    day it is read, or ACCELSTACK_TODAY (an ISO date) where that is set: the test suite
    sets it to the table's own date, so that its output does not change with the calendar."""
    if today is None:
        import os

        pinned = os.environ.get("ACCELSTACK_TODAY")
        today = date.fromisoformat(pinned) if pinned else date.today()
    warning = prices.shipped().age_warning(today)
    return [warning] if warning else []


def _usd(value: Any) -> str:
    return price.usd(value if isinstance(value, (int, float)) else None)


def _total(cost: dict[str, Any]) -> str:
    per_hour = cost.get("perHour") or {}
    return price.total_text(float(per_hour.get("total") or 0.0),
                            per_hour.get("unknownParts") or [])


def diff(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """Each standing part whose $/hour changed (added, removed, resized, repriced), and the
    stack's total before and after; nothing when the figures are the same."""
    if (old or None) == (new or None):
        return []
    a = {line["part"]: line for line in (old or {}).get("lines", [])}
    b = {line["part"]: line for line in (new or {}).get("lines", [])}
    lines = ["~ cost ($/hour while the stack stands)"]
    for part in sorted(b.keys() - a.keys()):
        lines.append(f"    + {part}: {_usd(b[part]['perHour'])} ({b[part]['size']}; "
                     f"{b[part]['mode']})")
    for part in sorted(a.keys() - b.keys()):
        lines.append(f"    - {part}: {_usd(a[part]['perHour'])} ({a[part]['size']})")
    for part in sorted(a.keys() & b.keys()):
        x, y = a[part], b[part]
        if (x["perHour"], x["size"], x["mode"]) == (y["perHour"], y["size"], y["mode"]):
            continue
        change = ""
        if isinstance(x["perHour"], (int, float)) and isinstance(y["perHour"], (int, float)):
            delta = y["perHour"] - x["perHour"]
            change = f" ({'+' if delta >= 0 else '-'}{price.usd(abs(delta))})"
        lines.append(f"    ~ {part}: {_usd(x['perHour'])} -> {_usd(y['perHour'])}{change}"
                     f" ({x['size']}; {x['mode']} -> {y['size']}; {y['mode']})")
    ca = {c["class"]: c for c in (old or {}).get("sliceClasses", [])}
    cb = {c["class"]: c for c in (new or {}).get("sliceClasses", [])}
    for name in sorted(ca.keys() | cb.keys()):
        if ca.get(name) != cb.get(name):
            lines.append(f"    ~ slice class {name}: at its limits "
                         f"{_span(ca.get(name))} -> {_span(cb.get(name))}")
    lines.append(f"    total: {_total(old or {})} -> {_total(new or {})}")
    return lines


def _span(cls: dict[str, Any] | None) -> str:
    if cls is None:
        return "(absent)"
    full = cls.get("atLimits") or {}
    return f"{_usd(full.get('low'))}-{_usd(full.get('high'))}/hour"
