"""The fake API server answers as the table of kube-apiserver's answers says
(tests/apiserver_answers.py): every row is driven over HTTP, for each kind the submitter
writes where the row is about an object, and docs/architecture.md prints the same table.
A row without a driver, or a fake that drifts from its row, fails here.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

import pytest
import requests

import doc_pages
from apiserver_answers import ANSWERS, markdown
from fake_apiserver import FakeApiServer
from fake_apiserver_objects import DELETED_AT, KINDS, Kind

NS = "training"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
Answer = tuple[int, Any]


def _url(server: FakeApiServer, kind: Kind, name: str | None = None) -> str:
    base = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    return f"{server.url}{base}/namespaces/{NS}/{kind.resource}" + (f"/{name}" if name else "")


def _call(server: FakeApiServer, method: str, url: str, body: Any = None,
          content_type: str = "application/json", token: str | None = None,
          **params: str) -> Answer:
    headers = {"Authorization": f"Bearer {token or server.state.token}",
               "Content-Type": content_type}
    r = requests.request(method, url, params=params, headers=headers, timeout=10,
                         data=None if body is None else json.dumps(body))
    return r.status_code, r.json()


def _object(kind: Kind, name: str = "w1", **meta: Any) -> dict[str, Any]:
    api = f"{kind.group}/{kind.version}" if kind.group else kind.version
    return {"apiVersion": api, "kind": kind.kind,
            "metadata": {"name": name, "namespace": NS, **meta}, "spec": {"a": 1}}


def _store(server: FakeApiServer, kind: Kind, obj: dict[str, Any]) -> None:
    getattr(server.state, kind.store)[(NS, obj["metadata"]["name"])] = obj


def _stored(server: FakeApiServer, kind: Kind, name: str = "w1") -> dict[str, Any] | None:
    found: dict[str, Any] | None = getattr(server.state, kind.store).get((NS, name))
    return found


def _is_status(body: Any, code: int, reason: str) -> None:
    assert body["kind"] == "Status" and body["apiVersion"] == "v1"
    assert (body["status"], body["code"], body["reason"]) == ("Failure", code, reason)
    assert isinstance(body["message"], str) and body["message"]


def _not_found(kind: Kind, body: Any) -> None:
    _is_status(body, 404, "NotFound")
    assert body["details"] == {"name": "w1", "group": kind.group, "kind": kind.resource}
    assert body["message"] == f'{kind.resource_name()} "w1" not found'


# -- one driver a row: it sends the request, checks the body, returns the status ---------

def apply_create(server: FakeApiServer, kind: Kind) -> int:
    status, body = _call(server, "PATCH", _url(server, kind, "w1"), _object(kind), APPLY)
    assert body == _stored(server, kind) and body["metadata"]["uid"]
    return status


def apply_update(server: FakeApiServer, kind: Kind) -> int:
    _store(server, kind, _object(kind, uid="first"))
    changed = {**_object(kind), "spec": {"a": 2}}
    status, body = _call(server, "PATCH", _url(server, kind, "w1"), changed, APPLY)
    assert body["spec"] == {"a": 2} and body["metadata"]["uid"] == "first"
    # Onto an object being deleted: it stays so (rest/update.go BeforeUpdate), its
    # finalizers with it.
    _store(server, kind, _object(kind, uid="first", deletionTimestamp=DELETED_AT,
                                 deletionGracePeriodSeconds=0, finalizers=["example.com/k"]))
    again, body = _call(server, "PATCH", _url(server, kind, "w1"), changed, APPLY)
    assert body == _stored(server, kind) and again == status
    assert {k: body["metadata"].get(k) for k in (
        "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers")} == {
        "uid": "first", "deletionTimestamp": DELETED_AT, "deletionGracePeriodSeconds": 0,
        "finalizers": ["example.com/k"]}
    return status


def apply_invalid(server: FakeApiServer, kind: Kind) -> int:
    cause = {"type": "FieldValueInvalid", "field": "spec.a", "message": "Invalid value: 1: no"}
    server.state.invalid["w1"] = [cause]
    status, body = _call(server, "PATCH", _url(server, kind, "w1"), _object(kind), APPLY)
    _is_status(body, 422, "Invalid")
    assert body["details"] == {"name": "w1", "group": kind.group, "kind": kind.kind,
                               "causes": [cause]}
    assert body["message"] == f'{kind.kind_name()} "w1" is invalid: spec.a: Invalid value: 1: no'
    assert _stored(server, kind) is None
    return status


def apply_conflict(server: FakeApiServer, kind: Kind) -> int:
    server.state.conflicts["w1"] = ("kubectl", ".spec.a")
    status, body = _call(server, "PATCH", _url(server, kind, "w1"), _object(kind), APPLY)
    _is_status(body, 409, "Conflict")
    assert body["details"]["causes"] == [{"type": "FieldManagerConflict",
                                          "message": 'conflict with "kubectl"',
                                          "field": ".spec.a"}]
    return status


def merge_patch(server: FakeApiServer, kind: Kind) -> int:
    _store(server, kind, _object(kind, labels={"a": "1", "b": "2"}))
    patch = {"metadata": {"labels": {"a": None, "c": "3"}}}
    status, body = _call(server, "PATCH", _url(server, kind, "w1"), patch, MERGE)
    assert body["metadata"]["labels"] == {"b": "2", "c": "3"} == (
        _stored(server, kind) or {})["metadata"]["labels"]
    return status


def merge_patch_absent(server: FakeApiServer, kind: Kind) -> int:
    status, body = _call(server, "PATCH", _url(server, kind, "w1"), {"metadata": {}}, MERGE)
    _not_found(kind, body)
    return status


def get(server: FakeApiServer, kind: Kind) -> int:
    _store(server, kind, _object(kind))
    status, body = _call(server, "GET", _url(server, kind, "w1"))
    assert body == _object(kind)
    return status


def get_absent(server: FakeApiServer, kind: Kind) -> int:
    status, body = _call(server, "GET", _url(server, kind, "w1"))
    _not_found(kind, body)
    return status


def list_(server: FakeApiServer) -> int:
    """The kinds the submitter lists (it lists no ComputeDomains; the fake serves none)."""
    answers = set()
    for kind in KINDS[:2]:
        _store(server, kind, _object(kind))
        status, body = _call(server, "GET", _url(server, kind))
        assert body["kind"] == f"{kind.kind}List" and body["items"] == [_object(kind)]
        assert body["metadata"]["resourceVersion"]
        answers.add(status)
    (status,) = answers
    return status


def list_page(server: FakeApiServer) -> int:
    """Every list the submitter reads, three pages of 2, 2 and 1 items."""
    answers = set()
    for kind in KINDS[:2]:
        for i in range(5):
            _store(server, kind, _object(kind, f"w{i}"))
        names: list[str] = []
        token = None
        for size in (2, 2, 1):
            status, body = _call(server, "GET", _url(server, kind), limit="2",
                                 **({"continue": token} if token else {}))
            assert len(body["items"]) == size
            names += [i["metadata"]["name"] for i in body["items"]]
            token = body["metadata"].get("continue")
            assert bool(token) == (size == 2)
            assert body["metadata"].get("remainingItemCount") == (
                None if size == 1 else 5 - len(names))
            answers.add(status)
        assert names == [f"w{i}" for i in range(5)]
    # A filtered list has no remainingItemCount (its count would be wrong).
    body = _call(server, "GET", _url(server, KINDS[0]), limit="2",
                 labelSelector="x=1")[1]
    assert "remainingItemCount" not in body["metadata"]
    (status,) = answers
    return status


def list_continue_expired(server: FakeApiServer) -> int:
    for i in range(3):
        _store(server, KINDS[0], _object(KINDS[0], f"w{i}"))
    token = _call(server, "GET", _url(server, KINDS[0]), limit="2")[1]["metadata"]["continue"]
    server.state.expire_continue = 1
    status, body = _call(server, "GET", _url(server, KINDS[0]), limit="2", **{"continue": token})
    _is_status(body, 410, "Expired")
    assert body["message"].startswith(
        "The provided continue parameter is too old to display a consistent list result. "
        "You can start a new list without the continue parameter, or use the continue "
        "token in this response")
    assert body["metadata"]["continue"]
    return status


def delete(server: FakeApiServer, kind: Kind) -> int:
    _store(server, kind, _object(kind, uid="u1"))
    status, body = _call(server, "DELETE", _url(server, kind, "w1"))
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                    "details": {"name": "w1", "group": kind.group, "kind": kind.resource,
                                "uid": "u1"}}
    assert _stored(server, kind) is None
    return status


def delete_foreground(server: FakeApiServer, kind: Kind) -> int:
    _store(server, kind, _object(kind))
    status, body = _call(server, "DELETE", _url(server, kind, "w1"),
                         propagationPolicy="Foreground")
    assert body["metadata"]["deletionTimestamp"] == DELETED_AT
    assert body["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert _stored(server, kind) is None  # no dependents: the collector finished at once
    return status


def delete_orphan_false(server: FakeApiServer, kind: Kind) -> int:
    _store(server, kind, _object(kind, finalizers=["example.com/keep"]))
    status, body = _call(server, "DELETE", _url(server, kind, "w1"), orphanDependents="false")
    assert body["metadata"]["finalizers"] == ["example.com/keep"]
    assert (_stored(server, kind) or {})["metadata"]["deletionTimestamp"] == DELETED_AT
    return status


def delete_absent(server: FakeApiServer, kind: Kind) -> int:
    status, body = _call(server, "DELETE", _url(server, kind, "w1"))
    _not_found(kind, body)
    return status


def _watch(server: FakeApiServer, version: str, seconds: int, **params: str
           ) -> tuple[int, list[dict[str, Any]]]:
    r = requests.get(_url(server, KINDS[0]), timeout=seconds + 10, stream=True, params={
        "watch": "true", "resourceVersion": version, "timeoutSeconds": str(seconds), **params},
        headers={"Authorization": f"Bearer {server.state.token}"})
    assert r.headers["Transfer-Encoding"] == "chunked"
    return r.status_code, [json.loads(line) for line in r.iter_lines() if line]


def watch(server: FakeApiServer) -> int:
    _store(server, KINDS[0], _object(KINDS[0]))
    version = _call(server, "GET", _url(server, KINDS[0]))[1]["metadata"]["resourceVersion"]

    def change() -> None:
        time.sleep(0.3)
        _store(server, KINDS[0], _object(KINDS[0], labels={"x": "1"}))
        time.sleep(0.3)
        server.state.jobsets.clear()

    threading.Thread(target=change).start()
    status, events = _watch(server, version, 1)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["labels"] == {"x": "1"}
    return status


def watch_expired(server: FakeApiServer) -> int:
    status, events = _watch(server, "7", 1)
    (event,) = events
    assert event["type"] == "ERROR"
    _is_status(event["object"], 410, "Expired")
    assert event["object"]["message"].startswith("too old resource version: 7 (")
    return status


def watch_bookmark(server: FakeApiServer) -> int:
    version = _call(server, "GET", _url(server, KINDS[0]))[1]["metadata"]["resourceVersion"]
    started = time.monotonic()
    status, events = _watch(server, version, 3, allowWatchBookmarks="true")
    assert time.monotonic() - started >= 3
    (event,) = events  # 2 s before the end of a 3 s watch
    assert event == {"type": "BOOKMARK", "object": {
        "kind": "JobSet", "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "metadata": {"resourceVersion": event["object"]["metadata"]["resourceVersion"]}}}
    # No bookmark unless asked for, nor when the watch ends within 2 s.
    assert _watch(server, version, 3)[1] == [] and _watch(
        server, version, 2, allowWatchBookmarks="true")[1] == []
    return status


def unauthorized(server: FakeApiServer) -> int:
    status, body = _call(server, "GET", _url(server, KINDS[0], "w1"), token="wrong")
    _is_status(body, 401, "Unauthorized")
    assert body["message"] == "Unauthorized"
    return status


PER_KIND: dict[str, Callable[[FakeApiServer, Kind], int]] = {
    "apply-create": apply_create, "apply-update": apply_update,
    "apply-invalid": apply_invalid, "apply-conflict": apply_conflict,
    "merge-patch": merge_patch, "merge-patch-absent": merge_patch_absent,
    "get": get, "get-absent": get_absent, "delete": delete,
    "delete-foreground": delete_foreground, "delete-orphan-false": delete_orphan_false,
    "delete-absent": delete_absent}
def version_(server: FakeApiServer) -> int:
    server.state.git_version = "v1.34.1-gke.1829001"
    status, body = _call(server, "GET", f"{server.url}/version")
    assert body["gitVersion"] == "v1.34.1-gke.1829001" and body["major"] == "1"
    return status


ONCE: dict[str, Callable[[FakeApiServer], int]] = {
    "list": list_, "list-page": list_page, "list-continue-expired": list_continue_expired,
    "watch": watch, "watch-expired": watch_expired, "watch-bookmark": watch_bookmark,
    "unauthorized": unauthorized, "version": version_}


def test_every_row_has_a_driver() -> None:
    assert set(PER_KIND) | set(ONCE) == set(ANSWERS) and not set(PER_KIND) & set(ONCE)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
@pytest.mark.parametrize("key", sorted(PER_KIND))
def test_an_object_answer_follows_its_row(server: FakeApiServer, key: str, kind: Kind) -> None:
    assert PER_KIND[key](server, kind) == ANSWERS[key].status


@pytest.mark.parametrize("key", sorted(ONCE))
def test_a_watch_and_authentication_follow_their_rows(server: FakeApiServer, key: str) -> None:
    assert ONCE[key](server) == ANSWERS[key].status


def test_an_invalid_answer_brackets_several_causes(server: FakeApiServer) -> None:
    """NewInvalid's message ends in the field errors' aggregate: several in brackets, a
    repeated one once (apimachinery pkg/util/errors/errors.go aggregate.Error)."""
    one = {"type": "FieldValueRequired", "field": "spec.b", "message": "Required value"}
    two = {"type": "FieldValueInvalid", "field": "spec.a", "message": "Invalid value: 1: no"}
    server.state.invalid["w1"] = [one, two, one]
    status, body = _call(server, "PATCH", _url(server, KINDS[0], "w1"), _object(KINDS[0]),
                         APPLY)
    assert status == 422 and body["details"]["causes"] == [one, two, one]
    assert body["message"] == ('JobSet.jobset.x-k8s.io "w1" is invalid: [spec.b: Required '
                               'value, spec.a: Invalid value: 1: no]')


def test_every_row_cites_a_source() -> None:
    for row in ANSWERS.values():
        assert row.source and any(p in row.source for p in (
            "apiserver/", "apimachinery/")), row.key


def test_the_architecture_page_prints_the_table() -> None:
    page = doc_pages.section("docs/architecture.md", "## What the fake API server answers")
    assert markdown() in page
