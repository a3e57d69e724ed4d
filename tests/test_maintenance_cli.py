"""`submit cluster hold|resume POOL` (Kueue stopPolicy on the pool's ClusterQueues),
`describe`'s upcoming maintenance (GKE's scheduled-maintenance-time node label, nodes
behind the control plane) and `create --runs-for`'s warning, against the fake API server.
ClusterQueues are validated against the pinned Kueue CRD (tests/schema.py) after each patch."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import schema
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.contract import maintenance as m
from infra.contract.outputs import load
from submit.cli.app import main
from submit.state import maintenance as state

POOL_LABEL = state.NODEPOOL_LABEL


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", server.kubeconfig())


def _pool(outputs: Path) -> Any:
    return load(json.loads(outputs.read_text())).slice_pools[0]


def _queue_objects(server: FakeApiServer, pool: Any) -> None:
    server.state.resourceflavors = [{
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "v5litepod-16-spot"},
        "spec": {"nodeLabels": dict(pool.node_selector)}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
         "metadata": {"name": "other"}, "spec": {"nodeLabels": {"x": "y"}}}]
    server.state.clusterqueues = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
         "metadata": {"name": name}, "spec": {"namespaceSelector": {}, "resourceGroups": [{
             "coveredResources": ["google.com/tpu"], "flavors": [{"name": flavor, "resources": [
                 {"name": "google.com/tpu", "nominalQuota": 32}]}]}]}}
        for name, flavor in (("cluster-queue", "v5litepod-16-spot"), ("elsewhere", "other"))]


def cluster(outputs: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, ["cluster", *args, "--outputs", str(outputs)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def _patches(server: FakeApiServer) -> list[tuple[str, Any]]:
    return [(r.path, r.body) for r in server.state.requests if r.method == "PATCH"]


def test_hold_sets_stop_policy_on_the_pools_queue_only(server: FakeApiServer,
                                                       outputs: Path) -> None:
    pool = _pool(outputs)
    _queue_objects(server, pool)
    result = cluster(outputs, "hold", pool.name)
    assert result.exit_code == 0, result.output
    assert "held ClusterQueue(s) cluster-queue (Hold)" in result.output
    assert _patches(server) == [("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue",
                                 {"spec": {"stopPolicy": "Hold"}})]
    patch = next(r for r in server.state.requests if r.method == "PATCH")
    assert patch.headers["Content-Type"] == "application/merge-patch+json"
    held = {q["metadata"]["name"]: q for q in server.state.clusterqueues}
    assert held["cluster-queue"]["spec"]["stopPolicy"] == "Hold"
    assert "stopPolicy" not in held["elsewhere"]["spec"]
    schema.validate(held["cluster-queue"])


def test_drain_then_resume_removes_the_policy(server: FakeApiServer, outputs: Path) -> None:
    pool = _pool(outputs)
    _queue_objects(server, pool)
    assert cluster(outputs, "hold", pool.name, "--drain").exit_code == 0
    assert server.state.clusterqueues[0]["spec"]["stopPolicy"] == "HoldAndDrain"
    result = cluster(outputs, "resume", pool.name)
    assert result.exit_code == 0, result.output
    assert _patches(server)[-1][1] == {"spec": {"stopPolicy": None}}
    assert "stopPolicy" not in server.state.clusterqueues[0]["spec"]
    schema.validate(server.state.clusterqueues[0])


def test_an_unknown_pool_is_a_usage_error(server: FakeApiServer, outputs: Path) -> None:
    result = cluster(outputs, "hold", "nope")
    assert result.exit_code == 2
    assert "'nope' is not a slice pool of the stack" in result.output
    assert not _patches(server)


def test_a_pool_no_queue_admits_to_is_said(server: FakeApiServer, outputs: Path) -> None:
    result = cluster(outputs, "hold", _pool(outputs).name)
    assert result.exit_code == 1
    assert "no ClusterQueue admits to pool" in result.output
    assert not _patches(server)


def _node(name: str, pool: str, version: str, when: str | None = None,
          selector: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {**(selector or {}), POOL_LABEL: pool}
    if when is not None:
        labels[state.MAINTENANCE_LABEL] = when
    # A whole NodeSystemInfo, as the API server sends it (the client's model needs it).
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"nodeInfo": {
                "kubeletVersion": version, "kubeProxyVersion": version,
                "architecture": "amd64", "bootID": "b", "containerRuntimeVersion":
                "containerd://2.0.4", "kernelVersion": "6.6.87+", "machineID": "m",
                "operatingSystem": "linux", "osImage": "Container-Optimized OS from Google",
                "systemUUID": "u"}}}


def test_describe_lines_say_what_is_coming() -> None:
    nodes = [_node("a", "p-0", "v1.33.5-gke.1080000", "1733083200"),
             _node("b", "p-0", "v1.33.5-gke.1080000", "1733090000"),
             _node("c", "p-1", "v1.32.9-gke.100")]
    assert state.lines(nodes, "v1.33.5-gke.1080000", True) == [
        "Maintenance:",
        "  node pool p-0: host maintenance from 2024-12-01T20:00Z on 2 node(s) (a multi-host "
        "slice restarts whole)",
        "  node pool p-1: nodes run v1.32.9-gke.100, the control plane v1.33.5-gke.1080000: "
        "a node upgrade is pending (GKE upgrades them in a maintenance window no exclusion "
        "covers)"]
    assert state.lines(nodes[:1] and [_node("d", "p", "v1.33.5-gke.1080000")],
                       "v1.33.5-gke.1080000", True) == []
    assert state.lines(None, None, True) == []


def test_describe_shows_the_pools_maintenance(server: FakeApiServer, outputs: Path) -> None:
    pool = _pool(outputs)
    server.state.jobsets[("training", "job")] = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "job", "namespace": "training", "uid": "uid-job", "labels": {
            "accelstack.dev/accelerator": pool.accelerator,
            "accelstack.dev/slice-pool": pool.name}},
        "spec": {"replicatedJobs": [{"name": "slice", "replicas": 1}]},
        "status": {"conditions": [], "restarts": 0}}
    server.state.nodes = [_node("n1", pool.node_pools[0], "v1.33.5-gke.1080000", "1733083200",
                                dict(pool.node_selector))]
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "describe", "job"])
    assert result.exit_code == 0, result.output
    assert (f"Maintenance:\n  node pool {pool.node_pools[0]}: host maintenance from "
            "2024-12-01T20:00Z on 1 node(s)") in result.output


def test_create_warns_when_the_run_reaches_the_next_window(tmp_path: Path) -> None:
    written = stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", "")
    outs = load(json.loads(written.read_text()))
    assert outs.maintenance is not None  # v5e-spot: weekend windows from 03:00Z, 6h
    now = datetime(2026, 3, 2, tzinfo=timezone.utc)  # a Monday
    line = m.create_warning(outs.maintenance, now, 6 * 86400)
    assert line is not None and line.startswith(
        "warning: GKE may upgrade nodes in the maintenance window from 2026-03-07T03:00Z")
    assert m.create_warning(outs.maintenance, now, 3 * 86400) is None


def test_create_runs_for_warns_on_stderr_and_still_renders(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", "")
    args = ["workload", "--outputs", str(outputs), "create", "--workload", "w",
            "--accelerator", "v5litepod-16", "--image", "python:3.12@sha256:" + "0" * 64,
            "--command", "true", "--dry-run"]
    # 17 days always span a weekend window of v5e-spot (no exclusion declared).
    result = CliRunner().invoke(main, [*args, "--runs-for", "408h"])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning: GKE")]
    assert len(warnings) == 1 and "before this workload's 408h would end" in warnings[0]
    assert "kind: JobSet" in result.stdout
    quiet = CliRunner().invoke(main, args)
    assert quiet.exit_code == 0 and "warning: GKE" not in quiet.stderr
