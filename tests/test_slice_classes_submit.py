"""The submit side of slice classes, end to end against the fake API server: a multislice
job on a class is rendered exactly as on a fixed pool (selectors, tolerations, one node
pool per slice), refused with the nearest offers when nothing makes its shape, and
`describe` names the step it waits on as its pods go from pending (Kueue quota, GKE
scaling up, capacity not found) to running on nodes GKE created; `list` shows where each
running slice's capacity came from. Uses the v6e-burst example stack."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.cli.app import main
from submit.state import capacity
from submit_cli import run

NS = "research"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
IMAGE = "us-docker.pkg.dev/my-ml-project/r/maxtext:1"
CREATE = ["create", "--workload", "train", "--accelerator", "v6e-64", "--pool", "burst",
          "--num-slices", "2", "--image", IMAGE]


pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v6e-burst.json", "v6e-burst", server.kubeconfig())


def stamp(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def _submitted(server: FakeApiServer) -> dict[str, Any]:
    [req] = [r for r in server.state.requests if r.path.startswith(JOBSETS + "/")
             and r.method == "PATCH"]
    return dict(req.body)


def test_a_multislice_job_on_a_class_renders_as_on_a_pool(outputs: Path,
                                                          server: FakeApiServer) -> None:
    result = run(outputs, *CREATE)
    assert result.exit_code == 0, result.output
    js = _submitted(server)
    # one node pool per slice: JobSet gives each slice's Job a node pool of its own
    assert js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == \
        "cloud.google.com/gke-nodepool"
    assert js["metadata"]["labels"]["accelstack.dev/slice-pool"] == "burst"
    [rj] = js["spec"]["replicatedJobs"]
    assert (rj["replicas"], rj["template"]["spec"]["parallelism"]) == (2, 16)
    pod = rj["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {
        "cloud.google.com/compute-class": "burst", "accelstack.dev/capacity": "class",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "8x8"}
    assert {"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "burst",
            "effect": "NoSchedule"} in pod["tolerations"]
    assert {"key": "google.com/tpu", "operator": "Equal", "value": "present",
            "effect": "NoSchedule"} in pod["tolerations"]
    assert pod["containers"][0]["resources"]["limits"]["google.com/tpu"] == "4"


@pytest.mark.parametrize("args, message", [
    # v6e-16 is both the fixed pool and a shape of the class: --pool chooses
    (["--accelerator", "v6e-16"], "stack 'v6e-burst' has several v6e-16 pools; choose one of: "
     "interactive (reservation), burst (class)"),
    # a shape nothing offers: refused with the nearest offers first
    (["--accelerator", "v6e-256"], "'v6e-256' (v6e-256) is not a slice type of stack "
     "'v6e-burst'; it has: v6e-64 (class burst), v6e-16, v6e-8-1vm (class short)"),
    (["--accelerator", "v6e-64", "--pool", "burst", "--num-slices", "5"],
     "5 is more than the 4 v6e-64 slices class burst may hold at once"),
    (["--accelerator", "v6e-64", "--pool", "short"], "'short' is not a v6e-64 pool of stack "
     "'v6e-burst'; its v6e-64 pools: burst (class)"),
])
def test_refusals_name_classes_and_the_nearest_offers(outputs: Path, server: FakeApiServer,
                                                      args: list[str], message: str) -> None:
    result = run(outputs, "create", "--workload", "w", "--image", IMAGE, *args)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split()), result.stderr
    assert server.state.requests == []


def test_accelerators_lists_what_each_class_can_create(outputs: Path) -> None:
    result = CliRunner().invoke(main, ["accelerators", "--outputs", str(outputs), "-o", "json"])
    assert result.exit_code == 0, result.output
    rows = {(r["pool"], r["accelerator"]): r for r in json.loads(result.stdout)}
    assert rows[("interactive", "v6e-16")]["capacityMode"] == "reservation"
    assert rows[("burst", "v6e-64")]["capacityMode"] == \
        "class: reservation:trillium-burst > spot > on-demand"
    assert (rows[("burst", "v6e-16")]["slices"], rows[("burst", "v6e-64")]["slices"]) == (8, 4)
    assert rows[("short", "v6e-8-1vm")]["capacityMode"] == "class: flex-start > spot"


# -- describe at each step ----------------------------------------------------------------


def _workload(*conditions: tuple[str, str, str, str]) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "jobset-train-1a2b3", "namespace": NS, "ownerReferences": [
                {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "train",
                 "uid": "uid-train"}]},
            "status": {"conditions": [{"type": t, "status": s, "reason": r, "message": m}
                                      for t, s, r, m in conditions]}}


ADMITTED = (("QuotaReserved", "True", "QuotaReserved", "Quota reserved"),
            ("Admitted", "True", "Admitted", "The workload is admitted"))


def _pod(slice_: int, worker: int, node: str = "") -> dict[str, Any]:
    name = f"train-slice-{slice_}-{worker}-aa"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "creationTimestamp": stamp(60),
                         "labels": {"jobset.sigs.k8s.io/jobset-name": "train",
                                    "jobset.sigs.k8s.io/job-index": str(slice_),
                                    "batch.kubernetes.io/job-completion-index": str(worker)}},
            "spec": {"containers": [{"name": "main", "image": IMAGE}],
                     **({"nodeName": node} if node else {})},
            "status": {"phase": "Running" if node else "Pending"}}


def _event(pod_name: str, reason: str, message: str, ago: float) -> dict[str, Any]:
    return {"metadata": {"name": f"{pod_name}.{reason}", "namespace": NS},
            "type": "Warning" if reason == "FailedScaleUp" else "Normal", "reason": reason,
            "message": message, "lastTimestamp": stamp(ago),
            "involvedObject": {"kind": "Pod", "name": pod_name}}


def _node(name: str, pool: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "cloud.google.com/compute-class": "burst", "accelstack.dev/capacity": "class",
        "cloud.google.com/gke-nodepool": pool, **labels}}}


def _verdict(result: Result) -> str:
    assert result.exit_code == 0, result.output
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("Verdict: ")]
    return line.removeprefix("Verdict: ")


def _waiting_on(result: Result) -> str:
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("  waiting on: ")]
    return line.removeprefix("  waiting on: ")


def test_describe_names_each_step_of_a_class_workload(outputs: Path,
                                                      server: FakeApiServer) -> None:
    assert run(outputs, *CREATE).exit_code == 0
    st = server.state
    js = st.jobsets[(NS, "train")]
    js["metadata"]["uid"] = "uid-train"

    # 1. Kueue has not reserved the class's quota
    st.workloads[NS] = [_workload(("QuotaReserved", "False", "Pending",
                                   "couldn't assign flavors to pod set slice: insufficient "
                                   "unused quota for google.com/tpu in flavor class-burst"))]
    result = run(outputs, "describe", "train")
    assert ("Slice class: burst: tries reservation:trillium-burst > spot > on-demand; at "
            "most 256 chips and 8 slices at once") in result.stdout
    assert _waiting_on(result) == "Kueue quota: class burst has no free chips for it yet"
    assert _verdict(result).startswith("waiting for quota: couldn't assign flavors")

    # 2. admitted; the pods are pending and GKE's autoscaler has triggered a scale-up
    st.workloads[NS] = [_workload(*ADMITTED)]
    st.pods[NS] = [_pod(s, w) for s in (0, 1) for w in (0, 1)]
    result = run(outputs, "describe", "train")
    assert _verdict(result).startswith("GKE scaling up: the pods are pending and GKE's "
                                       "autoscaler has not acted yet")
    st.events[NS] = [_event("train-slice-0-0-aa", "TriggeredScaleUp",
                            "pod triggered scale-up: [{nap-tpu-v6e-8x8-a1 0->16 (max: 16)}]",
                            30)]
    result = run(outputs, "describe", "train")
    assert _verdict(result) == (
        "GKE scaling up: a node pool is being created for class burst (pod triggered "
        "scale-up: [{nap-tpu-v6e-8x8-a1 0->16 (max: 16)}]); a slice takes minutes to appear")
    assert "Normal TriggeredScaleUp train-slice-0-0-aa" in result.stdout

    # 3. no priority of the class has capacity: the pods stay pending (DoNotScaleUp)
    st.events[NS].append(_event(
        "train-slice-0-0-aa", "FailedScaleUp", "Node scale up in zones us-east5-b associated "
        "with this pod failed: GCE out of resources. Pod is at risk of not being scheduled.",
        5))
    result = run(outputs, "describe", "train")
    assert _verdict(result) == (
        "capacity not found in any priority of class burst (reservation:trillium-burst > "
        "spot > on-demand): FailedScaleUp: Node scale up in zones us-east5-b associated with "
        "this pod failed: GCE out of resources. Pod is at risk of not being scheduled.")

    # 4. running on two node pools GKE created, one per slice, from different sources
    st.nodes = [_node("gke-a-0", "nap-a", **{"cloud.google.com/reservation-name":
                                             "trillium-burst"}),
                _node("gke-a-1", "nap-a", **{"cloud.google.com/reservation-name":
                                             "trillium-burst"}),
                _node("gke-b-0", "nap-b", **{"cloud.google.com/gke-spot": "true"}),
                _node("gke-b-1", "nap-b", **{"cloud.google.com/gke-spot": "true"})]
    st.pods[NS] = [_pod(0, 0, "gke-a-0"), _pod(0, 1, "gke-a-1"),
                   _pod(1, 0, "gke-b-0"), _pod(1, 1, "gke-b-1")]
    js["status"] = {"replicatedJobsStatus": [{"name": "slice", "active": 2}]}
    result = run(outputs, "describe", "train")
    assert _waiting_on(result) == "running on nodes GKE created for class burst"
    assert "  slice 0: node pool nap-a (reservation:trillium-burst)\n" in result.stdout
    assert "  slice 1: node pool nap-b (spot)\n" in result.stdout
    assert _verdict(result) == "admitted: pods are starting or running"
    nodes = [r for r in st.requests if r.path == "/api/v1/nodes"]
    assert nodes[-1].query == {"labelSelector": ["cloud.google.com/compute-class=burst"],
                               "limit": ["500"]}  # a list, read in pages

    # `list` shows where the running slices came from
    result = run(outputs, "list", "-o", "json")
    [row] = json.loads(result.stdout)
    assert row["source"] == "reservation:trillium-burst,spot"

    # an account that may not list nodes still gets both answers, without the sources
    st.forbidden.add("nodes")
    result = run(outputs, "list", "-o", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)[0]["source"] == "class"
    result = run(outputs, "describe", "train")
    assert "  slices: their nodes are not readable" in result.stdout
    assert _verdict(result) == "admitted: pods are starting or running"


def test_node_source_reads_gke_labels() -> None:
    def node(**labels: str) -> dict[str, Any]:
        return {"metadata": {"name": "n", "labels": labels}}

    assert capacity.node_source(node()) == "on-demand"
    assert capacity.node_source(node(**{"cloud.google.com/gke-spot": "true"})) == "spot"
    assert capacity.node_source(node(**{"cloud.google.com/gke-flex-start": "true"})) == \
        "flex-start"
    assert capacity.node_source(node(**{"cloud.google.com/reservation-name": "r"})) == \
        "reservation:r"
