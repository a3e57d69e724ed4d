"""A small Kubernetes API server over real HTTP on 127.0.0.1, for end-to-end seam tests.

It serves the handful of endpoints the submitter uses (JobSets, Kueue workloads,
ConfigMaps, pods, nodes, events, logs), stores what is applied, records every request, and can
be told to fail the next requests (any status, or a hang past the client's timeout).
JobSets can be watched (``?watch=true``) as the API server does it: a list answers with a
resourceVersion, a watch from that version streams JSON events one a line in a chunked
answer (each change the test makes to ``state.jobsets``) until its timeoutSeconds, and an
unknown or expired version gets an ERROR event with a 410 Gone Status.
What it answers, verb by verb, is the table in tests/apiserver_answers.py (each row citing
kube-apiserver's source), which tests/test_fake_apiserver_answers.py holds it to: a creating
server-side apply answers 201 Created, a changing one 200 (fake_apiserver_objects.py).
Requests are bounded: the server answers only on loopback and stops with the test.
"""

from __future__ import annotations

import base64
import json
import re
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import yaml

from apiserver_answers import ANSWERS
from fake_apiserver_objects import KINDS, answer, merge_patch, status

# kube-apiserver's message for a continue token whose revision etcd has compacted, when it
# can give a new token (apiserver pkg/storage/etcd3/errors.go: inconsistentContinue, returned
# by handleCompactedErrorForPaging with the new token in the Status's metadata.continue).
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You "
    "can start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list.")

# Watch bookmarks (apiserver pkg/storage/cacher/cache_watcher.go nextBookmarkTime): about
# every minute (cacher.go defaultBookmarkFrequency), and 2 s before the watch's timeout.
BOOKMARK_EVERY = 60.0
BOOKMARK_BEFORE_END = 2.0

_JOBSETS = re.compile(r"^/apis/jobset\.x-k8s\.io/v1alpha2/namespaces/([^/]+)/jobsets(?:/([^/]+))?$")
_WORKLOADS = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta2/namespaces/([^/]+)/workloads$")
_CONFIGMAPS = re.compile(r"^/api/v1/namespaces/([^/]+)/configmaps(?:/([^/]+))?$")
_PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
_SECRET = re.compile(r"^/api/v1/namespaces/([^/]+)/secrets/([^/]+)$")
_LOG = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")
_EVENTS = re.compile(r"^/api/v1/namespaces/([^/]+)/events$")
_NODES = re.compile(r"^/api/v1/nodes$")
_LOCALQUEUE = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta2/namespaces/([^/]+)/localqueues/([^/]+)$")
_CLUSTERQUEUES = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta2/clusterqueues$")
_CLUSTERQUEUE = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta2/clusterqueues/([^/]+)$")
_FLAVORS = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta2/resourceflavors$")
_VERSION = re.compile(r"^/version/?$")
_SLICES = re.compile(r"^/apis/accelerator\.gke\.io/v1beta1/slices$")  # GKE dynamic slicing
_PENDING = re.compile(r"^/apis/visibility\.kueue\.x-k8s\.io/v1beta2/(.+)/pendingworkloads$")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int = 0  # what the fake answered


@dataclass
class Fault:
    status: int = 500
    message: str = "injected fault"
    delay: float = 0.0
    reason: str = "InternalError"
    retry_after: str | None = None  # the Retry-After header of the answer
    only: str | None = None  # "METHOD /path": only such a request gets it; others pass by
    skip: int = 0  # the first ``skip`` requests it would hit pass by
    body: bytes | None = None  # answered as text/html instead of a Status (a proxy's page)


