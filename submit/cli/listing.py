"""Lists at scale, for `submit workload list` and `experiment describe`: a namespace's
JobSets are read a page at a time (submit/cluster/paging.py, 500 a page, as kubectl does)
and each page is made into rows and dropped before the next is read, so a 10,000-trial
experiment never holds 10,000 JobSets at once. The Kueue workloads the rows need are read
first, kept as a small index by owner (the few fields a row reads), so that finding a
JobSet's workload is one lookup rather than a scan of the namespace's workloads
(bench/lists.py measures both).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from submit.cli.context import kube_call

# What a row reads of a Kueue Workload: its owner, its conditions (the admission), and for
# a fleet the worker MultiKueue gave it (submit/state/fleet.py).
_STATUS_KEEP = ("conditions", "clusterName", "nominatedClusterNames", "admissionChecks")

Index = dict[tuple[str, str], dict[str, Any]]


def _compact(wl: dict[str, Any]) -> dict[str, Any]:
    meta = wl.get("metadata") or {}
    status = wl.get("status") or {}
    return {"metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"),
                         "ownerReferences": meta.get("ownerReferences") or []},
            "spec": {"queueName": (wl.get("spec") or {}).get("queueName")},
            "status": {k: status[k] for k in _STATUS_KEEP if k in status}}


def kueue_index(cluster: Any, namespace: str) -> Index:
    """The namespace's Kueue workloads by the JobSet that owns them, by uid and by name
    (submit/state/status.py kueue_workload matches by uid when the JobSet has one)."""
    index: Index = {}
    for page in pages(cluster.workload_pages(namespace)):
        for wl in page:
            small = _compact(wl)
            for ref in small["metadata"]["ownerReferences"]:
                if ref.get("kind") == "JobSet":
                    index.setdefault(("uid", str(ref.get("uid"))), small)
                    index.setdefault(("name", str(ref.get("name"))), small)
    return index


def owned(index: Index, js: dict[str, Any]) -> list[dict[str, Any]]:
    """The JobSet's Kueue workload, as the one-item list st.summary and api.status_of read
    (empty: none)."""
    meta = js["metadata"]
    uid = meta.get("uid")
    found = index.get(("uid", str(uid)) if uid else ("name", str(meta["name"])))
    return [found] if found is not None else []


def pages(source: Iterator[list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
    """A cluster's pages, each read as the caller asks for it; a KubeError becomes the
    command's error (exit 1) where it happens."""
    while True:
        page = kube_call(lambda: next(source, None))
        if page is None:
            return
        yield page


def mapped(source: Iterator[list[dict[str, Any]]],
           row: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
           ) -> Iterator[list[dict[str, Any]]]:
    """Each page of objects made into its rows by ``row``, one page at a time."""
    for page in pages(source):
        yield row(page)
