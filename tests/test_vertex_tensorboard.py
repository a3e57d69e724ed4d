"""The stack's Vertex AI TensorBoard instance (``accelstack:tensorboard``): its config and
refusals, what the program declares (the instance, the Vertex AI API, each namespace's
grant), the contract's optional field, and `--tensorboard` on such a stack (the variables
MaxText reads, `describe` and `experiment describe`)."""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import schema
from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.config import stack as config
from infra.config.errors import ConfigError
from infra.config.stack_file import load as load_stack_file
from infra.contract import outputs as contract
from infra.preview import cli as preview
from infra.preview import harness
from submit_cli import run, run_experiment

STACK_FILE = ROOT / "stacks" / "Pulumi.v6e-training.yaml"
TB = "gcp:vertex/aiTensorboard:AiTensorboard"
INSTANCE = "projects/123456789012/locations/us-east5/tensorboards/1234567890"
CREATE = ["create", "--workload", "w1", "--accelerator", "v6e-256", "--image", "python:3.12",
          "--command", "python3 train.py"]


def _raw(board: Any = None) -> dict[str, Any]:
    raw = copy.deepcopy(load_stack_file(STACK_FILE).raw)
    if board is not None:
        raw["tensorboard"] = board
    return raw


@lru_cache(maxsize=1)
def _evaluation() -> harness.Evaluation:
    return harness.evaluate(_raw({}), "v6e-tb")


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config.parse(raw)
    return info.value.problems


# ----------------------------------------------------------------------------------
# The stack key


def test_defaults_and_overrides() -> None:
    board = config.parse(_raw({})).tensorboard
    assert board is not None
    assert (board.display_name, board.region) == ("trillium-tensorboard", "us-east5")
    board = config.parse(_raw({"displayName": "runs", "region": "us-central1"})).tensorboard
    assert board is not None and (board.display_name, board.region) == ("runs", "us-central1")
    assert config.parse(_raw(True)).tensorboard == config.parse(_raw({})).tensorboard
    assert config.parse(_raw()).tensorboard is None


@pytest.mark.parametrize("board,problem", [
    ({"region": "central"}, "tensorboard.region: 'central' is not a region such as "
     "us-central1"),
    ({"displayName": " "}, "tensorboard.displayName: ' ' is empty; give the instance's "
     "display name"),
    ({"name": "x"}, "tensorboard.name: unknown key"),
    ("yes", "tensorboard: 'yes' is not a mapping"),
])
def test_refusals(board: Any, problem: str) -> None:
    problems = _problems(_raw(board))
    assert any(p.startswith(problem) for p in problems), problems


def test_refusal_names_file_and_line(tmp_path: Path) -> None:
    text = STACK_FILE.read_text() + "  accelstack:tensorboard:\n    region: central\n"
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(text)
    line = len(text.splitlines())
    result = CliRunner().invoke(preview.main, [str(path), "--quiet"])
    assert result.exit_code == 2
    assert (f"{path}:{line}: tensorboard.region: 'central' is not a region such as "
            "us-central1") in result.output
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------------
# What the program declares


def test_instance_is_declared_after_the_vertex_ai_api() -> None:
    ev = _evaluation()
    [board] = ev.of_type(TB)
    assert board.inputs == {"project": "my-ml-project", "region": "us-east5",
                            "displayName": "trillium-tensorboard",
                            "deletionPolicy": "PREVENT", "labels": board.inputs.get("labels")}
    api = ev.named("api-aiplatform")
    assert api.inputs["service"] == "aiplatform.googleapis.com"
    assert api.inputs["disableOnDestroy"] is False
    assert api.urn in board.dependencies  # the instance waits for the API it needs
    plain = harness.evaluate(_raw(), "plain")
    assert plain.of_type(TB) == []
    assert not [r for r in plain.resources if r.name == "api-aiplatform"]


def test_each_workload_namespace_may_write_to_it() -> None:
    ev = _evaluation()
    namespaces = [ev.config.queues.namespace] + [t.namespace for t in ev.config.queues.teams]
    grants = {r.name: r.inputs for r in ev.of_type("gcp:projects/iAMMember:IAMMember")
              if r.name.startswith("tensorboard-")}
    assert sorted(grants) == sorted(f"tensorboard-{ns}" for ns in namespaces)
    ksa = ev.config.storage.service_account
    for ns in namespaces:
        assert grants[f"tensorboard-{ns}"] == {
            "project": "my-ml-project", "role": "roles/aiplatform.user",
            "member": "principal://iam.googleapis.com/projects/123456789012/locations/global/"
                      f"workloadIdentityPools/my-ml-project.svc.id.goog/subject/ns/{ns}/"
                      f"sa/{ksa}"}


