"""`submit` on a fleet, end to end against three fake API servers: the manager and two
workers (tests/fake_apiserver.py), with the example fleet's outputs (stacks/Pulumi.fleet.yaml)
pointed at them. MultiKueue itself is the servers' state: the tests put the Workloads it
would write (status.clusterName, nominatedClusterNames, its admission check) where it would
write them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner, Result

import schema
from fake_apiserver import FakeApiServer
from fake_fleet_apiserver import FleetApiServer
from fakes import stacks
from submit.cli.app import main

NS = "training"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"


pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def servers() -> Iterator[dict[str, FakeApiServer]]:
    found: dict[str, FakeApiServer] = {name: FleetApiServer().start()
                                       for name in ("manager", "west", "east")}
    yield found
    for srv in found.values():
        try:
            srv.stop()
        except OSError:
            pass


@pytest.fixture
def outputs(tmp_path: Path, servers: dict[str, FakeApiServer]) -> Path:
    data = stacks.outputs("fleet")
    fleet = data["accelstackFleet"]
    fleet["manager"]["kubeconfig"] = servers["manager"].kubeconfig()
    for worker in fleet["workers"]:
        worker["outputs"]["kubeconfig"] = servers[worker["name"]].kubeconfig()
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(data))
    return path


def run(outputs: Path, group: str, *args: str) -> Result:
    result = CliRunner().invoke(main, [group, "--outputs", str(outputs), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _workload(name: str, **status: Any) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": f"jobset-{name}-1a2b3", "namespace": NS,
                         "ownerReferences": [{"kind": "JobSet", "name": name,
                                              "uid": f"uid-{name}"}]},
            "spec": {"queueName": "main"}, "status": status}


def _cond(kind: str, value: str, message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": value, "reason": kind, "message": message}


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": f"{name}-slice-0-0-abcde", "labels": {
        "jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/job-index": "0"},
        "annotations": {"batch.kubernetes.io/job-completion-index": "0"},
        "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"nodeName": "gke-east-node", "containers": [{"name": "main",
                                                               "image": "python:3.12"}]},
        "status": {"phase": "Running"}}


def _submitted(servers: dict[str, FakeApiServer], outputs: Path, name: str, *extra: str
               ) -> dict[str, Any]:
    result = run(outputs, "workload", "create", "--workload", name, "--accelerator",
                 "v6e-16", "--image", "python:3.12", *extra)
    assert result.exit_code == 0, result.output
    return dict(servers["manager"].state.jobsets[(NS, name)])


# ----------------------------------------------------------------------------------


def test_create_goes_to_the_manager_and_names_the_workers_that_offer_the_shape(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    js = _submitted(servers, outputs, "w1")
    assert js["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "main"
    schema.validate(js)
    assert not servers["west"].state.requests and not servers["east"].state.requests
    result = run(outputs, "workload", "create", "--workload", "w2", "--accelerator",
                 "v5litepod-16", "--image", "python:3.12", "--dry-run")
    assert "fleet research: workers that can run it: west " in result.output


def test_restriction_to_a_worker_or_a_region_is_the_scoped_queue(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    js = _submitted(servers, outputs, "w1", "--fleet-worker", "east")
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "main-east"
    js = _submitted(servers, outputs, "w2", "--fleet-region", "us-east5")
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "main-us-east5"


@pytest.mark.parametrize("args,option,message", [
    (["--accelerator", "v5p-128"], "--accelerator",
     "'v5p-128': no worker of fleet 'research' offers it; its workers offer: west "
     "(us-west4): v5litepod-16; east (us-east5): v6e-16"),
    (["--accelerator", "v6e-16", "--fleet-worker", "west"], "--fleet-worker",
     "worker west has no v6e-16-spot pools with room for 1 x 4 pods; "
     "v6e-16-spot is offered by: east"),
    (["--accelerator", "v6e-16", "--fleet-worker", "eats"], "--fleet-worker",
     "'eats' is not a worker of fleet 'research'; did you mean east?; its workers: west, "
     "east"),
    (["--accelerator", "v6e-16", "--fleet-region", "us-east4"], "--fleet-region",
     "'us-east4' is not a region of fleet 'research'; did you mean us-west4?; its regions: "
     "us-east5, us-west4"),
    (["--accelerator", "v6e-16", "--num-slices", "3"], "--num-slices",
     "3 is more than the 2 v6e-16 slices pool v6e-16-spot has"),
])
def test_bad_shapes_and_restrictions_exit_2_and_send_nothing(
        servers: dict[str, FakeApiServer], outputs: Path, args: list[str], option: str,
        message: str) -> None:
    result = run(outputs, "workload", "create", "--workload", "w1", "--image", "python:3.12",
                 *args)
    assert result.exit_code == 2, result.output
    assert f"Error: Invalid value for '{option}': {message}\n" in result.output
    assert not any(s.state.requests for s in servers.values())


def test_dispatched_to_the_second_worker_list_describe_logs_and_wait(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    _submitted(servers, outputs, "w1")
    manager, east = servers["manager"].state, servers["east"].state
    manager.workloads[NS] = [_workload(
        "w1", clusterName="east",
        conditions=[_cond("QuotaReserved", "True"), _cond("Admitted", "True")],
        admissionChecks=[{"name": "research", "state": "Ready",
                          "message": 'The workload was admitted on "east"'}])]
    east.pods[NS] = [_pod("w1")]
    east.logs[(NS, "w1-slice-0-0-abcde")] = ["step 1 loss 2.0", "step 2 loss 1.5"]

    listed = run(outputs, "workload", "list", "-o", "json")
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert row["worker"] == "east" and row["admission"] == "Admitted"

    described = run(outputs, "workload", "describe", "w1")
    assert described.exit_code == 0, described.output
    assert "Worker:       east\n" in described.output
    assert "slice 0 worker 0: w1-slice-0-0-abcde Running on gke-east-node" in described.output
    assert "Verdict: dispatched: running on worker east\n" in described.output

    logs = run(outputs, "workload", "logs", "w1")
    assert logs.exit_code == 0, logs.output
    assert logs.output == "step 1 loss 2.0\nstep 2 loss 1.5\n"
    assert not any("/log" in r.path for r in manager.requests + servers["west"].state.requests)

    manager.jobsets[(NS, "w1")]["status"] = {"conditions": [
        {"type": "Completed", "status": "True"}]}
    waited = run(outputs, "workload", "wait", "w1", "--timeout", "5s", "--interval", "1s")
    assert waited.exit_code == 0, waited.output
    assert "worker=east" in waited.output and "workload w1 succeeded" in waited.output

    deleted = run(outputs, "workload", "delete", "w1")
    assert deleted.exit_code == 0, deleted.output
    # MultiKueue removes the worker's copy; the submitter only deletes on the manager.
    assert (NS, "w1") not in manager.jobsets
    assert not [r for r in east.requests if r.method == "DELETE"]


def test_why_it_waits_and_a_worker_that_goes_away(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    _submitted(servers, outputs, "w1")
    servers["manager"].state.workloads[NS] = [_workload(
        "w1", nominatedClusterNames=["west", "east"],
        conditions=[_cond("QuotaReserved", "True")],
        admissionChecks=[{"name": "research", "state": "Pending"}])]
    servers["west"].state.workloads[NS] = [_workload(
        "w1", conditions=[_cond("QuotaReserved", "False",
                                "couldn't assign flavors to pod set slice: insufficient "
                                "unused quota for google.com/tpu")])]
    servers["east"].stop()
    described = run(outputs, "workload", "describe", "w1")
    assert described.exit_code == 0, described.output
    assert "Worker:       none yet (copied to west, east; the first to admit it runs it)" \
        in described.output
    verdict = [ln for ln in described.output.splitlines() if ln.startswith("Verdict: ")]
    assert verdict == [
        "Verdict: the admission check is pending: no worker has admitted it yet (west: "
        "waiting for quota: couldn't assign flavors to pod set slice: insufficient unused "
        "quota for google.com/tpu; east: unreachable: list Kueue workloads in training: the "
        "API server did not answer: connection failed (MaxRetryError), 4 tries)"]

    logs = run(outputs, "workload", "logs", "w1")
    assert logs.exit_code == 1
    assert "workload w1 is not running on a worker yet" in logs.output

    view = run(outputs, "fleet", "view", "-o", "json")
    assert view.exit_code == 0, view.output
    rows = {r["cluster"]: r for r in json.loads(view.output)}
    assert rows["east"]["status"].startswith("unreachable: ")
    assert rows["west"]["status"] == "ok" and rows["west"]["pending"] == 1
    assert rows["fleet-manager"]["role"] == "manager"


def test_manager_quota_refused_and_rejected_verdicts(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    _submitted(servers, outputs, "w1")
    manager = servers["manager"].state
    manager.workloads[NS] = [_workload("w1", conditions=[_cond(
        "QuotaReserved", "False", "couldn't assign flavors to pod set slice")])]
    out = run(outputs, "workload", "describe", "w1").output
    assert ("Verdict: waiting for quota on the manager (no worker of its queue has room for "
            "it): couldn't assign flavors to pod set slice\n") in out
    manager.workloads[NS] = [_workload("w1", conditions=[_cond("QuotaReserved", "True")],
                                       admissionChecks=[{"name": "research", "state": "Retry",
                                                         "message": "Admitting remote lost"}])]
    out = run(outputs, "workload", "describe", "w1").output
    assert ("Verdict: a worker refused or lost it: Admitting remote lost; MultiKueue "
            "dispatches it again\n") in out


def test_fleet_view_table(servers: dict[str, FakeApiServer], outputs: Path) -> None:
    servers["west"].state.clusterqueues = [{
        "metadata": {"name": "cluster-queue"},
        "spec": {"resourceGroups": [{"flavors": [{"name": "v5litepod-16-spot", "resources": [
            {"name": "google.com/tpu", "nominalQuota": 32}, {"name": "cpu",
                                                              "nominalQuota": 100}]}]}]},
        "status": {"flavorsUsage": [{"name": "v5litepod-16-spot", "resources": [
            {"name": "google.com/tpu", "total": 16}]}]}}]
    result = run(outputs, "fleet", "view")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["CLUSTER", "ROLE", "REGION", "VIA", "STATUS", "PENDING",
                                "ADMITTED", "FINISHED", "MANAGER", "SEES"]
    west = next(ln for ln in lines if ln.startswith("west"))
    assert west.split()[:8] == ["west", "worker", "us-west4", "ip", "ok", "0", "0", "0"]
    # How the manager reaches each worker: east is private, reached at its DNS endpoint.
    assert [ln.split()[3] for ln in lines[1:4]] == ["-", "ip", "dns"]
    chips = [ln.split() for ln in lines].index(["CLUSTER", "FLAVOR", "NOMINAL", "USED", "FREE"])
    assert lines[chips + 1].split() == ["west", "v5litepod-16-spot", "32", "16", "16"]
    assert "fleet-manager: queues main, main-east, main-us-east5, main-us-west4, main-west" \
        in lines
    assert max(len(ln) for ln in lines) <= 100


def test_fleet_view_fits_100_columns_and_exits_1_when_no_cluster_answers(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    servers["east"].stop()  # one down: still exit 0, the row says why
    result = run(outputs, "fleet", "view")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert next(ln for ln in lines if ln.startswith("east ")).split()[4] == "unreachable"
    problem = [ln for ln in lines if ln.startswith("east: unreachable: ")]
    assert problem and "connection failed" in result.output
    assert max(len(ln) for ln in lines) <= 100, result.output
    for name in ("manager", "west"):
        servers[name].stop()
    for fmt in ("table", "json"):
        result = run(outputs, "fleet", "view", "-o", fmt)
        assert result.exit_code == 1, result.output  # EXIT_UNREACHABLE, after the view
        assert "Traceback" not in result.output
    rows = json.loads(result.output)
    assert [r["cluster"] for r in rows] == ["fleet-manager", "west", "east"]
    assert all(r["status"].startswith("unreachable: ") for r in rows)


def test_fleet_view_of_a_cluster_stack_is_a_usage_error(tmp_path: Path,
                                                        servers: dict[str, FakeApiServer]
                                                        ) -> None:
    path = stacks.write_outputs(tmp_path / "v5e.json", "v5e-spot",
                                servers["manager"].kubeconfig())
    result = run(path, "fleet", "view")
    assert result.exit_code == 2
    assert "stack 'v5e-spot' is not a fleet stack" in result.output


def _active(name: str, status: str, reason: str = "Active", message: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"conditions": [
        {"type": "Active", "status": status, "reason": reason, "message": message}]}}


def test_fleet_view_shows_the_managers_view_of_each_worker(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    # The user reads both workers, but the manager's MultiKueue reaches only west: east's
    # MultiKueueCluster is inactive (Kueue's own signal), and the user's read cannot see it.
    manager = servers["manager"]
    assert isinstance(manager, FleetApiServer)
    manager.multikueueclusters = [
        _active("west", "True"),
        _active("east", "False", "ClientConnectionFailed",
                'Get "https://east.example/api": dial tcp: i/o timeout')]
    manager.admissionchecks = [_active("research", "True"), _active("research-west", "True"),
                               _active("research-east", "False", "Inactive",
                                       "Cannot use multikueue cluster east")]
    manager.state.clusterqueues = [
        {"metadata": {"name": f"research{s}"},
         "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": f"research{s}"}]}}}
        for s in ("", "-west", "-east")]
    data = json.loads(run(outputs, "fleet", "view", "-o", "json").output)
    seen = {r["cluster"]: (r["status"], r["manager_view"]) for r in data}
    assert seen["west"] == ("ok", "active")
    assert seen["east"] == ("ok", 'MultiKueueCluster east inactive: ClientConnectionFailed: '
                                  'Get "https://east.example/api": dial tcp: i/o timeout')
    assert seen["fleet-manager"] == ("ok", None)
    manager.multikueueclusters[1] = _active("east", "True")
    data = json.loads(run(outputs, "fleet", "view", "-o", "json").output)
    assert {r["cluster"]: r["manager_view"] for r in data}["east"] == (
        "AdmissionCheck research-east inactive: Inactive: Cannot use multikueue cluster east")
    manager.multikueueclusters = []
    data = json.loads(run(outputs, "fleet", "view", "-o", "json").output)
    assert {r["cluster"]: r["manager_view"] for r in data}["west"] == (
        "no MultiKueueCluster west on the manager")


def test_fleet_view_reads_the_clusters_at_once_and_bounds_each(
        servers: dict[str, FakeApiServer], outputs: Path) -> None:
    slow = servers["east"]
    assert isinstance(slow, FleetApiServer)
    slow.latency = 3.0
    data = json.loads(run(outputs, "fleet", "view", "-o", "json", "--timeout", "0.5").output)
    by = {r["cluster"]: r for r in data}
    assert by["east"]["status"] == "unreachable: no answer within 0.5s"
    assert by["west"]["status"] == "ok" and by["fleet-manager"]["status"] == "ok"
    # every cluster was asked before any answered: the reads overlap
    firsts = [min(servers[n].arrivals) for n in ("manager", "west", "east")]  # type: ignore[attr-defined]
    assert max(firsts) - min(firsts) < 0.5


def test_fleet_offline_outputs_are_read_by_submit(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # `accelstack-preview fleet --outputs F`, then submit on F (docs/fleets.md): the
    # contracts are there (kubeconfigs masked), so the reads that need no cluster work and
    # the view says each cluster has no usable kubeconfig.
    from conftest import ROOT
    from infra.preview import cli as preview

    monkeypatch.chdir(ROOT)
    path = tmp_path / "fleet.json"
    made = CliRunner().invoke(preview.main, ["fleet", "--outputs", str(path), "--quiet"])
    assert made.exit_code == 0, made.output
    fleet = json.loads(path.read_text())["accelstackFleet"]
    assert fleet["manager"]["kubeconfig"] == "[secret]"
    assert [w["outputs"]["kubeconfig"] for w in fleet["workers"]] == ["[secret]", "[secret]"]
    created = run(path, "workload", "create", "--workload", "w1", "--accelerator", "v6e-16",
                  "--image", "python:3.12", "--dry-run")
    assert created.exit_code == 0, created.output
    assert "kind: JobSet" in created.output
    shown = run(path, "fleet", "view", "-o", "json")
    assert shown.exit_code == 1, shown.output  # no cluster can be read: EXIT_UNREACHABLE
    rows = json.loads(shown.output)
    assert [r["cluster"] for r in rows] == ["fleet-manager", "west", "east"]
    assert all(r["status"].startswith("unreachable: ") and "no usable kubeconfig" in r["status"]
               for r in rows)
    listed = CliRunner().invoke(main, ["accelerators", "--outputs", str(path)])
    assert listed.exit_code == 0, listed.output
    assert "v6e-16-spot" in listed.output


def test_fleet_view_shows_upcoming_maintenance(servers: dict[str, FakeApiServer],
                                               outputs: Path) -> None:
    from test_maintenance_cli import _node

    servers["west"].state.nodes = [_node("a", "west-pool-0", "v1.33.5-gke.1080000",
                                         "1733083200")]
    servers["east"].state.nodes = [_node("b", "east-pool-0", "v1.32.9-gke.100")]
    servers["manager"].state.forbidden.add("nodes")
    data = json.loads(run(outputs, "fleet", "view", "-o", "json").output)
    seen = {r["cluster"]: r["maintenance"] for r in data}
    assert seen == {
        "west": "west-pool-0: host maintenance from 2024-12-01T20:00Z (1 node(s))",
        "east": "east-pool-0: node upgrade pending (v1.32.9-gke.100 < v1.33.5-gke.1080000)",
        "fleet-manager": "unknown: nodes not readable"}
    table = run(outputs, "fleet", "view").output.splitlines()
    assert ("west: maintenance: west-pool-0: host maintenance from 2024-12-01T20:00Z "
            "(1 node(s))") in table
    assert max(len(ln) for ln in table) <= 100

