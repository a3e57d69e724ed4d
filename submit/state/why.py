"""Why a workload is pending, and where it stands in its queue: pure functions over the
objects `describe` reads (the Kueue Workload, its admission checks, the pending list of
Kueue's visibility API, the pods' events), ending in one plain-English verdict.

Field names are those of Kueue's v1beta2 Workload (status.conditions of types
QuotaReserved, Admitted, Evicted, Preempted, Finished; status.admissionChecks[] with name,
state Pending|Ready|Retry|Rejected and message) and of the visibility API's
PendingWorkload (priority, localQueueName, positionInClusterQueue,
positionInLocalQueue, counting from 0): Kueue's apis/kueue/v1beta2/workload_types.go and
apis/visibility/v1beta2/types.go. Pod scheduling reasons are the scheduler's
(FailedScheduling), the cluster autoscaler's (NotTriggerScaleUp, TriggeredScaleUp; GKE's
FailedScaleUp when it could not create nodes, submit/state/capacity.py) and Kueue's
(Preempted, on the Workload).
"""

from __future__ import annotations

from typing import Any

SCHEDULING_REASONS = ("FailedScheduling", "NotTriggerScaleUp", "TriggeredScaleUp",
                      "FailedScaleUp", "Preempted", "Preempting", "Evicted", "FailedCreate")


def _cond(wl: dict[str, Any] | None, type_: str) -> dict[str, Any] | None:
    for c in ((wl or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def _true(wl: dict[str, Any] | None, type_: str) -> bool:
    c = _cond(wl, type_)
    return c is not None and c.get("status") == "True"


def admission_checks(wl: dict[str, Any] | None) -> list[str]:
    """One line per admission check: its name, state and message."""
    return [f"  {c.get('name')}: {c.get('state')}"
            + (f": {c['message']}" if c.get("message") else "")
            for c in ((wl or {}).get("status") or {}).get("admissionChecks") or []]


def scheduling_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events that explain why pods do not run, newest last."""
    found = [e for e in events if e.get("reason") in SCHEDULING_REASONS]
    return sorted(found, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")


def position(pending: list[dict[str, Any]] | None,
             wl: dict[str, Any] | None) -> dict[str, Any] | None:
    """The workload's entry in a pendingworkloads summary, if it is there."""
    if not pending or wl is None:
        return None
    name = wl["metadata"]["name"]
    for item in pending:
        if (item.get("metadata") or {}).get("name") == name:
            return item
    return None


def position_line(entry: dict[str, Any] | None, pending: list[dict[str, Any]] | None,
                  queue: str | None) -> str:
    if pending is None:
        return ("not known: Kueue's visibility API did not answer (not served, or your "
                "account may not get localqueues/pendingworkloads)")
    if entry is None:
        return "not in the pending list (admitted, finished, or not queued yet)"
    return (f"{entry.get('positionInLocalQueue', 0) + 1} of {len(pending)} in LocalQueue "
            f"{queue}; {entry.get('positionInClusterQueue', 0) + 1} in its ClusterQueue "
            f"(priority {entry.get('priority', 0)})")


def verdict(wl: dict[str, Any] | None, state: str, entry: dict[str, Any] | None,
            pod_events: list[dict[str, Any]]) -> str:
    """One line: why the workload is where it is."""
    if state in ("Completed", "Failed"):
        return f"finished: {state.lower()}"
    if wl is None:
        return ("not seen by Kueue yet: no Workload exists for this JobSet (check that its "
                "queue exists: `submit workload queue`)")
    evicted = _cond(wl, "Evicted")
    if _true(wl, "Preempted") or (evicted and evicted.get("status") == "True"
                                  and evicted.get("reason") == "Preempted"):
        c = _cond(wl, "Preempted") or evicted or {}
        return f"preempted: {c.get('message') or c.get('reason')}; it is queued again"
    if _true(wl, "Admitted"):
        sched = [e for e in scheduling_events(pod_events)
                 if e.get("reason") in ("FailedScheduling", "NotTriggerScaleUp")]
        if sched and state != "Running":
            return f"admitted, but pods are unschedulable: {sched[-1].get('message')}"
        return "admitted: pods are starting or running"
    if _true(wl, "QuotaReserved"):
        checks = ((wl.get("status") or {}).get("admissionChecks") or [])
        waiting = [c for c in checks if c.get("state") != "Ready"]
        if waiting:
            c = waiting[0]
            return (f"waiting for capacity: admission check {c.get('name')} is "
                    f"{c.get('state')}" + (f" ({c['message']})" if c.get("message") else ""))
        return "quota reserved: waiting for admission"
    if _cond(wl, "QuotaReserved") is None and not (wl.get("spec") or {}).get("active", True):
        return "deactivated: the workload is not active"
    reserved = _cond(wl, "QuotaReserved") or {}
    where = (f"; position {entry.get('positionInClusterQueue', 0) + 1} in its ClusterQueue"
             if entry else "")
    message = reserved.get("message") or "no quota reserved yet"
    return f"waiting for quota: {message}{where}"
