"""The capacity of a slice pool: the ``capacity`` key of a ``slices`` entry.

A capacity mode (on-demand, spot, reservation, flex-start, queued) with the reservation it
consumes, the maximum run duration of flex-start and queued VMs, and a GPU reservation's
host maintenance interval, checked against the rules GKE enforces on node pools. Also the
flex-start facts the slice pools and the slice classes share (versions, TPU generations,
the page that states them). Sits below ``infra.config.slices`` and
``infra.config.class_capacity``. Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import did_you_mean, one_of, show
from infra.config.fields import GKE_NAME
from infra.config.reader import Reader
from infra.record import record

CAPACITY_MODES = ("on-demand", "spot", "reservation", "flex-start", "queued")
MAX_RUN_SECONDS = 7 * 24 * 3600  # DWS flex-start VMs run for at most seven days
CAPACITY_KEYS = ("mode", "reservation", "block", "maxRunDuration", "hostMaintenanceInterval")

# GKE minimum versions stated in its docs, checked against the version the nodes run: the
# pinned gkeVersion, else the release channel's default (infra/catalog/gke_versions.py).
MIN_VERSION_FLEX_START = (1, 33, 0, 1712000)  # TPUs
# GPUs: "Ensure that you have a GKE cluster in version 1.32.2-gke.1652000 or later"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest, Before you
# begin); TPUs need the later version above.
MIN_VERSION_FLEX_START_GPU = (1, 32, 2, 1652000)
# TPU versions GKE supports for flex-start. GKE's "About flex-start provisioning mode" page
# (Requirements) lists Trillium (v6e), v5e and v5p, each with the zones it is offered in,
# and states "TPU v3 and v4 are not supported"; it names no TPU7x or TPU7, so they are
# refused until GKE documents them. The zones are not checked: the page lists where
# flex-start capacity is offered today (a list that changes), the same kind of fact as
# where a TPU version is available at all, which the stack does not check either.
FLEX_START_TPU = ("v5e", "v5p", "v6e")
FLEX_START_PAGE = "https://cloud.google.com/kubernetes-engine/docs/concepts/dws"

_DURATION = re.compile(r"^(\d+)([smhd])\Z")


@record
class Capacity:
    mode: str
    reservation: str | None = None  # reservation name, or projects/P/reservations/R
    block: str | None = None  # reservation block within it
    max_run_seconds: int | None = None  # flex-start and queued
    # GPU reservation pools: the reservation's host maintenance interval (config_gpu.py)
    host_maintenance_interval: str | None = None

    @property
    def consumes_reservation(self) -> bool:
        return self.mode == "reservation"

    @property
    def autoscales_from_zero(self) -> bool:
        return self.mode in ("flex-start", "queued")


def run_duration_seconds(r: Reader, value: Any, path: str) -> int | None:
    """A flex-start maxRunDuration (seconds, or 86400s, 72h, 7d) in seconds, at most seven
    days; None when absent or refused (recorded on ``r``)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        m = _DURATION.match(str(value))
        if not m:
            r.fail(path, f"{show(value)} is not a duration such as 86400s, 72h or 7d")
            return None
        seconds = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if not 0 < seconds <= MAX_RUN_SECONDS:
        r.fail(path, f"{show(value)} is outside 1s-7d (GKE: flex-start VMs run at most seven days)")
        return None
    return seconds


def parse_capacity(r: Reader, value: Any, path: str) -> Capacity | None:
    """A ``capacity`` (a mode, or a mapping of CAPACITY_KEYS); None when refused (recorded
    on ``r``)."""
    if isinstance(value, str):
        value = {"mode": value}
    if isinstance(value, Mapping) and "spot" in value:
        r.fail(f"{path}.spot", "flex-start, queued and spot are distinct capacity modes and "
               "cannot be combined (GKE: flex-start VMs are not Spot VMs); set mode: spot or "
               "mode: flex-start")
        value = {k: v for k, v in value.items() if k != "spot"}
    raw = r.obj(value, path, CAPACITY_KEYS)
    mode = r.get(raw, "mode", path, str, default="on-demand")
    if mode not in CAPACITY_MODES:
        r.fail(f"{path}.mode", f"{show(mode)} is not a capacity mode"
               f"{did_you_mean(mode, CAPACITY_MODES)} (allowed: {one_of(CAPACITY_MODES)})")
        return None
    reservation = r.get(raw, "reservation", path, str)
    block = r.get(raw, "block", path, str)
    if mode == "reservation":
        if reservation is None:
            r.fail(f"{path}.reservation", "is required with mode: reservation (the name of a "
                   "specific reservation, or projects/PROJECT/reservations/NAME when shared)")
        elif not re.match(r"^(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/reservations/)?"
                          r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z", reservation):
            r.fail(f"{path}.reservation", f"{show(reservation)} is not a reservation name or "
                   "projects/PROJECT/reservations/NAME")
        if block is not None and not GKE_NAME.match(block):
            r.fail(f"{path}.block", f"{show(block)} is not a reservation block name")
    else:
        for key, val in (("reservation", reservation), ("block", block)):
            if val is not None:
                r.fail(f"{path}.{key}", f"{mode} pools do not consume reservations (GKE: only "
                       "mode: reservation may set reservation affinity; spot, flex-start and "
                       "queued nodes are provisioned without one)")
    max_run = run_duration_seconds(r, raw.get("maxRunDuration"), f"{path}.maxRunDuration")
    if max_run is not None and mode not in ("flex-start", "queued"):
        r.fail(f"{path}.maxRunDuration", f"only flex-start and queued pools have a maximum run "
               f"duration, not {mode}")
        max_run = None
    maintenance = r.get(raw, "hostMaintenanceInterval", path, str)
    if maintenance is not None and mode != "reservation":
        r.fail(f"{path}.hostMaintenanceInterval", f"applies to reservation pools only, not "
               f"{mode} (a node pool asks for the interval of the reservation it consumes)")
        maintenance = None
    return Capacity(mode, reservation if mode == "reservation" else None,
                    block if mode == "reservation" else None, max_run, maintenance)
