"""GKE version floors on a release channel: checked against the channel's default version
(infra/catalog/gke_versions.py), not only when gkeVersion is pinned; and the comparison
itself, minor-only versions included."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conftest import MINIMAL
from infra.catalog import gke_versions
from infra.config import stack as config
from infra.config.cluster import RELEASE_CHANNELS
from infra.config.errors import ConfigError

OLD = {"RAPID": "1.32.1-gke.1000000", "REGULAR": "1.32.1-gke.1000000",
       "STABLE": "1.31.6-gke.1000000", "EXTENDED": "1.30.14-gke.1000000"}


def _problems(raw: dict[str, Any], defaults: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as e:
        config.parse(raw, channel_defaults=defaults)
    return e.value.problems


def _flex(channel: str | None = "REGULAR", version: str | None = None) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": "v5litepod-4", "capacity": {"mode": "flex-start"}}]
    if channel:
        raw["releaseChannel"] = channel
    if version:
        raw["gkeVersion"] = version
    return raw


# Was: a stack on a release channel got no version floor at all (flex-start, TPU7x,
# DRANET, the GPU families, Managed Lustre were checked only when gkeVersion was pinned).
def test_a_floor_is_checked_against_the_channels_default() -> None:
    assert _problems(_flex("STABLE"), OLD) == [
        "slices[0].capacity.mode: flex-start needs GKE 1.33.0-gke.1712000 or later; the "
        "STABLE channel's default version (GKE release notes, "
        f"{gke_versions.CHANNEL_DEFAULTS_AS_OF}) is 1.31.6-gke.1000000"]


def test_no_channel_and_no_version_is_the_regular_channel() -> None:
    [problem] = _problems(_flex(None), OLD)
    assert problem.endswith("the REGULAR channel's default version (GKE release notes, "
                            f"{gke_versions.CHANNEL_DEFAULTS_AS_OF}) is 1.32.1-gke.1000000")


def test_a_pinned_version_wins_over_the_channel() -> None:
    assert config.parse(_flex("STABLE", "1.33.5-gke.1080000"), channel_defaults=OLD).gke_version == \
        "1.33.5-gke.1080000"
    assert _problems(_flex("RAPID", "1.32.9-gke.1000000"))[0].endswith(
        "gkeVersion is 1.32.9-gke.1000000")


def test_lustre_and_gpu_floors_on_a_channel() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["releaseChannel"] = "EXTENDED"
    raw["slices"] = [{"accelerator": "a4x-highgpu-4g", "count": 1,
                      "capacity": {"mode": "reservation", "reservation": "r"}}]
    raw["queues"] = {"namespace": "train"}
    raw["storage"] = {"stores": [{"name": "lfs", "kind": "lustre", "capacityGib": 9000,
                                  "access": {"train": "read-write"}}]}
    problems = _problems(raw, OLD)
    assert any(p.startswith("slices[0].accelerator: A4X (GB200) with NVIDIA's DRA driver "
                            "(ComputeDomains, resource.k8s.io/v1) needs GKE 1.34")
               for p in problems), problems
    assert any(p.startswith("storage.stores[0].kind: Managed Lustre needs GKE "
                            "1.33.2-gke.4655000 or later") for p in problems), problems


def test_todays_table_passes_the_shipped_floors() -> None:
    for channel in RELEASE_CHANNELS:
        default = gke_versions.CHANNEL_DEFAULTS[channel]
        assert gke_versions.version_tuple(default)[3] > 0, default  # a full patch version
    config.parse(_flex("STABLE"))


@pytest.mark.parametrize("version,floor,older", [
    ("1.33", "1.33.2-gke.4655000", False),  # any patch of 1.33 may be the one
    ("1.32", "1.33.2-gke.4655000", True),
    ("1.33.2-gke.4654999", "1.33.2-gke.4655000", True),
    ("v1.33.2-gke.4655000", "1.33.2-gke.4655000", False),  # as a node reports it
    ("1.34.0-gke.1", "1.33.2-gke.4655000", False),
])
def test_below(version: str, floor: str, older: bool) -> None:
    assert gke_versions.below(version, floor) is older
