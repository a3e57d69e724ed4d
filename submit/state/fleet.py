"""A fleet's workloads and clusters, read from the manager's and the workers' objects.

Pure functions over API objects (as dicts). Field names are Kueue v0.19.2's: the manager's
Workload carries ``status.clusterName`` (the worker that admitted it; reset on eviction)
and ``status.nominatedClusterNames`` (the workers it was copied to while pending), and the
MultiKueue admission check's state and message in ``status.admissionChecks`` (Pending,
Ready "The workload was admitted on ...", Retry "Admitting remote lost" or "Workload
evicted on worker cluster ...", Rejected): apis/kueue/v1beta2/workload_types.go and
pkg/controller/admissionchecks/multikueue/workload.go. The worker's copy of the Workload
has the manager's name and namespace (MultiKueue creates it so).
"""

from __future__ import annotations

from typing import Any, Mapping

from submit.state.status import admission

ACCELERATOR_RESOURCES = ("google.com/tpu", "nvidia.com/gpu")
UNREACHABLE = "unreachable"


def worker(wl: dict[str, Any] | None) -> str | None:
    """The worker that admitted the workload, if one has."""
    return ((wl or {}).get("status") or {}).get("clusterName") or None


def nominated(wl: dict[str, Any] | None) -> list[str]:
    return list(((wl or {}).get("status") or {}).get("nominatedClusterNames") or [])


def _check(wl: dict[str, Any] | None) -> dict[str, Any] | None:
    """The MultiKueue admission check of the manager's Workload (the fleet's ClusterQueues
    use no other)."""
    checks = ((wl or {}).get("status") or {}).get("admissionChecks") or []
    return dict(checks[0]) if checks else None


def _cond(wl: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for c in ((wl or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return {}


def worker_line(wl: dict[str, Any] | None) -> str:
    name = worker(wl)
    if name:
        return name
    names = nominated(wl)
    if names:
        return f"none yet (copied to {', '.join(names)}; the first to admit it runs it)"
    return "none yet"


def remote_line(name: str, remote: dict[str, Any] | str | None) -> str:
    """Where the workload stands on one worker: its copy there, or why none is known."""
    if isinstance(remote, str):
        return f"{name}: {remote}"
    if remote is None:
        return f"{name}: no copy of the workload there"
    state = admission(remote)
    reserved = _cond(remote, "QuotaReserved")
    if state == "Pending" and reserved.get("message"):
        return f"{name}: waiting for quota: {reserved['message']}"
    return f"{name}: {state}"


def verdict(wl: dict[str, Any] | None, state: str,
            remotes: Mapping[str, dict[str, Any] | str | None]) -> str | None:
    """One line for a fleet workload, or None to fall back to the one-cluster verdict
    (no Workload yet, or finished)."""
    if wl is None or state in ("Completed", "Failed"):
        return None
    name = worker(wl)
    if name:
        return f"dispatched: running on worker {name}"
    check = _check(wl)
    if check and check.get("state") == "Rejected":
        return f"rejected by MultiKueue: {check.get('message') or 'no reason given'}"
    if check and check.get("state") == "Retry":
        return ("a worker refused or lost it: " + (check.get("message") or "no reason given")
                + "; MultiKueue dispatches it again")
    if not _cond(wl, "QuotaReserved").get("status") == "True":
        message = _cond(wl, "QuotaReserved").get("message") or "no quota reserved yet"
        return ("waiting for quota on the manager (no worker of its queue has room for it): "
                f"{message}")
    if remotes:
        lines = "; ".join(remote_line(n, r) for n, r in remotes.items())
        return f"the admission check is pending: no worker has admitted it yet ({lines})"
    return "the admission check is pending: MultiKueue has not copied it to a worker yet"


def quota(cqs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per flavor, the accelerator chips of every ClusterQueue: nominal and used."""
    out: dict[str, dict[str, int]] = {}
    for cq in cqs:
        usage = {(f.get("name"), r.get("name")): r
                 for f in (cq.get("status") or {}).get("flavorsUsage") or []
                 for r in f.get("resources") or []}
        for group in (cq.get("spec") or {}).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                for res in flavor.get("resources") or []:
                    if res.get("name") not in ACCELERATOR_RESOURCES:
                        continue
                    key = str(flavor.get("name"))
                    row = out.setdefault(key, {"nominal": 0, "used": 0})
                    row["nominal"] += int(res.get("nominalQuota") or 0)
                    used = usage.get((flavor.get("name"), res.get("name"))) or {}
                    row["used"] += int(used.get("total") or 0)
    return {k: v for k, v in out.items() if v["nominal"] or v["used"]}


def states(workloads: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"pending": 0, "admitted": 0, "finished": 0}
    for wl in workloads:
        state = admission(wl)
        if state == "Finished":
            counts["finished"] += 1
        elif state == "Admitted":
            counts["admitted"] += 1
        else:
            counts["pending"] += 1
    return counts


def view_rows(cluster: str, role: str, region: str, queues: list[str],
              cqs: list[dict[str, Any]] | str, workloads: list[dict[str, Any]],
              via: str | None = None) -> list[dict[str, Any]]:
    """The fleet view's rows of one cluster: one per accelerator flavor (or one saying why
    the cluster could not be read, when ``cqs`` is that message). ``via``: how the
    manager's MultiKueue reaches a worker ("dns" or "ip"; None for the manager, or a fleet
    deployed before it was exported)."""
    base: dict[str, Any] = {"cluster": cluster, "role": role, "region": region, "via": via,
                            "queues": ", ".join(queues)}
    if isinstance(cqs, str):
        return [{**base, "status": f"{UNREACHABLE}: {cqs}", "flavor": None, "nominal": None,
                 "used": None, "free": None, "pending": None, "admitted": None,
                 "finished": None}]
    counts = states(workloads)
    rows = [{**base, "status": "ok", "flavor": flavor, "nominal": q["nominal"],
             "used": q["used"], "free": max(0, q["nominal"] - q["used"]), **counts}
            for flavor, q in sorted(quota(cqs).items())]
    return rows or [{**base, "status": "ok", "flavor": None, "nominal": 0, "used": 0,
                     "free": 0, **counts}]
