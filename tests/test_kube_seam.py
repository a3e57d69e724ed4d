"""The Kubernetes seam end to end: submit.cluster.kube.Cluster over real HTTP to a fake API server.

Each test checks what reached the server (method, path, query, content type, body) or the
exact KubeError a user sees. Retries and timeouts are kept short (timeout 0.5 s, backoff
0.01 s) so every test finishes in well under five seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from fake_apiserver import Fault, FakeApiServer, Request
from submit.cluster.kube import FIELD_MANAGER, Cluster, KubeError, NotFound

NS = "training"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
APPLY = "application/apply-patch+yaml"
INSTALL_HINT = " (gcloud components install gke-gcloud-auth-plugin)"




def _header(req: Request, name: str) -> str | None:
    return {k.lower(): v for k, v in req.headers.items()}.get(name.lower())


def _cluster(server: FakeApiServer, retries: int = 3, **kw: Any) -> Cluster:
    return Cluster(server.kubeconfig(**kw), timeout=0.5, retries=retries, backoff=0.01)


def _jobset(name: str = "w1", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"app.kubernetes.io/managed-by": "accelstack", **labels}},
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": 1}]}}


def _config_map(name: str = "w1-config") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS}, "data": {"train.yaml": "lr: 0.1\n"}}


# -- apply ------------------------------------------------------------------------------

def test_apply_jobset_is_a_server_side_apply(server: FakeApiServer) -> None:
    obj = _jobset()
    applied = _cluster(server).apply(obj)

    assert applied["metadata"]["uid"] == "uid-w1"
    [req] = server.state.requests
    assert (req.method, req.path) == ("PATCH", f"{JOBSETS}/w1")
    assert req.query == {"fieldManager": [FIELD_MANAGER], "fieldValidation": ["Strict"]}
    assert FIELD_MANAGER == "accelstack-submit"
    assert _header(req, "Content-Type") == APPLY
    assert _header(req, "Authorization") == "Bearer test-token"
    # The fake stores the body it records (a shallow copy) and adds the uid to it.
    sent = {**req.body, "metadata": {k: v for k, v in req.body["metadata"].items()
                                     if k != "uid"}}
    assert sent == obj
    assert server.state.jobsets[(NS, "w1")]["spec"] == obj["spec"]


def test_apply_config_map_is_a_server_side_apply(server: FakeApiServer) -> None:
    obj = _config_map()
    applied = _cluster(server).apply(obj)

    assert applied["data"] == {"train.yaml": "lr: 0.1\n"}
    [req] = server.state.requests
    assert (req.method, req.path) == ("PATCH", f"/api/v1/namespaces/{NS}/configmaps/w1-config")
    assert req.query == {"fieldManager": ["accelstack-submit"]}
    assert _header(req, "Content-Type") == APPLY
    assert req.body == obj


def test_apply_of_another_kind_is_refused_without_a_request(server: FakeApiServer) -> None:
    with pytest.raises(KubeError) as err:
        _cluster(server).apply({"kind": "Pod", "metadata": {"name": "p", "namespace": NS}})
    assert str(err.value) == "cannot apply a Pod"
    assert server.state.requests == []


# -- get, list, delete ------------------------------------------------------------------

def test_get_jobset_and_missing_jobset(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    cluster = _cluster(server)
    assert cluster.get_jobset(NS, "w1") == _jobset()
    assert cluster.get_jobset(NS, "gone") is None
    assert [(r.method, r.path) for r in server.state.requests] == [
        ("GET", f"{JOBSETS}/w1"), ("GET", f"{JOBSETS}/gone")]


def test_list_jobsets_sends_the_label_selector(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "a")] = _jobset("a")
    server.state.jobsets[(NS, "b")] = _jobset("b")
    other = _jobset("c")
    other["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "someone-else"}
    server.state.jobsets[(NS, "c")] = other

    got = _cluster(server).list_jobsets(NS, "app.kubernetes.io/managed-by=accelstack")

    assert [j["metadata"]["name"] for j in got] == ["a", "b"]
    [req] = server.state.requests
    assert (req.method, req.path) == ("GET", JOBSETS)
    assert req.query == {"labelSelector": ["app.kubernetes.io/managed-by=accelstack"],
                         "limit": ["500"]}


def _patient(server: FakeApiServer) -> Cluster:
    """A cluster with the default timeout: a list of a thousand JobSets may take the fake
    more than the 0.5 s the error tests use on a loaded machine (a retry would be counted
    as a request)."""
    return Cluster(server.kubeconfig(), retries=3, backoff=0.01)


def _paged_requests(server: FakeApiServer) -> list[tuple[str, str | None]]:
    return [(r.query.get("limit", [""])[0], r.query.get("continue", [None])[0])
            for r in server.state.requests]


def test_every_list_is_read_in_pages_of_500(server: FakeApiServer) -> None:
    # kubectl's --chunk-size (500): 1,201 JobSets are three requests, each after the last
    # page's continue token, and the caller gets each once, in order.
    for i in range(1201):
        server.state.jobsets[(NS, f"w{i:04d}")] = _jobset(f"w{i:04d}")
    cluster = _patient(server)
    pages = [[j["metadata"]["name"] for j in page] for page in cluster.jobset_pages(NS)]
    assert [len(p) for p in pages] == [500, 500, 201]
    assert sum(pages, []) == [f"w{i:04d}" for i in range(1201)]
    sent = _paged_requests(server)
    assert [limit for limit, _ in sent] == ["500"] * 3
    assert sent[0][1] is None and all(token for _, token in sent[1:])
    # The other lists page the same way.
    server.state.requests.clear()
    server.state.workloads[NS] = [{"metadata": {"name": f"wl{i}", "namespace": NS}}
                                  for i in range(501)]
    server.state.pods[NS] = [{"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"p{i}", "namespace": NS, "labels": {"a": "b"}}} for i in range(501)]
    server.state.clusterqueues = [{"metadata": {"name": f"cq{i}"}} for i in range(501)]
    assert len(cluster.list_workloads(NS)) == 501
    assert len(cluster.list_pods(NS, "a=b")) == 501
    assert len(cluster.list_cluster_queues()) == 501
    assert [limit for limit, _ in _paged_requests(server)] == ["500"] * 6


def test_an_expired_continue_token_lists_again_from_the_start(server: FakeApiServer) -> None:
    # kube-apiserver's 410 Gone (reason Expired) for a compacted continue token: the list
    # starts again, and an item already given is not given twice.
    for i in range(1100):
        server.state.jobsets[(NS, f"w{i:04d}")] = _jobset(f"w{i:04d}")
    server.state.expire_continue = 1
    names = [j["metadata"]["name"] for j in _patient(server).list_jobsets(NS)]
    assert names == [f"w{i:04d}" for i in range(1100)]
    statuses = [r.status for r in server.state.requests]
    assert statuses == [200, 410, 200, 200, 200]
    assert [token is None for _, token in _paged_requests(server)] == [
        True, False, True, False, False]
    # Expired every time: after paging.RESTARTS fresh starts the 410 is the error.
    server.state.requests.clear()
    server.state.expire_continue = 10
    with pytest.raises(KubeError) as info:
        _patient(server).list_jobsets(NS)
    assert info.value.status == 410
    assert "The provided continue parameter is too old" in str(info.value)
    assert [r.status for r in server.state.requests] == [200, 410] * 4


def test_list_workloads_pods_and_events(server: FakeApiServer) -> None:
    wl = {"metadata": {"name": "jobset-w1-abc", "ownerReferences": [
        {"kind": "JobSet", "name": "w1", "uid": "u"}]}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "w1-slice-0-0-x", "labels": {
               "jobset.sigs.k8s.io/jobset-name": "w1"}}}
    event = {"metadata": {"name": "e1"}, "involvedObject": {"kind": "JobSet", "name": "w1"},
             "reason": "Created", "message": "created", "type": "Normal"}
    server.state.workloads[NS] = [wl]
    server.state.pods[NS] = [pod]
    server.state.events[NS] = [event, {**event, "involvedObject": {"kind": "Pod", "name": "x"}}]
    cluster = _cluster(server)

    assert cluster.list_workloads(NS) == [wl]
    [got_pod] = cluster.list_pods(NS, "jobset.sigs.k8s.io/jobset-name=w1")
    assert got_pod["metadata"]["name"] == "w1-slice-0-0-x"
    [got_event] = cluster.events(NS, "JobSet", "w1")
    assert (got_event["reason"], got_event["involvedObject"]["name"]) == ("Created", "w1")

    paths = [(r.path, r.query) for r in server.state.requests]
    assert paths == [
        (f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads", {"limit": ["500"]}),
        (f"/api/v1/namespaces/{NS}/pods",
         {"labelSelector": ["jobset.sigs.k8s.io/jobset-name=w1"], "limit": ["500"]}),
        (f"/api/v1/namespaces/{NS}/events",
         {"fieldSelector": ["involvedObject.kind=JobSet,involvedObject.name=w1"],
          "limit": ["500"]}),
    ]


def test_delete_jobset_is_foreground(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    _cluster(server).delete_jobset(NS, "w1")

    assert (NS, "w1") not in server.state.jobsets
    [req] = server.state.requests
    assert (req.method, req.path) == ("DELETE", f"{JOBSETS}/w1")
    # The client sends the propagation policy as a query parameter, with no body.
    assert req.query == {"propagationPolicy": ["Foreground"]}
    assert req.body is None


def test_delete_of_a_missing_jobset_is_not_found(server: FakeApiServer) -> None:
    with pytest.raises(NotFound) as err:
        _cluster(server).delete_jobset(NS, "gone")
    assert str(err.value) == (f"delete JobSet {NS}/gone: not found "
                              '(jobsets.jobset.x-k8s.io "gone" not found)')
    assert err.value.status == 404


def test_delete_config_map_ignores_a_missing_one(server: FakeApiServer) -> None:
    server.state.configmaps[(NS, "w1-config")] = _config_map()
    cluster = _cluster(server)
    cluster.delete_config_map(NS, "w1-config")
    cluster.delete_config_map(NS, "w1-config")
    assert server.state.configmaps == {}
    assert [(r.method, r.path) for r in server.state.requests] == [
        ("DELETE", f"/api/v1/namespaces/{NS}/configmaps/w1-config")] * 2


def test_logs_are_split_into_lines(server: FakeApiServer) -> None:
    server.state.logs[(NS, "w1-slice-0-0-x")] = ["step 1", "step 2 loss=0.5"]
    lines = list(_cluster(server).logs(NS, "w1-slice-0-0-x", "main", tail=10))
    assert lines == ["step 1", "step 2 loss=0.5"]
    [req] = server.state.requests
    assert req.path == f"/api/v1/namespaces/{NS}/pods/w1-slice-0-0-x/log"
    assert req.query == {"container": ["main"], "follow": ["false"], "tailLines": ["10"]}


# -- errors the server answers ----------------------------------------------------------

def test_wrong_token_is_401_with_a_login_hint(server: FakeApiServer) -> None:
    with pytest.raises(KubeError) as err:
        _cluster(server, token="stale").get_jobset(NS, "w1")
    assert str(err.value) == (f"get JobSet {NS}/w1: not authenticated (Unauthorized); run "
                              "`gcloud auth login` and check the stack's kubeconfig")
    assert err.value.status == 401
    assert len(server.state.requests) == 1  # not retried


def test_403_names_the_role(server: FakeApiServer) -> None:
    msg = ('jobsets.jobset.x-k8s.io "w1" is forbidden: User "me@example.com" cannot patch '
           'resource "jobsets" in API group "jobset.x-k8s.io" in the namespace "training"')
    server.state.faults.append(Fault(403, msg, reason="Forbidden"))
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_jobset())
    assert str(err.value) == (f"apply JobSet {NS}/w1: forbidden ({msg}); your account needs a "
                              "role such as roles/container.developer on the project")
    assert err.value.status == 403
    assert len(server.state.requests) == 1


def test_404_on_apply_is_not_found(server: FakeApiServer) -> None:
    server.state.faults.append(Fault(404, 'namespaces "training" not found', reason="NotFound"))
    with pytest.raises(NotFound) as err:
        _cluster(server).apply(_config_map())
    assert str(err.value) == (f'apply ConfigMap {NS}/w1-config: not found (namespaces '
                              '"training" not found)')


def test_409_conflict(server: FakeApiServer) -> None:
    msg = 'Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.train.yaml'
    server.state.faults.append(Fault(409, msg, reason="Conflict"))
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_config_map())
    assert str(err.value) == (f"apply ConfigMap {NS}/w1-config: already exists or conflicts "
                              f"({msg}); delete it with `submit workload delete NAME`, or "
                              "create it under another --workload name")
    assert err.value.status == 409


WEBHOOK = ('admission webhook "vjobset.kb.io" denied the request: spec.replicatedJobs[0].'
           'template.spec.template.spec.containers[0].image: Required value')


def test_422_admission_webhook_message_verbatim(server: FakeApiServer) -> None:
    server.state.faults.append(Fault(422, WEBHOOK, reason="Invalid"))
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_jobset())
    assert str(err.value) == f"apply JobSet {NS}/w1: rejected by the cluster: {WEBHOOK}"
    assert err.value.status == 422
    assert len(server.state.requests) == 1


def test_400_admission_webhook_message_verbatim(server: FakeApiServer) -> None:
    server.state.faults.append(Fault(400, WEBHOOK, reason="BadRequest"))
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_jobset())
    assert str(err.value) == f"apply JobSet {NS}/w1: rejected by the cluster: {WEBHOOK}"


def test_403_admission_webhook_denial_is_a_rejection_not_a_missing_role(
        server: FakeApiServer) -> None:
    server.state.faults.append(Fault(403, WEBHOOK, reason="Forbidden"))
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_jobset())
    assert str(err.value) == f"apply JobSet {NS}/w1: rejected by the cluster: {WEBHOOK}"


def test_other_status_is_shown_with_its_code(server: FakeApiServer) -> None:
    server.state.faults.append(Fault(400, "the body of the request was in an unknown format",
                                     reason="BadRequest"))
    with pytest.raises(KubeError) as err:
        _cluster(server).apply(_jobset())
    assert str(err.value) == (f"apply JobSet {NS}/w1: the API server answered 400: the body of "
                              "the request was in an unknown format")


# -- retries ----------------------------------------------------------------------------

def test_500_is_retried_then_succeeds(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    server.state.faults += [Fault(500), Fault(503, "etcd leader changed", reason="")]
    assert _cluster(server).get_jobset(NS, "w1") == _jobset()
    assert [(r.method, r.path) for r in server.state.requests] == [("GET", f"{JOBSETS}/w1")] * 3


def test_429_is_retried(server: FakeApiServer) -> None:
    server.state.faults.append(Fault(429, "storage is (re)initializing", reason="TooManyRequests"))
    _cluster(server).apply(_jobset())
    assert [r.method for r in server.state.requests] == ["PATCH", "PATCH"]
    assert (NS, "w1") in server.state.jobsets


def test_persisting_500_fails_after_retries_plus_one_tries(server: FakeApiServer) -> None:
    server.state.faults += [Fault(500, "etcdserver: request timed out")] * 10
    with pytest.raises(KubeError) as err:
        _cluster(server, retries=2).get_jobset(NS, "w1")
    assert str(err.value) == (f"get JobSet {NS}/w1: the API server answered 500: etcdserver: "
                              "request timed out")
    assert err.value.status == 500
    assert len(server.state.requests) == 3
    assert len(server.state.faults) == 7


def test_retries_are_urllib3s_and_honour_retry_after(server: FakeApiServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's pool retries (not a loop of ours): urllib3 waits what the server's
    Retry-After says, capped at kube.RETRY_AFTER_MAX, and its own backoff otherwise."""
    import types

    import urllib3.util.retry as retry_module

    from submit.cluster import kube

    slept: list[float] = []
    monkeypatch.setattr(retry_module, "time", types.SimpleNamespace(
        sleep=slept.append, time=time.time, monotonic=time.monotonic))
    server.state.jobsets[(NS, "w1")] = _jobset()
    server.state.faults += [
        Fault(429, "too many requests", reason="TooManyRequests", retry_after="2"),
        Fault(503, "unavailable", reason="ServiceUnavailable", retry_after="3600"),
        Fault(500)]
    cluster = _cluster(server)
    assert isinstance(cluster.api.configuration.retries, retry_module.Retry)
    assert cluster.get_jobset(NS, "w1") == _jobset()
    assert len(server.state.requests) == 4
    # Retry-After 2 s; Retry-After 3600 s capped; then urllib3's backoff (0.01 x 2^2).
    assert slept == [2.0, kube.RETRY_AFTER_MAX, pytest.approx(0.04)]


