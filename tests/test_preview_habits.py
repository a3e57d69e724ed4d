"""accelstack-preview as a newcomer types it (issue 34): a .yml path is a path, not a stack
name; -o json; --check-snapshots says so when all is well; a stack file with broken
indentation is explained in plain words beside its FILE:LINE:COL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from infra.config.stack_file import StackFileError, load
from infra.preview import cli as preview


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-spot.yaml", tmp_path / "stacks")
    (tmp_path / "snapshots").mkdir()
    shutil.copy(ROOT / "snapshots" / "v5e-spot.yaml", tmp_path / "snapshots")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_yml_path_is_taken_as_a_path(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["stacks/Pulumi.v5e-spot.yml"])
    assert result.exit_code == 2
    assert ("Invalid value for 'STACK': stacks/Pulumi.v5e-spot.yml: no such stack file; did "
            "you mean v5e-spot? (Pulumi reads stack files named Pulumi.<stack>.yaml)") \
        in result.stderr


def test_json_output_is_the_document(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["v5e-spot", "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["stack"] == "v5e-spot" and doc["outputs"]["accelstack"]["stack"] == "v5e-spot"


def test_check_snapshots_says_when_they_are_up_to_date(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["--check-snapshots"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "snapshots up to date: 1 stack (v5e-spot)\n"


@pytest.mark.parametrize("text, where, plain", [
    ("config:\n  accelstack:project: p\n accelstack:region: r\n", "3:2",
     "the indentation does not line up here"),
    ("config:\n  accelstack:project: p\n    accelstack:region: r\n", "3:22",
     "a 'key: value' where only a value can be"),
])
def test_broken_indentation_is_said_in_plain_words(tmp_path: Path, text: str, where: str,
                                                   plain: str) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    with pytest.raises(StackFileError) as e:
        load(path)
    [problem] = e.value.problems
    assert problem.startswith(f"{path}:{where}: ") and plain in problem, problem
