"""The in-cluster stack kind (accelstack:inCluster, docs/adopt.md): only the in-cluster
layer on a cluster another team owns, queues from its live pools, the outputs contract
that `submit` reads; and what the adoption says of a Kueue or JobSet already running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import IN_CLUSTER_FILES, ROOT
from infra import program
from infra.adopt import installed
from infra.contract import outputs as contract
from infra.preview import harness

LAYER = ROOT / "stacks" / "Pulumi.xpk-layer.yaml"
DESCRIPTION = ROOT / "stacks" / "descriptions" / "xpk-v5e.json"


@pytest.fixture(scope="module")
def ev() -> harness.Evaluation:
    assert LAYER in IN_CLUSTER_FILES
    return harness.evaluate_file(LAYER)


def _objects(ev: harness.Evaluation, kind: str) -> list[dict[str, Any]]:
    """Objects of ``kind`` in the evaluation's Kubernetes resources (single objects and
    the objects of config groups, as declared)."""
    out = []
    for r in ev.resources:
        inputs = harness._plain(r.inputs)
        if inputs.get("kind") == kind:
            out.append(inputs)
        for obj in inputs.get("objs") or []:
            if isinstance(obj, dict) and obj.get("kind") == kind:
                out.append(obj)
        for doc in yaml.safe_load_all(inputs.get("yaml") or "") if isinstance(
                inputs.get("yaml"), str) else []:
            if isinstance(doc, dict) and doc.get("kind") == kind:
                out.append(doc)
    return out


def test_it_declares_no_gcp_resource(ev: harness.Evaluation) -> None:
    assert [r.type for r in ev.resources if r.type.startswith("gcp:")] == []
    assert {r.type for r in ev.resources} >= {"kubernetes:helm.sh/v3:Release",
                                              "pulumi:providers:kubernetes"}


def test_the_queues_follow_the_live_pools_by_gke_labels(ev: harness.Evaluation) -> None:
    flavors = _objects(ev, "ResourceFlavor")
    labels = [f["spec"]["nodeLabels"] for f in flavors]
    assert {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
            "cloud.google.com/gke-tpu-topology": "4x4",
            "cloud.google.com/gke-spot": "true"} in labels
    for nl in labels:  # another team's nodes carry none of the stack's labels
        assert not any(k.startswith("accelstack.dev/") for k in nl), nl
    [queue] = [q for q in _objects(ev, "ClusterQueue")]
    quotas = [r for g in queue["spec"]["resourceGroups"] for f in g["flavors"]
              for r in f["resources"] if r["name"] == "google.com/tpu"]
    assert quotas and quotas[0]["nominalQuota"] == 32  # two v5litepod-16 slices


def test_the_controllers_run_on_the_named_pool(ev: harness.Evaluation) -> None:
    [release] = ev.of_type("kubernetes:helm.sh/v3:Release")
    selector = harness._plain(release.inputs)["values"]["controllerManager"]["nodeSelector"]
    assert selector == {"cloud.google.com/gke-nodepool": "default-pool"}


def test_the_contract_serves_submit(ev: harness.Evaluation, tmp_path: Path) -> None:
    outputs = harness.offline_outputs(ev)
    data = outputs[contract.OUTPUT_NAME]
    assert data["cluster"]["name"] == "xpk-v5e"
    assert data["cluster"]["dnsEndpoint"] == "gke-0123456789abcdef.us-west4.gke.goog"
    [pool] = data["slicePools"]
    assert pool["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x4", "cloud.google.com/gke-spot": "true"}
    # submit renders a JobSet against it, unchanged
    from submit_cli import run

    path = tmp_path / "xpk-layer.outputs.json"
    path.write_text(json.dumps(outputs))
    result = run(path, "create", "--workload", "hello", "--accelerator", "v5litepod-16",
                 "--num-slices", "2", "--image", "python:3.12", "--command",
                 "python3 train.py", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "cloud.google.com/gke-tpu-topology: 4x4" in result.output
    assert "accelstack.dev/capacity" not in result.output


def test_it_costs_nothing_of_its_own() -> None:
    cost = yaml.safe_load((ROOT / "snapshots" / "xpk-layer.yaml").read_text())["cost"]
    assert cost["kind"] == "in-cluster" and cost["lines"] == []


def _layer(tmp_path: Path, edit: Any) -> Path:
    doc = yaml.safe_load(LAYER.read_text())
    edit(doc["config"])
    (tmp_path / "descriptions").mkdir()
    (tmp_path / "descriptions" / "xpk-v5e.json").write_text(DESCRIPTION.read_text())
    path = tmp_path / "Pulumi.layer.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_a_cluster_setting_is_refused_with_file_line(tmp_path: Path) -> None:
    path = _layer(tmp_path, lambda c: c.update({"accelstack:slices": []}))
    with pytest.raises(program.StackConfigError) as e:
        harness.evaluate_file(path)
    [problem] = e.value.problems
    assert problem.startswith(f"{path}:")
    assert problem.endswith("slices: unknown key (an in-cluster stack declares only its "
                            "cluster's in-cluster layer: inCluster, queues, imageCache, "
                            "addons, labels)")


def test_a_controller_pool_the_cluster_lacks_is_refused(tmp_path: Path) -> None:
    path = _layer(tmp_path, lambda c: c["accelstack:inCluster"].update(
        {"controllerPool": "cpu"}))
    with pytest.raises(program.StackConfigError, match="inCluster.controllerPool 'cpu' is "
                       "not a node pool of the cluster .*; name a CPU pool"):
        harness.evaluate_file(path)


def test_a_description_of_another_cluster_is_refused(tmp_path: Path) -> None:
    path = _layer(tmp_path, lambda c: c["accelstack:inCluster"].update(
        {"cluster": "my-ml-project/us-west4/other"}))
    with pytest.raises(program.StackConfigError, match="describes us-west4/xpk-v5e, not "
                       "us-west4/other; record it again"):
        harness.evaluate_file(path)


def test_a_missing_description_names_the_file(tmp_path: Path) -> None:
    path = _layer(tmp_path, lambda c: c["accelstack:inCluster"].update(
        {"description": "none.json"}))
    with pytest.raises(program.StackConfigError, match="none.json: the recorded description "
                       "of xpk-v5e does not load"):
        harness.evaluate_file(path)


def test_running_kueue_and_jobset_are_named_with_what_the_install_meets() -> None:
    data = json.loads((ROOT / "tests/installed/xpk-v5e-deployments.json").read_text())
    running = installed.installed(data)
    assert running == {"Kueue": "v0.12.2", "JobSet": "v0.8.0"}
    lines = installed.notes(running, {"Kueue": "v0.19.2", "JobSet": "v0.12.0"})
    assert lines[0].startswith("JobSet v0.8.0 runs on the cluster (the stack's is v0.12.0)")
    assert lines[1].startswith("Kueue v0.12.2 runs on the cluster (the stack's is v0.19.2); "
                               "the stack installs it as the Helm release kueue")
    assert installed.notes(running, {"Kueue": "v0.12.2"})[0].startswith(
        "Kueue v0.12.2 runs on the cluster (the stack's version)")
    assert installed.installed({"items": []}) == {}


def test_the_cluster_is_read_live_when_the_api_answers(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """At preview time the program reads the cluster through the GKE API seam; when the
    API refuses, it says so and falls back to the recorded description."""
    from fake_gke_api import FakeGkeApi
    from infra.adopt.gke import api

    icfg = program.load_in_cluster_config(
        {k.split(":", 1)[1]: v for k, v in yaml.safe_load(LAYER.read_text())["config"].items()},
        "xpk-layer")
    live = json.loads(DESCRIPTION.read_text())
    live["nodePools"] = live["nodePools"][:2]  # one slice pool was deleted since recording
    resource = "projects/my-ml-project/locations/us-west4/clusters/xpk-v5e"
    with FakeGkeApi() as gke:
        gke.clusters[resource] = live
        monkeypatch.setenv(api.ENDPOINT_ENV, gke.endpoint)
        monkeypatch.setenv(api.TOKEN_ENV, "t")
        read = program.describe_cluster(icfg, DESCRIPTION.parent.parent, live=True)
        assert len(read["nodePools"]) == 2
        cfg = program.in_cluster_stack_config(icfg, read)
        assert [(p.name, p.count) for p in cfg.slices] == [("xpk-v5e-np", 1)]  # one slice
        gke.forbidden.add(resource)
        recorded = program.describe_cluster(icfg, DESCRIPTION.parent.parent, live=True)
        assert len(recorded["nodePools"]) == 3
        offline = program.describe_cluster(icfg, DESCRIPTION.parent.parent, live=False)
        assert offline == recorded
    assert len(gke.requests) == 2