def test_a_hanging_server_times_out(server: FakeApiServer) -> None:
    server.state.faults += [Fault(0, delay=1.5), Fault(0, delay=1.5)]
    start = time.monotonic()
    with pytest.raises(KubeError) as err:
        _cluster(server, retries=1).list_jobsets(NS)
    assert str(err.value) == (f"list JobSets in {NS}: the API server did not answer: timed out "
                              "after 0.5s, 2 tries")
    assert len(server.state.requests) == 2
    assert time.monotonic() - start < 1.4  # two 0.5 s timeouts, not the server's 1.5 s


def test_a_hang_once_is_retried(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    server.state.faults.append(Fault(0, delay=1.0))
    assert _cluster(server).get_jobset(NS, "w1") == _jobset()
    assert len(server.state.requests) == 2


def test_refused_connection(tmp_path: Path) -> None:
    srv = FakeApiServer()  # bound but never serving, then closed: nothing listens there
    kubeconfig = srv.kubeconfig()
    srv.server_close()
    with pytest.raises(KubeError) as err:
        Cluster(kubeconfig, timeout=0.5, retries=1, backoff=0.01).get_jobset(NS, "w1")
    assert str(err.value) == (f"get JobSet {NS}/w1: the API server did not answer: connection "
                              "failed (MaxRetryError), 2 tries")


# -- the kubeconfig ---------------------------------------------------------------------

def test_missing_exec_plugin(server: FakeApiServer, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KubeError) as err:
        _cluster(server, exec_command="gke-gcloud-auth-plugin")
    assert str(err.value) == ("gke-gcloud-auth-plugin is not on PATH; the kubeconfig needs it "
                              f"to authenticate{INSTALL_HINT}")
    assert server.state.requests == []


def test_missing_other_exec_plugin_has_no_gke_hint(server: FakeApiServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KubeError) as err:
        _cluster(server, exec_command="aws-iam-authenticator")
    assert str(err.value) == ("aws-iam-authenticator is not on PATH; the kubeconfig needs it "
                              "to authenticate")


def test_an_exec_plugin_on_path_is_run_for_the_token(server: FakeApiServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = tmp_path / "gke-gcloud-auth-plugin"
    plugin.write_text("#!/bin/sh\necho '{\"apiVersion\": \"client.authentication.k8s.io/"
                      "v1beta1\", \"kind\": \"ExecCredential\", \"status\": {\"token\": "
                      "\"test-token\"}}'\n")
    plugin.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    server.state.jobsets[(NS, "w1")] = _jobset()
    cluster = _cluster(server, exec_command=str(plugin))
    assert cluster.get_jobset(NS, "w1") == _jobset()
    assert _header(server.state.requests[0], "Authorization") == "Bearer test-token"


def test_masked_kubeconfig_of_a_preview(server: FakeApiServer) -> None:
    with pytest.raises(KubeError) as err:
        Cluster("[secret]", timeout=0.5)
    assert str(err.value) == (
        "the stack's outputs hold no usable kubeconfig (an offline preview has none: run "
        "`pulumi up` first, then read the stack's outputs)")


@pytest.mark.parametrize("text", ["", "null", "clusters: []\n", "just a string"])
def test_kubeconfig_without_clusters(text: str) -> None:
    with pytest.raises(KubeError) as err:
        Cluster(text, timeout=0.5)
    assert str(err.value).startswith("the stack's outputs hold no usable kubeconfig")


def test_kubeconfig_that_is_not_yaml() -> None:
    with pytest.raises(KubeError) as err:
        Cluster("clusters: [unclosed\n", timeout=0.5)
    # Position and problem only: PyYAML's snippet of the text would show credentials.
    assert str(err.value) == ("the stack's kubeconfig is not YAML (line 2, column 1: expected "
                              "',' or ']', but got '<stream end>'; its content is not shown: it "
                              "holds credentials)")


def test_kubeconfig_the_client_cannot_use(server: FakeApiServer) -> None:
    text = server.kubeconfig().replace("current-context: test", "current-context: elsewhere")
    with pytest.raises(KubeError) as err:
        Cluster(text, timeout=0.5)
    assert str(err.value).startswith("cannot use the stack's kubeconfig: ")
    assert "elsewhere" in str(err.value)
