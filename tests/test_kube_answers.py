"""Every write the Kubernetes seam makes, against each answer kube-apiserver gives it
(tests/apiserver_answers.py): a server-side apply that creates (201) and one that changes
(200), a merge patch (200, or 404: it never creates), a delete answered by the object marked
for deletion (200) or by a Status (200). The caller always gets the body as a dict, never
the None the generated client returns for a code its OpenAPI does not list."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from fake_apiserver import FakeApiServer
from fake_apiserver_objects import DELETED_AT
from submit.cluster.kube import Cluster, NotFound

NS = "training"
OBJECTS = {
    "JobSet": ("jobsets", "jobset.x-k8s.io/v1alpha2", "uid-"),
    "ConfigMap": ("configmaps", "v1", "uid-configmap-"),
    "ComputeDomain": ("computedomains", "resource.nvidia.com/v1beta1", "uid-computedomain-"),
}


def _cluster(server: FakeApiServer) -> Cluster:
    return Cluster(server.kubeconfig(), timeout=2, retries=0, backoff=0.01)


def _object(kind: str, **meta: Any) -> dict[str, Any]:
    body = {"apiVersion": OBJECTS[kind][1], "kind": kind,
            "metadata": {"name": "w1", "namespace": NS, **meta}}
    body["data" if kind == "ConfigMap" else "spec"] = {"a": "1"}
    return body


def _statuses(server: FakeApiServer) -> list[int]:
    return [r.status for r in server.state.requests]


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_an_apply_that_creates_answers_201_and_gives_the_object(
        server: FakeApiServer, kind: str) -> None:
    applied = _cluster(server).apply(_object(kind))
    assert _statuses(server) == [201]
    assert applied["metadata"]["uid"] == OBJECTS[kind][2] + "w1"
    assert applied == getattr(server.state, OBJECTS[kind][0])[(NS, "w1")]


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_an_apply_that_changes_answers_200_and_gives_the_object(
        server: FakeApiServer, kind: str) -> None:
    getattr(server.state, OBJECTS[kind][0])[(NS, "w1")] = _object(kind, uid="kept")
    changed = _object(kind, labels={"b": "2"})
    applied = _cluster(server).apply(changed)
    assert _statuses(server) == [200]
    assert applied["metadata"] == {**changed["metadata"], "uid": "kept"}


def test_a_merge_patch_gives_the_object_and_never_creates(server: FakeApiServer) -> None:
    cluster = _cluster(server)
    with pytest.raises(NotFound):
        cluster.patch_jobset(NS, "w1", {"metadata": {"labels": {"q": "main"}}})
    server.state.jobsets[(NS, "w1")] = _object("JobSet")
    patched = cluster.patch_jobset(NS, "w1", {"metadata": {"labels": {"q": "main"}}})
    assert _statuses(server) == [404, 200]
    assert patched["metadata"]["labels"] == {"q": "main"}


def test_a_foreground_delete_gives_the_jobset_marked_for_deletion(
        server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _object("JobSet")
    answer = _cluster(server).delete_jobset(NS, "w1")
    assert _statuses(server) == [200]
    assert answer["metadata"]["deletionTimestamp"] == DELETED_AT
    assert answer["metadata"]["finalizers"] == ["foregroundDeletion"]


DELETES: dict[str, Callable[[Cluster], dict[str, Any] | None]] = {
    "ConfigMap": lambda c: c.delete_config_map(NS, "w1"),
    "ComputeDomain": lambda c: c.delete_compute_domain(NS, "w1"),
}


@pytest.mark.parametrize("kind", sorted(DELETES))
def test_a_delete_gives_a_status_or_the_object_its_finalizers_keep(
        server: FakeApiServer, kind: str) -> None:
    store = getattr(server.state, OBJECTS[kind][0])
    cluster = _cluster(server)
    store[(NS, "w1")] = _object(kind, uid="u1")
    gone = DELETES[kind](cluster)
    store[(NS, "w1")] = _object(kind, finalizers=["example.com/keep"])
    kept = DELETES[kind](cluster)
    assert DELETES[kind](cluster) == kept  # deleted again while its finalizer holds it
    del store[(NS, "w1")]
    assert DELETES[kind](cluster) is None  # there was none
    assert _statuses(server) == [200, 200, 200, 404]
    assert gone is not None and (gone["kind"], gone["status"]) == ("Status", "Success")
    assert gone["details"]["uid"] == "u1"
    assert kept is not None and kept["metadata"]["deletionTimestamp"] == DELETED_AT


def test_a_watch_passes_bookmarks_on_and_follow_skips_them(server: FakeApiServer) -> None:
    """allowWatchBookmarks=true: a BOOKMARK arrives 2 s before a 3 s watch ends (apiserver
    cache_watcher.go nextBookmarkTime); it carries no JobSet, so `wait` sees none."""
    from submit.cluster.watch import follow

    server.state.jobsets[(NS, "w1")] = _object("JobSet")
    cluster = _cluster(server)
    _, version = cluster.list_jobset(NS, "w1")
    events = list(cluster.watch_jobset(NS, "w1", version, 3))
    assert [kind for kind, _ in events] == ["BOOKMARK"]
    assert set(events[0][1]["metadata"]) == {"resourceVersion"}
    seen = list(follow(cluster, NS, "w1", timeout=3, period=3))
    assert seen == [_object("JobSet")]  # the list before the watch; not the bookmark


def test_a_2xx_without_a_json_object_is_a_kube_error(server: FakeApiServer) -> None:
    """A proxy before the API server may answer 200 with its own page: said, not a crash."""
    from fake_apiserver import Fault
    from submit.cluster.kube import KubeError

    server.state.faults = [Fault(status=200, body=b"<html>sign in</html>")]
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_object("JobSet"))
    assert str(err.value) == ("apply JobSet training/w1: the API server answered 200 without "
                              "a JSON object")
    assert err.value.status == 200


def test_every_write_of_the_seam_decodes_its_own_answer() -> None:
    """A write (patch, delete, create, replace) called through the generated client itself
    gets None for a 2xx its OpenAPI does not list (201 to a creating apply: handlers/
    patch.go); so kube.py hands every such method to ``Cluster._json`` and calls none."""
    import ast
    from pathlib import Path

    import submit.cluster.kube as kube

    writes = ("patch_", "delete_", "create_", "replace_")
    tree = ast.parse(Path(kube.__file__).read_text())
    handed, called = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr.startswith(writes) and isinstance(
                f.value, ast.Attribute) and f.value.attr in ("core", "custom"):
            called.add(f.attr)
        if isinstance(f, ast.Attribute) and f.attr == "_json":
            handed |= {a.attr for a in node.args if isinstance(a, ast.Attribute)
                       and a.attr.startswith(writes)}
    assert not called, f"written through the client's own decoding: {sorted(called)}"
    assert handed >= {"patch_namespaced_config_map", "patch_namespaced_custom_object",
                      "delete_namespaced_config_map", "delete_namespaced_custom_object"}
