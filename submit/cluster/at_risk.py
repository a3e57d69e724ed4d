"""Reads for `submit cluster at-risk`: the nodes of the node pools a change destroys, and
the pods, JobSets, Kueue Workloads and ResourceFlavors that tell what runs or is admitted
there (submit/state/at_risk.py matches them). Reads only, through the one Kubernetes seam."""

from __future__ import annotations

from typing import Any, Iterable

from submit.cluster.kube import Cluster
from submit.cluster.kube_http import NotFound

NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"


def read(cluster: Cluster, pools: Iterable[str], namespaces: Iterable[str]) -> dict[str, Any]:
    """What the matcher needs, listed once: ``{nodes, pods, jobsets, workloads, flavors}``."""
    nodes: list[dict[str, Any]] = []
    for pool in sorted(set(pools)):
        nodes += cluster.list_nodes(f"{NODE_POOL_LABEL}={pool}")
    pods: list[dict[str, Any]] = []
    jobsets: list[dict[str, Any]] = []
    workloads: list[dict[str, Any]] = []
    for ns in sorted(set(namespaces)):
        pods += cluster.list_pods(ns, "")
        jobsets += cluster.list_jobsets(ns)
        workloads += cluster.list_workloads(ns)
    try:
        flavors = cluster.list_resource_flavors()
    except NotFound:
        flavors = []  # Kueue not installed: nothing is admitted by it
    return {"nodes": nodes, "pods": pods, "jobsets": jobsets, "workloads": workloads,
            "flavors": flavors}
