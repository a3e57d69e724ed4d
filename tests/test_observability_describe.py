"""`describe` links the stack's dashboard, narrowed to the workload (text and -o json),
read from the outputs contract's optional ``monitoring`` part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.contract import outputs as contract
from submit_cli import run, run_experiment

CREATE = ["create", "--workload", "w1", "--accelerator", "v6e-256", "--image", "python:3.12",
          "--command", "python3 train.py"]
pytestmark = pytest.mark.usefixtures("no_stack_env")
BOARD = ("https://console.cloud.google.com/monitoring/dashboards/builder/observability-"
         "dashboard;filters=type:rlabel,key:namespace_name,val:pretraining%2B"
         "type:mlabel,key:top_level_controller_name,val:w1?project=my-ml-project")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v6e.json", "v6e-training", server.kubeconfig())


def test_describe_prints_the_dashboard_link(outputs: Path, server: FakeApiServer) -> None:
    assert run(outputs, *CREATE).exit_code == 0
    text = run(outputs, "describe", "w1")
    assert text.exit_code == 0, text.stderr
    assert f"  dashboard: {BOARD}" in text.stdout.splitlines()
    data = json.loads(run(outputs, "describe", "w1", "-o", "json").stdout)
    assert data["links"]["dashboard"] == BOARD


def test_no_dashboard_without_monitoring(outputs: Path, server: FakeApiServer) -> None:
    data = json.loads(outputs.read_text())
    del data["accelstack"]["monitoring"]
    outputs.write_text(json.dumps(data))
    assert run(outputs, *CREATE).exit_code == 0
    assert "dashboard:" not in run(outputs, "describe", "w1").stdout
    assert "dashboard" not in json.loads(
        run(outputs, "describe", "w1", "-o", "json").stdout)["links"]


def test_monitoring_round_trips_and_is_checked(outputs: Path) -> None:
    data = json.loads(outputs.read_text())["accelstack"]
    loaded = contract.load(data)
    assert loaded.monitoring is not None and loaded.monitoring.goodput is True
    assert contract.load(loaded.to_dict()) == loaded
    data["monitoring"] = {"project": "p", "dashboard": ""}
    with pytest.raises(contract.ContractError, match=r"monitoring\.dashboard: '' is not"):
        contract.load(data)


def test_experiment_describe_links_each_trial(outputs: Path, tmp_path: Path,
                                              server: FakeApiServer) -> None:
    sweep = tmp_path / "lr.yaml"
    sweep.write_text("name: lr\nworkload:\n  accelerator: v6e-256\n  image: python:3.12\n"
                     "  command: python3 train.py\nsweep:\n  env.LR: ['1e-4', '3e-4']\n")
    assert run_experiment(outputs, "create", str(sweep)).exit_code == 0
    data = json.loads(run_experiment(outputs, "describe", "lr", "-o", "json").stdout)
    links = [t["links"]["dashboard"] for t in data["trials"]]
    assert links == [BOARD.replace("val:w1", "val:lr-0"), BOARD.replace("val:w1", "val:lr-1")]
    text = run_experiment(outputs, "describe", "lr").stdout
    assert f"  dashboard: {links[1]}" in text.splitlines()