@dataclass
class State:
    jobsets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    configmaps: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    computedomains: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    workloads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pods: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    nodes: list[dict[str, Any]] = field(default_factory=list)  # "nodes" in forbidden: 403
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # Secrets (namespace, name) -> the object; "secrets" in forbidden: 403 on get
    secrets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    localqueues: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    clusterqueues: list[dict[str, Any]] = field(default_factory=list)
    # GET /version's gitVersion (apimachinery pkg/version Info)
    git_version: str = "v1.33.5-gke.1080000"
    # visibility API: "namespaces/NS/localqueues/LQ" or "clusterqueues/CQ" -> items; a
    # path not here answers 404 (the API not served), "forbidden" makes it answer 403
    pending: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # GKE's Slices (cluster-scoped); None: the group is not served, as on a cluster without
    # the slice controller (404), "slices" in forbidden: 403
    slices: list[dict[str, Any]] | None = None
    forbidden: set[str] = field(default_factory=set)
    requests: list[Request] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    token: str = "test-token"
    # watches: each list's resourceVersion and what it held; "expire" makes the next N
    # watches answer 410 Gone (an expired resourceVersion) as an ERROR event
    revision: int = 0
    snapshots: dict[str, dict[tuple[str, str], dict[str, Any]]] = field(default_factory=dict)
    expire: int = 0
    # apply refusals: object name -> the causes of a 422 Invalid (each a dict with type,
    # message, field), or -> (field manager, field path) of a 409 apply conflict
    invalid: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    conflicts: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Kueue ResourceFlavors (cluster-scoped); "resourceflavors" in forbidden: 403
    resourceflavors: list[dict[str, Any]] = field(default_factory=list)
    # paged lists: the next N requests with a continue token answer 410 Gone (Expired)
    expire_continue: int = 0


def _matches(labels: dict[str, str], selector: str | None) -> bool:
    if not selector:
        return True
    for term in selector.split(","):
        if term.startswith("!"):  # set-based "!KEY": no label KEY
            if term[1:] in labels:
                return False
            continue
        if "=" not in term:  # set-based "KEY": the label exists
            if term not in labels:
                return False
            continue
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _field_matches(obj: dict[str, Any], selector: str | None) -> bool:
    """Only ``metadata.name=X`` (and ``metadata.namespace``), the fields every kind has."""
    for term in (selector or "").split(","):
        if term:
            key, _, value = term.partition("=")
            if (obj.get("metadata") or {}).get(key.removeprefix("metadata.")) != value:
                return False
    return True


def _token(version: str, start: int) -> str:
    """An opaque continue token, as the API server's is (base64 of JSON holding the
    revision and where the next page starts: apiserver pkg/storage/continue.go)."""
    return base64.urlsafe_b64encode(json.dumps({"rv": version, "start": start}).encode()
                                    ).decode()


def _untoken(token: str) -> tuple[str, int] | None:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(data["rv"]), int(data["start"])
    except (ValueError, KeyError, TypeError):
        return None


