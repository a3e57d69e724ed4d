"""How tests drive the submit CLI: a `workload` or `experiment` command through Click's
runner against an outputs file, and shell completion through Click's completion protocol (what
`_SUBMIT_COMPLETE=bash_complete` runs)."""

from __future__ import annotations

from pathlib import Path

from click.shell_completion import ShellComplete
from click.testing import CliRunner, Result

from submit.cli.app import main


def run(outputs: Path | None, *args: str, input: str | None = None) -> Result:
    """`submit workload [--outputs OUTPUTS] ARGS`; fails the test on a traceback (any
    exception but the exit Click raises)."""
    pre = ["workload", "--outputs", str(outputs)] if outputs else ["workload"]
    result = CliRunner().invoke(main, [*pre, *args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def run_experiment(outputs: Path, *args: str) -> Result:
    """`submit experiment --outputs OUTPUTS ARGS`; fails the test on a traceback."""
    result = CliRunner().invoke(main, ["experiment", "--outputs", str(outputs), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def complete(args: list[str], incomplete: str) -> list[str]:
    comp = ShellComplete(main, {}, "submit", "_SUBMIT_COMPLETE")
    return [c.value for c in comp.get_completions(args, incomplete)]
