""""Why is it pending": `describe`'s admission checks, queue position (Kueue's visibility
API), pods' scheduling events and verdict, and `submit workload queue`, against the fake
API server. ClusterQueue and LocalQueue objects are validated against the pinned Kueue
CRDs (tests/schema.py); the Workload CRD is not among the reference CRDs, so Workload
objects follow Kueue's v1beta2 workload_types.go field names (cited in submit/state/why.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

import schema
from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.state import why
from submit.cli.app import main

NS = "training"
LQ = f"namespaces/{NS}/localqueues/main"


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", server.kubeconfig())


def run(outputs: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["workload", "--outputs", str(outputs), *args])


def jobset(name: str) -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
                         "labels": {"kueue.x-k8s.io/queue-name": "main",
                                    "app.kubernetes.io/managed-by": "accelstack",
                                    "accelstack.dev/accelerator": "v5litepod-16",
                                    "accelstack.dev/slice-pool": "v5litepod-16"}},
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": 2}]},
            "status": {"conditions": [], "restarts": 0}}


def workload(owner: str, conditions: list[dict[str, str]],
             checks: list[dict[str, str]] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [
        {**c, "lastTransitionTime": "2026-11-23T10:00:00Z"} for c in conditions]}
    if checks is not None:
        status["admissionChecks"] = [{**c, "lastTransitionTime": "2026-11-23T10:00:00Z"}
                                     for c in checks]
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": f"jobset-{owner}-1a2b3", "namespace": NS,
                         "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2",
                                              "kind": "JobSet", "name": owner,
                                              "uid": f"uid-{owner}"}]},
            "spec": {"queueName": "main", "active": True,
                     "podSets": [{"name": "slice", "count": 8, "template": {"spec": {
                         "containers": [{"name": "main", "image": "x"}]}}}]},
            "status": status}


def pending(name: str, lq_pos: int, cq_pos: int, priority: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": NS}, "priority": priority,
            "localQueueName": "main", "positionInClusterQueue": cq_pos,
            "positionInLocalQueue": lq_pos}


def cluster_queue() -> dict[str, Any]:
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
          "metadata": {"name": "v5e"},
          "spec": {"namespaceSelector": {}, "resourceGroups": [{
              "coveredResources": ["google.com/tpu", "cpu"],
              "flavors": [{"name": "v5litepod-16", "resources": [
                  {"name": "google.com/tpu", "nominalQuota": 32},
                  {"name": "cpu", "nominalQuota": "1800", "borrowingLimit": "100"}]}]}]},
          "status": {"pendingWorkloads": 2, "admittedWorkloads": 1, "reservingWorkloads": 1,
                     "flavorsUsage": [{"name": "v5litepod-16", "resources": [
                         {"name": "google.com/tpu", "total": 32, "borrowed": 0},
                         {"name": "cpu", "total": "900", "borrowed": "0"}]}]}}
    schema.validate(cq)
    return cq


QUOTA = ("couldn't assign flavors to pod set slice: insufficient unused quota for "
         "google.com/tpu in flavor v5litepod-16, 32 more needed")


def test_waiting_for_quota_with_its_position(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w2")] = jobset("w2")
    server.state.workloads[NS] = [workload("w2", [
        {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": QUOTA}])]
    server.state.pending[LQ] = [pending("other", 0, 0, 1000),
                                pending("jobset-w2-1a2b3", 1, 3, 100)]
    result = run(outputs, "describe", "w2")
    assert result.exit_code == 0, result.output
    tail = result.stdout.split("Admission checks:\n", 1)[1]
    assert tail == ("  none\n"
                    "Queue position: 2 of 2 in LocalQueue main; 4 in its ClusterQueue "
                    "(priority 100)\n"
                    "Pod scheduling events:\n  none\n"
                    f"Verdict: waiting for quota: {QUOTA}; position 4 in its ClusterQueue\n")
    paths = [r.path for r in server.state.requests]
    assert f"/apis/visibility.kueue.x-k8s.io/v1beta2/{LQ}/pendingworkloads" in paths


def test_waiting_for_capacity_on_a_provisioning_check(outputs: Path,
                                                      server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w3")] = jobset("w3")
    server.state.workloads[NS] = [workload(
        "w3", [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                "message": "Quota reserved in ClusterQueue v5e"},
               {"type": "Admitted", "status": "False", "reason": "NoChecks", "message": ""}],
        [{"name": "dws-prov", "state": "Pending",
          "message": "Waiting for resources. Currently there are not enough resources "
                     "available to fulfill the request."}])]
    server.state.forbidden.add(LQ)
    result = run(outputs, "describe", "w3")
    assert result.exit_code == 0, result.output
    assert ("Admission checks:\n  dws-prov: Pending: Waiting for resources. Currently there "
            "are not enough resources available to fulfill the request.\n") in result.stdout
    assert "Queue position: not known: Kueue's visibility API did not answer" in result.stdout
    assert result.stdout.rstrip().splitlines()[-1] == (
        "Verdict: waiting for capacity: admission check dws-prov is Pending (Waiting for "
        "resources. Currently there are not enough resources available to fulfill the "
        "request.)")


def test_admitted_but_unschedulable(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w4")] = jobset("w4")
    server.state.workloads[NS] = [workload("w4", [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": ""},
        {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}])]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "w4-slice-0-0-abcde", "namespace": NS,
                        "labels": {"jobset.sigs.k8s.io/jobset-name": "w4"}},
           "spec": {"containers": [{"name": "main", "image": "x"}]},
           "status": {"phase": "Pending"}}
    server.state.pods[NS] = [pod]
    message = ("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
               "preemption: 0/3 nodes are available")
    server.state.events[NS] = [
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": NS},
         "type": "Warning", "reason": "FailedScheduling",
         "message": message, "lastTimestamp": "2026-11-23T10:01:00Z",
         "involvedObject": {"kind": "Pod", "name": "w4-slice-0-0-abcde"}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2", "namespace": NS},
         "type": "Normal", "reason": "Scheduled",
         "message": "no", "involvedObject": {"kind": "Pod", "name": "w4-slice-0-0-abcde"}}]
    server.state.pending[LQ] = []
    result = run(outputs, "describe", "w4")
    assert result.exit_code == 0, result.output
    assert (f"Pod scheduling events:\n  Warning FailedScheduling w4-slice-0-0-abcde: "
            f"{message}\n") in result.stdout
    assert "Queue position: not in the pending list" in result.stdout
    assert result.stdout.rstrip().endswith(
        f"Verdict: admitted, but pods are unschedulable: {message}")


def test_preempted() -> None:
    wl = workload("w5", [{"type": "Evicted", "status": "True", "reason": "Preempted",
                          "message": "Preempted to accommodate a workload (UID: u1) due to "
                                     "prioritization in the ClusterQueue"},
                         {"type": "QuotaReserved", "status": "False", "reason": "Pending",
                          "message": ""}])
    assert why.verdict(wl, "Suspended", None, []) == (
        "preempted: Preempted to accommodate a workload (UID: u1) due to prioritization in "
        "the ClusterQueue; it is queued again")


def test_not_seen_by_kueue() -> None:
    assert why.verdict(None, "Running", None, []).startswith("not seen by Kueue yet")


def test_queue_lists_quota_usage_and_pending_in_order(outputs: Path,
                                                      server: FakeApiServer) -> None:
    server.state.clusterqueues = [cluster_queue()]
    server.state.pending["clusterqueues/v5e"] = [pending("jobset-b-2", 1, 1, 100),
                                                 pending("jobset-a-1", 0, 0, 1000)]
    result = run(outputs, "queue")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "CLUSTERQUEUE  FLAVOR        RESOURCE        NOMINAL  USED  BORROWED  BORROW LIMIT  "
        "PENDING  ADMITTED\n"
        "v5e           v5litepod-16  google.com/tpu  32       32    0         -             "
        "2        1\n"
        "v5e           v5litepod-16  cpu             1800     900   0         100           "
        "2        1\n"
        "\nPending workloads, in admission order:\n"
        "CLUSTERQUEUE  POSITION  WORKLOAD    NAMESPACE  LOCALQUEUE  PRIORITY\n"
        "v5e           1         jobset-a-1  training   main        1000\n"
        "v5e           2         jobset-b-2  training   main        100\n")
    data = json.loads(run(outputs, "queue", "-o", "json").stdout)
    assert [p["workload"] for p in data["pending"]] == ["jobset-a-1", "jobset-b-2"]
    assert yaml.safe_load(run(outputs, "queue", "-o", "yaml").stdout)["pendingUnknown"] == []


def test_queue_without_the_visibility_api(outputs: Path, server: FakeApiServer) -> None:
    server.state.clusterqueues = [cluster_queue()]
    result = run(outputs, "queue")
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(
        "Pending workloads, in admission order:\n  none\n(pending lists not readable for v5e: "
        "Kueue's visibility API is not served, or your account may not get "
        "clusterqueues/pendingworkloads)\n")


def test_queue_forbidden_is_one_error(outputs: Path, server: FakeApiServer) -> None:
    server.state.forbidden.add("clusterqueues")
    result = run(outputs, "queue")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith("Error: list ClusterQueues: forbidden (")
    assert len(result.stderr.splitlines()) == 1
