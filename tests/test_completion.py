"""Shell completion: accelerator, pool, priority, stack and workload names, through
Click's completion protocol (what `_SUBMIT_COMPLETE=bash_complete` runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.cli.app import main
from submit_cli import complete


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch, no_stack_env: None) -> None:
    monkeypatch.chdir(ROOT)


def test_stack_names_from_stacks_dir() -> None:
    assert complete(["workload", "--stack"], "v") == ["v5e-extra", "v5e-spot",
                                                      "v5p-reserved", "v6e-burst", "v6e-mtc",
                                                      "v6e-training"]
    assert complete(["workload", "create", "--stack"], "a") == ["a3mega", "a4x"]


def test_accelerators_of_the_stack_or_the_catalog() -> None:
    assert complete(["workload", "--stack", "v6e-training", "create", "--accelerator"],
                    "") == ["n2-standard-64-1", "v6e-256"]  # the Pathways head pool, the slices
    names = complete(["workload", "create", "--accelerator"], "v5p-1")
    assert "v5p-128" in names and all(n.startswith("v5p-1") for n in names)


def test_pools_from_an_outputs_file(tmp_path: Path) -> None:
    out = stacks.write_outputs(tmp_path / "o.json", "multi")
    assert complete(["workload", "--outputs", str(out), "create", "--pool"], "v5e") == [
        "v5e-flex", "v5e-spot"]


def test_priorities() -> None:
    assert complete(["workload", "create", "--priority"], "v") == ["very-high", "very-low"]


def test_workload_names_from_the_cluster(tmp_path: Path, server: FakeApiServer) -> None:
    out = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    for name in ("llama-8b", "llama-70b", "gemma"):
        server.state.jobsets[("training", name)] = {
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": "training",
                         "labels": {"app.kubernetes.io/managed-by": "accelstack"}}}
    assert complete(["workload", "--outputs", str(out), "describe"], "ll") == [
        "llama-70b", "llama-8b"]


def test_an_unreachable_cluster_gives_no_names(tmp_path: Path, server: FakeApiServer) -> None:
    out = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    server.stop()
    try:
        assert complete(["workload", "--outputs", str(out), "logs"], "") == []
    finally:
        server.__init__()  # type: ignore[misc]
        server.start()


README_LINES = {
    'eval "$(_SUBMIT_COMPLETE=bash_source submit)"': ("bash", "_submit_completion()"),
    'eval "$(_SUBMIT_COMPLETE=zsh_source submit)"': ("zsh", "#compdef submit"),
    "_SUBMIT_COMPLETE=fish_source submit | source": ("fish", "function _submit_completion"),
}


@pytest.mark.parametrize("line", README_LINES)
def test_the_readme_enables_it(line: str) -> None:
    """Each of the lines of docs/submitting.md gets its shell's script from the installed
    `submit` (tests/test_readme_commands.py checks that these are the page's lines)."""
    shell, marker = README_LINES[line]
    assert line in (ROOT / "docs" / "submitting.md").read_text()
    exe = Path(sys.executable).with_name("submit")
    res = subprocess.run([str(exe)], env={**os.environ, "_SUBMIT_COMPLETE": f"{shell}_source"},
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and marker in res.stdout, res.stdout + res.stderr


def test_every_option_has_help_and_summaries_are_whole() -> None:
    """Help text: every option of every command explains itself; command lists show each
    command's whole first sentence."""
    import click
    from click.testing import CliRunner

    missing = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        ctx = click.Context(cmd)
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                walk(sub, [*path, name])
        missing.extend(f"{' '.join(path)} {p.opts}" for p in cmd.params
                       if isinstance(p, click.Option) and not p.help and not p.hidden)
    walk(main, ["submit"])
    assert missing == []
    out = CliRunner().invoke(main, ["workload", "--help"]).output
    commands = out.split("Commands:\n", 1)[1]
    assert "..." not in commands, commands
    assert "why a workload is where it is" in " ".join(commands.lower().split())
    assert "[env var: ACCELSTACK_STACK]" in out
