"""What the `submit run` tests share: a project directory with a stack file, the fake
`pulumi` (tests/fakes/pulumi_engine.py) whose `up` leaves an outputs contract pointing at the
fake API server, and a stand-in for the cluster's controllers that finishes the JobSets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from fakes.pulumi_auto import FakeAutoPulumi, install
from submit.cli.app import main

RESOURCES = [("gcp:compute/network:Network", "net"),
             ("gcp:container/cluster:Cluster", "cluster"),
             ("gcp:container/nodePool:NodePool", "v5litepod-16")]
WORKLOAD = ["--workload", "train", "--accelerator", "v5e-16", "--image", "python:3.12",
            "--command", "python train.py"]


def project(tmp_path: Path) -> Path:
    """A Pulumi project as the repository's (Pulumi.yaml, stacks/), in tmp_path."""
    d = tmp_path / "project"
    (d / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", d / "Pulumi.yaml")
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-spot.yaml", d / "stacks")
    return d


def program(fake: FakeAutoPulumi, server: FakeApiServer) -> None:
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["kubeconfig"] = server.kubeconfig()
    fake.program(RESOURCES, data)


def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              server: FakeApiServer) -> FakeAutoPulumi:
    """The fake `pulumi` installed for the test, its `up` programmed as ``program`` says."""
    fake = install(tmp_path, monkeypatch)
    program(fake, server)
    return fake


def run_cli(*argv: str) -> tuple[int, str]:
    """`submit ARGV` in this process: its exit code and stderr; a traceback fails the test."""
    result = CliRunner().invoke(main, list(argv))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.stderr


def finish(server: FakeApiServer, state: str = "Completed", after: float = 0.0,
           name: str | None = None) -> threading.Thread:
    """Play JobSet's controller: once a JobSet is applied, mark it ``state``."""
    def run() -> None:
        # Bounded, with room for a loaded machine: with the suite on every core, a run's
        # `up` and submit alone have taken 27 s (the JobSet came after a 30 s bound).
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            for key, js in list(server.state.jobsets.items()):
                if name is not None and key[1] != name:
                    continue
                if not (js.get("status") or {}).get("conditions"):
                    time.sleep(after)
                    done = {**js, "status": {"conditions": [
                        {"type": state, "status": "True", "reason": state,
                         "message": f"jobset {state.lower()}"}]}}
                    server.state.jobsets[key] = done
                    return
            time.sleep(0.02)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def run_argv(proj: Path, *extra: str, name: str = "train") -> list[str]:
    return ["run", "v5e-spot", "--project-dir", str(proj), "--name", name,
            "--interval", "1s", *extra, *WORKLOAD]


def tags(fake: FakeAutoPulumi, name: str) -> dict[str, Any]:
    data = fake.stack(name)
    assert data is not None
    tags_: dict[str, Any] = data["tags"]
    return tags_


class Run:
    """`submit run ...` in a process of its own, its stderr collected as it comes."""

    def __init__(self, argv: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from submit.cli.app import main; main()", *argv],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.err: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)

    def until(self, ready: Callable[[], bool], timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("never ready:\n" + "".join(self.err))
            time.sleep(0.05)

    def finish(self, timeout: float = 120) -> tuple[int, str]:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code, "".join(self.err)
