"""Upgrades and maintenance as stack keys: the cluster's maintenance window and exclusions
(``maintenanceWindow``, ``maintenanceExclusions``) and each slice pool's ``upgrade``
settings, checked against GKE's rules before anything is declared. Pure; no pulumi.

GKE's rules, with their sources (docs/maintenance.md has the table):

- Window: "allow at least 48 hours of maintenance availability in a 32-day rolling window;
  only contiguous availability periods of at least four hours are considered" (GKE,
  Configure maintenance windows and exclusions, "Considerations when configuring a
  maintenance window", https://cloud.google.com/kubernetes-engine/docs/how-to/
  maintenance-window; the English, Japanese and Chinese pages say 32 days, one Korean
  translation says 92). Times in UTC ("Zulu"): pulumi-gcp 10.2.0
  ClusterMaintenancePolicyRecurringWindowArgs, "GKE may accept other formats, but will
  return values in UTC, causing a permanent diff".
- Exclusions: at most 20 at a time (pulumi-gcp 10.2.0 ClusterMaintenancePolicyArgs
  maintenance_exclusions; terraform-provider-google-beta 33e3efe raised MaxItems from 3 to
  20); scopes NO_UPGRADES, NO_MINOR_UPGRADES, NO_MINOR_OR_NODE_UPGRADES (GKE API Scope).
  Google's own samples (terraform-google-modules/terraform-docs-samples@fd275b8,
  gke/standard/zonal/no-channel-to-release-channel/no_upgrade/main.tf) say "NO_UPGRADES
  exclusions are limited to 30 days" and "A recurring window must be set to use
  maintenance exclusions in Terraform"; the same sequence moves the cluster from no
  channel (UNSPECIFIED, NO_UPGRADES) onto REGULAR before it sets a
  NO_MINOR_OR_NODE_UPGRADES exclusion (no_minor_or_node_upgrade/main.tf), which is what
  the release-channel rule for the other two scopes rests on (GKE's concept page, "Scope
  of upgrades", states it; its stored excerpts stop before that table: docs/limits.md).
  The end of a minor version's support, which bounds the other scopes, is not checked.
- Node pools: a cluster on a release channel keeps node auto-upgrade on ("Node
  auto-upgrade defaults to true and cannot be disabled", GKE API ReleaseChannel,
  https://cloud.google.com/kubernetes-engine/docs/reference/rest/Shared.Types/
  ReleaseChannel). Flex-start and queued nodes are upgraded by GKE's short-lived strategy
  ("For nodes that use Flex-start VMs, GKE uses short-lived upgrades", GKE, Node upgrade
  strategies, https://cloud.google.com/kubernetes-engine/docs/concepts/
  node-pool-upgrade-strategies; API NodePoolUpdateStrategy SHORT_LIVED "for
  QueuedProvisioning and flex start node pools"): no strategy to choose. A multi-host TPU
  slice is one unit (GKE recreates it whole), so neither surge nodes nor a blue pool
  beside it make a partial upgrade: such pools take SURGE with maxSurge 0 (what every
  pool had before the key). NOT VERIFIED against a GKE page that says how GKE applies a
  surge or blue-green setting to such a pool; the refusal is the conservative side
  (docs/limits.md). Surge and
  unavailable counts: "must not be negative and at least one of them must be greater than
  zero" (pulumi-gcp 10.2.0 NodePoolUpgradeSettingsArgs).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, Mapping

from infra.config.errors import one_of, show
from infra.config.reader import Reader
from infra.contract import maintenance as m
from infra.record import record

WINDOW_KEYS = ("start", "end", "recurrence")
EXCLUSION_KEYS = ("name", "start", "end", "scope")
UPGRADE_KEYS = ("strategy", "maxSurge", "maxUnavailable", "blueGreen", "autoUpgrade",
                "autoRepair")
BLUE_GREEN_KEYS = ("batchNodeCount", "batchPercentage", "batchSoakDuration",
                   "nodePoolSoakDuration")
STRATEGIES = ("SURGE", "BLUE_GREEN")
MAX_EXCLUSIONS = 20
MAX_NO_UPGRADES_DAYS = 30
AVAILABILITY_DAYS = 32
AVAILABILITY_HOURS = 48
CONTIGUOUS_HOURS = 4
_ZULU = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_DURATION = re.compile(r"^(\d+)([smh])\Z")


@record
class BlueGreen:
    node_pool_soak_seconds: int | None = None
    batch_node_count: int | None = None
    batch_percentage: float | None = None
    batch_soak_seconds: int | None = None


@record
class Upgrade:
    """A pool's upgrade settings; the defaults are what every pool had before the key."""

    strategy: str = "SURGE"
    max_surge: int = 0
    max_unavailable: int = 1
    blue_green: BlueGreen | None = None
    auto_upgrade: bool = True
    auto_repair: bool | None = None  # None: by capacity (infra/specs/upgrades.py)


