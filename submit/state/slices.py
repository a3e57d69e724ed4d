"""Which sub-blocks a workload on a dynamic slice got, or why its slice is not there yet:
pure functions over GKE's Slice objects (accelerator.gke.io/v1beta1), for `describe`.

GKE's slice controller creates a Slice for each slice a Kueue Workload is given, once
Kueue has placed the workload on sub-blocks: ``spec.type`` (tpu7x), ``spec.topology``
and ``spec.partitionIds`` (one per sub-block), and a ``Ready`` condition whose reason is
the slice's state (the Slice reference, https://docs.cloud.google.com/kubernetes-engine/
docs/reference/crds/slice). The states and what they mean (SliceNotCreated,
SliceCreationFailed, ACTIVATING, ACTIVE, ACTIVE_DEGRADED, FAILED, DEACTIVATING,
INCOMPLETE) are those of Google's own runbook (google/skills,
gke-tpu-dynamic-slices-monitoring). Slices are cluster-scoped; the controller links each to
its Workload by the annotations below (its source: internal/core,
OwnerWorkloadNamespaceAnnotation and OwnerWorkloadNameAnnotation).
"""

from __future__ import annotations

from typing import Any

OWNER_NAMESPACE = "slice.accelerator.gke.io/owner-workload-namespace"
OWNER_NAME = "slice.accelerator.gke.io/owner-workload-name"
READY = "Ready"
WORKING = ("ACTIVE", "ACTIVE_DEGRADED")
FAILED = ("SliceCreationFailed", "FAILED")
MEANING = {
    "SliceNotCreated": "GKE is checking the sub-blocks",
    "SliceCreationFailed": "GKE refused the sub-blocks it was given",
    "ACTIVATING": "GKE is connecting the sub-blocks",
    "ACTIVE": "connected",
    "ACTIVE_DEGRADED": "usable, but a sub-block is degraded",
    "FAILED": "GKE could not connect the sub-blocks",
    "DEACTIVATING": "being taken apart",
    "INCOMPLETE": "about to be deleted",
}


def owned(slices: list[dict[str, Any]], wl: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The Slices made for the Kueue Workload ``wl``, by name."""
    if wl is None:
        return []
    meta = wl.get("metadata") or {}
    mine = [s for s in slices
            if ((s.get("metadata") or {}).get("annotations") or {}).get(OWNER_NAMESPACE)
            == meta.get("namespace")
            and (s["metadata"].get("annotations") or {}).get(OWNER_NAME) == meta.get("name")]
    return sorted(mine, key=lambda s: str(s["metadata"].get("name")))


def state(slice_: dict[str, Any]) -> tuple[str, str]:
    """(state, message): the Ready condition's reason and message, or 'unknown'."""
    for c in (slice_.get("status") or {}).get("conditions") or []:
        if c.get("type") == READY:
            return str(c.get("reason") or c.get("status") or "unknown"), str(c.get("message") or "")
    return "unknown", ""


def entry(slice_: dict[str, Any]) -> dict[str, Any]:
    """A Slice as `describe -o json` shows it."""
    spec = slice_.get("spec") or {}
    reason, message = state(slice_)
    return {"name": slice_["metadata"].get("name"), "type": spec.get("type"),
            "topology": spec.get("topology"),
            "partitionIds": list(spec.get("partitionIds") or []),
            "state": reason, "message": message or None}


def lines(topology: str, slices: list[dict[str, Any]] | None) -> list[str]:
    """The `describe` section of a workload on a dynamic slice."""
    out = [f"Dynamic slice: {topology}, joined from 4x4x4 sub-blocks by GKE's slice controller"]
    if slices is None:
        return out + ["  not known: the cluster does not serve Slices (accelerator.gke.io), "
                      "or your account may not list them"]
    if not slices:
        return out + ["  none yet: the slice controller makes it once Kueue has placed the "
                      "workload on sub-blocks"]
    for s in slices:
        e = entry(s)
        meaning = MEANING.get(e["state"], "")
        out.append(f"  {e['name']}: {e['topology']}, {e['state']}"
                   + (f" ({meaning})" if meaning else "")
                   + (f": {e['message']}" if e["message"] else ""))
        out.append(f"    sub-blocks (partition ids): {', '.join(e['partitionIds']) or 'none'}")
    return out


def verdict(slices: list[dict[str, Any]] | None, admitted: bool) -> str | None:
    """Why the workload waits on its slice, or None when the slice does not explain it."""
    if admitted or not slices:
        return None
    for s in slices:
        reason, message = state(s)
        if reason in FAILED:
            return (f"slice {s['metadata'].get('name')} {reason}"
                    + (f": {message}" if message else "")
                    + "; Kueue will place the workload on other sub-blocks")
    for s in slices:
        reason, _ = state(s)
        if reason not in WORKING:
            return (f"waiting for its slice: {s['metadata'].get('name')} is {reason} "
                    f"({MEANING.get(reason, 'not ready')})")
    return None
