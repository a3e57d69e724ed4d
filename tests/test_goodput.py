"""`submit workload goodput`: the report is ml-goodput-measurement's own computation over
entries recorded in its payload format (tests/data/goodput-w1.jsonl: job start, TPU init,
training preparation, data loading, eleven steps 10 s apart, job end), served through the
library's cloud_logger seam."""

from __future__ import annotations

import json
import os
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
    # 240 s of job, 100 s of productive steps (steps 0..9 of 10 s each).
    assert 35 < found["goodput"] < 50
    assert set(found["badput"]) >= {"TPU_INITIALIZATION", "TRAINING_PREP", "DATA_LOADING_SYNC"}
    text = run(outputs, "goodput", "w1", "--entries", str(ENTRIES))
    assert text.stdout.startswith("run w1: goodput ")


def test_a_bad_entries_file_is_one_line(outputs: Path, tmp_path: Path) -> None:
    bad = tmp_path / "e.jsonl"
    bad.write_text('{"job_name": "w1"}\nnot json\n')
    out = run(outputs, "goodput", "w1", "--entries", str(bad))
    assert out.exit_code == 1
    assert out.stderr.startswith(f"Error: {bad}:2: not JSON (")


def test_without_the_library_the_extra_is_named(outputs: Path) -> None:
    if os.environ.get("ACCELSTACK_GOODPUT_PRESENT"):
        pytest.skip("the library is installed here")
    try:
        import ml_goodput_measurement  # noqa: F401
        pytest.skip("the library is installed here")
    except ImportError:
        pass
    out = run(outputs, "goodput", "w1", "--entries", str(ENTRIES))
    assert out.exit_code == 1
    assert "pip install 'accelstack[goodput]'" in out.stderr
