"""Every command in docs/ephemeral.md's ```sh blocks runs here, in order, as written, from
the project directory: the Automation API against the fake `pulumi`, the work against the
fake API server. At the end nothing is left up."""

from __future__ import annotations

import re
import shlex
import shutil
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ephemeral_env import program, project
from fake_apiserver import FakeApiServer
from fakes.pulumi_auto import install
from infra.preview import cli as preview
from submit.cli.app import main

DOC = ROOT / "docs" / "ephemeral.md"


def doc_commands() -> list[str]:
    """Each command of the page's sh blocks, a line ending in a backslash joined with the
    next as the shell does."""
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
    text = "\n".join(blocks).replace("\\\n", " ")
    return [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]


def _finish_all(server: FakeApiServer, stop: threading.Event) -> None:
    while not stop.is_set():
        for key, js in list(server.state.jobsets.items()):
            if not (js.get("status") or {}).get("conditions"):
                server.state.jobsets[key] = {**js, "status": {"conditions": [
                    {"type": "Completed", "status": "True"}]}}
        time.sleep(0.05)


def test_the_docs_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               server: FakeApiServer) -> None:
    commands = doc_commands()
    assert [c.split()[:2] for c in commands] == [
        ["submit", "run"], ["submit", "run"], ["submit", "reap"], ["submit", "reap"],
        ["accelstack-preview", "v5e-extra"], ["submit", "workload"], ["submit", "run"]]
    fake = install(tmp_path, monkeypatch)
    program(fake, server)
    proj = project(tmp_path)
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-extra.yaml", proj / "stacks")
    monkeypatch.chdir(proj)
    stop = threading.Event()
    threading.Thread(target=_finish_all, args=(server, stop), daemon=True).start()
    try:
        outputs = []
        for command in commands:
            app = preview.main if command.startswith("accelstack-preview ") else main
            result = CliRunner().invoke(app, shlex.split(command)[1:])
            assert result.exit_code == 0, (command, result.output)
            if command.startswith("accelstack-preview "):
                continue
            outputs.append(result)
    finally:
        stop.set()
    assert "run lr-1: exit 0 (the work succeeded)" in outputs[0].stderr
    assert "take it down with:\n  submit reap --project-dir . big" in outputs[1].stderr
    # "Checking a run before it runs": the plan on stdout, nothing made.
    dry_run = outputs.pop()
    assert dry_run.stdout.startswith("stack: lr-1 (from stacks/Pulumi.v5e-spot.yaml): a "
                                     "cluster named lr-1\n")
    assert "--dry-run: nothing made, nothing contacted" in dry_run.stderr
    # The pools stack's JobSet goes to its own queue (docs/ephemeral.md, "Two shapes").
    pools = outputs.pop()
    assert "kueue.x-k8s.io/queue-name: pools-v5e-extra" in pools.stdout
    assert outputs[2].stdout.startswith("keep: big: expires in 5h59m; owner ")
    assert "stack big removed" in outputs[3].stderr
    assert fake.stacks == [] and fake.cloud == []
