"""The workloads a change would kill: which JobSets run on, and which Kueue Workloads are
admitted to, the accelerator node pools that a preview replaces or deletes. Pure: objects in
(as the API server lists them), rows out; submit/cluster/at_risk.py reads them.

Running: a pod whose node carries the pool's ``cloud.google.com/gke-nodepool`` label (GKE's
label on every node of a pool), grouped by its JobSet (label ``jobset.sigs.k8s.io/jobset-name``,
set by the JobSet controller on its pods). Admitted: a Kueue Workload with
``status.admission`` whose podSetAssignments name a ResourceFlavor whose ``nodeLabels`` the
pool's nodes carry (a flavor selects nodes by those labels: kueue.x-k8s.io/v1beta2
ResourceFlavorSpec.nodeLabels), and that has not finished (no Finished condition).
Owner: the object's first ownerReference (a Workload's is its JobSet), "-" when it has none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

from submit.state.status import age

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"


def _seconds(stamp: str | None, now: float) -> str:
    if not stamp:
        return "-"
    then = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return age(now - then)


def _owner(obj: Mapping[str, Any]) -> str:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return f"{refs[0].get('kind')}/{refs[0].get('name')}" if refs else "-"


def _finished(wl: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Finished" and c.get("status") == "True"
               for c in (wl.get("status") or {}).get("conditions") or [])


def at_risk(pools: Iterable[Mapping[str, Any]], nodes: Iterable[Mapping[str, Any]],
            pods: Iterable[Mapping[str, Any]], jobsets: Iterable[Mapping[str, Any]],
            workloads: Iterable[Mapping[str, Any]], flavors: Iterable[Mapping[str, Any]],
            now: float) -> list[dict[str, Any]]:
    """Rows ``{kind, namespace, name, nodePools, state, owner, age}``, sorted. ``pools``: the
    replacement summary's pool entries (``name``, ``nodeLabels``)."""
    wanted = {p["name"]: dict(p.get("nodeLabels") or {}) for p in pools}
    node_pool = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(NODE_POOL_LABEL)
                 for n in nodes}
    js_by_key = {((j["metadata"].get("namespace") or ""), j["metadata"]["name"]): j
                 for j in jobsets}
    running: dict[tuple[str, str], set[str]] = {}
    for pod in pods:
        pool = node_pool.get((pod.get("spec") or {}).get("nodeName") or "")
        if pool not in wanted:
            continue
        meta = pod["metadata"]
        name = (meta.get("labels") or {}).get(JOBSET_NAME_LABEL)
        if name:
            running.setdefault((meta.get("namespace") or "", name), set()).add(str(pool))
    rows: list[dict[str, Any]] = []
    for (ns, name), on in running.items():
        js = js_by_key.get((ns, name), {"metadata": {}})
        rows.append({"kind": "JobSet", "namespace": ns, "name": name, "nodePools": sorted(on),
                     "state": "running", "owner": _owner(js),
                     "age": _seconds(js["metadata"].get("creationTimestamp"), now)})
    flavor_labels = {f["metadata"]["name"]: dict((f.get("spec") or {}).get("nodeLabels") or {})
                     for f in flavors}
    for wl in workloads:
        admission = (wl.get("status") or {}).get("admission")
        if not admission or _finished(wl):
            continue
        names = {str(f) for psa in admission.get("podSetAssignments") or []
                 for f in (psa.get("flavors") or {}).values()}
        admitted = sorted(pool for pool, labels in wanted.items()
                    if any(n in flavor_labels and flavor_labels[n].items() <= labels.items()
                           for n in names))
        if admitted:
            meta = wl["metadata"]
            rows.append({"kind": "Workload", "namespace": meta.get("namespace") or "",
                         "name": meta["name"], "nodePools": admitted, "state": "admitted",
                         "owner": _owner(wl),
                         "age": _seconds(meta.get("creationTimestamp"), now)})
    return sorted(rows, key=lambda r: (r["namespace"], r["kind"], r["name"]))
