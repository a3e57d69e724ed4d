"""--stack and --outputs typed together are refused (issue 34): before the command, after
it, or one on each side; `--outputs` before the command and `--stack` after it used to let
--stack win silently. An environment default and an option typed are not a pair."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from submit.cli.app import main

MESSAGE = ("Error: --stack and --outputs both name the stack's outputs (a deployed stack's, "
           "or a file's); give one of them")


@pytest.mark.parametrize("argv", [
    ["workload", "--outputs", "o.json", "list", "--stack", "dev"],
    ["workload", "--stack", "dev", "list", "--outputs", "o.json"],
    ["workload", "--stack", "dev", "--outputs", "o.json", "list"],
    ["workload", "list", "--stack", "dev", "--outputs", "o.json"],
    ["experiment", "--outputs", "o.json", "list", "--stack", "dev"],
    ["accelerators", "--stack", "dev", "--outputs", "o.json"],
    ["cluster", "credentials", "--outputs", "o.json", "--stack", "dev"],
])
def test_both_typed_are_refused(argv: list[str]) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == MESSAGE


def test_an_environment_default_is_not_a_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELSTACK_OUTPUTS", "o.json")
    monkeypatch.setenv("PATH", "/nonexistent")  # --stack then needs pulumi: not found
    result = CliRunner().invoke(main, ["workload", "list", "--stack", "dev"])
    assert MESSAGE not in result.stderr
