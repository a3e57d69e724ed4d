"""The capacity list of a slice class: the sources GKE tries, in order, for every shape.

Each entry is a reservation (specific, as TPU reservations in a ComputeClass must be),
spot, flex-start or on-demand, checked against what GKE allows in a ComputeClass (versions,
and for flex-start the TPU generations, slice kinds and zones it is offered for), with its
source. Also the version comparisons the class rules share. Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from infra.catalog import gke_versions
from infra.catalog.tables import Accelerator
from infra.config.errors import did_you_mean, one_of, show
from infra.config.reader import Reader
from infra.config.capacity import FLEX_START_PAGE, FLEX_START_TPU, run_duration_seconds
from infra.record import record

CAPACITY_ENTRY_KEYS = ("mode", "reservation", "block", "zone", "maxRunDuration")
CLASS_MODES = ("reservation", "spot", "flex-start", "on-demand")
CRD_PAGE = "https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass"
ABOUT_PAGE = ("https://cloud.google.com/kubernetes-engine/docs/concepts/"
              "about-custom-compute-classes")
# Reservations in a ComputeClass: GKE 1.31.1-gke.2105000 and later (ABOUT_PAGE, "Consume
# Compute Engine reservations").
MIN_VERSION_RESERVATIONS = (1, 31, 1, 2105000)
# Flex-start: TPUs from 1.33.0-gke.1712000, GPUs from 1.32.2-gke.1652000 (FLEX_START_PAGE,
# Requirements), in these zones for TPUs (same page, read 2026-11-25; GPUs: no zone list).
MIN_VERSION_FLEX_TPU = (1, 33, 0, 1712000)
MIN_VERSION_FLEX_GPU = (1, 32, 2, 1652000)
FLEX_START_TPU_ZONES = {
    "v6e": ("asia-northeast1-b", "us-east5-a", "us-east5-b"),
    "v5e": ("us-west4-a",),
    "v5p": ("us-east5-a",),
}

_RESERVATION = re.compile(r"^(projects/(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/"
                          r"reservations/)?(?P<name>[a-z]([-a-z0-9]{0,61}[a-z0-9])?)\Z")


@record
class ClassCapacity:
    """One priority of a class, in the order GKE tries them."""

    mode: str  # reservation, spot, flex-start, on-demand
    reservation: str | None = None  # the reservation's name
    project: str | None = None  # the project that owns a shared reservation
    block: str | None = None
    zone: str | None = None  # where the reservation is consumed
    max_run_seconds: int | None = None  # flex-start


def below(version: str | None, least: tuple[int, ...]) -> bool:
    """Whether a pinned version is known to be older than ``least`` (False when unpinned).
    A minor version (1.33) is compared by its minor only, as GKE resolves it to a patch."""
    return version is not None and gke_versions.below(version, gke_versions.shown(least))


def parse_capacity(r: Reader, value: Any, path: str, shapes: list[Accelerator],
                   zones: Sequence[str], version: str | None) -> list[ClassCapacity] | None:
    if value is None:
        r.fail(path, f"is required: the capacity to try, in order ({one_of(CLASS_MODES)})")
        return None
    if not isinstance(value, list) or not value:
        r.fail(path, f"{show(value)} is not a list of capacity modes ({one_of(CLASS_MODES)})")
        return None
    out: list[ClassCapacity] = []
    for j, entry in enumerate(value):
        where = f"{path}[{j}]"
        cap = _capacity_entry(r, entry, where, shapes, zones, version)
        if cap is None:
            continue
        if cap in out or cap.mode != "reservation" and any(c.mode == cap.mode for c in out):
            r.fail(where, f"{cap.mode}{' ' + str(cap.reservation) if cap.reservation else ''} "
                   "is already listed; each capacity source is tried once")
            continue
        out.append(cap)
    return out


def _capacity_entry(r: Reader, entry: Any, where: str, shapes: list[Accelerator],
                    zones: Sequence[str], version: str | None) -> ClassCapacity | None:
    if isinstance(entry, str):
        entry = {"mode": entry}
    raw = r.obj(entry, where, CAPACITY_ENTRY_KEYS)
    mode = r.get(raw, "mode", where, str, required=True)
    if mode is None:
        return None
    if mode == "queued":
        r.fail(f"{where}.mode", "queued provisioning is a fixed-pool mode (a "
               "ProvisioningRequest per workload); a class gets the same DWS capacity with "
               "flex-start")
        return None
    if mode not in CLASS_MODES:
        r.fail(f"{where}.mode", f"{show(mode)} is not a capacity mode of a class"
               f"{did_you_mean(mode, CLASS_MODES)} (allowed: {one_of(CLASS_MODES)})")
        return None
    for key in ("reservation", "block", "zone"):
        if key in raw and mode != "reservation":
            r.fail(f"{where}.{key}", f"applies to reservation entries only, not {mode}")
    if "maxRunDuration" in raw and mode != "flex-start":
        r.fail(f"{where}.maxRunDuration", f"applies to flex-start entries only, not {mode}")
    if mode == "reservation":
        return _reservation(r, raw, where, zones, version)
    if mode == "flex-start":
        seconds = run_duration_seconds(r, raw.get("maxRunDuration"), f"{where}.maxRunDuration")
        _check_flex_start(r, where, shapes, zones, version)
        return ClassCapacity("flex-start", max_run_seconds=seconds)
    return ClassCapacity(mode)


def _reservation(r: Reader, raw: Mapping[str, Any], where: str, zones: Sequence[str],
                 version: str | None) -> ClassCapacity | None:
    value = r.get(raw, "reservation", where, str, required=True)
    block = r.get(raw, "block", where, str)
    zone = r.get(raw, "zone", where, str)
    if value is None:
        return None
    m = _RESERVATION.match(value)
    if not m:
        r.fail(f"{where}.reservation", f"{show(value)} is not a reservation name or "
               "projects/PROJECT/reservations/NAME")
        return None
    if block is not None and not re.match(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z", block):
        r.fail(f"{where}.block", f"{show(block)} is not a reservation block name")
    if zone is not None and zone not in zones:
        r.fail(f"{where}.zone", f"{show(zone)} is not one of the class's zones "
               f"({one_of(zones)}); a reservation is consumed in its own zone")
    if below(version, MIN_VERSION_RESERVATIONS):
        r.fail(f"{where}.mode", f"reservations in a ComputeClass need GKE "
               f"{gke_versions.shown(MIN_VERSION_RESERVATIONS)} or later; gkeVersion is {version}")
    return ClassCapacity("reservation", reservation=m.group("name"), project=m.group("project"),
                         block=block, zone=zone)


def _check_flex_start(r: Reader, where: str, shapes: list[Accelerator], zones: Sequence[str],
                      version: str | None) -> None:
    # One line per kind of refusal, naming every shape it concerns: one mistake (an entry
    # that does not fit the class's shapes) is one error, not one per shape.
    tpus = [a for a in shapes if a.kind == "tpu"]
    unsupported = [a.name for a in tpus if a.family not in FLEX_START_TPU]
    if unsupported:
        r.fail(f"{where}.mode", f"flex-start does not support {', '.join(unsupported)} (GKE "
               f"supports flex-start on TPU {one_of(FLEX_START_TPU)} only: {FLEX_START_PAGE})")
    multi = [a.name for a in tpus if a.family in FLEX_START_TPU and a.multi_host]
    if multi:
        # GKE's flex-start page recommends it for "TPU resources that run in single-host
        # TPU slice node pools"; no page found documents multi-host TPU slices on
        # flex-start, so they are refused (the safe side).
        are = "is a multi-host slice" if len(multi) == 1 else "are multi-host slices"
        r.fail(f"{where}.mode", f"{', '.join(multi)} {are}; GKE documents flex-start for "
               f"single-host TPU slices only ({FLEX_START_PAGE}): give flex-start a class "
               "of single-host shapes of its own")
    for family in dict.fromkeys(a.family for a in tpus
                                if a.family in FLEX_START_TPU and not a.multi_host):
        if not set(zones) & set(FLEX_START_TPU_ZONES[family]):
            r.fail(f"{where}.mode", f"flex-start {family} is offered in "
                   f"{one_of(FLEX_START_TPU_ZONES[family])}, none of the class's zones "
                   f"({one_of(zones)}) ({FLEX_START_PAGE})")
    if shapes:
        least = MIN_VERSION_FLEX_TPU if shapes[0].kind == "tpu" else MIN_VERSION_FLEX_GPU
        if below(version, least):
            r.fail(f"{where}.mode", f"flex-start needs GKE {gke_versions.shown(least)} or later; "
                   f"gkeVersion is {version}")
