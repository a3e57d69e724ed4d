"""What a `submit run` costs: the figures of the stack it brings up, per hour and bounded
by its time limit, before anything is made; and what it cost for the time it held the
capacity, after. Pure: the run's stack config (namespaced keys, as the run's plan holds
them) in, lines of text and numbers out; `submit run` prints them and refuses a run whose
bound is over ``--max-cost``.

A run on a pools stack (``accelstack:onCluster``) is priced from its own slices only: the
host's region is not known before the host's outputs are read, so only prices the table
gives for every region apply (docs/cost.md).
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.config.errors import ConfigError
from infra.config.reader import Reader
from infra.config.slices import parse_slices
from infra.config.stack import parse
from infra.cost import price, table as prices
from infra.record import record

NAMESPACE = "accelstack"


@record
class RunCost:
    figures: price.Figures
    hours: float  # the time limit the bound is for
    limit: str  # what set it: "--max-hours" or "its TTL (--expires-in)"

    @property
    def per_hour(self) -> float:
        return self.figures.known_total

    @property
    def bound(self) -> float | None:
        """The most the run's standing parts cost in ``hours``; None with unpriced parts."""
        return None if self.figures.unknown else self.per_hour * self.hours

    def lines(self) -> list[str]:
        bound = (f"at most {price.usd(self.bound)}" if self.bound is not None else
                 f"{self._amount(self.hours)}: no bound")
        out = [f"cost: {self.figures.total_text()}; {bound} in {self.hours:g} h "
               f"({self.limit})"]
        for c in self.figures.classes:
            out.append(f"cost: slice class {c.name} adds up to "
                       f"{price.usd(c.full_high)}/hour while its slices are up "
                       f"(nothing while idle), not in the bound")
        return out

    def refusal(self, max_cost: float | None) -> str | None:
        """Why a run with ``--max-cost`` may not start, or None."""
        if max_cost is None:
            return None
        if self.bound is None:
            return (f"{max_cost:g}: the run's cost cannot be bounded: "
                    f"{self.figures.total_text()} (docs/cost.md)")
        if self.bound > max_cost:
            return (f"{max_cost:g}: the run may cost up to {price.usd(self.bound)} "
                    f"({price.usd(self.per_hour)}/hour for {self.hours:g} h, {self.limit}), "
                    f"more than {price.usd(max_cost)}; lower --max-hours or --expires-in, "
                    "or use smaller or fewer slices")
        return None

    def spent(self, held_seconds: float) -> str:
        """What the run cost for the time it held the capacity."""
        return (f"cost: about {self._amount(held_seconds / 3600)} for "
                f"{_duration(held_seconds)} from `up` to the end of the teardown "
                f"({self.figures.total_text()})")

    def _amount(self, hours: float) -> str:
        known = self.per_hour * hours
        if not self.figures.unknown:
            return price.usd(known)
        return f"at least {price.usd(known)} + unknown" if known else "unknown"


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m"


def estimate(config: Mapping[str, Any], hours: float, limit: str,
             tbl: prices.Table | None = None) -> RunCost:
    """The run's cost from its stack config (``accelstack:KEY`` -> value)."""
    tbl = tbl or prices.shipped()
    raw = {k.partition(":")[2]: v for k, v in config.items()
           if k.partition(":")[0] == NAMESPACE}
    if "onCluster" in raw:
        # parse_slices reports problems to the reader; the run's own checks report them.
        pools, unparsed = parse_slices(Reader(), list(raw.get("slices") or []), (), None)
        lines = [price.pool_line(tbl, p, None, f"pool {p.name}") for p in pools]
        lines += [price.Line(f"pool {name}", "?", "?", None, "unknown: it does not parse")
                  for name in sorted(unparsed)]
        fig = price.Figures("pools", tbl.as_of.isoformat(), tuple(lines))
    else:
        try:
            fig = price.price_stack(parse(raw), tbl)
        except ConfigError:
            fig = price.Figures("cluster", tbl.as_of.isoformat(), (price.Line(
                "stack", "?", "?", None, "unknown: its config does not parse"),))
    return RunCost(fig, hours, limit)
