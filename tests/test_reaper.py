"""`submit reap` against the fake `pulumi`: it lists the project's stacks from the backend,
takes down the ephemeral ones whose expiry passed (or those named), never a stack
`submit run` did not make, and says what it could not take down (exit 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ephemeral_env import RESOURCES, project
from fakes.pulumi_auto import FakeAutoPulumi, install
from submit.cli.app import main
from submit.ephemeral import plan as pl


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAutoPulumi:
    f = install(tmp_path, monkeypatch)
    f.program(RESOURCES, {})
    return f


def _stack(fake: FakeAutoPulumi, name: str, tags: dict[str, str], resources: int = 2) -> None:
    urns = [f"urn:pulumi:{name}::accelstack::{t}::{n}" for t, n in RESOURCES[:resources]]
    (fake.home / "stacks" / f"{name}.json").write_text(json.dumps({
        "config": {}, "tags": tags, "resources": urns, "outputs": {}, "history": [],
        "lock": None, "pending": []}))
    (fake.home / "cloud.json").write_text(json.dumps(fake.cloud + urns))


def _tags(expires: str) -> dict[str, str]:
    return {pl.TAG_EPHEMERAL: "true", pl.TAG_EXPIRES: expires, pl.TAG_OWNER: "ada@lab",
            pl.TAG_COMMAND: "submit run v5e-spot --name x"}


@pytest.fixture
def proj(tmp_path: Path) -> str:
    return str(project(tmp_path))


def test_dry_run_lists_and_touches_nothing(fake: FakeAutoPulumi, proj: str) -> None:
    _stack(fake, "old", _tags("2020-01-01T00:00:00Z"))
    _stack(fake, "new", _tags("2999-01-01T00:00:00Z"))
    _stack(fake, "prod", {})
    result = CliRunner().invoke(main, ["reap", "--dry-run", "--project-dir", proj])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [ln.split(":")[0] + ": " + ln.split(": ")[1] for ln in lines] == [
        "keep: new", "take down: old"]
    assert "prod" not in result.stdout
    assert result.stderr == "1 to take down (--dry-run: nothing done)\n"
    assert not any(c[0] in ("destroy", "cancel") or c[:2] == ["stack", "rm"]
                   for c in fake.commands())
    assert fake.stacks == ["new", "old", "prod"]


def test_reaps_the_expired_only_and_never_a_standing_stack(
        fake: FakeAutoPulumi, proj: str) -> None:
    _stack(fake, "old", _tags("2020-01-01T00:00:00Z"))
    _stack(fake, "new", _tags("2999-01-01T00:00:00Z"))
    _stack(fake, "prod", {pl.TAG_EXPIRES: "2020-01-01T00:00:00Z"})
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 0, result.output
    assert fake.stacks == ["new", "prod"]
    assert "2 resources deleted, stack old removed" in result.stderr
    # Named: taken down whatever its expiry; a standing stack is refused.
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj, "prod"])
    assert result.exit_code == 2
    assert result.stderr.endswith("Invalid value for 'RUN': prod: no ephemeral stack of that "
                                  "name in the backend\n")
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj, "new"])
    assert result.exit_code == 0
    assert fake.stacks == ["prod"]


def test_a_failed_take_down_exits_6_and_names_the_stack(
        fake: FakeAutoPulumi, proj: str) -> None:
    fake.faults(destroyFails=9, destroyFailMessage="googleapi: Error 403: Permission denied")
    _stack(fake, "old", _tags("2020-01-01T00:00:00Z"))
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 6
    assert result.stderr.endswith("old: NOT taken down: cluster (Cluster): googleapi: Error "
                                  "403: Permission denied\n")
    assert fake.stacks == ["old"]


def test_a_live_runs_update_is_left_alone(fake: FakeAutoPulumi, proj: str) -> None:
    import os
    import socket

    tags = {**_tags("2999-01-01T00:00:00Z"),
            pl.TAG_RUN: f"x-1 u@{socket.gethostname()} pid {os.getpid()}"}
    fake.faults(backend="service")  # the service says an update is in progress
    _stack(fake, "busy", tags)
    data = json.loads((fake.home / "stacks" / "busy.json").read_text())
    data["lock"] = {"id": "l", "user": "u", "host": "h", "pid": os.getpid(), "at": "t"}
    (fake.home / "stacks" / "busy.json").write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj, "busy"])
    assert result.exit_code == 6
    assert "busy: NOT taken down: an update by a live run is in progress" in result.stderr
    assert not any(c[0] == "cancel" for c in fake.commands())


def test_without_pulumi_it_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   proj: str) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 1
    assert result.stderr == ("Error: the pulumi CLI is not on PATH; install it "
                             "(https://www.pulumi.com/docs/install/)\n")
