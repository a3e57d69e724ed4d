"""What a `submit run` costs: the figures of the stack it brings up (priced by the preview's
own code, infra/preview/costs.py, from the stack evaluated offline: one figure everywhere),
per hour and bounded by the run's real time limit, before anything is made; and what it
cost for the time it held the capacity, after. Pure: figures and limits in, lines of text
and numbers out; `submit run` prints them and refuses a run whose bound is over
``--max-cost``, or $0 for a stack that costs money.

The run's real limit is the first of the two things that end it: ``--timeout`` (the run
stops waiting and takes the stack down) and ``--expires-in`` (the stack's expiry, after
which `submit reap` takes it down, whatever the run does). The time `up` and the teardown
take comes on top of ``--timeout`` (docs/cost.md).
"""

from __future__ import annotations

from infra.cost import price
from infra.record import record


@record
class RunCost:
    figures: price.Figures
    hours: float  # the time limit the bound is for
    limit: str  # what sets it: "--timeout 2h" or "its expiry, --expires-in 6h"
    note: str = ""  # which option ends the run, when the two differ

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
        out = [f"cost: {self.figures.total_text()}; {bound} in {_hours(self.hours)} "
               f"({self.limit})"]
        if self.note:
            out.append(f"cost: {self.note}")
        for c in self.figures.classes:
            out.append(f"cost: slice class {c.name} adds up to "
                       f"{price.usd(c.full_high)}/hour while its slices are up "
                       f"(nothing while idle), not in the bound")
        return out

    def refusal(self, max_cost: float | None) -> str | None:
        """Why the run may not start (one line), or None: a bound of $0 for a stack that
        costs money (a limit too short to do anything in), or a bound over ``max_cost``
        (or none, with ``max_cost``)."""
        if self.per_hour > 0 and self.bound is not None and round(self.bound, 2) == 0:
            return (f"the run's limit, {self.limit}, prices a stack of "
                    f"{price.usd(self.per_hour)}/hour at $0.00: give a --timeout or "
                    "--expires-in long enough to bring the stack up and run the work")
        if max_cost is None:
            return None
        if self.bound is None:
            return (f"--max-cost {max_cost:g}: the run's cost cannot be bounded: "
                    f"{self.figures.total_text()} (docs/cost.md)")
        if self.bound > max_cost:
            return (f"--max-cost {max_cost:g}: the run may cost up to "
                    f"{price.usd(self.bound)} ({price.usd(self.per_hour)}/hour for "
                    f"{_hours(self.hours)}, {self.limit}), more than {price.usd(max_cost)}; "
                    "lower --timeout or --expires-in, or use smaller or fewer slices")
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


def _hours(hours: float) -> str:
    return f"{hours:g} h"


def _span(seconds: float) -> str:
    """A duration as typed: 90s, 30m, 6h, 1h30m."""
    whole = int(seconds)
    if whole != seconds or whole < 60:
        return f"{seconds:g}s"
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s")) if v)


def for_run(figures: price.Figures, timeout: float, expires_in: float) -> RunCost:
    """The run's cost, bounded by its real limit: the shorter of ``timeout`` and
    ``expires_in`` (seconds), saying which one ends the run when they differ."""
    t, e = f"--timeout {_span(timeout)}", f"--expires-in {_span(expires_in)}"
    if timeout < expires_in:
        return RunCost(figures, timeout / 3600, t,
                       f"{t} ends the run (then the teardown) before its expiry, {e}")
    note = ("" if timeout == expires_in else
            f"the stack's expiry, {e}, comes before {t}: `submit reap` takes the stack "
            "down then, even while the work runs")
    return RunCost(figures, expires_in / 3600, f"its expiry, {e}", note)