def test_contract_carries_the_instance_and_loads_without_it() -> None:
    data = harness.plain_outputs(_evaluation(), reveal=True)
    assert data["accelstack"]["tensorboard"] == {
        "project": "my-ml-project", "region": "us-east5",
        "displayName": "trillium-tensorboard", "name": INSTANCE}
    loaded = contract.load(copy.deepcopy(data))
    assert loaded.tensorboard is not None and loaded.tensorboard.name == INSTANCE
    assert loaded.to_dict()["tensorboard"] == data["accelstack"]["tensorboard"]
    data["accelstack"].pop("tensorboard")
    assert contract.load(data).tensorboard is None
    assert "tensorboard" not in contract.load(data).to_dict()
    data["accelstack"]["tensorboard"] = {"project": "p", "region": "r", "displayName": "d"}
    with pytest.raises(contract.ContractError, match=r"tensorboard.name: None is not"):
        contract.load(data)


# ----------------------------------------------------------------------------------
# --tensorboard on a stack with the instance


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    data = stacks.point_at(harness.plain_outputs(_evaluation(), reveal=True),
                           server.kubeconfig())
    path = tmp_path / "v6e-tb.json"
    path.write_text(json.dumps(data))
    return path


def _env(outputs: Path, *args: str) -> dict[str, Any]:
    result = run(outputs, *CREATE, "--dry-run", "-o", "json", *args)
    assert result.exit_code == 0, result.stderr
    js = json.loads(result.stdout)
    schema.validate(js)
    [main_c] = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"]
    return {e["name"]: e.get("value") for e in main_c["env"]}


def test_tensorboard_passes_what_maxtext_reads(outputs: Path) -> None:
    env = _env(outputs, "--tensorboard", "checkpoints:runs")
    assert {k: env[k] for k in ("TENSORBOARD_PROJECT", "TENSORBOARD_REGION",
                                "TENSORBOARD_NAME", "EXPERIMENT_NAME",
                                "M_USE_VERTEX_TENSORBOARD", "VERTEX_TENSORBOARD")} == {
        "TENSORBOARD_PROJECT": "my-ml-project", "TENSORBOARD_REGION": "us-east5",
        "TENSORBOARD_NAME": "trillium-tensorboard", "EXPERIMENT_NAME": "w1",
        "M_USE_VERTEX_TENSORBOARD": "true", "VERTEX_TENSORBOARD": INSTANCE}
    assert env["TENSORBOARD_LOG_DIR"].endswith("/runs/w1")


def test_a_variable_the_user_set_wins(outputs: Path) -> None:
    env = _env(outputs, "--tensorboard", "checkpoints", "--env", "EXPERIMENT_NAME=mine")
    assert env["EXPERIMENT_NAME"] == "mine"


def test_nothing_without_the_option_or_the_instance(outputs: Path, tmp_path: Path,
                                                    server: FakeApiServer) -> None:
    assert "TENSORBOARD_NAME" not in _env(outputs)
    plain = stacks.write_outputs(tmp_path / "plain.json", "v6e-training", server.kubeconfig())
    env = _env(plain, "--tensorboard", "checkpoints")
    assert "TENSORBOARD_LOG_DIR" in env and "TENSORBOARD_NAME" not in env


def test_describe_links_the_instance(outputs: Path, server: FakeApiServer) -> None:
    assert run(outputs, *CREATE, "--tensorboard", "checkpoints:runs").exit_code == 0
    data = json.loads(run(outputs, "describe", "w1", "-o", "json").stdout)
    vertex = {"instance": INSTANCE, "experiment": "w1"}
    assert data["diagnostics"]["vertexTensorboard"] == vertex
    assert data["links"]["vertexTensorboard"] == vertex
    text = run(outputs, "describe", "w1").stdout
    assert f"  Vertex AI TensorBoard: {INSTANCE} (experiment w1)" in text


def test_experiment_describe_links_the_instance_per_trial(outputs: Path, tmp_path: Path,
                                                          server: FakeApiServer) -> None:
    sweep = tmp_path / "lr.yaml"
    sweep.write_text("name: lr\nworkload:\n  accelerator: v6e-256\n  image: python:3.12\n"
                     "  command: python3 train.py\n  tensorboard: checkpoints:runs\n"
                     "sweep:\n  env.LR: ['1e-4', '3e-4']\n")

    assert run_experiment(outputs, "create", str(sweep)).exit_code == 0
    data = json.loads(run_experiment(outputs, "describe", "lr", "-o", "json").stdout)
    assert [t["links"]["vertexTensorboard"] for t in data["trials"]] == [
        {"instance": INSTANCE, "experiment": "lr-0"},
        {"instance": INSTANCE, "experiment": "lr-1"}]
    text = run_experiment(outputs, "describe", "lr").stdout
    assert f"  Vertex AI TensorBoard: {INSTANCE} (experiment lr-1)" in text
