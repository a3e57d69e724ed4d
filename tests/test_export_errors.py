"""`--export` to a place that cannot be written is a one-line error naming the option, exit 2,
on every command that has it (issue 34): never a PermissionError or FileNotFoundError
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fakes import stacks
from submit.cli.app import main

HERE = Path(__file__).resolve().parent
READ_ONLY = "/sys/accelstack-export"  # sysfs: not even root may create a file here


def _commands(outputs: Path, target: str) -> dict[str, list[str]]:
    workload = ["--workload", "w1", "--accelerator", "v5litepod-16", "--image", "python:3.12",
                "--command", "true", "--no-resolve-image"]
    return {
        "create": ["workload", "--outputs", str(outputs), "create", *workload,
                   "--export", target + ".yaml"],
        "create-group": ["workload", "--outputs", str(outputs), "create-group",
                         str(HERE / "groups" / "train_eval.yaml"), "--no-resolve-image",
                         "--export", target + ".yaml"],
        "experiment": ["experiment", "--outputs", str(outputs), "create",
                       str(HERE / "experiments" / "lr_sweep.yaml"), "--no-resolve-image",
                       "--export", target],
        "run-local": ["workload", "--outputs", str(outputs), "run-local",
                      *workload[:-1], "--export", target + ".yaml"],
    }


@pytest.mark.parametrize("command", ["create", "create-group", "experiment", "run-local"])
@pytest.mark.parametrize("where", ["read-only", "under a file"])
def test_an_unwritable_export_is_a_one_line_error(tmp_path: Path, command: str,
                                                   where: str) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "multi" if command == "create-group"
                                   else "v5e-spot")
    if where == "read-only":
        target = READ_ONLY
    else:
        (tmp_path / "a-file").write_text("")
        target = str(tmp_path / "a-file" / "x")
    result = CliRunner().invoke(main, _commands(outputs, target)[command])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == 2, result.output
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: Invalid value for '--export': "), result.stderr
    assert target in last
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["create", "create-group", "experiment", "run-local"])
def test_a_missing_folder_is_refused_not_made(tmp_path: Path, command: str) -> None:
    # A typo in a path (issue 42): `--export exprots/x.yaml` used to make exprots/.
    outputs = stacks.write_outputs(tmp_path / "o.json", "multi" if command == "create-group"
                                   else "v5e-spot")
    folder = tmp_path / "exprots"
    target = str(folder / "x")
    result = CliRunner().invoke(main, _commands(outputs, target)[command])
    assert result.exit_code == 2, result.output
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: Invalid value for '--export': "), result.stderr
    assert f"no such folder {folder} (make it first" in last, last
    assert not folder.exists()


def test_an_export_dir_is_made_in_a_folder_that_is_there(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    result = CliRunner().invoke(main, _commands(outputs, str(tmp_path / "trials"))[
        "experiment"])
    assert result.exit_code == 0, result.output
    assert any((tmp_path / "trials").iterdir())
