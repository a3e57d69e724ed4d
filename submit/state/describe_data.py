"""`submit workload describe -o json|yaml`: what the text of `describe` says, as data.

The shape is a contract (documented beside the command, pinned by
tests/test_describe_output.py); fields are only ever added. Pure: the API objects in,
one dict out.

    name, namespace, accelerator, pool, queue, priority     strings (null when absent)
    state, restarts, admission                              as `list` shows them
    kueueConditions   [{type, status, reason, message}]     the Kueue Workload's
    jobsetConditions  [{type, reason, message}]             the JobSet's true ones
    pods              [{slice, worker, name, phase, node, unschedulable}]
    events            [{time, type, reason, kind, message}] oldest first
    admissionChecks   [{name, state, message}]
    queuePosition     {localQueue, clusterQueue, pending, priority} (1-based), or null
    queuePositionKnown  false when Kueue's visibility API did not answer
    schedulingEvents  [{type, reason, pod, message}]
    verdict           the one line that ends the text
    diagnostics       {stackTraces: {container, directory, loggingQuery} | null,
                       xlaDump: {location, folder, perHost} | null, debugLogs: bool,
                       tensorboard: gs://... | null}
"""

from __future__ import annotations

from typing import Any

from submit.state import status as st
from submit.state import why


def describe_data(js: dict[str, Any], wl: dict[str, Any] | None, pods: list[dict[str, Any]],
                  events: list[dict[str, Any]], pending: list[dict[str, Any]] | None,
                  pod_events: list[dict[str, Any]]) -> dict[str, Any]:
    meta = js["metadata"]
    labels = meta.get("labels") or {}
    entry = why.position(pending, wl)
    state = st.jobset_state(js)
    out: dict[str, Any] = {
        "name": meta["name"], "namespace": meta.get("namespace"),
        "accelerator": labels.get("accelstack.dev/accelerator"),
        "pool": labels.get("accelstack.dev/slice-pool"),
        "queue": labels.get("kueue.x-k8s.io/queue-name"),
        "priority": labels.get("kueue.x-k8s.io/priority-class"),
        "state": state, "restarts": (js.get("status") or {}).get("restarts", 0),
        "admission": st.admission(wl),
        "kueueConditions": [_pick(c, "type", "status", "reason", "message") for c in
                            ((wl or {}).get("status") or {}).get("conditions") or []],
        "jobsetConditions": [_pick(c, "type", "reason", "message") for c in
                             (js.get("status") or {}).get("conditions") or []
                             if c.get("status") == "True"],
        "pods": [_pod(p) for p in sorted(pods, key=st._pod_indexes)],
        "events": [{"time": e.get("lastTimestamp") or e.get("eventTime"),
                    "type": e.get("type"), "reason": e.get("reason"),
                    "kind": (e.get("involvedObject") or {}).get("kind"),
                    "message": e.get("message")}
                   for e in sorted(events, key=lambda e: e.get("lastTimestamp")
                                   or e.get("eventTime") or "")],
        "admissionChecks": [_pick(c, "name", "state", "message") for c in
                            ((wl or {}).get("status") or {}).get("admissionChecks") or []],
        "queuePosition": None if entry is None else {
            "localQueue": entry.get("positionInLocalQueue", 0) + 1,
            "clusterQueue": entry.get("positionInClusterQueue", 0) + 1,
            "pending": len(pending or []), "priority": entry.get("priority", 0)},
        "queuePositionKnown": pending is not None,
        "schedulingEvents": [{"type": e.get("type"), "reason": e.get("reason"),
                              "pod": (e.get("involvedObject") or {}).get("name"),
                              "message": e.get("message")}
                             for e in why.scheduling_events(pod_events)],
        "verdict": why.verdict(wl, state, entry, pod_events),
        "diagnostics": _diagnostics(js),
    }
    return out


def _diagnostics(js: dict[str, Any]) -> dict[str, Any]:
    from submit.render.diagnostics.describe import diagnostics_of  # late: describe only

    return diagnostics_of(js)


def _pick(obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: obj.get(k) for k in keys}


def _pod(pod: dict[str, Any]) -> dict[str, Any]:
    s, w = st._pod_indexes(pod)
    status = pod.get("status") or {}
    why_not = next((f"{c.get('reason')}: {c.get('message')}"
                    for c in status.get("conditions") or []
                    if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
    return {"slice": s, "worker": w, "name": pod["metadata"]["name"],
            "phase": status.get("phase", "Unknown"),
            "node": (pod.get("spec") or {}).get("nodeName"), "unschedulable": why_not}
