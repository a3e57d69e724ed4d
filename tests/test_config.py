"""The stack config parser: every rule's exact message, the defaults, and the example stacks.

Messages are compared whole: a user reads them, so a changed word is a changed contract.
Bugs found while writing these tests are kept as regression tests at the end.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from infra import program
from infra.config import stack as config
from infra.preview import harness
from infra.config.stack import AutoProvisioning, Capacity, Network, StackConfig, SystemPool
from infra.config.errors import ConfigError
from infra.program import StackConfigError
from conftest import STACK_FILES, evaluate_shipped

TOP_ALLOWED = ", ".join(config.TOP_LEVEL_KEYS)
SLICE_ALLOWED = ", ".join(config.SLICE_KEYS)
CAPACITY_ALLOWED = ", ".join(config.CAPACITY_KEYS)
MODES_ALLOWED = ", ".join(config.CAPACITY_MODES)

TWO_ZONES = ["us-central1-a", "us-central1-b"]

NO_RESERVATION = ("pools do not consume reservations (GKE: only mode: reservation may set "
                  "reservation affinity; spot, flex-start and queued nodes are provisioned "
                  "without one)")
GKE_NAME_RULE = ("lowercase letters, digits and hyphens, starting with a letter and ending "
                 "with a letter or digit)")
NO_POOLS = ("slices: declares no slice pools, no slice classes and nodeAutoProvisioning is off; "
            "a stack needs at least one source of accelerators")
NAP_ALLOWED = ("nvidia-b200, nvidia-gb200, nvidia-h100-80gb, nvidia-h100-mega-80gb, "
               "nvidia-h200-141gb, nvidia-l4, nvidia-tesla-a100, tpu-v4-podslice, "
               "tpu-v5-lite-podslice, tpu-v5p-slice, tpu-v6e-slice, tpu7, tpu7x")


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config.parse(raw)
    assert str(info.value) == "\n".join(info.value.problems)
    return info.value.problems


def with_slice(raw: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """``raw`` with one slice pool: ``fields`` over a v5litepod-16 pool (None drops a key)."""
    pool = {"accelerator": "v5litepod-16", **fields}
    raw["slices"] = [{k: v for k, v in pool.items() if v is not None}]
    return raw


# ----------------------------------------------------------------------------------
# Defaults


def test_minimal_config_defaults(raw: dict[str, Any]) -> None:
    cfg = config.parse(raw)
    assert isinstance(cfg, StackConfig)
    assert (cfg.project, cfg.region, cfg.zones, cfg.cluster_name) == (
        "test-project", "us-central1", ("us-central1-a",), "test")
    assert cfg.release_channel == "REGULAR"
    assert cfg.gke_version is None
    assert cfg.private_nodes is True
    assert cfg.private_endpoint is False
    assert cfg.deletion_protection is True
    assert cfg.authorized_networks == ()
    assert cfg.maintenance is None
    assert cfg.labels == {}
    assert cfg.auto_provisioning is None
    assert cfg.system_pool == SystemPool("e2-standard-8", 1, 3, 100)
    assert cfg.network == Network(
        create=True, name="test-net", subnetwork="test-nodes", nodes_cidr="10.0.0.0/20",
        pods_cidr="10.16.0.0/14", services_cidr="10.20.0.0/20", pods_range_name="pods",
        services_range_name="services", master_cidr="172.16.0.0/28", mtu=8896,
        gpu_cidr="192.168.0.0/16")
    [pool] = cfg.slices
    assert pool.name == "v5litepod-16"
    assert pool.accelerator.name == "v5litepod-16"
    assert pool.count == 1
    assert pool.placement == "compact"
    assert pool.zones == ("us-central1-a",)
    assert pool.capacity == Capacity("on-demand")
    assert pool.min_count == 0
    assert (pool.disk_size_gb, pool.disk_type, pool.gpu_driver_version) == (
        200, "pd-balanced", "LATEST")
    assert pool.node_pool_names() == ["v5litepod-16-0"]


def test_pinned_version_leaves_release_channel_unset(raw: dict[str, Any]) -> None:
    raw["gkeVersion"] = "1.33.5-gke.1080000"
    cfg = config.parse(raw)
    assert (cfg.release_channel, cfg.gke_version) == (None, "1.33.5-gke.1080000")


def test_capacity_as_plain_string(raw: dict[str, Any]) -> None:
    raw["slices"][0]["capacity"] = "spot"
    assert config.parse(raw).slices[0].capacity == Capacity("spot")


@pytest.mark.parametrize("accelerator, capacity, expected", [
    ("v5litepod-4", {"mode": "reservation", "reservation": "r1"}, 3),
    ("v5litepod-4", "spot", 0),
    ("v5litepod-4", "on-demand", 0),
    ("v5litepod-4", "flex-start", 0),
])
def test_min_count_default(raw: dict[str, Any], accelerator: str, capacity: Any,
                           expected: int) -> None:
    raw["slices"] = [{"accelerator": accelerator, "count": 3, "capacity": capacity}]
    assert config.parse(raw).slices[0].min_count == expected


def test_shared_reservation_and_seven_day_run(raw: dict[str, Any]) -> None:
    raw["slices"] = [
        {"accelerator": "v5litepod-16",
         "capacity": {"mode": "reservation", "reservation": "projects/other-proj/reservations/r1"}},
        {"accelerator": "v5litepod-4", "capacity": {"mode": "flex-start", "maxRunDuration": "7d"}},
    ]
    res, flex = config.parse(raw).slices
    assert res.capacity == Capacity("reservation", "projects/other-proj/reservations/r1")
    assert flex.capacity == Capacity("flex-start", max_run_seconds=7 * 24 * 3600)


def test_auto_provisioning_without_slices(raw: dict[str, Any]) -> None:
    raw["slices"] = []
    raw["nodeAutoProvisioning"] = {"accelerators": {"tpu-v6e-slice": 64}}
    cfg = config.parse(raw)
    assert cfg.slices == ()
    assert cfg.auto_provisioning == AutoProvisioning(1000, 4000, {"tpu-v6e-slice": 64})


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_stack_file_parses(path: Any) -> None:
    cfg = config.parse(harness.read_stack_file(path))
    assert cfg.slices


def test_stack_files_exist() -> None:
    assert len(STACK_FILES) >= 4


# ----------------------------------------------------------------------------------
# Keys, required values and types


def test_unknown_top_level_key(raw: dict[str, Any]) -> None:
    raw["clustername"] = "x"
    assert problems(raw) == [
        f"clustername: unknown key; did you mean clusterName? (allowed: {TOP_ALLOWED})"]


def test_unknown_slice_key(raw: dict[str, Any]) -> None:
    assert problems(with_slice(raw, zone="us-central1-a")) == [
        f"slices[0].zone: unknown key; did you mean zones? (allowed: {SLICE_ALLOWED})"]


def test_unknown_capacity_key(raw: dict[str, Any]) -> None:
    assert problems(with_slice(raw, capacity={"mode": "spot", "reservaton": "r1"})) == [
        "slices[0].capacity.reservaton: unknown key; did you mean reservation? "
        f"(allowed: {CAPACITY_ALLOWED})"]


def test_missing_required_keys(raw: dict[str, Any]) -> None:
    for key in ("project", "region", "zones", "clusterName"):
        del raw[key]
    assert problems(raw) == ["project: is required", "region: is required",
                             "zones: is required", "clusterName: is required"]


def test_missing_accelerator(raw: dict[str, Any]) -> None:
    assert problems(with_slice(raw, accelerator=None, count=2)) == [
        "slices[0].accelerator: is required"]


@pytest.mark.parametrize("fields, expected", [
    ({"count": "2"}, "slices[0].count: '2' is not an integer"),
    ({"count": True}, "slices[0].count: true is not an integer"),
    ({"diskSizeGb": False}, "slices[0].diskSizeGb: false is not an integer"),
    ({"placement": 1}, "slices[0].placement: 1 is not a string"),
    ({"count": 0}, "slices[0].count: 0 is below 1"),
])
def test_slice_types(raw: dict[str, Any], fields: dict[str, Any], expected: str) -> None:
    assert problems(with_slice(raw, **fields)) == [expected]


@pytest.mark.parametrize("key, value, expected", [
    ("systemPool", {"minNodes": True}, "systemPool.minNodes: true is not an integer"),
    ("systemPool", {"maxNodes": "3"}, "systemPool.maxNodes: '3' is not an integer"),
    ("zones", "us-central1-a", "zones: 'us-central1-a' is not a list"),
    ("privateNodes", "yes", "privateNodes: 'yes' is not true or false"),
    ("network", {"mtu": 1500.0}, "network.mtu: 1500.0 is not an integer"),
])
def test_top_level_types(raw: dict[str, Any], key: str, value: Any, expected: str) -> None:
    raw[key] = value
    assert problems(raw) == [expected]


def test_bad_accelerator_suggests_neighbours(raw: dict[str, Any]) -> None:
    raw["slices"].append({"accelerator": "v5p-12"})
    assert problems(raw) == [
        "slices[1].accelerator: 'v5p-12' is not a TPU v5p slice; did you mean v5p-8 or v5p-16?"]


# ----------------------------------------------------------------------------------
# Project, region, zones, names


def test_zone_not_in_region(raw: dict[str, Any]) -> None:
    raw["zones"] = ["us-central1-a", "us-east1-b"]
    assert problems(raw) == ["zones[1]: 'us-east1-b' is not in region 'us-central1'"]


def test_not_a_zone(raw: dict[str, Any]) -> None:
    raw["zones"] = ["us-central1"]
    assert problems(raw) == ["zones[0]: 'us-central1' is not a GCP zone such as us-central1-a"]


def test_no_zones(raw: dict[str, Any]) -> None:
    raw["zones"] = []
    assert problems(raw) == ["zones: must list at least one zone"]


def test_duplicate_zone(raw: dict[str, Any]) -> None:
    raw["zones"] = ["us-central1-a", "us-central1-a"]
    assert problems(raw) == ["zones: lists a zone twice"]


def test_bad_region(raw: dict[str, Any]) -> None:
    raw["region"] = "uscentral"
    assert problems(raw) == [
        "region: 'uscentral' is not a GCP region such as us-central1",
        "zones[0]: 'us-central1-a' is not in region 'uscentral'"]


@pytest.mark.parametrize("project", ["Test_Project", "proj", "1project", "a" * 31])
def test_bad_project(raw: dict[str, Any], project: str) -> None:
    raw["project"] = project
    assert problems(raw) == [
        f"project: '{project}' is not a GCP project ID (6-30 lowercase letters, digits, "
        "hyphens; starts with a letter)"]


@pytest.mark.parametrize("name", ["Test", "test-", "1test", "t" * 41])
def test_bad_cluster_name(raw: dict[str, Any], name: str) -> None:
    # Explicit network names, so the cluster name is not carried into derived defaults.
    raw["network"] = {"name": "net", "subnetwork": "nodes"}
    raw["clusterName"] = name
    assert problems(raw) == [f"clusterName: '{name}' is not a valid GKE name (1-40 "
                             + GKE_NAME_RULE]


def test_cluster_name_of_forty_characters(raw: dict[str, Any]) -> None:
    raw["clusterName"] = "t" * 40
    assert config.parse(raw).cluster_name == "t" * 40


# ----------------------------------------------------------------------------------
# Network CIDRs


@pytest.mark.parametrize("key, value, expected", [
    ("nodesCidr", "not-a-cidr",
     "network.nodesCidr: 'not-a-cidr' is not a CIDR block such as 10.0.0.0/20"),
    ("nodesCidr", "10.0.0.0/33",
     "network.nodesCidr: '10.0.0.0/33' is not a CIDR block such as 10.0.0.0/20"),
    ("podsCidr", "10.16.0.1/14",
     "network.podsCidr: '10.16.0.1/14' is not a CIDR block such as 10.0.0.0/20"),
    ("podsCidr", "8.8.0.0/14", "network.podsCidr: '8.8.0.0/14' is not inside a private range "
     "(10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10)"),
    ("servicesCidr", "10.0.0.0/20",
     "network.servicesCidr: '10.0.0.0/20' overlaps network.nodesCidr '10.0.0.0/20'; the "
     "ranges must be disjoint"),
    ("gpuNetworksCidr", "10.16.4.0/22",
     "network.gpuNetworksCidr: '10.16.4.0/22' overlaps network.podsCidr '10.16.0.0/14'; the "
     "ranges must be disjoint"),
    ("masterCidr", "172.16.0.0/27",
     "network.masterCidr: '172.16.0.0/27' must be a /28 (GKE's control-plane range)"),
])
def test_cidr_rules(raw: dict[str, Any], key: str, value: str, expected: str) -> None:
    raw["network"] = {key: value}
    assert problems(raw) == [expected]


def test_gpu_networks_cidr_too_small(raw: dict[str, Any]) -> None:
    raw["network"] = {"gpuNetworksCidr": "192.168.0.0/22"}
    raw["slices"] = [{"accelerator": "h100-mega-80gb-8"}]
    assert problems(raw) == [
        "network.gpuNetworksCidr: '192.168.0.0/22' holds 4 /24 subnets; the stack's GPU data "
        "networks need 8"]


def test_gpu_networks_cidr_just_big_enough(raw: dict[str, Any]) -> None:
    raw["network"] = {"gpuNetworksCidr": "192.168.0.0/21"}
    raw["slices"] = [{"accelerator": "h100-mega-80gb-8"}]
    assert config.parse(raw).network.gpu_cidr == "192.168.0.0/21"


# ----------------------------------------------------------------------------------
# Capacity rules


@pytest.mark.parametrize("accelerator, capacity, expected", [
    ("v5litepod-16", {"mode": "spot", "reservation": "r1"},
     f"slices[0].capacity.reservation: spot {NO_RESERVATION}"),
    ("v5litepod-16", {"mode": "flex-start", "reservation": "r1"},
     f"slices[0].capacity.reservation: flex-start {NO_RESERVATION}"),
    ("v5litepod-8-1vm", {"mode": "queued", "reservation": "r1"},
     f"slices[0].capacity.reservation: queued {NO_RESERVATION}"),
    ("v5litepod-16", {"mode": "spot", "block": "b1"},
     f"slices[0].capacity.block: spot {NO_RESERVATION}"),
    ("v5litepod-16", {"mode": "reservation"},
     "slices[0].capacity.reservation: is required with mode: reservation (the name of a "
     "specific reservation, or projects/PROJECT/reservations/NAME when shared)"),
    ("v5litepod-16", {"mode": "reservation", "reservation": "Bad_Res"},
     "slices[0].capacity.reservation: 'Bad_Res' is not a reservation name or "
     "projects/PROJECT/reservations/NAME"),
    ("v5litepod-16", {"mode": "reservation", "reservation": "r1", "block": "Block_1"},
     "slices[0].capacity.block: 'Block_1' is not a reservation block name"),
    ("v5litepod-16", {"mode": "spott"},
     "slices[0].capacity.mode: 'spott' is not a capacity mode; did you mean spot? "
     f"(allowed: {MODES_ALLOWED})"),
    ("v5litepod-16", "ondemand",
     "slices[0].capacity.mode: 'ondemand' is not a capacity mode; did you mean on-demand? "
     f"(allowed: {MODES_ALLOWED})"),
    ("v5litepod-16", {"mode": "flex-start", "spot": True},
     "slices[0].capacity.spot: flex-start, queued and spot are distinct capacity modes and "
     "cannot be combined (GKE: flex-start VMs are not Spot VMs); set mode: spot or "
     "mode: flex-start"),
    ("v5litepod-16", {"mode": "flex-start", "maxRunDuration": "8d"},
     "slices[0].capacity.maxRunDuration: '8d' is outside 1s-7d (GKE: flex-start VMs run at "
     "most seven days)"),
    ("v5litepod-16", {"mode": "flex-start", "maxRunDuration": "604801s"},
     "slices[0].capacity.maxRunDuration: '604801s' is outside 1s-7d (GKE: flex-start VMs run "
     "at most seven days)"),
    ("v5litepod-16", {"mode": "flex-start", "maxRunDuration": 0},
     "slices[0].capacity.maxRunDuration: 0 is outside 1s-7d (GKE: flex-start VMs run at most "
     "seven days)"),
    ("v5litepod-16", {"mode": "flex-start", "maxRunDuration": "1w"},
     "slices[0].capacity.maxRunDuration: '1w' is not a duration such as 86400s, 72h or 7d"),
    ("v5litepod-16", {"mode": "spot", "maxRunDuration": "1d"},
     "slices[0].capacity.maxRunDuration: only flex-start and queued pools have a maximum run "
     "duration, not spot"),
    # GKE's flex-start page: TPU v5e, v5p and v6e; "TPU v3 and v4 are not supported"; no
    # TPU7x or TPU7 listed (the old code refused only v4).
    ("v4-8", "flex-start",
     "slices[0].capacity.mode: flex-start does not support v4-8 (GKE supports flex-start on "
     "TPU v5e, v5p, v6e only: https://cloud.google.com/kubernetes-engine/docs/concepts/dws)"),
    ("tpu7x-8", "flex-start",
     "slices[0].capacity.mode: flex-start does not support tpu7x-8 (GKE supports flex-start on "
     "TPU v5e, v5p, v6e only: https://cloud.google.com/kubernetes-engine/docs/concepts/dws)"),
    ("tpu7-4x4x4", "flex-start",
     "slices[0].capacity.mode: flex-start does not support tpu7-128 (GKE supports flex-start "
     "on TPU v5e, v5p, v6e only: https://cloud.google.com/kubernetes-engine/docs/concepts/dws)"),
])
def test_capacity_rules(raw: dict[str, Any], accelerator: str, capacity: Any,
                        expected: str) -> None:
    assert problems(with_slice(raw, accelerator=accelerator, capacity=capacity)) == [expected]


@pytest.mark.parametrize("fields, expected", [
    ({"accelerator": "v5litepod-8-1vm", "capacity": "queued", "minCount": 1},
     "slices[0].minCount: 1: queued pools must autoscale from zero (GKE: flex-start and queued "
     "provisioning need --num-nodes=0 with autoscaling)"),
    ({"accelerator": "v5litepod-8-1vm", "capacity": "flex-start", "minCount": 2},
     "slices[0].minCount: 2: flex-start pools must autoscale from zero (GKE: flex-start and "
     "queued provisioning need --num-nodes=0 with autoscaling)"),
    ({"accelerator": "v5litepod-16", "minCount": 0},
     "slices[0].minCount: multi-host TPU slices (v5litepod-16) are created whole; minCount "
     "applies to single-host and GPU pools only"),
    ({"accelerator": "v5litepod-8-1vm", "count": 2, "minCount": 3},
     "slices[0].minCount: 3 is outside 0-2 (count)"),
    ({"accelerator": "v5litepod-8-1vm", "count": 2, "minCount": -1},
     "slices[0].minCount: -1 is outside 0-2 (count)"),
    ({"accelerator": "v5litepod-8-1vm", "capacity": "queued", "placement": "compact"},
     "slices[0].placement: compact placement is not supported with queued provisioning (GKE: "
     "queued provisioning node pools take no compact placement policy; only a multi-host TPU "
     "slice keeps its topology placement)"),
    ({"accelerator": "v5litepod-16", "placement": "none"},
     "slices[0].placement: 'none': a multi-host TPU slice (v5litepod-16) is placed as one "
     "compact unit with its topology; remove placement or set it to compact"),
    ({"accelerator": "v5litepod-16", "placement": "tight"},
     "slices[0].placement: 'tight' is not a placement; allowed: auto, compact, none"),
    ({"accelerator": "v5litepod-16", "gpuDriverVersion": "LATEST"},
     "slices[0].gpuDriverVersion: applies to GPU pools only, not v5litepod-16"),
    ({"accelerator": "l4-1", "gpuDriverVersion": "R535"},
     "slices[0].gpuDriverVersion: 'R535' is not a GKE GPU driver version; allowed: DEFAULT, "
     "LATEST, INSTALLATION_DISABLED"),
    ({"zones": ["us-central1-c"]},
     "slices[0].zones[0]: 'us-central1-c' is not one of the stack's zones (us-central1-a)"),
])
def test_slice_rules(raw: dict[str, Any], fields: dict[str, Any], expected: str) -> None:
    assert problems(with_slice(raw, **fields)) == [expected]


def test_compact_placement_needs_one_zone(raw: dict[str, Any]) -> None:
    raw["zones"] = TWO_ZONES
    assert problems(with_slice(raw, accelerator="v5litepod-8-1vm", placement="compact",
                               zones=TWO_ZONES)) == [
        "slices[0].zones: us-central1-a, us-central1-b: compact placement needs a single zone "
        "(GKE places a compact node pool's nodes in one zone)"]


def test_multi_host_tpu_in_two_zones(raw: dict[str, Any]) -> None:
    # A multi-host slice's placement resolves to compact, so the compact rule speaks first.
    raw["zones"] = TWO_ZONES
    assert problems(with_slice(raw, zones=TWO_ZONES)) == [
        "slices[0].zones: us-central1-a, us-central1-b: compact placement needs a single zone "
        "(GKE places a compact node pool's nodes in one zone)"]


def test_multi_host_tpu_in_two_zones_without_placement(raw: dict[str, Any]) -> None:
    raw["zones"] = TWO_ZONES
    assert problems(with_slice(raw, zones=TWO_ZONES, placement="none")) == [
        "slices[0].zones: us-central1-a, us-central1-b: a multi-host TPU slice lives in one "
        "zone; list a single zone",
        "slices[0].placement: 'none': a multi-host TPU slice (v5litepod-16) is placed as one "
        "compact unit with its topology; remove placement or set it to compact"]


def test_single_host_pool_spans_zones(raw: dict[str, Any]) -> None:
    raw["zones"] = TWO_ZONES
    raw["slices"] = [{"accelerator": "v5litepod-8-1vm", "zones": TWO_ZONES}]
    pool = config.parse(raw).slices[0]
    assert (pool.zones, pool.placement) == (tuple(TWO_ZONES), "none")


@pytest.mark.parametrize("version, accelerator, capacity, expected", [
    ("1.32.3-gke.100", "v5litepod-16", "flex-start",
     "slices[0].capacity.mode: flex-start needs GKE 1.33.0-gke.1712000 or later; gkeVersion "
     "is 1.32.3-gke.100"),
    ("1.33.0-gke.1711999", "v5litepod-8-1vm", "queued",
     "slices[0].capacity.mode: queued needs GKE 1.33.0-gke.1712000 or later; gkeVersion is "
     "1.33.0-gke.1711999"),
    # GPUs have their own, earlier flex-start minimum (was: the TPU one applied to GPUs)
    ("1.32.2-gke.1651999", "l4-1", "flex-start",
     "slices[0].capacity.mode: flex-start needs GKE 1.32.2-gke.1652000 or later; gkeVersion "
     "is 1.32.2-gke.1651999"),
    ("1.31", "h100-80gb-8", "queued",
     "slices[0].capacity.mode: queued needs GKE 1.32.2-gke.1652000 or later; gkeVersion "
     "is 1.31"),
    ("1.33.5-gke.100", "tpu7x-8", "on-demand",
     "slices[0].accelerator: TPU7x (Ironwood) needs GKE 1.34.0-gke.2201000 or later; "
     "gkeVersion is 1.33.5-gke.100"),
    ("1.34.0-gke.2200999", "tpu7x-8", "on-demand",
     "slices[0].accelerator: TPU7x (Ironwood) needs GKE 1.34.0-gke.2201000 or later; "
     "gkeVersion is 1.34.0-gke.2200999"),
    ("1.33", "tpu7x-8", "on-demand",
     "slices[0].accelerator: TPU7x (Ironwood) needs GKE 1.34.0-gke.2201000 or later; "
     "gkeVersion is 1.33"),
])
def test_gke_version_minimums(raw: dict[str, Any], version: str, accelerator: str,
                              capacity: str, expected: str) -> None:
    raw["gkeVersion"] = version
    assert problems(with_slice(raw, accelerator=accelerator, capacity=capacity)) == [expected]


@pytest.mark.parametrize("version, accelerator, capacity", [
    ("1.33.0-gke.1712000", "v5litepod-16", "flex-start"),
    ("1.32.2-gke.1652000", "l4-1", "flex-start"),
    ("1.32", "h100-80gb-8", "queued"),
    ("1.34.0-gke.2201000", "tpu7x-8", "on-demand"),
    ("1.34", "tpu7x-8", "on-demand"),
])
def test_gke_version_minimums_met(raw: dict[str, Any], version: str, accelerator: str,
                                  capacity: str) -> None:
    raw["gkeVersion"] = version
    raw["slices"] = [{"accelerator": accelerator, "capacity": capacity}]
    assert config.parse(raw).slices[0].capacity.mode == capacity


def test_queued_multi_host_tpu7x(raw: dict[str, Any]) -> None:
    assert problems(with_slice(raw, accelerator="tpu7x-16", capacity="queued")) == [
        "slices[0].capacity.mode: queued provisioning does not support multi-host TPU7x "
        "slices, which need a workload policy; use spot, reservation or on-demand"]
    assert problems(with_slice(raw, accelerator="tpu7-4x4x4", capacity="queued")) == [
        "slices[0].capacity.mode: queued provisioning does not support multi-host TPU7 "
        "slices, which need a workload policy; use spot, reservation or on-demand"]


def test_queued_multi_host_tpu_keeps_compact_placement(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5p-128", "capacity": "queued"}]
    pool = config.parse(raw).slices[0]
    assert (pool.capacity.mode, pool.placement, pool.min_count) == ("queued", "compact", 0)


def test_only_pool_invalid_is_not_reported_as_missing(raw: dict[str, Any]) -> None:
    raw["slices"][0]["count"] = "2"
    assert problems(raw) == ["slices[0].count: '2' is not an integer"]


# ----------------------------------------------------------------------------------
# Node pool names and labels


def test_duplicate_node_pool_names(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-4"}, {"accelerator": "v5litepod-4", "count": 2}]
    assert problems(raw) == [
        "slices[1].name: node pool name 'v5litepod-4' is already used by slices[0]; "
        "give each pool its own name"]


def test_multi_host_suffix_collides_with_a_name(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-16", "count": 2},
                     {"accelerator": "v5litepod-4", "name": "v5litepod-16-1"}]
    assert problems(raw) == [
        "slices[1].name: node pool name 'v5litepod-16-1' is already used by slices[0]; "
        "give each pool its own name"]



@pytest.mark.parametrize("accelerator, count, name, limit", [
    ("v5litepod-4", 1, "p" * 41, 40),  # one pool, named as given
    ("v5litepod-16", 1, "p" * 39, 38),  # p...-0
    ("v5litepod-16", 11, "p" * 38, 37),  # p...-10
])
def test_pool_name_too_long(raw: dict[str, Any], accelerator: str, count: int, name: str,
                            limit: int) -> None:
    assert problems(with_slice(raw, accelerator=accelerator, count=count, name=name)) == [
        f"slices[0].name: '{name}' is not a valid GKE name (1-{limit} " + GKE_NAME_RULE]


@pytest.mark.parametrize("accelerator, count, name, longest", [
    ("v5litepod-4", 1, "p" * 40, "p" * 40),
    ("v5litepod-16", 1, "p" * 38, "p" * 38 + "-0"),
    ("v5litepod-16", 11, "p" * 37, "p" * 37 + "-10"),
])
def test_pool_name_at_the_limit(raw: dict[str, Any], accelerator: str, count: int, name: str,
                                longest: str) -> None:
    raw["slices"] = [{"accelerator": accelerator, "count": count, "name": name}]
    names = config.parse(raw).slices[0].node_pool_names()
    assert max(names, key=len) == longest and len(longest) == 40


def test_bad_labels(raw: dict[str, Any]) -> None:
    raw["labels"] = {"Team": "x", "env": "Prod", "ok": "fine_value-1"}
    assert problems(raw) == [
        "labels.Team: is not a GCP label key (lowercase letters, digits, '-' and '_', starting "
        "with a letter, at most 63 characters)",
        "labels.env: 'Prod' is not a GCP label value (at most 63 lowercase letters, digits, "
        "'-' and '_')"]


def test_bad_slice_label(raw: dict[str, Any]) -> None:
    assert problems(with_slice(raw, labels={"owner": "Bad Value"})) == [
        "slices[0].labels.owner: 'Bad Value' is not a GCP label value (at most 63 lowercase "
        "letters, digits, '-' and '_')"]


# ----------------------------------------------------------------------------------
# Node auto-provisioning and the need for accelerators


def test_nap_unknown_accelerator(raw: dict[str, Any]) -> None:
    raw["slices"] = []
    raw["nodeAutoProvisioning"] = {"accelerators": {"nvidia-h100-80g": 16, "nvidia-l4": 8}}
    assert problems(raw) == [
        "nodeAutoProvisioning.accelerators.nvidia-h100-80g: 'nvidia-h100-80g' is not a GKE "
        f"accelerator type; did you mean nvidia-h100-80gb? (allowed: {NAP_ALLOWED})"]


def test_nap_bad_limit(raw: dict[str, Any]) -> None:
    raw["nodeAutoProvisioning"] = {"accelerators": {"nvidia-l4": 0, "tpu-v6e-slice": 8}}
    assert problems(raw) == [
        "nodeAutoProvisioning.accelerators.nvidia-l4: 0 is not a positive chip count"]


def test_nap_without_accelerators(raw: dict[str, Any]) -> None:
    raw["slices"] = []
    raw["nodeAutoProvisioning"] = {"cpu": 64}
    assert problems(raw) == [
        "nodeAutoProvisioning.accelerators: lists no accelerator limits; auto-provisioning "
        "creates accelerator pools only up to these limits"]


@pytest.mark.parametrize("slices", [[], None], ids=["empty", "absent"])
def test_no_slices_and_no_nap(raw: dict[str, Any], slices: Any) -> None:
    if slices is None:
        del raw["slices"]
    else:
        raw["slices"] = slices
    assert problems(raw) == [NO_POOLS]


# ----------------------------------------------------------------------------------
# All problems at once, and how the Pulumi program reports them


def test_collects_every_problem_in_order(raw: dict[str, Any]) -> None:
    raw["clustername"] = "x"
    raw["project"] = "Bad"
    raw["zones"] = ["us-central1-a", "us-east1-b"]
    raw["slices"].append({"accelerator": "v5p-12"})
    raw["slices"].append({"accelerator": "v5litepod-4", "capacity": "spott"})
    assert problems(raw) == [
        f"clustername: unknown key; did you mean clusterName? (allowed: {TOP_ALLOWED})",
        "project: 'Bad' is not a GCP project ID (6-30 lowercase letters, digits, hyphens; "
        "starts with a letter)",
        "zones[1]: 'us-east1-b' is not in region 'us-central1'",
        "slices[1].accelerator: 'v5p-12' is not a TPU v5p slice; did you mean v5p-8 or v5p-16?",
        "slices[2].capacity.mode: 'spott' is not a capacity mode; did you mean spot? "
        f"(allowed: {MODES_ALLOWED})",
    ]


def test_load_config_lists_every_problem(raw: dict[str, Any]) -> None:
    raw["project"] = "Bad"
    raw["zones"] = ["us-east1-b"]
    with pytest.raises(StackConfigError) as info:
        program.load_config(raw)
    assert str(info.value) == (
        "invalid stack config (2 problems):\n"
        "  project: 'Bad' is not a GCP project ID (6-30 lowercase letters, digits, hyphens; "
        "starts with a letter)\n"
        "  zones[0]: 'us-east1-b' is not in region 'us-central1'")
    assert isinstance(info.value, pulumi.RunError)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_load_config_one_problem(raw: dict[str, Any]) -> None:
    raw["zones"] = ["us-central1-a", "us-central1-a"]
    with pytest.raises(StackConfigError) as info:
        program.load_config(raw)
    assert str(info.value) == "invalid stack config (1 problem):\n  zones: lists a zone twice"


def test_stack_config_error_is_a_run_error() -> None:
    assert issubclass(StackConfigError, pulumi.RunError)
    assert not issubclass(StackConfigError, ConfigError)


class _Built(Exception):
    pass


def _no_build(*args: Any, **kwargs: Any) -> Any:
    raise _Built


def test_evaluate_reaches_build_for_a_good_config(raw: dict[str, Any],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The control for the test below: the patched build is what evaluate calls.
    monkeypatch.setattr(program, "build", _no_build)
    with pytest.raises(_Built):
        harness.evaluate(raw)


@pytest.mark.parametrize("change", [
    {"zones": ["us-east1-b"]},
    {"network": {"gpuNetworksCidr": "192.168.0.0/22"},
     "slices": [{"accelerator": "h100-mega-80gb-8"}]},
], ids=["rule", "gpu-cidr"])
def test_evaluate_stops_before_any_resource(raw: dict[str, Any], change: dict[str, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(program, "build", _no_build)
    raw.update(change)
    with pytest.raises(StackConfigError, match=r"^invalid stack config \(1 problem\):\n  "):
        harness.evaluate(raw)


# ----------------------------------------------------------------------------------
# Regressions: bugs found while these tests were written, now fixed


PRIVATE = "(10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10)"


def test_duplicate_name_index_after_an_invalid_slice(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "bogus-1"}, {"accelerator": "v5litepod-4"},
                     {"accelerator": "v5litepod-4"}]
    assert "slices[2].name: node pool name 'v5litepod-4' is already used by slices[1]; " \
           "give each pool its own name" in problems(raw)


def test_flex_start_rejects_old_minor_version(raw: dict[str, Any]) -> None:
    raw["gkeVersion"] = "1.32"
    raw["slices"][0]["capacity"] = "flex-start"
    assert problems(raw) == [
        "slices[0].capacity.mode: flex-start needs GKE 1.33.0-gke.1712000 or later; gkeVersion "
        "is 1.32"]


def test_loopback_range_is_not_private(raw: dict[str, Any]) -> None:
    raw["network"] = {"nodesCidr": "127.0.0.0/20"}
    assert problems(raw) == [
        f"network.nodesCidr: '127.0.0.0/20' is not inside a private range {PRIVATE}"]


def test_shared_address_space_is_accepted(raw: dict[str, Any]) -> None:
    raw["network"] = {"podsCidr": "100.64.0.0/14"}
    assert config.parse(raw).network.pods_cidr == "100.64.0.0/14"


def test_bad_cluster_name_reported_once(raw: dict[str, Any]) -> None:
    raw["clusterName"] = "Test"
    assert problems(raw) == ["clusterName: 'Test' is not a valid GKE name (1-40 " + GKE_NAME_RULE]


def test_system_name_message_names_the_system_pool(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-4", "name": "system"}]
    assert problems(raw) == [
        "slices[0].name: 'system' is the name of the stack's system node pool; give the slice "
        "pool another name"]


# ----------------------------------------------------------------------------------
# Layers: the config parser imports one way only


CONFIG_LAYERS = ["infra.config.errors", "infra.config.reader", "infra.config.fields", "infra.config.network",
                 "infra.config.maintenance", "infra.config.cluster", "infra.config.gpu", "infra.config.dynamic_slicing", "infra.config.pool_settings", "infra.config.adopted", "infra.config.capacity", "infra.config.dranet", "infra.config.slices", "infra.config.class_capacity",
                 "infra.config.class_nodes", "infra.config.slice_classes",
                 "infra.config.pathways", "infra.config.addons", "infra.config.registry", "infra.config.store_kinds", "infra.config.storage",
                 "infra.config.checkpointing",
                 "infra.config.tensorboard",
                 "infra.config.replace",
                 "infra.config.observability",
                 "infra.config.stack"]


def _infra_imports(module: str) -> set[str]:
    import ast

    from conftest import ROOT

    path = ROOT / (module.replace(".", "/") + ".py")
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from infra.catalog import tables` depends on the module infra.catalog.tables
            subs = {f"{node.module}.{a.name}" for a in node.names
                    if _is_module(ROOT, f"{node.module}.{a.name}")}
            names |= subs or {node.module}
    return {n for n in names if n.startswith("infra.")}


def _is_module(root: Any, name: str) -> bool:
    base = root.joinpath(*name.split("."))
    return bool(base.with_suffix(".py").is_file() or (base / "__init__.py").is_file())


@pytest.mark.parametrize("module", CONFIG_LAYERS)
def test_config_layers_import_only_layers_below(module: str) -> None:
    below = set(CONFIG_LAYERS[:CONFIG_LAYERS.index(module)])
    # Shared pure tables any layer may read.
    allowed = below | {"infra.catalog.tables", "infra.contract.images", "infra.catalog.machine_shapes",
                       "infra.catalog.boot_disks", "infra.config.secrets",
                       "infra.catalog.gke_versions", "infra.record",
                       "infra.catalog.pod_resources", "infra.contract.maintenance"}
    assert _infra_imports(module) <= allowed, _infra_imports(module) - allowed


def test_no_import_circle_in_infra() -> None:
    from conftest import ROOT

    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts)
               for p in (ROOT / "infra").rglob("*.py") if p.name != "__init__.py"}
    graph = {m: _infra_imports(m) & modules for m in modules}
    done: set[str] = set()

    def visit(m: str, stack: tuple[str, ...]) -> None:
        assert m not in stack, " -> ".join(stack[stack.index(m):] + (m,))
        if m in done:
            return
        for n in sorted(graph[m]):
            visit(n, stack + (m,))
        done.add(m)

    for m in sorted(modules):
        visit(m, ())


@pytest.mark.parametrize("module", CONFIG_LAYERS + ["infra.config.stack_file", "infra.config.secrets",
                                                    "infra.catalog.machine_shapes"])
def test_config_layers_do_not_load_pulumi(module: str) -> None:
    import subprocess
    import sys

    from conftest import ROOT

    code = (f"import sys, {module}; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')); assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# ----------------------------------------------------------------------------------
# Pod IP budget, node limits and machine types


@pytest.mark.parametrize("accelerator,expected", [
    ("v5litepod-16", 15), ("v5litepod-4", 15), ("h100-mega-80gb-8", 32), ("l4-8", 32),
    ("n2-standard-32-4", None)])
def test_max_pods_defaults(raw: dict[str, Any], accelerator: str, expected: int | None) -> None:
    raw["slices"] = [{"accelerator": accelerator}]
    if accelerator.startswith("h100"):
        raw["network"] = {"gpuNetworksCidr": "192.168.0.0/20"}
    assert config.parse(raw).slices[0].max_pods_per_node == expected


def test_max_pods_override(raw: dict[str, Any]) -> None:
    raw["slices"][0]["maxPodsPerNode"] = 32
    raw["systemPool"] = {"maxPodsPerNode": 64}
    cfg = config.parse(raw)
    assert cfg.slices[0].max_pods_per_node == 32
    assert cfg.system_pool.max_pods_per_node == 64


@pytest.mark.parametrize("max_pods,size", [(8, 16), (9, 32), (15, 32), (16, 32), (17, 64),
                                           (32, 64), (33, 128), (64, 128), (65, 256),
                                           (110, 256)])
def test_pods_range_per_node(max_pods: int, size: int) -> None:
    from infra.config.network import pods_range_size

    assert pods_range_size(max_pods) == size


def test_default_pods_range_holds_a_large_tpu_fleet(raw: dict[str, Any]) -> None:
    # 4,000 v5e hosts at 15 pods (/27 each) fit the default /14; at GKE's default of 110
    # pods (/24 each) the same range fills at 1,024 nodes.
    raw["network"] = {"nodesCidr": "10.0.0.0/19"}
    raw["slices"] = [{"accelerator": "v5litepod-16", "count": 1000}]
    assert config.parse(raw).slices[0].nodes == 4000
    raw["slices"][0]["maxPodsPerNode"] = 110
    assert problems(raw) == [
        "network.podsCidr: '10.16.0.0/14' holds 262,144 pod addresses; the stack's nodes "
        "reserve 1,024,768 (system pool: 3 x /24, v5litepod-16: 4,000 x /24); use a /12 or "
        "larger, or lower maxPodsPerNode"]


def test_system_pool_counts_per_zone(raw: dict[str, Any]) -> None:
    raw["zones"] = TWO_ZONES
    raw["network"] = {"podsCidr": "10.16.0.0/23"}  # 512 addresses: two /24 nodes
    raw["systemPool"] = {"minNodes": 1, "maxNodes": 1}
    raw["slices"] = [{"accelerator": "n2-standard-32-1", "maxPodsPerNode": 8, "count": 1}]
    assert problems(raw) == [
        "network.podsCidr: '10.16.0.0/23' holds 512 pod addresses; the stack's nodes reserve "
        "528 (system pool: 2 x /24, n2-standard-32-1: 1 x /28); use a /22 or larger, or "
        "lower maxPodsPerNode"]


@pytest.mark.parametrize("machine", ["e2-standard-2", "e2-standard-32", "n2-standard-128",
                                     "n2d-standard-224", "n4-standard-80", "c3-standard-176",
                                     "c3d-standard-360", "c4-standard-288", "c4a-standard-72",
                                     "t2a-standard-48", "t2d-standard-60"])
def test_real_machine_types(raw: dict[str, Any], machine: str) -> None:
    raw["systemPool"] = {"machineType": machine}
    assert config.parse(raw).system_pool.machine_type == machine


@pytest.mark.parametrize("machine", ["e2-standard-64", "n2-standard-30", "n4-standard-96",
                                     "c3-standard-16", "c4a-standard-96", "e2-standrd-8",
                                     "m9-standard-8"])
def test_machine_types_that_do_not_exist(raw: dict[str, Any], machine: str) -> None:
    raw["systemPool"] = {"machineType": machine}
    [problem] = problems(raw)
    assert problem.startswith(f"systemPool.machineType: '{machine}' is not a")


def test_stack_file_lines_and_secrets(tmp_path: Any) -> None:
    from infra.config import stack_file

    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  accelstack:masterAuthorizedNetworks:\n    secure: v1:abc\n"
                    "  accelstack:slices:\n    - accelerator: v5litepod-16\n      count: 2\n"
                    "  gcp:project: p\n")
    sf = stack_file.load(path)
    assert sf.stack == "dev" and sf.secret_keys == {"masterAuthorizedNetworks"}
    assert sf.raw["masterAuthorizedNetworks"] == [{"cidr": "192.0.2.0/24", "name": "secret"}]
    assert repr(sf.raw["masterAuthorizedNetworks"][0]["cidr"]) == "[secret]"
    assert (sf.line_of("slices[0].count"), sf.line_of("slices[0].capacity.mode"),
            sf.line_of("project")) == (6, 5, 1)


def test_existing_subnet_ranges_are_not_checked(raw: dict[str, Any]) -> None:
    # With network.create: false the subnet is the user's; its ranges are not in the stack.
    raw["network"] = {"create": False, "name": "shared", "subnetwork": "shared-nodes",
                      "podsCidr": "10.16.0.0/24"}
    assert config.parse(raw).network.create is False
    raw["network"]["create"] = True
    assert problems(raw)[0].startswith("network.podsCidr: '10.16.0.0/24' holds 256 pod")


def test_every_gcp_resource_names_its_project() -> None:
    # docs/stacks.md says gcp:project changes nothing accelstack declares: every GCP resource
    # takes its project from accelstack:project.
    for path in STACK_FILES:
        ev = evaluate_shipped(path)
        # Bucket IAM members take no project (a bucket name is global); the private
        # services access connection has none either: its network's id names the project.
        gcp = [r for r in ev.resources if r.type.startswith("gcp:")
               and r.type not in ("gcp:storage/bucketIAMMember:BucketIAMMember",
                                  "gcp:servicenetworking/connection:Connection")]
        assert gcp and all(r.inputs.get("project") == ev.config.project for r in gcp), path


# GKE's flex-start page lists TPU v5e, v5p and v6e (each in a few zones): each is accepted
# in any of the stack's zones (the zone list is availability, not checked).
@pytest.mark.parametrize("accelerator", ["v5litepod-16", "v5p-8", "v6e-8-1vm", "v6e-16"])
def test_flex_start_documented_tpus(raw: dict[str, Any], accelerator: str) -> None:
    raw["slices"] = [{"accelerator": accelerator, "capacity": "flex-start"}]
    assert config.parse(raw).slices[0].capacity.mode == "flex-start"
