"""The first real submit (issue 32): `submit workload create`, `create-group` and
`experiment create` against a fake API server that answers as kube-apiserver does, 201
Created to a server-side apply that creates and 200 to one that changes
(tests/apiserver_answers.py), with ConfigMaps owned by their JobSet, and a refused apply that
takes back what it made.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.cli.app import main

NS = "training"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"
HERE = Path(__file__).resolve().parent
CREATE = ["create", "--workload", "w1", "--accelerator", "v5litepod-16", "--image",
          "python:3.12"]


pytestmark = pytest.mark.usefixtures("no_stack_env")


def _run(server: FakeApiServer, tmp_path: Path, *args: str, stack: str = "v5e-spot") -> Result:
    outputs = stacks.write_outputs(tmp_path / f"{stack}.json", stack, server.kubeconfig())
    group, *rest = args
    result = CliRunner().invoke(main, [group, "--outputs", str(outputs), *rest])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _answers(server: FakeApiServer) -> list[tuple[str, str, int]]:
    return [(r.method, r.path, r.status) for r in server.state.requests]


def _config(tmp_path: Path) -> str:
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\n")
    return str(cfg)


def test_workload_create_succeeds_when_the_apply_answers_201(
        tmp_path: Path, server: FakeApiServer) -> None:
    r = _run(server, tmp_path, "workload", *CREATE, "--config-file", _config(tmp_path))
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("workload w1 submitted to namespace training (queue main)\n")
    assert _answers(server) == [
        ("GET", f"{JOBSETS}/w1", 404),
        ("PATCH", f"{CONFIGMAPS}/w1-config", 201),  # created
        ("PATCH", f"{JOBSETS}/w1", 201),  # created: the client gave None for this
        ("PATCH", f"{CONFIGMAPS}/w1-config", 200)]  # changed: given its owner
    jobset = server.state.jobsets[(NS, "w1")]
    config_map = server.state.configmaps[(NS, "w1-config")]
    assert config_map["metadata"]["ownerReferences"] == [{
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "w1",
        "uid": jobset["metadata"]["uid"], "blockOwnerDeletion": False}]


def test_create_group_succeeds_when_the_apply_answers_201(
        tmp_path: Path, server: FakeApiServer) -> None:
    r = _run(server, tmp_path, "workload", "create-group", str(HERE / "groups" / "train_eval.yaml"),
             stack="multi")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("workload train-eval submitted to namespace training")
    assert ("PATCH", f"{JOBSETS}/train-eval", 201) in _answers(server)
    assert (NS, "train-eval") in server.state.jobsets


def test_experiment_create_succeeds_when_the_apply_answers_201(
        tmp_path: Path, server: FakeApiServer) -> None:
    r = _run(server, tmp_path, "experiment", "create", str(HERE / "experiments" / "lr_sweep.yaml"))
    assert r.exit_code == 0, r.output
    applies = [(path.rsplit("/", 1)[1], status) for method, path, status in _answers(server)
               if method == "PATCH"]
    assert applies == [("lr-sweep-experiment", 201)] + [
        (f"lr-sweep-{i}", 201) for i in range(4)]
    record = server.state.configmaps[(NS, "lr-sweep-experiment")]
    for i in range(4):  # each trial is owned by the experiment's record
        (owner,) = server.state.jobsets[(NS, f"lr-sweep-{i}")]["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("ConfigMap", record["metadata"]["uid"])


def test_a_refused_jobset_takes_back_its_config_map(
        tmp_path: Path, server: FakeApiServer) -> None:
    """422 Invalid, as the API server refuses an object its schema does not allow
    (apiserver registry/rest/create.go: errors.NewInvalid, with details.causes)."""
    server.state.invalid["w1"] = [{
        "type": "FieldValueInvalid", "field": "spec.replicatedJobs[0].replicas",
        "message": "Invalid value: -1: spec.replicatedJobs[0].replicas in body should be "
                   "greater than or equal to 0"}]
    r = _run(server, tmp_path, "workload", *CREATE, "--config-file", _config(tmp_path))
    assert r.exit_code == 1
    assert r.stderr == (
        "Error: apply JobSet training/w1: rejected by the cluster: JobSet.jobset.x-k8s.io "
        '"w1" is invalid: spec.replicatedJobs[0].replicas: Invalid value: -1: '
        "spec.replicatedJobs[0].replicas in body should be greater than or equal to 0\n")
    assert _answers(server) == [
        ("GET", f"{JOBSETS}/w1", 404), ("PATCH", f"{CONFIGMAPS}/w1-config", 201),
        ("PATCH", f"{JOBSETS}/w1", 422), ("DELETE", f"{CONFIGMAPS}/w1-config", 200)]
    assert server.state.configmaps == {} and server.state.jobsets == {}


def test_a_config_map_that_conflicts_takes_back_the_jobset_it_made(
        tmp_path: Path, server: FakeApiServer) -> None:
    """409 Conflict on the owning apply (another field manager holds the owner references:
    managedfields conflict.go): the JobSet just created and the ConfigMap both go."""
    from fake_apiserver import Fault

    server.state.faults = [Fault(
        status=409, reason="Conflict", only=f"PATCH {CONFIGMAPS}/w1-config", skip=1,
        message='Apply failed with 1 conflict: conflict with "kubectl": '
                ".metadata.ownerReferences")]
    r = _run(server, tmp_path, "workload", *CREATE, "--config-file", _config(tmp_path))
    assert r.exit_code == 1
    assert _answers(server) == [
        ("GET", f"{JOBSETS}/w1", 404), ("PATCH", f"{CONFIGMAPS}/w1-config", 201),
        ("PATCH", f"{JOBSETS}/w1", 201), ("PATCH", f"{CONFIGMAPS}/w1-config", 409),
        ("DELETE", f"{JOBSETS}/w1", 200), ("DELETE", f"{CONFIGMAPS}/w1-config", 200)]
    assert server.state.configmaps == {} and server.state.jobsets == {}