class _Handler(BaseHTTPRequestHandler):
    server: "FakeApiServer"
    _request: Request

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: Any, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self._request.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, message: str, reason: str,
                headers: dict[str, str] | None = None) -> None:
        self._send(code, status(code, reason, message), headers=headers)

    def _list(self, body: dict[str, Any], q: dict[str, str],
              items: list[dict[str, Any]] | None = None, snapshot: bool = False) -> None:
        """Answer a list, in pages when ``limit`` is given (rows list-page and
        list-continue-expired of tests/apiserver_answers.py): at most ``limit`` items, and
        while more remain ``metadata.continue`` (and, for an unfiltered list,
        ``remainingItemCount``). ``items``: the whole list (else ``body``'s); with
        ``snapshot`` (JobSets), a continued request's is the first page's snapshot."""
        st = self.server.state
        meta = body.setdefault("metadata", {})
        version = str(meta.get("resourceVersion") or st.revision)
        start = 0
        token = q.get("continue")
        if token:
            found = _untoken(token)
            if found is None:
                return self._status(400, "continue key is not valid: illegal base64 data "
                                    "or JSON", "BadRequest")
            version, start = found
            if st.expire_continue:
                st.expire_continue -= 1
                gone = status(ANSWERS["list-continue-expired"].status, "Expired",
                              INCONSISTENT_CONTINUE)
                gone["metadata"] = {"continue": _token(str(st.revision), start)}
                return self._send(ANSWERS["list-continue-expired"].status, gone)
            if snapshot:
                items = list(st.snapshots.get(version, {}).values())
            meta["resourceVersion"] = version
        everything = body["items"] if items is None else items
        limit = int(q.get("limit") or 0)
        end = start + limit if limit > 0 else len(everything)
        body["items"] = everything[start:end]
        if end < len(everything):
            meta["continue"] = _token(version, end)
            if not q.get("labelSelector") and not q.get("fieldSelector"):
                meta["remainingItemCount"] = len(everything) - end
        return self._send(ANSWERS["list"].status, body)

    def _handle(self, method: str) -> None:
        st = self.server.state
        url = urlparse(self.path)
        query = parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = yaml.safe_load(raw) if raw else None
        self._request = Request(method, url.path, query, dict(self.headers), body)
        st.requests.append(self._request)
        if self.headers.get("Authorization") != f"Bearer {st.token}":
            return self._status(ANSWERS["unauthorized"].status, "Unauthorized", "Unauthorized")
        fault = next((f for f in st.faults
                      if f.only is None or f.only == f"{method} {url.path}"), None)
        if fault is not None and fault.skip:
            fault.skip -= 1
            fault = None
        elif fault is not None:
            st.faults.remove(fault)
            if fault.delay:
                time.sleep(fault.delay)
            if fault.status and fault.body is not None:
                return self._send(fault.status, fault.body, "text/html")
            if fault.status:
                return self._status(fault.status, fault.message, fault.reason,
                                    {"Retry-After": fault.retry_after}
                                    if fault.retry_after else None)
        q = {k: v[0] for k, v in query.items()}
        if m := _JOBSETS.match(url.path):
            ns, name = m.group(1), m.group(2)
            if name is None and method == "GET":
                def listed() -> dict[tuple[str, str], dict[str, Any]]:
                    return {k: json.loads(json.dumps(j)) for k, j in sorted(st.jobsets.items())
                            if k[0] == ns and _field_matches(j, q.get("fieldSelector"))
                            and _matches(j["metadata"].get("labels", {}),
                                         q.get("labelSelector"))}
                if q.get("watch") in ("true", "1"):
                    return self._watch(listed, q)
                body = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSetList",
                        "metadata": {}, "items": []}
                if q.get("continue"):  # a later page: from the first page's snapshot
                    return self._list(body, q, snapshot=True)
                st.revision += 1
                version = str(st.revision)
                st.snapshots[version] = listed()
                body["metadata"]["resourceVersion"] = version
                return self._list(body, q, list(st.snapshots[version].values()))
        if m := _CONFIGMAPS.match(url.path):
            if m.group(2) is None and method == "GET":
                items = [c for (n, _), c in sorted(st.configmaps.items())
                         if n == m.group(1) and _matches(c["metadata"].get("labels", {}),
                                                         q.get("labelSelector"))]
                return self._list({
                    "apiVersion": "v1", "kind": "ConfigMapList",
                    "metadata": {"resourceVersion": str(st.revision)}, "items": items}, q)
        for kind in KINDS:
            if m := kind.path().match(url.path):
                answered = answer(st, kind, method, m.group(1), m.group(2),
                                  self.headers.get("Content-Type") or "", q, body)
                if answered is not None:
                    return self._send(*answered)
        if (m := _WORKLOADS.match(url.path)) and method == "GET":
            return self._list({"kind": "WorkloadList", "apiVersion": "kueue.x-k8s.io/v1beta2",
                               "items": st.workloads.get(m.group(1), [])}, q)
        if (m := _PODS.match(url.path)) and method == "GET":
            items = [p for p in st.pods.get(m.group(1), [])
                     if _matches(p["metadata"].get("labels", {}), q.get("labelSelector"))]
            return self._list({"kind": "PodList", "apiVersion": "v1", "items": items}, q)
        if _NODES.match(url.path) and method == "GET":
            if "nodes" in st.forbidden:
                return self._status(403, 'nodes is forbidden: User "dev" cannot list resource '
                                    '"nodes" in API group "" at the cluster scope', "Forbidden")
            items = [n for n in st.nodes
                     if _matches(n["metadata"].get("labels", {}), q.get("labelSelector"))]
            return self._list({"kind": "NodeList", "apiVersion": "v1", "items": items}, q)
        if (m := _EVENTS.match(url.path)) and method == "GET":
            sel = dict(t.split("=", 1) for t in q.get("fieldSelector", "").split(",") if t)
            items = [e for e in st.events.get(m.group(1), [])
                     if e["involvedObject"]["kind"] == sel.get("involvedObject.kind")
                     and e["involvedObject"]["name"] == sel.get("involvedObject.name")]
            return self._list({"kind": "EventList", "apiVersion": "v1", "items": items}, q)
        if (m := _LOCALQUEUE.match(url.path)) and method == "GET":
            lq = st.localqueues.get((m.group(1), m.group(2)))
            if lq is None:
                return self._status(404, f'localqueues "{m.group(2)}" not found', "NotFound")
            return self._send(200, lq)
        if _CLUSTERQUEUES.match(url.path) and method == "GET":
            if "clusterqueues" in st.forbidden:
                return self._status(403, 'clusterqueues.kueue.x-k8s.io is forbidden: User '
                                    '"dev" cannot list resource "clusterqueues"', "Forbidden")
            return self._list({"kind": "ClusterQueueList",
                               "apiVersion": "kueue.x-k8s.io/v1beta2",
                               "items": st.clusterqueues}, q)
        if (m := _CLUSTERQUEUE.match(url.path)) and method == "PATCH":
            # A merge patch of a cluster-scoped object answers as a namespaced one: 200 and
            # the object, or 404 NotFound (rows merge-patch, merge-patch-absent).
            cq = next((c for c in st.clusterqueues if c["metadata"]["name"] == m.group(1)), None)
            if cq is None:
                return self._status(ANSWERS["merge-patch-absent"].status,
                                    f'clusterqueues.kueue.x-k8s.io "{m.group(1)}" not found',
                                    "NotFound")
            merged = merge_patch(cq, body)
            st.clusterqueues[st.clusterqueues.index(cq)] = merged
            return self._send(ANSWERS["merge-patch"].status, merged)
        if _FLAVORS.match(url.path) and method == "GET":
            if "resourceflavors" in st.forbidden:
                return self._status(403, 'resourceflavors.kueue.x-k8s.io is forbidden: User '
                                    '"dev" cannot list resource "resourceflavors"', "Forbidden")
            return self._send(ANSWERS["list"].status, {
                "kind": "ResourceFlavorList", "apiVersion": "kueue.x-k8s.io/v1beta2",
                "metadata": {"resourceVersion": str(st.revision)},
                "items": st.resourceflavors})
        if _VERSION.match(url.path) and method == "GET":
            # the row "version" (apiserver pkg/server/routes/version.go)
            return self._send(ANSWERS["version"].status, {
                                    "major": "1", "minor": "33", "gitVersion": st.git_version,
                                    "gitCommit": "0" * 40, "gitTreeState": "clean",
                                    "buildDate": "2026-01-01T00:00:00Z",
                                    "goVersion": "go1.24.9", "compiler": "gc",
                                    "platform": "linux/amd64"})
        if _SLICES.match(url.path) and method == "GET":
            if "slices" in st.forbidden:
                return self._status(403, 'slices.accelerator.gke.io is forbidden: User "dev" '
                                    'cannot list resource "slices"', "Forbidden")
            if st.slices is None:  # the API server's answer for a resource it does not serve
                return self._status(404, "the server could not find the requested resource",
                                    "NotFound")
            return self._list({"kind": "SliceList", "apiVersion": "accelerator.gke.io/v1beta1",
                               "metadata": {}, "items": st.slices}, q)
        if (m := _PENDING.match(url.path)) and method == "GET":
            if m.group(1) in st.forbidden:
                return self._status(403, "forbidden", "Forbidden")
            if m.group(1) not in st.pending:
                return self._status(404, "the server could not find the requested resource",
                                    "NotFound")
            return self._send(200, {"kind": "PendingWorkloadsSummary",
                                    "apiVersion": "visibility.kueue.x-k8s.io/v1beta2",
                                    "metadata": {}, "items": st.pending[m.group(1)]})
        if (m := _SECRET.match(url.path)) and method == "GET":
            # The API server's answers: k8s.io/apimachinery pkg/api/errors NewNotFound
            # ("<resource> \"<name>\" not found", reason NotFound, 404) and NewForbidden with
            # the RBAC authorizer's reason (plugin/pkg/auth/authorizer/rbac: 'User "<u>"
            # cannot get resource "secrets" in API group "" in the namespace "<ns>"', 403).
            ns, name = m.group(1), m.group(2)
            if "secrets" in st.forbidden:
                return self._status(403, f'secrets "{name}" is forbidden: User "dev" cannot '
                                    'get resource "secrets" in API group "" in the namespace '
                                    f'"{ns}"', "Forbidden")
            secret = st.secrets.get((ns, name))
            if secret is None:
                return self._status(404, f'secrets "{name}" not found', "NotFound")
            return self._send(200, secret)
        if (m := _LOG.match(url.path)) and method == "GET":
            lines = st.logs.get((m.group(1), m.group(2)))
            if lines is None:
                return self._status(404, f'pods "{m.group(2)}" not found', "NotFound")
            return self._send(200, "".join(f"{x}\n" for x in lines).encode(), "text/plain")
        return self._status(404, f"no route for {method} {url.path}", "NotFound")

    def _client_gone(self) -> bool:
        """Whether the watching client has closed its connection (a real API server ends
        the watch then; a lingering one would bump the resourceVersion for no one)."""
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _chunk(self, event: dict[str, Any]) -> None:
        data = json.dumps(event).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _watch(self, listed: Any, q: dict[str, str]) -> None:
        """Stream the changes after ``resourceVersion`` until ``timeoutSeconds``, with a
        BOOKMARK when asked for (see the table in tests/apiserver_answers.py)."""
        st = self.server.state
        version = q.get("resourceVersion", "")
        seen = st.snapshots.get(version)
        self._request.status = ANSWERS["watch"].status
        self.send_response(ANSWERS["watch"].status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if seen is None or st.expire:
            st.expire = max(0, st.expire - 1)
            self._chunk({"type": "ERROR", "object": status(
                410, "Expired", f"too old resource version: {version} ({st.revision})")})
        else:
            start = time.monotonic()
            end = start + float(q.get("timeoutSeconds", "30"))
            bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
            bookmark = min(start + BOOKMARK_EVERY, end - BOOKMARK_BEFORE_END)
            while time.monotonic() < end and not self._client_gone():
                now = listed()
                for key in sorted(set(seen) | set(now)):
                    if seen.get(key) == now.get(key):
                        continue
                    st.revision += 1
                    obj = json.loads(json.dumps(now.get(key) or seen[key]))
                    obj.setdefault("metadata", {})["resourceVersion"] = str(st.revision)
                    kind = ("DELETED" if key not in now else
                            "ADDED" if key not in seen else "MODIFIED")
                    self._chunk({"type": kind, "object": obj})
                seen = now
                if bookmarks and start < bookmark <= time.monotonic():
                    self._chunk({"type": "BOOKMARK", "object": {
                        "kind": "JobSet", "apiVersion": "jobset.x-k8s.io/v1alpha2",
                        "metadata": {"resourceVersion": str(st.revision)}}})
                    now_ = time.monotonic()  # the next one as nextBookmarkTime picks it
                    bookmark = min(now_ + BOOKMARK_EVERY, end - BOOKMARK_BEFORE_END)
                    bookmark = bookmark if bookmark > now_ else float("inf")
                time.sleep(0.02)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")


class FakeApiServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = State()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def kubeconfig(self, token: str | None = None, exec_command: str | None = None) -> str:
        user: dict[str, Any] = {"token": token or self.state.token}
        if exec_command:
            user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                             "command": exec_command, "provideClusterInfo": True}}
        return str(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [{"name": "test", "cluster": {"server": self.url}}],
            "users": [{"name": "test", "user": user}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
        }))

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out hangs up mid-answer: expected in timeout tests.
        return

    def start(self) -> "FakeApiServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
