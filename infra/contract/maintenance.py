"""When GKE may upgrade the cluster: its recurring maintenance window and its maintenance
exclusions, as the stack declares them (infra/config/maintenance.py checks them), and the
time arithmetic both sides need: the stack checks GKE's availability rule offline, the
submitter warns when a workload's time limit runs into the next window.

Part of the contract, optional and additive (no contract version change): outputs without
the ``maintenance`` key read as a stack that declares neither, so older outputs load
unchanged (as ``tensorboard`` was added, infra/contract/tensorboard.py). Pure data and
``datetime`` arithmetic; nothing here reads a clock.

Recurrences are RFC 5545 RRULEs; GKE's own examples use ``FREQ=DAILY`` and
``FREQ=WEEKLY;BYDAY=...`` (pulumi-gcp 10.2.0 ClusterMaintenancePolicyRecurringWindowArgs),
and this module understands exactly that subset (with ``INTERVAL``): ``rule`` says what it
does not understand, and the stack refuses it rather than leave it unchecked.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Iterator, Mapping

from infra.record import record

SCOPES = ("NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES")
# What each scope keeps from happening to the node pools (GKE API Scope enum,
# https://docs.cloud.google.com/kubernetes-engine/docs/reference/rest/Shared.Types/Scope):
# NO_MINOR_UPGRADES still lets patch upgrades reach the nodes.
STOPS_NODE_UPGRADES = ("NO_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES")
DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")  # RFC 5545 weekday codes, Monday first
MAX_INTERVAL = 52  # the longest period (weeks) the checks expand; GKE's examples use 1


@record
class Window:
    start: str  # RFC 3339, UTC ("Z"): the first occurrence's start
    end: str  # its end: the duration of every occurrence
    recurrence: str  # RRULE

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "recurrence": self.recurrence}


@record
class Exclusion:
    name: str
    start: str
    end: str
    scope: str

    @property
    def stops_node_upgrades(self) -> bool:
        return self.scope in STOPS_NODE_UPGRADES

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "start": self.start, "end": self.end, "scope": self.scope}


@record
class MaintenanceInfo:
    window: Window | None = None
    exclusions: tuple[Exclusion, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"window": self.window.to_dict() if self.window else None,
                "exclusions": [e.to_dict() for e in self.exclusions]}


@record
class Rule:
    freq: str  # DAILY or WEEKLY
    interval: int = 1
    days: tuple[int, ...] = ()  # weekday numbers (Monday 0); () = the start's weekday


def parse_time(text: str) -> datetime | None:
    """An RFC 3339 time with its offset (``Z`` or ``+HH:MM``), as an aware datetime."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def rule(text: str) -> Rule | str:
    """The recurrence as a Rule, or a message saying what is not understood."""
    parts: dict[str, str] = {}
    for part in text.split(";"):
        key, _, value = part.partition("=")
        if not value or key in parts:
            return f"{part!r} is not a KEY=VALUE part (or is given twice)"
        parts[key] = value
    freq = parts.pop("FREQ", "")
    if freq not in ("DAILY", "WEEKLY"):
        return f"FREQ={freq} is not checked offline (FREQ=DAILY or FREQ=WEEKLY are)"
    interval = parts.pop("INTERVAL", "1")
    if not interval.isdigit() or not 1 <= int(interval) <= MAX_INTERVAL:
        return f"INTERVAL={interval} is not a whole number of 1-{MAX_INTERVAL}"
    days: list[int] = []
    byday = parts.pop("BYDAY", None)
    for day in byday.split(",") if byday is not None else []:
        if day not in DAYS:
            return f"BYDAY {day!r} is not one of {', '.join(DAYS)}"
        days.append(DAYS.index(day))
    if parts:
        return (f"{', '.join(sorted(parts))} is not checked offline (FREQ, INTERVAL and "
                "BYDAY are)")
    if days and freq == "DAILY":
        return "BYDAY with FREQ=DAILY is not checked offline (use FREQ=WEEKLY;BYDAY=...)"
    return Rule(freq, int(interval), tuple(sorted(set(days))))


def occurrences(window: Window, since: datetime, until: datetime
                ) -> Iterator[tuple[datetime, datetime]]:
    """The window's occurrences (start, end) that end after ``since`` and start before
    ``until``, in order. Empty when the window does not parse (the config reports it)."""
    first, last = parse_time(window.start), parse_time(window.end)
    parsed = rule(window.recurrence)
    if first is None or last is None or isinstance(parsed, str) or last <= first:
        return
    length = last - first
    step = timedelta(days=parsed.interval if parsed.freq == "DAILY" else 7 * parsed.interval)
    days = parsed.days or (first.weekday(),)
    # The week (Monday-based) of the first occurrence; a WEEKLY rule recurs in its weeks.
    week0 = (first - timedelta(days=first.weekday())).replace(hour=0, minute=0, second=0,
                                                              microsecond=0)
    period = max(0, int((since - length - first) / step) - 1)  # start near ``since``
    while True:
        if parsed.freq == "DAILY":
            starts = [first + period * step]
        else:
            base = week0 + period * step
            starts = [base + timedelta(days=d, hours=first.hour, minutes=first.minute,
                                       seconds=first.second) for d in days]
        for start in starts:
            if start < first:
                continue
            if start >= until:
                return
            if start + length > since:
                yield start, start + length
        period += 1


