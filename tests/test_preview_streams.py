"""accelstack-preview's streams as a newcomer met them (issue 42): with -o json stdout is one
JSON document whatever else is asked; a reader that leaves (`... 2>&1 | head -1`) is not an
error; a bad ACCELSTACK_TODAY or an --outputs folder that is not there is one line, exit 2;
a terminal sees progress while the stacks are evaluated, a pipe does not."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from infra.preview import cli as preview

PREVIEW = [sys.executable, "-c", "from infra.preview import main; main()"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "stacks").mkdir(parents=True)
    (root / "snapshots").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-spot.yaml", root / "stacks")
    shutil.copy(ROOT / "snapshots" / "v5e-spot.yaml", root / "snapshots")
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("flags, key", [
    (["--policy"], "resources"),            # printed "v5e-spot: policy ok" after the JSON
    (["--policy", "--quiet"], "policy"),
    (["--summary"], "summary"),             # printed the text summary
    (["--diff"], "snapshot"),               # printed "v5e-spot: no changes"
    (["--check-snapshots"], "snapshot"),
    (["--update-snapshots"], "snapshot"),
])
def test_json_stdout_is_one_document(project: Path, flags: list[str], key: str) -> None:
    result = CliRunner().invoke(preview.main, ["v5e-spot", "-o", "json", *flags])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)  # the whole of stdout, nothing before or after
    assert doc["stack"] == "v5e-spot" and key in doc, doc.keys()


def test_json_diff_carries_the_changes(project: Path) -> None:
    snap = project / "snapshots" / "v5e-spot.yaml"
    snap.write_text(snap.read_text().replace("machineType: e2-standard-8",
                                             "machineType: e2-standard-4", 1))
    result = CliRunner().invoke(preview.main, ["v5e-spot", "-o", "json", "--check-snapshots"])
    assert result.exit_code == 1
    changes = json.loads(result.stdout)["snapshot"]["changes"]
    assert any('"e2-standard-4" -> "e2-standard-8"' in line for line in changes), changes
    assert "snapshots out of date: v5e-spot" in result.stderr


def test_a_bad_today_is_one_line(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--quiet"],
                                env={"ACCELSTACK_TODAY": "notadate"})
    assert result.exit_code == 2
    assert result.stderr == ("ACCELSTACK_TODAY: 'notadate' is not a date; give an ISO date "
                             "such as 2026-11-28, or unset it (today's date is used)\n")


def test_an_outputs_folder_that_is_not_there_is_refused(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--outputs", "ouptuts/v.json"])
    assert result.exit_code == 2
    assert result.stdout == ""  # refused before anything is evaluated or printed
    assert result.stderr == ("--outputs ouptuts/v.json: no such folder: ouptuts (make it "
                             "first, or write the file elsewhere)\n")
    assert not (project / "ouptuts").exists()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("flags", [["--diff", "--policy"], ["--check-snapshots"]])
def test_a_reader_gone_from_both_streams_is_not_an_error(project: Path, tmp_path: Path,
                                                         flags: list[str]) -> None:
    # `accelstack-preview ... 2>&1 | head -1` once head has left: stdout and stderr are one
    # pipe with no reader. Exit as the run would (0), and --outputs is still written.
    read, write = os.pipe()
    os.close(read)
    out = tmp_path / "o.json"
    try:
        r = subprocess.run([*PREVIEW, "v5e-spot", *flags, "--outputs", str(out)],
                           stdout=write, stderr=write, cwd=project, env=_env(), timeout=300)
    finally:
        os.close(write)
    assert r.returncode == 0
    assert json.loads(out.read_text())["accelstack"]["stack"] == "v5e-spot"


def _stderr_of(project: Path, on_terminal: bool) -> str:
    """The stderr of a preview run, given a terminal (a pty) or a pipe."""
    if not on_terminal:
        r = subprocess.run([*PREVIEW, "v5e-spot", "--quiet"], capture_output=True, text=True,
                           cwd=project, env=_env(), timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen([*PREVIEW, "v5e-spot", "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=slave, cwd=project, env=_env())
    os.close(slave)
    seen = b""
    for _ in range(10_000):  # bounded: each read waits at most a second
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=300) == 0
    return seen.decode()


def test_progress_on_a_terminal_only(project: Path) -> None:
    assert "evaluating v5e-spot (1/1)" in _stderr_of(project, on_terminal=True)
    assert "evaluating" not in _stderr_of(project, on_terminal=False)
