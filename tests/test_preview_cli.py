"""`accelstack-preview` as a command: from any directory, suggestions on a typo, the
summary that opens its output, and --outputs written where told."""

from __future__ import annotations

import json
import shutil
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


def test_outside_a_project_it_says_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(preview.main, [])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: no stack files in stacks/ (run inside the project, pass --project-dir, or "
        "name a Pulumi.<stack>.yaml file)")
