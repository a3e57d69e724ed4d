"""Proof that the environment we render is complete: real multi-process JAX (CPU) forms its
distributed group from it alone, through `submit workload run-local`.

tests/local_jax_train.py initialises jax.distributed from the pod environment, runs a
cross-process psum of (process id + 1) and writes OUT_DIR/process-<id>.json. A wrong or
missing variable shows up here as a group that never forms, a wrong process count or
duplicate ids. jax is a test dependency (the dev extra); a missing jax fails, not skips.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fakes import stacks
from submit.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
TRAIN = "python3 tests/local_jax_train.py"


@pytest.fixture(autouse=True)
def _venv_python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # `python3` in the command is this interpreter, the one jax is installed in.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(ROOT)
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS"):
        monkeypatch.delenv(var, raising=False)


def run_local(outputs: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "run-local",
                                       "--image", "python:3.11", "--command", TRAIN, *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("process-*.json"))]


def test_jax_is_installed() -> None:
    import jax  # noqa: F401  (a test dependency: its absence is a failure)


def test_tpu_multislice_forms_one_group_of_four(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "v5e.json", "v5e-spot")
    out = tmp_path / "out"
    r = run_local(outputs, "--workload", "jax-tpu", "--accelerator", "v5litepod-16",
                  "--num-slices", "2", "--scale-down", "2x2", "--env", f"OUT_DIR={out}",
                  "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 0, r.output
    got = results(out)
    assert sorted(g["process_id"] for g in got) == [0, 1, 2, 3]
    assert all(g["process_count"] == 4 and g["psum"] == 10 == g["allgather_sum"] for g in got)
    # JAX's own GKE TPU detection: process id = slice id x hosts per slice + TPU_WORKER_ID.
    assert {g["worker"]: g["process_id"] for g in got} == {"0/0": 0, "0/1": 1, "1/0": 2,
                                                           "1/1": 3}
    assert {g["hostname"] for g in got} == {f"jax-tpu-slice-{s}-{w}" for s in (0, 1)
                                            for w in (0, 1)}
    assert len({g["coordinator"] for g in got}) == 1
    assert "workload jax-tpu succeeded: every process exited 0 (restarts: 0)" in r.output
    for s in (0, 1):
        for w in (0, 1):
            assert f"[{s}/{w}] " in r.output
            assert (tmp_path / f"run/logs/jax-tpu-slice-{s}-{w}.attempt-0.log").is_file()


def test_gpu_two_nodes_form_one_group(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "multi.json", "multi")
    out = tmp_path / "out"
    r = run_local(outputs, "--workload", "jax-gpu", "--accelerator", "l4-1", "--num-nodes",
                  "2", "--env", f"OUT_DIR={out}")
    assert r.exit_code == 0, r.output
    got = results(out)
    assert sorted(g["process_id"] for g in got) == [0, 1]
    assert all(g["process_count"] == 2 and g["psum"] == 3 for g in got)


def test_a_failing_process_stops_the_group_and_fails_fast(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "multi.json", "multi")
    out = tmp_path / "out"
    start = time.monotonic()
    r = run_local(outputs, "--workload", "jax-fail", "--accelerator", "l4-1", "--num-nodes",
                  "2", "--max-restarts", "3", "--restart-on-exit-codes", "42",
                  "--env", f"OUT_DIR={out}", "--env", "FAIL_WORKER=0/1", "--env", "FAIL_CODE=1")
    # Worker 0 would wait up to a minute for its peer in jax.distributed.initialize().
    assert time.monotonic() - start < 45
    assert r.exit_code == 1, r.output
    assert results(out) == []
    assert "[0/1] worker 0/1 failing with exit code 1" in r.output
    assert "(PodFailurePolicy); rule failFastOnUserErrors (restarts: 0)" in r.output
    rows = [line.split() for line in r.output.splitlines() if line.startswith("0 ")]
    assert sorted((row[1], row[3]) for row in rows) == [("0/0", "143"), ("0/1", "1")]


def test_a_retriable_exit_code_restarts_the_group_which_then_succeeds(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "multi.json", "multi")
    out = tmp_path / "out"
    r = run_local(outputs, "--workload", "jax-retry", "--accelerator", "l4-1", "--num-nodes",
                  "2", "--max-restarts", "2", "--restart-on-exit-codes", "42",
                  "--env", f"OUT_DIR={out}", "--env", "FAIL_WORKER=0/1", "--env", "FAIL_CODE=42",
                  "--env", "FAIL_ONCE=1", "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 0, r.output
    assert "restart attempt 1" in r.output
    assert "workload jax-retry succeeded: every process exited 0 (restarts: 1)" in r.output
    got = results(out)
    assert sorted(g["process_id"] for g in got) == [0, 1]
    assert all(g["psum"] == 3 for g in got)
    logs = tmp_path / "run/logs"
    assert "failing with exit code 42" in (logs / "jax-retry-worker-0-1.attempt-0.log").read_text()
    assert '"psum": 3' in (logs / "jax-retry-worker-0-1.attempt-1.log").read_text()
