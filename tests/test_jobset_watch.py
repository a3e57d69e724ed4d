"""submit/cluster/watch.py and api.wait end to end against the fake API server's watch: a
change arrives through the watch, a deletion ends the wait, and an error other than 410 Gone
is not swallowed."""

from __future__ import annotations

import threading
from typing import Any, Iterator

import pytest

from fake_apiserver import FakeApiServer
from submit import api
from submit.cluster.watch import follow
from submit.cluster.kube import Cluster, KubeError

NS = "training"


@pytest.fixture
def server() -> Iterator[FakeApiServer]:
    srv = FakeApiServer().start()
    yield srv
    srv.stop()


def _jobset(*conditions: str) -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "w1", "namespace": NS},
            "status": {"conditions": [{"type": c, "status": "True"} for c in conditions]}}


def _when_watched(server: FakeApiServer, change: Any) -> None:
    def run() -> None:
        for _ in range(500):
            if any(r.query.get("watch") == ["true"] for r in list(server.state.requests)):
                threading.Event().wait(0.1)
                change()
                return
            threading.Event().wait(0.01)
    threading.Thread(target=run, daemon=True).start()


def test_a_change_arrives_through_the_watch(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    _when_watched(server, lambda: server.state.jobsets.__setitem__(
        (NS, "w1"), _jobset("Completed")))
    seen: list[str] = []
    done = api.wait(Cluster(server.kubeconfig(), timeout=2), NS, "w1", timeout=5,
                    interval=30, on_change=lambda s: seen.append(s.state))
    assert (done.state, done.done, seen) == ("Completed", True, ["Pending", "Completed"])
    assert sum(r.query.get("watch") == ["true"] for r in server.state.requests) == 1


def test_a_deletion_ends_the_wait(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    _when_watched(server, lambda: server.state.jobsets.pop((NS, "w1")))
    with pytest.raises(api.ClusterError) as err:
        api.wait(Cluster(server.kubeconfig(), timeout=2), NS, "w1", timeout=5, interval=30)
    assert err.value.message == f"workload w1 not found in namespace {NS}"


def test_a_timeout_returns_the_last_state(server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _jobset()
    states = list(follow(Cluster(server.kubeconfig(), timeout=2), NS, "w1", timeout=1,
                         period=30))
    assert [s["metadata"]["name"] if s else s for s in states] == ["w1"]
    watch = [r.query for r in server.state.requests if r.query.get("watch")]
    assert [q["timeoutSeconds"] for q in watch] == [["1"]]


def test_other_errors_are_not_swallowed(server: FakeApiServer) -> None:
    from fake_apiserver import Fault

    server.state.jobsets[(NS, "w1")] = _jobset()
    server.state.faults += [Fault(0), Fault(403, "forbidden", reason="Forbidden")]
    changes = follow(Cluster(server.kubeconfig(), timeout=2, retries=0), NS, "w1",
                     timeout=5, period=30)
    assert next(changes) is not None
    with pytest.raises(KubeError) as err:
        next(changes)
    assert err.value.status == 403
