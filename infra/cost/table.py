"""The price table: prices.yaml read into records, looked up by item, region and mode.

Pure: reading the shipped file is the only thing it does besides arithmetic on dates. A
lookup that finds nothing returns None, and callers show that as unknown: no price is ever
taken to be zero.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from infra.record import record

TABLE_FILE = Path(__file__).with_name("prices.yaml")
ANY = "*"
MODES = ("on-demand", "spot", "flex-start", "committed-1y", "committed-3y")
UNITS = ("cluster-hour", "chip-hour", "vm-hour")
CLUSTER_FEE = "gke/cluster-fee"


class TableError(ValueError):
    """A price table that does not load: the file, the entry and what is wrong."""


@record
class Price:
    """One figure of the table: USD per hour of one ``unit`` of ``item``."""

    item: str  # gke/cluster-fee, tpu/<generation>, vm/<machine type>
    unit: str
    region: str  # a region, or ANY
    mode: str  # one of MODES, or ANY
    usd: float
    source: str  # a pricing page URL, or cloudbilling services/S/skus/ID[,ID...]
    date: str  # the day the page was read, or the SKUs' effectiveTime
    note: str = ""

    def cite(self) -> str:
        return f"{self.source} ({self.date})"


@record
class Table:
    as_of: date  # the day the table was last checked as a whole
    max_age_days: int
    prices: tuple[Price, ...]

    def find(self, item: str, region: str | None, mode: str) -> Price | None:
        """The price of ``item`` in ``region`` for ``mode``: the region's own figure before
        one for every region; None when the table has neither."""
        best: Price | None = None
        for p in self.prices:
            if p.item != item or p.mode not in (mode, ANY):
                continue
            if region is not None and p.region == region:
                return p
            if p.region == ANY:
                best = best or p
        return best

    def age_warning(self, today: date) -> str | None:
        """A warning when the table is older than its ``maxAgeDays``."""
        age = (today - self.as_of).days
        if age <= self.max_age_days:
            return None
        return (f"the price table is {age} days old (as of {self.as_of.isoformat()}, older "
                f"than {self.max_age_days} days): prices may have changed; a maintainer "
                "refreshes it with `accelstack-prices refresh` (docs/cost.md)")


def parse(data: Any, where: str) -> Table:
    """A table from the YAML document ``data``; TableError naming ``where`` and the entry."""
    if not isinstance(data, dict):
        raise TableError(f"{where}: not a price table (a mapping with asOf and prices)")
    try:
        as_of = date.fromisoformat(str(data.get("asOf")))
    except ValueError:
        raise TableError(f"{where}: asOf: {data.get('asOf')!r} is not a date (YYYY-MM-DD)") \
            from None
    max_age = data.get("maxAgeDays", 90)
    if not isinstance(max_age, int) or max_age < 1:
        raise TableError(f"{where}: maxAgeDays: {max_age!r} is not a positive whole number")
    prices = []
    for i, raw in enumerate(data.get("prices") or []):
        prices.append(_price(raw, f"{where}: prices[{i}]"))
    return Table(as_of, max_age, tuple(prices))


def _price(raw: Any, where: str) -> Price:
    if not isinstance(raw, dict):
        raise TableError(f"{where}: not a mapping")
    missing = [k for k in ("item", "unit", "region", "mode", "usd", "source", "date")
               if raw.get(k) in (None, "")]
    if missing:
        raise TableError(f"{where}: missing {', '.join(missing)}")
    usd = raw["usd"]
    if isinstance(usd, bool) or not isinstance(usd, (int, float)) or usd <= 0:
        # A price of zero would read as "free": a missing price is left out instead.
        raise TableError(f"{where}.usd: {usd!r} is not a positive number (leave an "
                         "unknown price out of the table; never write 0)")
    if raw["unit"] not in UNITS:
        raise TableError(f"{where}.unit: {raw['unit']!r} is not one of {', '.join(UNITS)}")
    if raw["mode"] not in (*MODES, ANY):
        raise TableError(f"{where}.mode: {raw['mode']!r} is not one of "
                         f"{', '.join((*MODES, ANY))}")
    return Price(str(raw["item"]), str(raw["unit"]), str(raw["region"]), str(raw["mode"]),
                 float(usd), str(raw["source"]), str(raw["date"]), str(raw.get("note") or ""))


def load(path: Path = TABLE_FILE) -> Table:
    return parse(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))


@lru_cache(maxsize=1)
def shipped() -> Table:
    """The table that ships with the project."""
    return load()
