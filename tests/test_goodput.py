"""`submit workload goodput`: the report is ml-goodput-measurement's own computation over
entries recorded in its payload format (tests/data/goodput-w1.jsonl: job start, TPU init,
training preparation, data loading, eleven steps 10 s apart, job end), served through the
library's cloud_logger seam."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from fakes import stacks
from submit_cli import run

ENTRIES = Path(__file__).parent / "data" / "goodput-w1.jsonl"
pytestmark = pytest.mark.usefixtures("no_stack_env")


def _library() -> None:
    try:
        import ml_goodput_measurement  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":  # the dev extra brings it: CI must run it
            pytest.fail("ml-goodput-measurement (the goodput extra, in dev) is not installed "
                        "and CI=true")
        pytest.skip("ml-goodput-measurement (the goodput extra) is not installed")


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    return stacks.write_outputs(tmp_path / "v5e.json", "v5e-spot")


def test_goodput_report_from_recorded_entries(outputs: Path, tmp_path: Path) -> None:
    _library()
    out = run(outputs, "goodput", "w1", "--entries", str(ENTRIES), "-o", "json")
    assert out.exit_code == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["run"] == "w1" and found["lastStep"] == 10
    # 241 s of job: 60 s of TPU init, 60 s of training preparation, 10 s of data loading,
    # then eleven steps 10 s apart.
    assert 35 < found["goodput"] < 50
    assert abs(found["badput"]["TPU_INITIALIZATION"] - 100 * 60 / 241) < 0.01
    assert abs(found["badput"]["DATA_LOADING_SYNC"] - 100 * 10 / 241) < 0.01
    assert set(found["badput"]) >= {"TPU_INITIALIZATION", "TRAINING_PREP", "DATA_LOADING_SYNC"}
    text = run(outputs, "goodput", "w1", "--entries", str(ENTRIES))
    assert text.stdout.startswith("run w1: goodput ")


def test_a_bad_entries_file_is_one_line(outputs: Path, tmp_path: Path) -> None:
    bad = tmp_path / "e.jsonl"
    bad.write_text('{"job_name": "w1"}\nnot json\n')
    out = run(outputs, "goodput", "w1", "--entries", str(bad))
    assert out.exit_code == 1
    assert out.stderr.startswith(f"Error: {bad}:2: not JSON (")


def test_without_the_library_the_extra_is_named(outputs: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The library is installed here (the dev extra): hide it, as an environment without
    # the goodput extra has it (None in sys.modules makes the import raise ImportError).
    for name in ("ml_goodput_measurement", "ml_goodput_measurement.src",
                 "ml_goodput_measurement.src.goodput"):
        monkeypatch.setitem(sys.modules, name, None)
    out = run(outputs, "goodput", "w1", "--entries", str(ENTRIES))
    assert out.exit_code == 1
    assert "pip install 'accelstack[goodput]'" in out.stderr


DRY = ["create", "--workload", "w1", "--accelerator", "v5litepod-16", "--image",
       "python:3.12", "--command", "python3 train.py", "--dry-run", "-o", "json"]


def _env(out: str) -> dict[str, str]:
    objs = json.loads(out)
    items = objs.get("items", [objs])
    js = next(o for o in items if o["kind"] == "JobSet")
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return {e["name"]: e.get("value", "") for e in pod["containers"][0].get("env", [])}


def test_goodput_gives_the_run_name_and_log(outputs: Path) -> None:
    out = run(outputs, *DRY, "--goodput", "--env", "M_MONITOR_GOODPUT=false")
    assert out.exit_code == 0, out.stderr
    env = _env(out.stdout)
    assert env["ACCELSTACK_GOODPUT_RUN_NAME"] == "w1"
    assert env["ACCELSTACK_GOODPUT_LOGGER_NAME"] == "goodput_w1"
    assert (env["M_RUN_NAME"], env["M_ENABLE_GOODPUT_RECORDING"]) == ("w1", "true")
    assert env["M_MONITOR_GOODPUT"] == "false"  # the user's own --env wins
    plain = _env(run(outputs, *DRY).stdout)
    assert not [k for k in plain if "GOODPUT" in k or k == "M_RUN_NAME"]


def test_goodput_needs_a_stack_that_grants_the_roles(outputs: Path) -> None:
    data = json.loads(outputs.read_text())
    del data["accelstack"]["monitoring"]
    outputs.write_text(json.dumps(data))
    out = run(outputs, *DRY, "--goodput")
    assert out.exit_code == 2
    assert out.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--goodput': stack v5e-spot does not give its job "
        "identities the roles to record goodput (roles/logging.logWriter, "
        "roles/monitoring.metricWriter); its observability is off or its outputs predate "
        "it: run `pulumi up` with observability on")


def test_experiment_goodput_reports_each_trial(outputs: Path) -> None:
    _library()
    from submit_cli import run_experiment

    out = run_experiment(outputs, "goodput", "lr", "--entries",
                         str(ENTRIES.with_name("goodput-lr.jsonl")), "-o", "json")
    assert out.exit_code == 0, out.stderr
    trials = json.loads(out.stdout)["trials"]
    assert [t["run"] for t in trials] == ["lr-0", "lr-1"]
    # lr-0 spent 60 s of its 121 s in TPU init, lr-1 30 s of its 91 s.
    assert abs(trials[0]["badput"]["TPU_INITIALIZATION"] - 100 * 60 / 121) < 0.01
    assert abs(trials[1]["badput"]["TPU_INITIALIZATION"] - 100 * 30 / 91) < 0.01


def test_experiment_goodput_without_runs(outputs: Path) -> None:
    from submit_cli import run_experiment

    out = run_experiment(outputs, "goodput", "nope", "--entries", str(ENTRIES))
    assert out.exit_code == 1
    assert out.stderr == "Error: experiment nope: no trial runs found\n"


def test_the_api_gives_goodput_variables_per_workload_name() -> None:
    """--goodput's variables come from the workload itself (submit.api), so a trial renamed
    by an experiment keys the library on its own name, and the user's own --env wins."""
    from submit import api

    w = api.Workload(name="base", accelerator="v5litepod-16", image="python:3.12",
                     goodput=True, env=("M_MONITOR_GOODPUT=false",))
    env = w.replace(name="trial-1").options()["env"]
    assert env[0] == "ACCELSTACK_GOODPUT_RUN_NAME=trial-1"
    assert env[-1] == "M_MONITOR_GOODPUT=false"
    assert "env" in api.Workload(name="b", accelerator="v5litepod-16").options()
    assert api.Workload(name="b", accelerator="v5litepod-16").options()["env"] == ()
