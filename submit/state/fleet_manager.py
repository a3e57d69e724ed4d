"""The manager's view of each worker of a fleet: whether its MultiKueue can dispatch there.

A worker the user can read may still be out of the manager's reach (its kubeconfig Secret,
token, network or authorized networks). Kueue says so itself: the manager's
MultiKueueCluster of the worker and the AdmissionCheck of the worker's ClusterQueue each
carry an ``Active`` condition (v0.19.2 apis/kueue/v1beta2: MultiKueueClusterActive and
AdmissionCheckActive, both "Active"; site/content/en/docs/tasks/manage/setup_multikueue.md
checks both before running jobs). The MultiKueueCluster is named after the worker
(infra/specs/fleet/manager.py names it so, docs/fleets.md); the AdmissionCheck is the one the
worker's ClusterQueue names. Pure functions over API objects (as dicts).
"""

from __future__ import annotations

from typing import Any

ACTIVE = "Active"
OK = "active"


def _named(objs: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((o for o in objs if (o.get("metadata") or {}).get("name") == name), None)


def _active(obj: dict[str, Any]) -> tuple[bool | None, str]:
    """The Active condition: (True/False, "Reason: message"), (None, "") when not set yet."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ACTIVE:
            why = ": ".join(x for x in (c.get("reason"), c.get("message")) if x)
            return c.get("status") == "True", why
    return None, ""


def admission_checks(cq: dict[str, Any] | None) -> list[str]:
    """The AdmissionChecks a ClusterQueue names (spec.admissionChecksStrategy, or the
    older spec.admissionChecks list)."""
    spec = (cq or {}).get("spec") or {}
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    return [str(a.get("name")) for a in strategy if a.get("name")] or \
        [str(a) for a in spec.get("admissionChecks") or []]


def view(worker: str, mkcs: list[dict[str, Any]], checks: list[dict[str, Any]],
         cqs: list[dict[str, Any]], cluster_queue: str | None) -> str:
    """One line: ``active``, or what the manager's objects say is wrong."""
    mkc = _named(mkcs, worker)
    if mkc is None:
        return f"no MultiKueueCluster {worker} on the manager"
    active, why = _active(mkc)
    if active is None:
        return f"MultiKueueCluster {worker}: not Active yet (no condition)"
    if not active:
        return f"MultiKueueCluster {worker} inactive: {why}"
    for name in admission_checks(_named(cqs, cluster_queue) if cluster_queue else None):
        check = _named(checks, name)
        if check is None:
            return f"no AdmissionCheck {name} on the manager"
        active, why = _active(check)
        if not active:
            state = "not Active yet (no condition)" if active is None else f"inactive: {why}"
            return f"AdmissionCheck {name} {state}"
    return OK
