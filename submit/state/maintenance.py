"""Upcoming maintenance of a workload's nodes, read as data: GKE's host maintenance notice
on each node, node pools whose nodes run an older version than the control plane (a node
upgrade pending), and which ClusterQueues admit to a pool (what `submit cluster hold`
stops). Pure functions over objects the cluster seam fetched.

GKE labels a node ``cloud.google.com/scheduled-maintenance-time`` with the start of its
upcoming host maintenance in Unix epoch seconds (GKE 1.31.1-gke.2008000 and later, for
machine types with GPUs or TPUs: https://cloud.google.com/kubernetes-engine/docs/how-to/
view-maintenance-events, "View upcoming maintenance on GKE"). Node auto-upgrade brings
nodes to the control plane's version (https://cloud.google.com/kubernetes-engine/docs/
how-to/node-auto-upgrades), so nodes behind it are upgraded in a coming window.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

MAINTENANCE_LABEL = "cloud.google.com/scheduled-maintenance-time"
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-gke\.(\d+))?")


def _labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def _when(epoch: str) -> str:
    return datetime.fromtimestamp(int(epoch), timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def _version(text: str) -> tuple[int, ...] | None:
    found = _VERSION.match(text or "")
    return tuple(int(g or 0) for g in found.groups()) if found else None


def scheduled(nodes: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, str]]:
    """Node pool -> (nodes with a maintenance notice, the earliest start as epoch text)."""
    out: dict[str, tuple[int, str]] = {}
    for node in nodes:
        epoch = _labels(node).get(MAINTENANCE_LABEL, "")
        if not epoch.isdigit():
            continue
        pool = _labels(node).get(NODEPOOL_LABEL, "?")
        count, first = out.get(pool, (0, epoch))
        out[pool] = (count + 1, min(first, epoch, key=int))
    return out


def behind(nodes: Sequence[Mapping[str, Any]], control_plane: str | None) -> dict[str, str]:
    """Node pool -> the oldest kubelet version of its nodes, for pools behind the control
    plane (a node upgrade is pending)."""
    plane = _version(control_plane or "")
    out: dict[str, str] = {}
    if plane is None:
        return out
    for node in nodes:
        text = str(((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", ""))
        mine = _version(text)
        if mine is None or mine >= plane:
            continue
        pool = _labels(node).get(NODEPOOL_LABEL, "?")
        if pool not in out or mine < (_version(out[pool]) or mine):
            out[pool] = text
    return out


def lines(nodes: Sequence[Mapping[str, Any]] | None, control_plane: str | None,
          slice_whole: bool) -> list[str]:
    """`describe`'s "Maintenance" section for the nodes of a workload's pool: only when
    something is coming (nothing is said when nodes are not readable, as elsewhere)."""
    if nodes is None:
        return []
    out = []
    restart = " (a multi-host slice restarts whole)" if slice_whole else ""
    for pool, (count, epoch) in sorted(scheduled(nodes).items()):
        out.append(f"  node pool {pool}: host maintenance from {_when(epoch)} on {count} "
                   f"node(s){restart}")
    for pool, version in sorted(behind(nodes, control_plane).items()):
        out.append(f"  node pool {pool}: nodes run {version}, the control plane "
                   f"{control_plane}: a node upgrade is pending (GKE upgrades them in a "
                   "maintenance window no exclusion covers)")
    return ["Maintenance:", *out] if out else []


def hold_targets(node_selector: Mapping[str, str], flavors: Sequence[Mapping[str, Any]],
                 cluster_queues: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The ResourceFlavors whose nodeLabels pick the pool's nodes, and the ClusterQueues
    with quota in one of them (each such queue stops whole: stopPolicy is per queue)."""
    names = sorted(str(f["metadata"]["name"]) for f in flavors
                   if ((f.get("spec") or {}).get("nodeLabels") or {})
                   and all(node_selector.get(k) == v for k, v in
                           ((f.get("spec") or {}).get("nodeLabels") or {}).items()))
    queues = sorted(str(q["metadata"]["name"]) for q in cluster_queues
                    if any(fl.get("name") in names
                           for group in (q.get("spec") or {}).get("resourceGroups") or []
                           for fl in group.get("flavors") or []))
    return names, queues


def summary(nodes: Sequence[Mapping[str, Any]] | None, control_plane: str | None) -> str:
    """The fleet view's MAINTENANCE cell of one cluster: node pools with a host maintenance
    notice (from when) and node pools behind the control plane; "none" when neither."""
    if nodes is None:
        return "unknown: nodes not readable"
    parts = [f"{pool}: host maintenance from {_when(epoch)} ({count} node(s))"
             for pool, (count, epoch) in sorted(scheduled(nodes).items())]
    parts += [f"{pool}: node upgrade pending ({version} < {control_plane})"
              for pool, version in sorted(behind(nodes, control_plane).items())]
    return "; ".join(parts) or "none"
