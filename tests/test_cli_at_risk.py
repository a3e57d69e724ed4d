"""`submit cluster at-risk`: the workloads running on, or admitted to, the accelstack pools a
change replaces, listed by node pool against the fake API server (reads only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.replacements.__main__ import show
from infra.replacements.pulumi_json import from_preview
from submit.cli.app import main

pytestmark = pytest.mark.usefixtures("no_stack_env")
DATA = Path(__file__).parent / "data" / "pulumi_preview"
NS = "training"
SPOT_FLAVOR = {"accelstack.dev/capacity": "spot", "cloud.google.com/gke-spot": "true",
               "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
               "cloud.google.com/gke-tpu-topology": "4x4"}


def _node(name: str, pool: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"cloud.google.com/gke-nodepool": pool,
                                                   **SPOT_FLAVOR}}}


def _pod(name: str, node: str, jobset: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": NS,
                         "labels": {"jobset.sigs.k8s.io/jobset-name": jobset}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "x"}]}}


def _workload(name: str, flavor: str, owner: str, finished: bool = False) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": NS,
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2",
                                              "kind": "JobSet", "name": owner, "uid": "u"}]},
            "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [
                {"name": "main", "flavors": {"google.com/tpu": flavor}, "count": 4}]},
                       "conditions": [{"type": "Finished", "status": "True"}]
                       if finished else []}}


@pytest.fixture
def replacements(tmp_path: Path) -> Path:
    path = tmp_path / "r.json"
    found = from_preview(json.loads((DATA / "replace.json").read_text()), "v5e-spot")
    path.write_text(json.dumps({"stacks": [found.to_dict()]}))
    return path


def test_lists_what_runs_on_the_replaced_pool(tmp_path: Path, server: FakeApiServer,
                                              replacements: Path) -> None:
    st = server.state
    st.nodes = [_node("n0", "v5litepod-16-0"), _node("n1", "v5litepod-16-0"),
                _node("m0", "v5litepod-16-1")]
    st.pods[NS] = [_pod("a-0", "n0", "train-a"), _pod("a-1", "n1", "train-a"),
                   _pod("b-0", "m0", "train-b")]
    st.jobsets[(NS, "train-a")] = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                   "metadata": {"name": "train-a", "namespace": NS,
                                                "creationTimestamp": "2026-01-01T00:00:00Z"}}
    st.workloads[NS] = [_workload("jobset-train-c", "v5litepod-16-spot", "train-c"),
                        _workload("jobset-train-d", "v5litepod-16-spot", "train-d", True),
                        _workload("jobset-train-e", "cpu", "train-e")]
    st.resourceflavors = [{"metadata": {"name": "v5litepod-16-spot"},
                           "spec": {"nodeLabels": SPOT_FLAVOR}},
                          {"metadata": {"name": "cpu"},
                           "spec": {"nodeLabels": {"cloud.google.com/machine-family": "e2"}}}]
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    result = CliRunner().invoke(main, ["cluster", "at-risk", "--replacements",
                                       str(replacements), "--outputs", str(outputs)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "v5e-spot: 2 workloads running on or admitted to v5litepod-16-0"
    assert lines[1].split() == ["JobSet", "training/train-a", "running", "on", "v5litepod-16-0",
                                "owner", "-", "age", lines[1].split()[-1]]
    assert lines[2].split()[:7] == ["Workload", "training/jobset-train-c", "admitted", "on",
                                    "v5litepod-16-0", "owner", "JobSet/train-c"]
    assert {r.method for r in st.requests} == {"GET"}
    assert any(r.path == "/api/v1/nodes" and r.query.get("labelSelector") ==
               ["cloud.google.com/gke-nodepool=v5litepod-16-0"] for r in st.requests)
    md = show(json.loads(replacements.read_text()))
    assert md[2].endswith("**: 2 workloads running or admitted there")
    assert any(x.startswith("  workload JobSet training/train-a on v5litepod-16-0: running")
               for x in md)


def test_unreachable_says_it_could_not_look(tmp_path: Path, server: FakeApiServer,
                                            replacements: Path) -> None:
    server.state.forbidden.add("nodes")
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    result = CliRunner().invoke(main, ["cluster", "at-risk", "--replacements",
                                       str(replacements), "--outputs", str(outputs)])
    assert result.exit_code == 0, result.output
    assert "v5e-spot: could not look: " in result.stderr
    (entry,) = json.loads(replacements.read_text())["stacks"]
    assert entry["workloads"].startswith("not looked up: ")