def merged(spans: Iterator[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """Overlapping or touching spans joined (a daily window longer than a day is one)."""
    out: list[tuple[datetime, datetime]] = []
    for start, end in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def least_availability(window: Window, days: int, contiguous: timedelta) -> timedelta:
    """The least time the window leaves open in any ``days``-day span, counting only
    stretches of at least ``contiguous``: the quantity GKE's availability rule bounds. The
    least comes where a span begins just after a stretch (or its last countable part) ends,
    so those starts over one period of the rule are tried."""
    first = parse_time(window.start)
    parsed = rule(window.recurrence)
    if first is None or isinstance(parsed, str):
        return timedelta(0)
    span = timedelta(days=days)
    period = timedelta(days=parsed.interval * (1 if parsed.freq == "DAILY" else 7))
    horizon = first + period + span + period
    stretches = merged(occurrences(window, first, horizon))
    candidates = {first}
    for _, end in stretches:
        if end <= first + period + period:
            candidates.update({end, end - contiguous})
    least: timedelta | None = None
    for t in sorted(c for c in candidates if c >= first):
        total = timedelta(0)
        for start, end in stretches:
            part = min(end, t + span) - max(start, t)
            if part >= contiguous:
                total += part
        least = total if least is None else min(least, total)
    return least or timedelta(0)


def next_window(info: MaintenanceInfo, now: datetime, until: datetime
                ) -> tuple[datetime, datetime] | None:
    """The first occurrence of the window open at or after ``now`` (one already open
    counts) and before ``until``, skipping the parts that an exclusion stopping node
    upgrades covers whole; None when there is none or no window is declared."""
    if info.window is None:
        return None
    for start, end in occurrences(info.window, now, until):
        if not any(_covers(x, start, end) for x in info.exclusions if x.stops_node_upgrades):
            return start, end
    return None


def _covers(x: Exclusion, start: datetime, end: datetime) -> bool:
    a, b = parse_time(x.start), parse_time(x.end)
    return a is not None and b is not None and a <= start and end <= b


def exclusion_ends(info: MaintenanceInfo, now: datetime) -> list[tuple[Exclusion, datetime]]:
    """Exclusions in force at ``now`` that stop node upgrades, with their end."""
    out = []
    for x in info.exclusions:
        a, b = parse_time(x.start), parse_time(x.end)
        if a is not None and b is not None and a <= now < b and x.stops_node_upgrades:
            out.append((x, b))
    return out


def shown(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def load(data: Any, path: str, error: type[Exception]) -> MaintenanceInfo | None:
    """Read the ``maintenance`` value (None when absent); ``error`` names the bad field."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise error(f"{path}: not an object")
    window = data.get("window")
    if window is not None:
        window = Window(*_strings(window, f"{path}.window", ("start", "end", "recurrence"),
                                  error))
    raw = data.get("exclusions") or []
    if not isinstance(raw, list):
        raise error(f"{path}.exclusions: not a list")
    exclusions = []
    for i, item in enumerate(raw):
        name, start, end, scope = _strings(item, f"{path}.exclusions[{i}]",
                                           ("name", "start", "end", "scope"), error)
        if scope not in SCOPES:
            raise error(f"{path}.exclusions[{i}].scope: {scope!r} is not one of "
                        f"{', '.join(SCOPES)}")
        exclusions.append(Exclusion(name, start, end, scope))
    return MaintenanceInfo(window, tuple(exclusions))


def _strings(data: Any, path: str, keys: tuple[str, ...], error: type[Exception]
             ) -> list[str]:
    if not isinstance(data, Mapping):
        raise error(f"{path}: not an object")
    out = []
    for key in keys:
        value = data.get(key)
        if not isinstance(value, str) or parse_time(value) is None and key in ("start", "end"):
            raise error(f"{path}.{key}: {value!r} is not "
                        f"{'an RFC 3339 time' if key in ('start', 'end') else 'a string'}")
        out.append(value)
    return out


def summary_lines(info: MaintenanceInfo) -> list[str]:
    """What the preview's summary says: the window, and until when each exclusion keeps
    upgrades (node upgrades, or minor ones) out."""
    lines = []
    if info.window is not None:
        w = info.window
        a, b = parse_time(w.start), parse_time(w.end)
        hours = "" if a is None or b is None else f", {(b - a).total_seconds() / 3600:g}h"
        lines.append(f"maintenance window: {w.recurrence} from {w.start}{hours}")
    for x in info.exclusions:
        what = {"NO_UPGRADES": "no upgrades",
                "NO_MINOR_UPGRADES": "no minor upgrades (patches still reach the nodes)",
                "NO_MINOR_OR_NODE_UPGRADES": "no node upgrades (control-plane patches only)",
                }[x.scope]
        lines.append(f"maintenance exclusion {x.name}: {what} from {x.start} until {x.end}")
    return lines


def create_warning(info: MaintenanceInfo, now: datetime, seconds: float) -> str | None:
    """One line when a workload starting ``now`` and running ``seconds`` would still run
    when GKE may next upgrade nodes (the next window no exclusion covers); None otherwise."""
    until = now + timedelta(seconds=seconds)
    found = next_window(info, now, until)
    if found is None:
        return None
    start, _ = found
    ended = [x.name for x, end in exclusion_ends(info, now) if end <= start]
    after = f" (after maintenance exclusion {', '.join(ended)} ends)" if ended else ""
    return (f"warning: GKE may upgrade nodes in the maintenance window from {shown(start)}"
            f"{after}, before this workload's {seconds / 3600:g}h would end; a node upgrade "
            "restarts its slices (docs/maintenance.md)")
