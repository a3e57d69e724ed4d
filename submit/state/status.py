"""Reading a workload's state from its JobSet, its Kueue Workload, pods and events.

Pure functions over the API objects (as dicts), so `list`, `describe` and `wait` are
tested without a cluster.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from submit.render import mounts

LIST_COLUMNS = (("NAME", "name"), ("ACCELERATOR", "accelerator"), ("SLICES", "slices"),
                ("ADMISSION", "admission"), ("STATE", "state"), ("RESTARTS", "restarts"),
                ("AGE", "age"))
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def _conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c.get("type", ""): c for c in (obj.get("status") or {}).get("conditions") or []}


def _true(conds: dict[str, dict[str, Any]], kind: str) -> bool:
    return conds.get(kind, {}).get("status") == "True"


def _timestamp(value: str | None) -> float | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def age(seconds: float) -> str:
    s = int(max(0, seconds))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    if s < 172800:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


def kueue_workload(js: dict[str, Any], workloads: list[dict[str, Any]]) -> dict[str, Any] | None:
    uid = js["metadata"].get("uid")
    name = js["metadata"]["name"]
    for wl in workloads:
        for ref in wl["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == "JobSet" and (ref.get("uid") == uid if uid else
                                                ref.get("name") == name):
                return wl
    return None


def admission(wl: dict[str, Any] | None) -> str:
    if wl is None:
        return "NotQueued"
    conds = _conditions(wl)
    for kind in ("Finished", "Evicted", "Admitted", "QuotaReserved"):
        if _true(conds, kind):
            return kind
    return "Pending"


def jobset_state(js: dict[str, Any]) -> str:
    conds = _conditions(js)
    for kind in ("Completed", "Failed", "Suspended"):
        if _true(conds, kind):
            return kind
    statuses = (js.get("status") or {}).get("replicatedJobsStatus") or []
    if any(s.get("active", 0) or s.get("ready", 0) for s in statuses):
        return "Running"
    return "Pending"


def summary(js: dict[str, Any], workloads: list[dict[str, Any]], now: float) -> dict[str, Any]:
    meta = js["metadata"]
    rjobs = (js.get("spec") or {}).get("replicatedJobs") or [{}]
    created = _timestamp(meta.get("creationTimestamp"))
    return {
        "name": meta["name"],
        "accelerator": (meta.get("labels") or {}).get("accelstack.dev/accelerator"),
        "slices": rjobs[0].get("replicas"),
        "admission": admission(kueue_workload(js, workloads)),
        "state": jobset_state(js),
        "restarts": (js.get("status") or {}).get("restarts", 0),
        "age": age(now - created) if created else None,
    }


def failure_message(js: dict[str, Any]) -> str:
    cond = _conditions(js).get("Failed", {})
    return f"{cond.get('reason', 'Failed')}: {cond.get('message', '')}".rstrip(": ")


def _pod_indexes(pod: dict[str, Any]) -> tuple[int, int]:
    meta = pod["metadata"]
    marks = {**(meta.get("labels") or {}), **(meta.get("annotations") or {})}
    return int(marks.get(JOB_INDEX, 0)), int(marks.get(COMPLETION_INDEX, 0))


def pick_pod(pods: list[dict[str, Any]], slice_index: int, worker: int) -> dict[str, Any] | None:
    """The newest pod of (slice, worker): after a restart the old pods may linger."""
    found = [p for p in pods if _pod_indexes(p) == (slice_index, worker)]
    found.sort(key=lambda p: p["metadata"].get("creationTimestamp") or "")
    return found[-1] if found else None


def describe(js: dict[str, Any], wl: dict[str, Any] | None, pods: list[dict[str, Any]],
             events: list[dict[str, Any]], now: float) -> str:
    meta = js["metadata"]
    labels = meta.get("labels") or {}
    lines = [
        f"Name:         {meta['name']}",
        f"Namespace:    {meta.get('namespace')}",
        f"Accelerator:  {labels.get('accelstack.dev/accelerator')} "
        f"(pool {labels.get('accelstack.dev/slice-pool')})",
        f"Queue:        {labels.get('kueue.x-k8s.io/queue-name')}",
        f"Priority:     {labels.get('kueue.x-k8s.io/priority-class', '-')}",
        f"State:        {jobset_state(js)} (restarts {(js.get('status') or {}).get('restarts', 0)})",
        f"Admission:    {admission(wl)}",
    ]
    lines += mounts.describe_lines(js)
    from submit.render.diagnostics import describe as diagnostics  # late: describe only

    lines += diagnostics.describe_lines(js)
    if wl is not None:
        lines.append("Kueue conditions:")
        for c in (wl.get("status") or {}).get("conditions") or []:
            lines.append(f"  {c.get('type')}={c.get('status')} {c.get('reason', '')}: "
                         f"{c.get('message', '')}".rstrip(": "))
    for c in (js.get("status") or {}).get("conditions") or []:
        if c.get("status") == "True":
            lines.append(f"JobSet {c.get('type')}: {c.get('reason', '')} {c.get('message', '')}"
                         .rstrip())
    lines.append("Pods:")
    if not pods:
        lines.append("  none yet" + (" (waiting for Kueue to admit the workload)"
                                    if admission(wl) in ("Pending", "NotQueued") else ""))
    for pod in sorted(pods, key=_pod_indexes):
        s, w = _pod_indexes(pod)
        status = pod.get("status") or {}
        phase = status.get("phase", "Unknown")
        node = (pod.get("spec") or {}).get("nodeName") or "-"
        why = ""
        for c in status.get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                why = f" ({c.get('reason')}: {c.get('message')})"
        lines.append(f"  slice {s} worker {w}: {pod['metadata']['name']} {phase} on {node}{why}")
    lines.append("Events:")
    if not events:
        lines.append("  none")
    for e in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""):
        stamp = _timestamp(e.get("lastTimestamp") or e.get("eventTime"))
        when = age(now - stamp) if stamp else "-"
        lines.append(f"  {when:>5} {e.get('type', '')} {e.get('reason', '')} "
                     f"{e['involvedObject']['kind']}: {e.get('message', '')}")
    return "\n".join(lines) + "\n"