def parse_window(r: Reader, value: Any, channel: str | None) -> m.Window | None:
    """``maintenanceWindow``: {start, end, recurrence}, checked for GKE's availability."""
    del channel  # the window's rules do not depend on it
    if value is None:
        return None
    path = "maintenanceWindow"
    raw = r.obj(value, path, WINDOW_KEYS)
    start = r.get(raw, "start", path, str, required=True)
    end = r.get(raw, "end", path, str, required=True)
    rec = r.get(raw, "recurrence", path, str, required=True)
    ok = _times(r, path, start, end)
    if rec is not None:
        parsed = m.rule(rec) if rec.startswith("FREQ=") else None
        if parsed is None:
            ok = r.check(False, f"{path}.recurrence", f"{show(rec)} is not an RFC 5545 RRULE "
                         "such as FREQ=WEEKLY;BYDAY=SA,SU")
        elif isinstance(parsed, str):
            ok = r.check(False, f"{path}.recurrence", f"{show(rec)}: {parsed}")
    if not (ok and start and end and rec):
        return None
    window = m.Window(start, end, rec)
    least = m.least_availability(window, AVAILABILITY_DAYS,
                                 timedelta(hours=CONTIGUOUS_HOURS))
    if least < timedelta(hours=AVAILABILITY_HOURS):
        r.fail(path, f"opens {_hours(least)} in the leanest {AVAILABILITY_DAYS} days (counting "
               f"stretches of {CONTIGUOUS_HOURS} hours or more); GKE needs at least "
               f"{AVAILABILITY_HOURS} hours in every {AVAILABILITY_DAYS}-day span: lengthen "
               "it or add days")
        return None
    return window


def parse_exclusions(r: Reader, value: Any, channel: str | None,
                     window: m.Window | None) -> tuple[m.Exclusion, ...]:
    """``maintenanceExclusions``: a list of {name, start, end, scope} (scope defaults to
    NO_UPGRADES, as GKE's API does)."""
    if value is None:
        return ()
    path = "maintenanceExclusions"
    if not isinstance(value, list):
        r.fail(path, f"{show(value)} is not a list of {{name, start, end, scope}}")
        return ()
    if len(value) > MAX_EXCLUSIONS:
        r.fail(path, f"lists {len(value)} exclusions; GKE keeps at most {MAX_EXCLUSIONS}")
    if value and window is None:
        r.fail(path, "needs a maintenanceWindow beside it (pulumi-gcp's maintenancePolicy "
               "takes exclusions as exceptions to a window)")
    out: list[m.Exclusion] = []
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        raw = r.obj(item, where, EXCLUSION_KEYS)
        name = r.get(raw, "name", where, str, required=True)
        start = r.get(raw, "start", where, str, required=True)
        end = r.get(raw, "end", where, str, required=True)
        scope = r.get(raw, "scope", where, str, default="NO_UPGRADES")
        if not _times(r, where, start, end) or not name or not start or not end:
            continue
        if not name.strip():
            r.fail(f"{where}.name", "is empty")
            continue
        if any(x.name == name for x in out):
            r.fail(f"{where}.name", f"{show(name)} is used twice; GKE names each exclusion")
            continue
        if scope not in m.SCOPES:
            r.fail(f"{where}.scope", f"{show(scope)} is not an exclusion scope; allowed: "
                   f"{one_of(m.SCOPES)}")
            continue
        span = _span(start, end)
        if scope == "NO_UPGRADES" and span > timedelta(days=MAX_NO_UPGRADES_DAYS):
            r.fail(f"{where}.end", f"a NO_UPGRADES exclusion lasts at most "
                   f"{MAX_NO_UPGRADES_DAYS} days; this one lasts {_days(span)} (for longer, "
                   "NO_MINOR_OR_NODE_UPGRADES keeps node upgrades out and lets control-plane "
                   "patches in)")
            continue
        if scope != "NO_UPGRADES" and channel in (None, "UNSPECIFIED"):
            r.fail(f"{where}.scope", f"{scope} needs a release channel (releaseChannel); "
                   "a cluster on none can only exclude NO_UPGRADES")
            continue
        out.append(m.Exclusion(name, start, end, scope))
    return tuple(out)


