"""`submit workload queue`: what Kueue's ClusterQueues hold, the `xpk info` view with
positions. Pure: rows from ClusterQueue objects (kueue.x-k8s.io/v1beta2: spec.resourceGroups
[].flavors[].resources[] nominalQuota and borrowingLimit; status.flavorsUsage[].resources[]
total and borrowed; status.pendingWorkloads and admittedWorkloads) and from the visibility
API's pending lists (see submit/cluster/kube.py)."""

from __future__ import annotations

from typing import Any

COLUMNS = (("CLUSTERQUEUE", "clusterQueue"), ("FLAVOR", "flavor"), ("RESOURCE", "resource"),
           ("NOMINAL", "nominal"), ("USED", "used"), ("BORROWED", "borrowed"),
           ("BORROW LIMIT", "borrowingLimit"), ("PENDING", "pending"),
           ("ADMITTED", "admitted"))
PENDING_COLUMNS = (("CLUSTERQUEUE", "clusterQueue"), ("POSITION", "position"),
                   ("WORKLOAD", "workload"), ("NAMESPACE", "namespace"),
                   ("LOCALQUEUE", "localQueue"), ("PRIORITY", "priority"))


def quota_rows(cqs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per ClusterQueue, flavor and resource, in the ClusterQueue's order."""
    rows = []
    for cq in sorted(cqs, key=lambda c: c["metadata"]["name"]):
        status = cq.get("status") or {}
        usage = {(f.get("name"), r.get("name")): r for f in status.get("flavorsUsage") or []
                 for r in f.get("resources") or []}
        for group in (cq.get("spec") or {}).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                for res in flavor.get("resources") or []:
                    used = usage.get((flavor.get("name"), res.get("name"))) or {}
                    rows.append({
                        "clusterQueue": cq["metadata"]["name"], "flavor": flavor.get("name"),
                        "resource": res.get("name"), "nominal": res.get("nominalQuota"),
                        "used": used.get("total", 0), "borrowed": used.get("borrowed", 0),
                        "borrowingLimit": res.get("borrowingLimit"),
                        "pending": status.get("pendingWorkloads", 0),
                        "admitted": status.get("admittedWorkloads", 0)})
    return rows


def pending_rows(cq: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pending workloads of one ClusterQueue, in Kueue's order (position from 1)."""
    ordered = sorted(items, key=lambda i: i.get("positionInClusterQueue", 0))
    return [{"clusterQueue": cq, "position": i.get("positionInClusterQueue", 0) + 1,
             "workload": (i.get("metadata") or {}).get("name"),
             "namespace": (i.get("metadata") or {}).get("namespace"),
             "localQueue": i.get("localQueueName"), "priority": i.get("priority", 0)}
            for i in ordered]
