"""Adopting a cluster (infra/adopt/): from recorded GKE API answers to a stack file, then
the program under the mock engine: every adopted resource is imported by its ID, and no
ForceNew field of the cluster or of any node pool differs from the recorded value (the
provider would replace none of them)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from infra import program
from infra.adopt import diff, forcenew, live
from infra.adopt import plan as plan_mod
from infra.adopt.errors import AdoptError, AdoptRefused
from infra.config.adopted import CLUSTER, cluster_id, node_pool_id
from infra.preview import harness

PROJECT = "my-ml-project"
ANSWERS = ROOT / "tests" / "gke_answers"
RECORDED = [("xpk-v5e", "us-west4"), ("toolkit-v6e", "us-east5"),
            ("gcloud-mixed", "us-central1")]


def answer(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ANSWERS / f"{name}.json").read_text())
    return data


def adopted_file(tmp_path: Path, name: str, location: str, **kw: Any) -> Path:
    result = plan_mod.plan(answer(name), project=PROJECT, location=location,
                           stack=f"adopted-{name}", **kw)
    path = tmp_path / f"Pulumi.adopted-{name}.yaml"
    path.write_text(result.text())
    return path


@pytest.mark.parametrize("name,location", RECORDED)
def test_round_trip_imports_and_replaces_nothing(tmp_path: Path, name: str,
                                                 location: str) -> None:
    cluster = answer(name)
    ev = harness.evaluate_file(adopted_file(tmp_path, name, location, keep=True))
    [declared] = ev.of_type(forcenew.CLUSTER)
    assert declared.import_id == cluster_id(PROJECT, location, cluster["name"])
    state = live.cluster(cluster, project=PROJECT)
    assert diff.replacements(forcenew.load(forcenew.CLUSTER), declared.inputs, state,
                             declared.ignore_changes) == []
    pools = {r.inputs["name"]: r for r in ev.of_type(forcenew.NODE_POOL)}
    checked = 0
    for pool in cluster["nodePools"]:
        if pool["name"] == plan_mod.DEFAULT_POOL:
            assert pool["name"] not in pools  # kept as it is: never declared
            continue
        r = pools[pool["name"]]
        assert r.import_id == node_pool_id(PROJECT, location, cluster["name"], pool["name"])
        state = live.node_pool(pool, project=PROJECT, location=location,
                               cluster=cluster["name"])
        assert diff.replacements(forcenew.load(forcenew.NODE_POOL), r.inputs, state,
                                 r.ignore_changes) == [], pool["name"]
        checked += 1
    assert checked == len([p for p in cluster["nodePools"]
                           if p["name"] != plan_mod.DEFAULT_POOL])


@pytest.mark.parametrize("name,location", RECORDED)
def test_every_force_new_leaf_equals_the_recording(tmp_path: Path, name: str,
                                                   location: str) -> None:
    """Leaf by leaf: a ForceNew field the program declares has the recorded value, unless
    it is kept (ignore_changes, whose recorded value is the one written under adopt.keep)."""
    cluster = answer(name)
    path = adopted_file(tmp_path, name, location, keep=True)
    kept = yaml.safe_load(path.read_text())["config"]["accelstack:adopt"].get("keep", {})
    ev = harness.evaluate_file(path)
    pools = {r.inputs["name"]: r for r in ev.of_type(forcenew.NODE_POOL)}
    for pool in cluster["nodePools"]:
        if pool["name"] not in pools:
            continue
        r = pools[pool["name"]]
        state = live.node_pool(pool, project=PROJECT, location=location,
                               cluster=cluster["name"])
        for f in forcenew.load(forcenew.NODE_POOL):
            parts = f.path.split(".")
            want, have = diff._values(r.inputs, parts), diff._values(state, parts)
            if f.block or want is None:
                continue
            ignoring = [i for i in r.ignore_changes
                        if f.path == i or f.path.startswith(i + ".")]
            if ignoring:
                for i in ignoring:
                    if i in kept.get(pool["name"], {}):
                        assert kept[pool["name"]][i] == diff._values(state, i.split("."))
                continue
            if f.set_typed:
                want, have = sorted(want), sorted(have or [])
            assert want == have or (diff._empty(want) and diff._empty(have)), \
                (pool["name"], f.path, want, have)


def test_xpk_cluster_becomes_two_spot_v5e_slices() -> None:
    result = plan_mod.plan(answer("xpk-v5e"), project=PROJECT, location="us-west4",
                           stack="xpk", keep=True)
    cfg = result.config
    assert cfg["slices"] == [{
        "name": "xpk-v5e-np", "accelerator": "v5litepod-16", "count": 2,
        "capacity": {"mode": "spot"}, "zones": ["us-west4-a"], "maxPodsPerNode": 15,
        "diskSizeGb": 100, "diskType": "pd-balanced", "hostMaintenanceInterval": "AS_NEEDED"}]
    assert cfg["defaultPool"] == "default-pool"
    assert cfg["nodeServiceAccount"]["email"] == "default"
    assert "https://www.googleapis.com/auth/cloud-platform" in \
        cfg["nodeServiceAccount"]["oauthScopes"]
    assert cfg["autoscalingProfile"] == "OPTIMIZE_UTILIZATION"
    assert cfg["network"] == {"create": False, "name": "default", "subnetwork": "default",
                              "podsRangeName": "gke-xpk-v5e-pods-5f1c2a3b",
                              "servicesRangeName": "gke-xpk-v5e-services-5f1c2a3b"}
    assert result.kept == {
        CLUSTER: {"datapathProvider": "LEGACY_DATAPATH"},
        **{f"xpk-v5e-np-{i}": {"nodeConfig.reservationAffinity": None,
                               "nodeConfig.shieldedInstanceConfig.enableSecureBoot": False}
           for i in range(2)}}


def test_toolkit_system_pool_is_the_stacks_own_and_imported() -> None:
    result = plan_mod.plan(answer("toolkit-v6e"), project=PROJECT, location="us-east5",
                           stack="ct")
    cfg = result.config
    assert cfg["systemPool"] == {"machineType": "e2-standard-4", "minNodes": 1,
                                 "maxNodes": 10, "diskSizeGb": 100, "maxPodsPerNode": 110}
    assert "system" in cfg["adopt"]["nodePools"]
    [tpu] = cfg["slices"]
    assert (tpu["name"], tpu["accelerator"], tpu["count"]) == ("tpu-v6e", "v6e-16", 2)
    assert tpu["capacity"] == {"mode": "reservation",
                               "reservation": f"projects/{PROJECT}/reservations/v6e-reservation"}
    assert tpu["gcpLabels"] == {"ghpc_module": "gke-node-pool", "ghpc_role": "compute"}
    assert result.kept == {}  # everything the toolkit sets, the config says


def test_gcloud_pools_keep_their_capacity_taints_and_names() -> None:
    result = plan_mod.plan(answer("gcloud-mixed"), project=PROJECT, location="us-central1",
                           stack="mixed", keep=True)
    by_name = {s["name"]: s for s in result.config["slices"]}
    assert by_name["spot-v5e8"]["accelerator"] == "v5litepod-8-1vm"  # ct5lp-hightpu-8t
    assert by_name["spot-v5e8"]["capacity"] == {"mode": "spot"}
    assert by_name["spot-v5e8"]["taints"] == [
        {"key": "team", "value": "research", "effect": "NoSchedule"}]
    assert by_name["h100-resv"]["capacity"] == {"mode": "reservation",
                                                "reservation": "h100-reservation"}
    assert by_name["h100-resv"]["accelerator"] == "h100-80gb-8"  # a3-highgpu-8g
    assert by_name["cpu"]["accelerator"] == "n2-standard-32-1"
    assert (by_name["cpu"]["count"], by_name["cpu"]["minCount"]) == (4, 1)


def test_refused_without_keep_names_each_field_and_live_value() -> None:
    with pytest.raises(AdoptRefused) as e:
        plan_mod.plan(answer("xpk-v5e"), project=PROJECT, location="us-west4", stack="x")
    assert "\n" not in str(e.value)
    assert "--keep-unexpressed" in str(e.value)
    assert "cluster: datapathProvider: live 'LEGACY_DATAPATH', the stack would declare " \
           "'ADVANCED_DATAPATH'" in e.value.lines


def test_adoption_never_removes_the_default_pool(tmp_path: Path) -> None:
    """The provider deletes default-pool when remove_default_node_pool turns true on an
    existing cluster; an adopted cluster never declares it."""
    ev = harness.evaluate_file(adopted_file(tmp_path, "xpk-v5e", "us-west4", keep=True))
    [declared] = ev.of_type(forcenew.CLUSTER)
    assert "removeDefaultNodePool" not in declared.inputs


def test_the_imported_pools_name_their_cluster_by_name(tmp_path: Path) -> None:
    ev = harness.evaluate_file(adopted_file(tmp_path, "xpk-v5e", "us-west4", keep=True))
    assert {r.inputs["cluster"] for r in ev.of_type(forcenew.NODE_POOL)} == {"xpk-v5e"}


# Bad answers: one line each, naming the resource and what to do.

def test_autopilot_cluster_is_refused() -> None:
    data = answer("xpk-v5e")
    data["autopilot"] = {"enabled": True}
    with pytest.raises(AdoptError) as e:
        plan_mod.plan(data, project=PROJECT, location="us-west4", stack="x")
    assert str(e.value) == (
        "projects/my-ml-project/locations/us-west4/clusters/xpk-v5e: an Autopilot cluster: GKE "
        "manages its nodes, so there are no node pools to adopt; manage only its in-cluster "
        "layer with an accelstack:inCluster stack (docs/adopt.md)")


def test_cluster_in_another_location_is_refused() -> None:
    with pytest.raises(AdoptError) as e:
        plan_mod.plan(answer("xpk-v5e"), project=PROJECT, location="us-east1", stack="x")
    assert str(e.value) == (
        "projects/my-ml-project/locations/us-east1/clusters/xpk-v5e: GKE answered for a "
        "cluster in us-west4, not us-east1; give the location the cluster is in "
        "(PROJECT/us-west4/xpk-v5e)")


def test_zonal_cluster_is_refused() -> None:
    data = answer("xpk-v5e")
    data["location"] = "us-west4-a"
    with pytest.raises(AdoptError, match=r"a zonal cluster \(us-west4-a\); accelstack "
                       "stacks declare regional clusters") as e:
        plan_mod.plan(data, project=PROJECT, location="us-west4-a", stack="x")
    assert "\n" not in str(e.value)


def test_pool_type_we_cannot_express_is_refused_or_skipped() -> None:
    data = answer("gcloud-mixed")
    data["nodePools"].append(json.loads((ANSWERS / "pool-l4.json").read_text()))
    with pytest.raises(AdoptError) as e:
        plan_mod.plan(data, project=PROJECT, location="us-central1", stack="x", keep=True)
    assert str(e.value) == (
        "projects/my-ml-project/locations/us-central1/clusters/mixed: node pool l4-spot: "
        "g2-standard-8 with nvidia-l4 GPUs is not a GPU machine of the catalog (`submit "
        "accelerators` lists them); adopt the others with --skip-pool l4-spot, which leaves "
        "it as it is")
    result = plan_mod.plan(data, project=PROJECT, location="us-central1", stack="x",
                           keep=True, skip_pools=["l4-spot"])
    assert "l4-spot" not in result.config["adopt"]["nodePools"]


def test_unknown_tpu_topology_is_refused() -> None:
    data = answer("xpk-v5e")
    data["nodePools"][1]["placementPolicy"]["tpuTopology"] = "3x5"
    with pytest.raises(AdoptError, match="node pool xpk-v5e-np-0: ct5lp-hightpu-4t with TPU "
                       "topology 3x5 is not a slice type of the catalog"):
        plan_mod.plan(data, project=PROJECT, location="us-west4", stack="x")


# The stack keys: FILE:LINE errors.

def _stack(tmp_path: Path, edit: Any) -> Path:
    path = adopted_file(tmp_path, "xpk-v5e", "us-west4", keep=True)
    doc = yaml.safe_load(path.read_text())
    edit(doc["config"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(program.StackConfigError) as e:
        harness.evaluate_file(path)
    return e.value.problems


def _line(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def test_import_id_of_another_cluster_is_a_file_line_error(tmp_path: Path) -> None:
    def edit(c: dict[str, Any]) -> None:
        c["accelstack:adopt"]["cluster"] = "projects/my-ml-project/locations/us-west4/clusters/b"
    path = _stack(tmp_path, edit)
    assert _problems(path) == [
        f"{path}:{_line(path, 'clusters/b')}: adopt.cluster: "
        "'projects/my-ml-project/locations/us-west4/clusters/b' is not this stack's cluster; "
        "the import ID of project, region and clusterName is "
        "projects/my-ml-project/locations/us-west4/clusters/xpk-v5e"]


def test_bad_host_maintenance_interval_is_a_file_line_error(tmp_path: Path) -> None:
    def edit(c: dict[str, Any]) -> None:
        c["accelstack:slices"][0]["hostMaintenanceInterval"] = "WEEKLY"
    path = _stack(tmp_path, edit)
    assert _problems(path) == [
        f"{path}:{_line(path, 'WEEKLY')}: slices[0].hostMaintenanceInterval: 'WEEKLY' is not a "
        "host maintenance interval; allowed: AS_NEEDED, PERIODIC"]


def test_kept_fields_of_a_pool_not_adopted_are_refused(tmp_path: Path) -> None:
    def edit(c: dict[str, Any]) -> None:
        c["accelstack:adopt"]["keep"]["other-np"] = {"nodeConfig.spot": True}
    path = _stack(tmp_path, edit)
    [problem] = _problems(path)
    assert problem.endswith("adopt.keep.other-np: 'other-np' is neither cluster nor an "
                            "adopted node pool (adopt.nodePools)")
    assert problem.startswith(f"{path}:")


def test_node_service_account_must_be_an_email(tmp_path: Path) -> None:
    def edit(c: dict[str, Any]) -> None:
        c["accelstack:nodeServiceAccount"]["email"] = "nodes"
    [problem] = _problems(_stack(tmp_path, edit))
    assert "nodeServiceAccount.email: 'nodes' is not a service account email" in problem


def test_a_new_stack_may_use_the_pool_settings() -> None:
    """The keys are the stack's, not only an adoption's: a pool of a fresh stack asks
    for a host maintenance interval, taints and GCP labels."""
    raw = copy.deepcopy(yaml.safe_load((ROOT / "stacks/Pulumi.v5e-spot.yaml").read_text()))
    cfg = {k.split(":", 1)[1]: v for k, v in raw["config"].items()}
    cfg["slices"][0].update({"hostMaintenanceInterval": "PERIODIC", "gcpLabels": {"team": "a"},
                             "taints": [{"key": "dedicated", "value": "a"}]})
    ev = harness.evaluate(cfg, "v5e-spot")
    pools = ev.of_type(forcenew.NODE_POOL)
    slice_pools = [p for p in pools if p.inputs["name"] != "system"]
    assert slice_pools and all(not p.import_id for p in pools)
    for p in slice_pools:
        node = p.inputs["nodeConfig"]
        assert node["hostMaintenancePolicy"] == {"maintenanceInterval": "PERIODIC"}
        assert node["resourceLabels"]["team"] == "a"
        assert {"key": "dedicated", "value": "a", "effect": "NO_SCHEDULE"} in node["taints"]


def test_the_shipped_adopted_stack_imports_and_replaces_nothing() -> None:
    """stacks/Pulumi.xpk-v5e.yaml: adopted from stacks/descriptions/xpk-v5e.json."""
    from conftest import ADOPTED_FILES

    [path] = [p for p in ADOPTED_FILES if p.name == "Pulumi.xpk-v5e.yaml"]
    cluster = json.loads((ROOT / "stacks/descriptions/xpk-v5e.json").read_text())
    ev = harness.evaluate_file(path)
    [declared] = ev.of_type(forcenew.CLUSTER)
    assert declared.import_id == cluster_id(PROJECT, "us-west4", "xpk-v5e")
    assert diff.replacements(forcenew.load(forcenew.CLUSTER), declared.inputs,
                             live.cluster(cluster, project=PROJECT),
                             declared.ignore_changes) == []
    pools = {r.inputs["name"]: r for r in ev.of_type(forcenew.NODE_POOL)}
    assert set(pools) == {"system", "xpk-v5e-np-0", "xpk-v5e-np-1"}
    assert not pools["system"].import_id  # the stack's own, created
    for pool in cluster["nodePools"][1:]:
        r = pools[pool["name"]]
        assert r.import_id
        assert diff.replacements(forcenew.load(forcenew.NODE_POOL), r.inputs, live.node_pool(
            pool, project=PROJECT, location="us-west4", cluster="xpk-v5e"),
            r.ignore_changes) == []


@pytest.mark.parametrize("pool,mode", [
    ({"queuedProvisioning": {"enabled": True}, "config": {"flexStart": True}},
     {"mode": "queued"}),
    ({"config": {"flexStart": True, "maxRunDuration": "86400s"}},
     {"mode": "flex-start", "maxRunDuration": "86400s"}),
    ({"config": {"spot": True}}, {"mode": "spot"}),
    ({"config": {"reservationAffinity": {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["r1/reservationBlocks/b2"]}}},
     {"mode": "reservation", "reservation": "r1", "block": "b2"}),
    ({"config": {"reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"}}},
     {"mode": "on-demand"}),
    ({"config": {}}, {"mode": "on-demand"}),
])
def test_capacity_is_read_from_the_pool(pool: dict[str, Any], mode: dict[str, Any]) -> None:
    from infra.adopt import pools

    assert pools.capacity(pool) == mode