def parse_upgrade(r: Reader, value: Any, path: str, *, mode: str, multi_host: bool,
                  channel: str | None) -> Upgrade:
    """A slice pool's ``upgrade``: strategy and counts, auto-upgrade and auto-repair."""
    if value is None:
        return Upgrade()
    path = f"{path}.upgrade"
    raw = r.obj(value, path, UPGRADE_KEYS)
    auto_upgrade = r.get(raw, "autoUpgrade", path, bool, default=True)
    if not auto_upgrade and channel not in (None, "UNSPECIFIED"):
        r.fail(f"{path}.autoUpgrade", f"false is not allowed on release channel {channel}: GKE "
               "keeps node auto-upgrade on for clusters on a channel (pin gkeVersion without "
               "a channel to turn it off, or use maintenanceExclusions)")
        auto_upgrade = True
    auto_repair = r.get(raw, "autoRepair", path, bool)
    if auto_repair and mode in ("flex-start", "queued"):
        r.fail(f"{path}.autoRepair", f"true: {mode} nodes run with auto-repair off (GKE "
               "creates such pools without it)")
        auto_repair = None
    chosen = [k for k in ("strategy", "maxSurge", "maxUnavailable", "blueGreen") if k in raw]
    if chosen and mode in ("flex-start", "queued"):
        r.fail(f"{path}.{chosen[0]}", f"{mode} nodes are upgraded by GKE's short-lived "
               "strategy (they live until their run ends); there is no strategy to choose")
        return Upgrade(auto_upgrade=auto_upgrade, auto_repair=auto_repair)
    strategy = str(r.get(raw, "strategy", path, str, default="SURGE")).upper()
    if strategy not in STRATEGIES:
        r.fail(f"{path}.strategy", f"{show(raw['strategy'])} is not an upgrade strategy; "
               f"allowed: {one_of(STRATEGIES)}")
        strategy = "SURGE"
    if multi_host and (strategy == "BLUE_GREEN" or r.get(raw, "maxSurge", path, int, 0) > 0):
        r.fail(f"{path}.{'strategy' if strategy == 'BLUE_GREEN' else 'maxSurge'}",
               "a multi-host TPU slice is one unit that GKE recreates whole; allowed: "
               "SURGE with maxSurge 0 (the slice is replaced in place)")
        return Upgrade(auto_upgrade=auto_upgrade, auto_repair=auto_repair)
    if strategy == "BLUE_GREEN":
        if "maxSurge" in raw or "maxUnavailable" in raw:
            r.fail(f"{path}.strategy", "BLUE_GREEN takes blueGreen settings, not maxSurge or "
                   "maxUnavailable")
        return Upgrade("BLUE_GREEN", 0, 0, _blue_green(r, raw.get("blueGreen"), path),
                       auto_upgrade, auto_repair)
    if "blueGreen" in raw:
        r.fail(f"{path}.blueGreen", "applies with strategy: BLUE_GREEN only")
    surge = r.get(raw, "maxSurge", path, int, default=0)
    unavailable = r.get(raw, "maxUnavailable", path, int, default=1)
    if surge < 0 or unavailable < 0 or surge + unavailable == 0:
        r.fail(path, f"maxSurge {surge} and maxUnavailable {unavailable}: neither may be "
               "negative and one must be above 0")
        return Upgrade(auto_upgrade=auto_upgrade, auto_repair=auto_repair)
    return Upgrade("SURGE", surge, unavailable, None, auto_upgrade, auto_repair)


def _blue_green(r: Reader, value: Any, path: str) -> BlueGreen:
    path = f"{path}.blueGreen"
    raw = r.obj(value, path, BLUE_GREEN_KEYS)
    count = r.get(raw, "batchNodeCount", path, int)
    share = r.get(raw, "batchPercentage", path, (int, float))
    if count is not None and share is not None:
        r.fail(path, "batchNodeCount and batchPercentage: give one of them")
    if count is not None and count < 1:
        r.fail(f"{path}.batchNodeCount", f"{count} is below 1")
    if share is not None and not 0 < share <= 1:
        r.fail(f"{path}.batchPercentage", f"{show(share)} is not a fraction in (0, 1]")
    return BlueGreen(_seconds(r, raw, "nodePoolSoakDuration", path), count,
                     None if share is None else float(share),
                     _seconds(r, raw, "batchSoakDuration", path))


def _seconds(r: Reader, raw: Mapping[str, Any], key: str, path: str) -> int | None:
    text = r.get(raw, key, path, str)
    if text is None:
        return None
    found = _DURATION.match(text)
    if not found:
        r.fail(f"{path}.{key}", f"{show(text)} is not a duration such as 30m, 2h or 600s")
        return None
    return int(found.group(1)) * {"s": 1, "m": 60, "h": 3600}[found.group(2)]


def _times(r: Reader, path: str, start: str | None, end: str | None) -> bool:
    ok = True
    for key, val in (("start", start), ("end", end)):
        if val is not None and not (_ZULU.match(val) and m.parse_time(val)):
            ok = r.check(False, f"{path}.{key}", f"{show(val)} is not an RFC 3339 time in UTC "
                         "such as 2026-01-03T02:00:00Z (GKE answers in UTC; another offset "
                         "would show as a change on every preview)")
    if ok and start and end and _span(start, end) <= timedelta(0):
        ok = r.check(False, f"{path}.end", f"{show(end)} is not after start {show(start)}")
    return ok


def _span(start: str, end: str) -> timedelta:
    a, b = m.parse_time(start), m.parse_time(end)
    assert a is not None and b is not None
    return b - a


def _hours(span: timedelta) -> str:
    return f"{span.total_seconds() / 3600:g} hours"


def _days(span: timedelta) -> str:
    return f"{span.total_seconds() / 86400:g} days"
