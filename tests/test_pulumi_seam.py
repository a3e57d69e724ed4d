"""The Pulumi seam end to end: submit.cluster.stack_outputs runs a fake `pulumi` found on PATH.

The fake (tests/fakes/pulumi_cli.py) records its argv and answers like the real CLI, so
these tests check exactly what the submitter runs and how it reads the answer, without a
Pulumi backend.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fakes import stacks
from fakes.pulumi_cli import FakePulumi, install
from infra.contract.outputs import CONTRACT_VERSION, load
from submit.cli.app import main
from submit.cluster.stack_outputs import OutputsError, from_file, read


@pytest.fixture
def pulumi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePulumi:
    return install(tmp_path, monkeypatch)


def _argv(stack: str, cwd: str) -> list[str]:
    return ["stack", "output", "--json", "--show-secrets", "--non-interactive",
            "--stack", stack, "--cwd", cwd]


def test_read_runs_exactly_one_stack_output_and_returns_the_contract(
        pulumi: FakePulumi, tmp_path: Path) -> None:
    data = stacks.outputs("v5e-spot")
    pulumi.stack("dev", data)
    project = tmp_path / "project"
    project.mkdir()

    got = read("dev", None, str(project))

    assert got == load(data)
    assert got.stack == "v5e-spot"
    assert got.slice_pools[0].name == "v5litepod-16"
    assert [c["argv"] for c in pulumi.calls] == [_argv("dev", str(project))]
    assert pulumi.calls[0]["skipUpdateCheck"] == "true"


def test_default_project_dir_is_the_current_directory(pulumi: FakePulumi) -> None:
    pulumi.stack("dev", stacks.outputs("v5e-spot"))
    read("dev", None)
    assert [c["argv"] for c in pulumi.calls] == [_argv("dev", ".")]


def test_the_bare_contract_is_accepted_too(pulumi: FakePulumi) -> None:
    # `pulumi stack output accelstack --json` prints the contract without the wrapper.
    data = stacks.outputs("v5e-spot")
    pulumi.stack("dev", data["accelstack"])
    assert read("dev", None).stack == "v5e-spot"


def test_unknown_stack(pulumi: FakePulumi, tmp_path: Path) -> None:
    with pytest.raises(OutputsError) as err:
        read("nope", None, str(tmp_path))
    assert str(err.value) == ("stack 'nope' not found: error: no stack named 'nope' found "
                              "(list stacks with `pulumi stack ls`); offline, with no deployed "
                              "stack: `accelstack-preview STACK --quiet --outputs "
                              "STACK.outputs.json`, then `--outputs STACK.outputs.json`")
    assert [c["argv"] for c in pulumi.calls] == [_argv("nope", str(tmp_path))]


def test_other_pulumi_failure_shows_its_last_line(pulumi: FakePulumi) -> None:
    pulumi.failing("dev", "warning: something first\nerror: passphrase must be set with "
                          "PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE\n")
    with pytest.raises(OutputsError) as err:
        read("dev", None)
    assert str(err.value) == (
        "`pulumi stack output` failed for stack 'dev': error: passphrase must be set with "
        "PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE")


def test_contract_version_mismatch(pulumi: FakePulumi) -> None:
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["contractVersion"] = 1
    pulumi.stack("old", data)
    with pytest.raises(OutputsError) as err:
        read("old", None)
    assert str(err.value) == (
        f"stack 'old': stack outputs: contract version 1 is not supported; this version of "
        f"accelstack reads version {CONTRACT_VERSION} (run `pulumi up` with the same "
        "accelstack version, or upgrade the submitter)")


def test_a_stack_without_the_output(pulumi: FakePulumi) -> None:
    pulumi.stack("empty", {})
    with pytest.raises(OutputsError) as err:
        read("empty", None)
    assert str(err.value) == ("stack 'empty': not an accelstack stack's outputs: no "
                              "`accelstack` output holding a contractVersion (its keys: none); "
                              "write it with `accelstack-preview STACK --outputs FILE` or "
                              "`pulumi stack output --json --show-secrets`")


def test_a_contract_with_a_bad_field_names_its_path(pulumi: FakePulumi) -> None:
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["slicePools"][0]["sliceCount"] = "two"
    pulumi.stack("dev", data)
    with pytest.raises(OutputsError) as err:
        read("dev", None)
    assert str(err.value) == "stack 'dev': outputs.slicePools[0].sliceCount: 'two' is not int"


def test_non_json_output(pulumi: FakePulumi) -> None:
    pulumi.stack("dev", "Current stack outputs (1):\n    OUTPUT  VALUE\n")
    with pytest.raises(OutputsError) as err:
        read("dev", None)
    assert str(err.value) == ("stack 'dev': not JSON (Expecting value: line 1 column 1 "
                              "(char 0))")


def test_no_pulumi_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(OutputsError) as err:
        read("dev", None)
    assert str(err.value) == (
        "the pulumi CLI is not on PATH; offline, with no deployed stack: `accelstack-preview "
        "STACK --quiet --outputs STACK.outputs.json`, then `--outputs STACK.outputs.json`; or "
        "install the pulumi CLI (https://www.pulumi.com/docs/install/) to read a deployed "
        "stack's outputs")


def test_outputs_file_wins_over_stack(pulumi: FakePulumi, tmp_path: Path) -> None:
    path = stacks.write_outputs(tmp_path / "out.json", "v5e-spot")
    assert read("dev", str(path)).stack == "v5e-spot"
    assert pulumi.calls == []


def test_outputs_file_errors(tmp_path: Path) -> None:
    with pytest.raises(OutputsError) as err:
        from_file(str(tmp_path / "missing.json"))
    missing = tmp_path / "missing.json"
    assert str(err.value) == (
        f"no outputs file {missing}; write one offline with `accelstack-preview STACK "
        f"--quiet --outputs {missing}`, or from a deployed stack with `pulumi stack output "
        f"--json --show-secrets > {missing}`")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(OutputsError) as err:
        from_file(str(bad))
    assert str(err.value) == (f"{bad}: not JSON (Expecting property name enclosed in double "
                              "quotes: line 1 column 2 (char 1))")


# -- through the CLI ---------------------------------------------------------------------

def test_cli_dry_run_reads_the_stack_through_pulumi(pulumi: FakePulumi, tmp_path: Path) -> None:
    pulumi.stack("dev", stacks.outputs("v5e-spot"))
    project = tmp_path / "infra"
    project.mkdir()
    result = CliRunner().invoke(main, [
        "workload", "--stack", "dev", "--project-dir", str(project), "create",
        "--workload", "hello", "--accelerator", "v5e-16", "--image", "python:3.12",
        "--command", "python -c 'print(1)'", "--dry-run"])
    assert (result.exit_code, result.stderr) == (0, "")
    jobset = yaml.safe_load(result.stdout)
    assert jobset["kind"] == "JobSet"
    assert jobset["metadata"]["name"] == "hello"
    assert jobset["metadata"]["namespace"] == "training"
    assert jobset["metadata"]["labels"]["accelstack.dev/accelerator"] == "v5litepod-16"
    assert [c["argv"] for c in pulumi.calls] == [_argv("dev", str(project))]


def test_cli_stack_and_project_dir_from_the_environment(
        pulumi: FakePulumi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pulumi.stack("from-env", stacks.outputs("v5e-spot"))
    monkeypatch.setenv("ACCELSTACK_STACK", "from-env")
    monkeypatch.setenv("ACCELSTACK_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("ACCELSTACK_OUTPUTS", raising=False)
    result = CliRunner().invoke(main, [
        "workload", "create", "--workload", "hello", "--accelerator", "v5litepod-16",
        "--image", "python:3.12", "--dry-run", "-o", "json"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["metadata"]["name"] == "hello"
    assert [c["argv"] for c in pulumi.calls] == [_argv("from-env", str(tmp_path))]


def test_cli_unknown_stack_exits_1(pulumi: FakePulumi) -> None:
    result = CliRunner().invoke(main, [
        "workload", "--stack", "nope", "create", "--workload", "hello", "--accelerator",
        "v5litepod-16", "--image", "python:3.12", "--dry-run"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == ("Error: stack 'nope' not found: error: no stack named 'nope' "
                             "found (list stacks with `pulumi stack ls`); offline, with no "
                             "deployed stack: `accelstack-preview STACK --quiet --outputs "
                             "STACK.outputs.json`, then `--outputs STACK.outputs.json`\n")


def test_cli_without_pulumi_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(main, ["workload", "--stack", "dev", "list"])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: the pulumi CLI is not on PATH; offline, with no deployed stack: "
        "`accelstack-preview STACK --quiet --outputs STACK.outputs.json`, then `--outputs "
        "STACK.outputs.json`; or install the pulumi CLI (https://www.pulumi.com/docs/install/) "
        "to read a deployed stack's outputs\n")



# -- a typo in --stack or --outputs (issue 42) -------------------------------------------------

@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project as a user has it: Pulumi.yaml (stackConfigDir: stacks) and stack files."""
    root = tmp_path / "proj"
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text("name: accelstack\nruntime: python\n"
                                      "stackConfigDir: stacks\n")
    for name in ("v5e-spot", "v6e-training"):
        (root / "stacks" / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    return root


def test_a_mistyped_stack_gets_the_nearest_and_the_offline_route(
        pulumi: FakePulumi, project: Path) -> None:
    with pytest.raises(OutputsError) as err:
        read("v5e-sport", None, str(project))
    assert str(err.value) == (
        "stack 'v5e-sport' not found: error: no stack named 'v5e-sport' found; did you mean "
        "v5e-spot? (list stacks with `pulumi stack ls`); offline, with no deployed stack: "
        "`accelstack-preview v5e-spot --quiet --outputs v5e-spot.outputs.json`, then "
        "`--outputs v5e-spot.outputs.json`")


def test_without_pulumi_a_mistyped_stack_gets_the_nearest(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["workload", "--stack", "v5e-sport", "list"])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: the pulumi CLI is not on PATH and the project has no stack 'v5e-sport' (did "
        "you mean v5e-spot?); offline, with no deployed stack: `accelstack-preview v5e-spot "
        "--quiet --outputs v5e-spot.outputs.json`, then `--outputs v5e-spot.outputs.json`; "
        "or install the pulumi CLI (https://www.pulumi.com/docs/install/) to read a deployed "
        "stack's outputs\n")


def test_a_mistyped_outputs_file_gets_the_file_that_is_there(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stacks.write_outputs(project / "v5e-spot.outputs.json", "v5e-spot")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["workload", "--outputs", "v5e-spt.outputs.json", "list"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--outputs': no outputs file v5e-spt.outputs.json; did you "
        "mean v5e-spot.outputs.json?")


def test_a_missing_outputs_file_names_a_stack_the_project_has(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No file near it: the command to write one names the stack nearest to the file's
    # name, never a stack that is not there (`accelstack-preview v6e-trainin` would fail).
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["workload", "--outputs", "v6e-trainin.outputs.json",
                                       "list"])
    assert result.exit_code == 2
    assert "write one offline with `accelstack-preview v6e-training --quiet --outputs " \
           "v6e-trainin.outputs.json`" in result.stderr.splitlines()[-1]
