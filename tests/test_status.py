"""submit.state.status: reading a workload's state from API objects (pure, no cluster)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from submit.state import status as st

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=timezone.utc).timestamp()  # 00:10:00Z


def cond(type_: str, status: str = "True", reason: str = "", message: str = "") -> dict[str, str]:
    c = {"type": type_, "status": status}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def jobset(name: str = "w1", uid: str | None = "uid-w1", conditions: list[Any] | None = None,
           replicated: list[Any] | None = None, restarts: int | None = None,
           replicas: int = 2, created: str | None = "2026-01-01T00:00:00Z",
           priority: str | None = None) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": "main", "accelstack.dev/accelerator": "v5litepod-16",
              "accelstack.dev/slice-pool": "v5e-spot", "app.kubernetes.io/managed-by": "accelstack"}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    meta: dict[str, Any] = {"name": name, "namespace": "training", "labels": labels}
    if uid:
        meta["uid"] = uid
    if created:
        meta["creationTimestamp"] = created
    status: dict[str, Any] = {}
    if conditions is not None:
        status["conditions"] = conditions
    if replicated is not None:
        status["replicatedJobsStatus"] = replicated
    if restarts is not None:
        status["restarts"] = restarts
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta,
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": replicas}]},
            "status": status}


def workload(owner_name: str = "w1", owner_uid: str = "uid-w1",
             conditions: tuple[Any, ...] | list[Any] = (),
             kind: str = "JobSet", name: str = "jobset-w1-1a2b3") -> dict[str, Any]:
    return {"metadata": {"name": name, "ownerReferences": [
                {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": kind, "name": owner_name,
                 "uid": owner_uid}]},
            "status": {"conditions": list(conditions)}}


def pod(name: str, slice_: int | None, worker: int | None, created: str = "",
        phase: str = "Running", node: str | None = "gke-node-1",
        as_annotation: bool = False, conditions: list[Any] | None = None) -> dict[str, Any]:
    marks = {}
    if slice_ is not None:
        marks[st.JOB_INDEX] = str(slice_)
    if worker is not None:
        marks[st.COMPLETION_INDEX] = str(worker)
    meta: dict[str, Any] = {"name": name, "labels": {} if as_annotation else marks}
    if as_annotation:
        meta["annotations"] = marks
    if created:
        meta["creationTimestamp"] = created
    p: dict[str, Any] = {"metadata": meta, "spec": {}, "status": {"phase": phase}}
    if node:
        p["spec"]["nodeName"] = node
    if conditions:
        p["status"]["conditions"] = conditions
    return p


# -- admission ----------------------------------------------------------------------------

@pytest.mark.parametrize("conditions, expected", [
    ([], "Pending"),
    ([cond("QuotaReserved", "False", "Pending", "couldn't assign flavors")], "Pending"),
    ([cond("QuotaReserved")], "QuotaReserved"),
    ([cond("QuotaReserved"), cond("Admitted", "False")], "QuotaReserved"),
    ([cond("QuotaReserved"), cond("Admitted")], "Admitted"),
    ([cond("QuotaReserved"), cond("Admitted"), cond("PodsReady")], "Admitted"),
    ([cond("QuotaReserved", "False"), cond("Admitted", "False"), cond("Evicted")], "Evicted"),
    ([cond("Admitted"), cond("Evicted", "False")], "Admitted"),
    # Kueue sets Evicted (preemption, pods not ready) while Admitted is still True.
    ([cond("QuotaReserved"), cond("Admitted"), cond("Evicted", reason="Preempted")], "Evicted"),
    ([cond("QuotaReserved"), cond("Admitted"), cond("Finished")], "Finished"),
    ([cond("Evicted"), cond("Finished")], "Finished"),
])
def test_admission_from_kueue_conditions(conditions: list[Any], expected: str) -> None:
    assert st.admission(workload(conditions=conditions)) == expected


def test_admission_without_a_workload() -> None:
    assert st.admission(None) == "NotQueued"
    assert st.admission({"metadata": {"name": "x"}}) == "Pending"
    assert st.admission({"metadata": {"name": "x"}, "status": None}) == "Pending"


def test_kueue_workload_is_found_by_owner_uid() -> None:
    stale = workload(owner_uid="uid-of-an-older-w1", name="jobset-w1-old")
    current = workload(name="jobset-w1-new")
    other = workload(owner_name="w2", owner_uid="uid-w2", name="jobset-w2")
    assert st.kueue_workload(jobset(), [stale, other, current]) is current
    assert st.kueue_workload(jobset(), [stale, other]) is None
    assert st.kueue_workload(jobset(), []) is None


def test_kueue_workload_by_name_when_the_jobset_has_no_uid() -> None:
    wl = workload(owner_uid="whatever")
    assert st.kueue_workload(jobset(uid=None), [wl]) is wl


def test_kueue_workload_ignores_other_owner_kinds() -> None:
    assert st.kueue_workload(jobset(), [workload(kind="Job")]) is None
    assert st.kueue_workload(jobset(), [{"metadata": {"name": "orphan"}}]) is None


# -- JobSet state -------------------------------------------------------------------------

@pytest.mark.parametrize("conditions, replicated, expected", [
    (None, None, "Pending"),
    ([], [{"name": "slice", "active": 0, "ready": 0}], "Pending"),
    ([cond("Suspended", reason="SuspendedJobs")], None, "Suspended"),
    ([cond("Suspended", "False", "ResumeJobs")], [{"name": "slice", "active": 2}], "Running"),
    ([], [{"name": "slice", "ready": 1}], "Running"),
    ([cond("StartupPolicyCompleted")], [{"name": "slice", "active": 2, "ready": 2}], "Running"),
    ([cond("Completed")], [{"name": "slice", "succeeded": 2}], "Completed"),
    ([cond("Failed", reason="FailedJobs")], [{"name": "slice", "active": 1}], "Failed"),
    ([cond("Completed", "False"), cond("Failed", "False")], None, "Pending"),
])
def test_jobset_state(conditions: list[Any] | None, replicated: list[Any] | None,
                      expected: str) -> None:
    assert st.jobset_state(jobset(conditions=conditions, replicated=replicated)) == expected


def test_summary_row() -> None:
    js = jobset(conditions=[cond("Suspended", "False")], replicated=[{"active": 2}],
                restarts=1)
    wl = workload(conditions=[cond("QuotaReserved"), cond("Admitted")])
    assert st.summary(js, [wl], now=NOW) == {
        "name": "w1", "accelerator": "v5litepod-16", "slices": 2, "admission": "Admitted",
        "state": "Running", "restarts": 1, "age": "10m"}


def test_summary_of_a_bare_jobset() -> None:
    js = {"metadata": {"name": "w1"}}
    assert st.summary(js, [], now=NOW) == {
        "name": "w1", "accelerator": None, "slices": None, "admission": "NotQueued",
        "state": "Pending", "restarts": 0, "age": None}


@pytest.mark.parametrize("seconds, text", [
    (-5, "0s"), (0, "0s"), (59.9, "59s"), (119, "119s"), (120, "2m"), (7199, "119m"),
    (7200, "2h"), (172799, "47h"), (172800, "2d"), (30 * 86400, "30d"),
])
def test_age(seconds: float, text: str) -> None:
    assert st.age(seconds) == text


@pytest.mark.parametrize("conditions, text", [
    ([cond("Failed", reason="FailedJobs", message="jobset failed due to job "
           "w1-slice-0 failing")], "FailedJobs: jobset failed due to job w1-slice-0 failing"),
    ([cond("Failed", reason="ReachedMaxRestarts")], "ReachedMaxRestarts"),
    ([], "Failed"),
])
def test_failure_message(conditions: list[Any], text: str) -> None:
    assert st.failure_message(jobset(conditions=conditions)) == text


# -- pods ---------------------------------------------------------------------------------

def test_pick_pod_takes_the_newest_pod_of_a_slice_and_worker() -> None:
    pods = [
        pod("w1-slice-1-0-new", 1, 0, "2026-01-01T00:05:00Z"),
        pod("w1-slice-1-0-old", 1, 0, "2026-01-01T00:01:00Z"),
        pod("w1-slice-1-1-new", 1, 1, "2026-01-01T00:06:00Z"),
        pod("w1-slice-0-0", 0, 0, "2026-01-01T00:07:00Z"),
    ]
    def picked(pods: list[dict[str, Any]], slice_: int, worker: int) -> str | None:
        found = st.pick_pod(pods, slice_, worker)
        return found["metadata"]["name"] if found else None

    assert picked(pods, 1, 0) == "w1-slice-1-0-new"
    assert picked(list(reversed(pods)), 1, 0) == "w1-slice-1-0-new"
    assert picked(pods, 1, 1) == "w1-slice-1-1-new"
    assert picked(pods, 0, 0) == "w1-slice-0-0"
    assert st.pick_pod(pods, 0, 1) is None
    assert st.pick_pod(pods, 2, 0) is None
    assert st.pick_pod([], 0, 0) is None


def test_pick_pod_reads_annotations_and_defaults_to_zero() -> None:
    annotated = pod("w1-slice-3-2", 3, 2, as_annotation=True)
    unmarked = pod("w1-worker-0-0", None, None)
    assert st.pick_pod([annotated, unmarked], 3, 2) is annotated
    assert st.pick_pod([annotated, unmarked], 0, 0) is unmarked


# -- describe -----------------------------------------------------------------------------

def test_describe_full() -> None:
    js = jobset(conditions=[cond("Suspended", "False", "ResumeJobs", "jobset is resumed"),
                            cond("StartupPolicyCompleted", reason="AllReplicatedJobsStarted")],
                replicated=[{"name": "slice", "active": 2}], restarts=1, priority="high")
    wl = workload(conditions=[
        cond("QuotaReserved", reason="QuotaReserved",
             message="Quota reserved in ClusterQueue cluster-queue"),
        cond("Admitted", reason="Admitted", message="The workload is admitted"),
        cond("PodsReady", "False", "PodsReady"),
    ])
    pods = [
        pod("w1-slice-1-0-abc", 1, 0, node="gke-v5e-1-a"),
        pod("w1-slice-0-1-abc", 0, 1, node="gke-v5e-0-b"),
        pod("w1-slice-0-0-abc", 0, 0, node="gke-v5e-0-a"),
        pod("w1-slice-1-1-abc", 1, 1, phase="Pending", node=None, conditions=[
            cond("PodScheduled", "False", "Unschedulable",
                 "0/8 nodes are available: 4 Insufficient google.com/tpu.")]),
    ]
    events = [
        {"type": "Normal", "reason": "Admitted", "lastTimestamp": "2026-01-01T00:09:00Z",
         "message": "Admitted by ClusterQueue cluster-queue",
         "involvedObject": {"kind": "Workload", "name": "jobset-w1-1a2b3"}},
        {"type": "Normal", "reason": "SuccessfulCreate", "lastTimestamp": "2026-01-01T00:00:30Z",
         "message": "Created job w1-slice-0", "involvedObject": {"kind": "JobSet", "name": "w1"}},
        {"type": "Warning", "reason": "Restarting", "eventTime": "2026-01-01T00:09:50.000000Z",
         "message": "restarting after failure",
         "involvedObject": {"kind": "JobSet", "name": "w1"}},
    ]
    assert st.describe(js, wl, pods, events, now=NOW) == (
        "Name:         w1\n"
        "Namespace:    training\n"
        "Accelerator:  v5litepod-16 (pool v5e-spot)\n"
        "Queue:        main\n"
        "Priority:     high\n"
        "State:        Running (restarts 1)\n"
        "Admission:    Admitted\n"
        "Kueue conditions:\n"
        "  QuotaReserved=True QuotaReserved: Quota reserved in ClusterQueue cluster-queue\n"
        "  Admitted=True Admitted: The workload is admitted\n"
        "  PodsReady=False PodsReady\n"
        "JobSet StartupPolicyCompleted: AllReplicatedJobsStarted\n"
        "Pods:\n"
        "  slice 0 worker 0: w1-slice-0-0-abc Running on gke-v5e-0-a\n"
        "  slice 0 worker 1: w1-slice-0-1-abc Running on gke-v5e-0-b\n"
        "  slice 1 worker 0: w1-slice-1-0-abc Running on gke-v5e-1-a\n"
        "  slice 1 worker 1: w1-slice-1-1-abc Pending on - (Unschedulable: 0/8 nodes are "
        "available: 4 Insufficient google.com/tpu.)\n"
        "Events:\n"
        "     9m Normal SuccessfulCreate JobSet: Created job w1-slice-0\n"
        "    60s Normal Admitted Workload: Admitted by ClusterQueue cluster-queue\n"
        "    10s Warning Restarting JobSet: restarting after failure\n"
    )


def test_describe_queued_without_pods_or_events() -> None:
    js = jobset(conditions=[cond("Suspended", reason="SuspendedJobs")])
    wl = workload(conditions=[cond("QuotaReserved", "False", "Pending",
                                   "couldn't assign flavors to pod set slice: insufficient "
                                   "quota for google.com/tpu")])
    assert st.describe(js, wl, [], [], now=NOW) == (
        "Name:         w1\n"
        "Namespace:    training\n"
        "Accelerator:  v5litepod-16 (pool v5e-spot)\n"
        "Queue:        main\n"
        "Priority:     -\n"
        "State:        Suspended (restarts 0)\n"
        "Admission:    Pending\n"
        "Kueue conditions:\n"
        "  QuotaReserved=False Pending: couldn't assign flavors to pod set slice: insufficient "
        "quota for google.com/tpu\n"
        "JobSet Suspended: SuspendedJobs\n"
        "Pods:\n"
        "  none yet (waiting for Kueue to admit the workload)\n"
        "Events:\n"
        "  none\n"
    )


def test_describe_without_a_kueue_workload() -> None:
    text = st.describe(jobset(), None, [], [], now=NOW)
    assert "Kueue conditions:" not in text
    assert "Admission:    NotQueued\n" in text
    assert "  none yet (waiting for Kueue to admit the workload)\n" in text


def test_describe_admitted_without_pods_has_no_queue_hint() -> None:
    wl = workload(conditions=[cond("QuotaReserved"), cond("Admitted")])
    assert "Pods:\n  none yet\nEvents:\n" in st.describe(jobset(), wl, [], [], now=NOW)


def test_list_columns() -> None:
    assert [h for h, _ in st.LIST_COLUMNS] == ["NAME", "ACCELERATOR", "SLICES", "ADMISSION",
                                               "STATE", "RESTARTS", "AGE"]
