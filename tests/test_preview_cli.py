"""`accelstack-preview` as a command: from any directory, suggestions on a typo, the
summary that opens its output, and --outputs written where told."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from infra.preview import cli as preview


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    (root / "stacks").mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-spot.yaml", root / "stacks")
    (root / "deep" / "er").mkdir(parents=True)
    return root


def test_runs_from_a_subdirectory_and_writes_outputs_where_told(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project / "deep" / "er")
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--outputs", "out.json"])
    assert result.exit_code == 0, result.output
    assert json.loads((project / "deep" / "er" / "out.json").read_text())["accelstack"][
        "kubeconfig"] == "[secret]"
    assert "wrote out.json (the stack's outputs; keep it out of git)" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("# stack v5e-spot: ") and lines[0].endswith(" resources")
    assert "#      1 gcp:container/cluster:Cluster" in lines
    assert "# policy: ok" in lines
    assert any(line.startswith("# outputs: accelstack; pools: v5litepod-16 (v5litepod-16 x2, "
                               "spot)") for line in lines)
    doc = yaml.safe_load(result.stdout)  # the summary is comments: still the same YAML
    assert doc["stack"] == "v5e-spot"
    total = int(lines[0].split(": ")[1].split()[0])
    assert total == len(doc["resources"])


def test_project_dir_from_anywhere(project: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(preview.main, ["--project-dir", str(project), "v5e-spot",
                                               "--outputs", "o.json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert (tmp_path / "o.json").is_file()  # where told: here, not in the project


def test_a_typo_gets_the_nearest_stack(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(preview.main, ["v5e-spto"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for 'STACK': stacks/Pulumi.v5e-spto.yaml: no such stack file; "
        "did you mean v5e-spot? (stacks: v5e-spot)")


@pytest.mark.parametrize("args", [[], ["v5e-spot"]], ids=["every-stack", "one-stack"])
def test_outside_a_project_it_says_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(preview.main, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: no Pulumi.yaml in {tmp_path} or above it: run accelstack-preview inside the "
        "accelstack project (the directory holding Pulumi.yaml, stacks/ and snapshots/), pass "
        "--project-dir DIR, or name a stack file (path/to/Pulumi.<stack>.yaml)")


def test_a_stack_file_outside_a_project_is_enough(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-spot.yaml", tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(preview.main, ["Pulumi.v5e-spot.yaml", "--quiet"])
    assert result.exit_code == 0, result.output


def test_version() -> None:
    result = CliRunner().invoke(preview.main, ["--version"])
    assert (result.exit_code, result.stdout) == (
        0, f"accelstack-preview, version {importlib.metadata.version('accelstack')}\n")


def test_a_closed_pipe_is_not_an_error(project: Path, tmp_path: Path) -> None:
    # `accelstack-preview | head -1`: the reader leaves early; exit 0, nothing on stderr,
    # and what else was asked (--outputs) is still done.
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run([sys.executable, "-c", "from infra.preview import main; main()",
                            "v5e-spot", "--outputs", str(tmp_path / "o.json")],
                           stdout=write, stderr=subprocess.PIPE, text=True, cwd=project,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write)
    assert (r.returncode, r.stderr) == (0, "wrote " + str(tmp_path / "o.json") +
                                        " (the stack's outputs; keep it out of git)\n")
    assert json.loads((tmp_path / "o.json").read_text())["accelstack"]["kubeconfig"] == "[secret]"
