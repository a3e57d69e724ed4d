"""GKE's rules for GPU pools at config time: A4X is reservation-bound, GPUDirect and A4X
have minimum GKE versions, and reservation pools ask for the reservation's host
maintenance interval."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conftest import MINIMAL
from infra.config import stack as config
from infra.config.errors import ConfigError

RES = {"mode": "reservation", "reservation": "r"}
AI_PAGE = "https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute"
DRA_PAGE = "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra"
A4X = "A4X (GB200) with NVIDIA's DRA driver (ComputeDomains, resource.k8s.io/v1)"


def _raw(accel: str, capacity: Any = None, version: str | None = None,
         **pool: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": accel, "capacity": capacity or RES, **pool}]
    if version:
        raw["gkeVersion"] = version
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config.parse(raw)
    return info.value.problems


@pytest.mark.parametrize("mode", ["on-demand", "spot", "flex-start", "queued"])
def test_a4x_is_reservation_bound(mode: str) -> None:
    assert _problems(_raw("gb200-4", mode, version="1.34")) == [
        f"slices[0].capacity.mode: '{mode}': A4X (GB200) is reservation-bound; use mode: "
        "reservation (GKE: \"You must use the reservation-bound provisioning model ... with "
        f"A4X ... Other provisioning models are not supported\", {AI_PAGE})"]


@pytest.mark.parametrize("accel, version, minimum, source", [
    ("gb200-4", "1.32.8-gke.1108000", "1.34", DRA_PAGE),
    ("gb200-4", "1.33", "1.34", DRA_PAGE),
    ("gb200-4", "1.33.4-gke.1036000", "1.34", DRA_PAGE),
    ("b200-8", "1.32.2-gke.1474999", "1.32.2-gke.1475000", AI_PAGE),
    ("b200-8", "1.31.9-gke.100", "1.32.2-gke.1475000", AI_PAGE),
    ("h200-141gb-8", "1.31.4-gke.1182000", "1.31.4-gke.1183000", AI_PAGE),
    ("h100-mega-80gb-8", "1.29.5-gke.1120000", "1.29.5-gke.1121000",
     "github.com/GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpxo/README.md"),
    ("h100-mega-80gb-8", "1.28.9-gke.1", "1.28.10-gke.1141000",
     "github.com/GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpxo/README.md"),
    ("h100-80gb-8", "1.27.7-gke.1120000", "1.27.7-gke.1121000",
     "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"),
])
def test_gpudirect_and_a4x_minimum_versions(accel: str, version: str, minimum: str,
                                            source: str) -> None:
    what = {"gb200-4": A4X, "b200-8": "GPUDirect-RDMA on A4",
            "h200-141gb-8": "GPUDirect-RDMA on A3 Ultra",
            "h100-mega-80gb-8": "GPUDirect-TCPXO on A3 Mega",
            "h100-80gb-8": "GPUDirect-TCPX on A3 High"}[accel]
    raw = _raw(accel, version=version)
    raw["network"] = {"gpuNetworksCidr": "192.168.0.0/20"}
    assert _problems(raw) == [f"slices[0].accelerator: {what} needs GKE {minimum} or later "
                              f"({source}); gkeVersion is {version}"]


@pytest.mark.parametrize("accel, version", [
    ("gb200-4", "1.34"), ("gb200-4", "1.34.1-gke.1"), ("gb200-4", "1.35.0-gke.1"),
    ("b200-8", "1.32"), ("h200-141gb-8", "1.31.4-gke.1183000"),
    ("h100-mega-80gb-8", "1.29.5-gke.1121000"), ("h100-mega-80gb-8", "1.30.1-gke.1"),
    ("h100-80gb-8", "1.28"), ("l4-8", "1.27.1-gke.1"),
])
def test_minimum_versions_met(accel: str, version: str) -> None:
    assert config.parse(_raw(accel, version=version)).gke_version == version


def test_a3_mega_reservations_ask_for_periodic_maintenance() -> None:
    cfg = config.parse(_raw("h100-mega-80gb-8"))
    assert cfg.slices[0].capacity.host_maintenance_interval == "PERIODIC"
    cfg = config.parse(_raw("h100-mega-80gb-8", {**RES, "hostMaintenanceInterval": "AS_NEEDED"}))
    assert cfg.slices[0].capacity.host_maintenance_interval == "AS_NEEDED"
    assert config.parse(_raw("h200-141gb-8")).slices[0].capacity.host_maintenance_interval is None
    assert config.parse(_raw("h100-mega-80gb-8", "spot")
                        ).slices[0].capacity.host_maintenance_interval is None


@pytest.mark.parametrize("accel, capacity, expected", [
    ("b200-8", {**RES, "hostMaintenanceInterval": "WEEKLY"},
     "slices[0].capacity.hostMaintenanceInterval: 'WEEKLY' is not a host maintenance "
     "interval; allowed: PERIODIC, AS_NEEDED"),
    ("b200-8", {"mode": "spot", "hostMaintenanceInterval": "PERIODIC"},
     "slices[0].capacity.hostMaintenanceInterval: applies to reservation pools only, not spot "
     "(a node pool asks for the interval of the reservation it consumes)"),
    ("v5p-8", {**RES, "hostMaintenanceInterval": "PERIODIC"},
     "slices[0].capacity.hostMaintenanceInterval: applies to GPU pools only, not v5p-8"),
])
def test_host_maintenance_errors(accel: str, capacity: dict[str, Any], expected: str) -> None:
    assert _problems(_raw(accel, capacity)) == [expected]


@pytest.mark.parametrize("channel", [None, "REGULAR", "RAPID"])
def test_a4x_on_a_release_channel_is_checked_against_its_default(channel: str | None) -> None:
    # GKE serves resource.k8s.io/v1 (NVIDIA's DRA driver, ComputeDomains) from 1.34. Without
    # a pinned gkeVersion the floor is checked against the channel's default version
    # (infra/catalog/gke_versions.py): an older default is refused, today's passes.
    from infra.catalog import gke_versions

    raw = _raw("gb200-4")
    if channel:
        raw["releaseChannel"] = channel
    old = {c: "1.33.5-gke.1080000" for c in gke_versions.CHANNEL_DEFAULTS}
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw, channel_defaults=old)
    [problem] = e.value.problems
    assert problem.startswith(f"slices[0].accelerator: {A4X} needs GKE 1.34 or later "
                              f"({DRA_PAGE}); the {channel or 'REGULAR'} channel's default "
                              "version"), problem
    config.parse(raw)  # today's defaults are 1.35 and later
    raw["gkeVersion"] = "1.34"
    assert config.parse(raw).gke_version == "1.34"


@pytest.mark.parametrize("text", ["1.34", "1.30", "1.34.1-gke.1829001"])
def test_a_pinned_version_reaches_the_program_as_written(text: str) -> None:
    # Pulumi hands the YAML string "1.34" over raw, as it would the number 1.34: decoding it
    # as JSON would make it 1.34 (or 1.3 from "1.30"), which is not a version string.
    from infra.config.secrets import decode_config_value

    assert decode_config_value(text, "gkeVersion") == text
    assert decode_config_value("1.30", "other") == 1.3  # structured keys still decode
