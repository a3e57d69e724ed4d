"""Submitting a multi-node A4X workload through the Kubernetes seam (fake API server): the
ComputeDomain goes first (its pods claim its channel), then the JobSet, which then owns it;
--replace deletes the old one, whose spec is immutable."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.cli.app import main

NS = "gpu-jobs"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
CDS = f"/apis/resource.nvidia.com/v1beta1/namespaces/{NS}/computedomains"
CREATE = ["create", "--workload", "llm", "--accelerator", "gb200-4", "--num-nodes", "4",
          "--image", "nvcr.io/nvidia/pytorch:25.01-py3", "--command", "python train.py"]


def _run(outputs: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), *args])
    return result.exit_code, result.stderr


def test_a4x_compute_domain_applied_first_then_owned(tmp_path: Path,
                                                     server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "a4x.json", "a4x", server.kubeconfig())
    code, err = _run(outputs, *CREATE)
    assert code == 0
    assert err.startswith("workload llm submitted to namespace gpu-jobs (queue main)\n")
    calls = [(r.method, r.path) for r in server.state.requests]
    assert calls == [("GET", f"{JOBSETS}/llm"), ("PATCH", f"{CDS}/llm-cd"),
                     ("PATCH", f"{JOBSETS}/llm"), ("PATCH", f"{CDS}/llm-cd")]
    first, last = server.state.requests[1], server.state.requests[3]
    assert first.query == {"fieldManager": ["accelstack-submit"], "fieldValidation": ["Strict"]}
    assert "ownerReferences" not in first.body["metadata"]
    assert last.body["metadata"]["ownerReferences"] == [{
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "llm",
        "uid": "uid-llm", "blockOwnerDeletion": False}]
    assert last.body["spec"] == first.body["spec"]
    js = server.state.jobsets[(NS, "llm")]
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["resourceClaims"][0]["resourceClaimTemplateName"] == \
        first.body["spec"]["channel"]["resourceClaimTemplate"]["name"]


def test_a4x_replace_deletes_the_old_compute_domain(tmp_path: Path,
                                                   server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "a4x.json", "a4x", server.kubeconfig())
    server.state.jobsets[(NS, "llm")] = json.loads(json.dumps(
        {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
         "metadata": {"name": "llm", "namespace": NS, "uid": "old"}}))
    server.state.computedomains[(NS, "llm-cd")] = {"metadata": {"name": "llm-cd"}}
    code, _ = _run(outputs, *CREATE, "--replace")
    assert code == 0
    calls = [(r.method, r.path) for r in server.state.requests]
    assert ("DELETE", f"{CDS}/llm-cd") in calls
    assert calls.index(("DELETE", f"{CDS}/llm-cd")) < calls.index(("PATCH", f"{CDS}/llm-cd"))
