"""`submit run` as its own process, for what only a process can show: Ctrl-C once (a
graceful cancel of `up`, then the teardown), Ctrl-C twice (stop now, print the clean-up
command), SIGTERM while the work runs, and a process killed mid-`up` (only the stack's
tags are left to find it: `submit reap` does).

The fake `pulumi` (tests/fakes/pulumi_engine.py) handles SIGINT as the CLI does (first:
cancel, the resource in flight finishes; second: terminate, the lock left behind) and runs
in its own session, as submit/ephemeral/pulumi_process.py starts it, so a signal reaches it
only through the runner.
"""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from ephemeral_env import Run, finish, installed, project, run_argv, tags
from fake_apiserver import FakeApiServer
from fakes.pulumi_auto import FakeAutoPulumi
from submit.cli.app import main
from submit.ephemeral import plan as pl


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         server: FakeApiServer) -> FakeAutoPulumi:
    return installed(tmp_path, monkeypatch, server)


def _in_flight(fake: FakeAutoPulumi) -> Callable[[], bool]:
    """True while `up` is creating the cluster, where the fault ``hangAt=2`` holds it (the
    fake records a resource in flight as pending, then makes its create request; the two
    before it are done)."""
    def check() -> bool:
        data = fake.stack("train")
        return bool(data and any(u.endswith("Cluster::cluster") for u in data["pending"])
                    and any(u.endswith("Cluster::cluster") for u in fake.cloud))
    return check


def test_ctrl_c_once_cancels_up_gracefully_and_tears_down(
        fake: FakeAutoPulumi, tmp_path: Path) -> None:
    fake.faults(hangAt=2, hangSeconds=2)
    run = Run(run_argv(project(tmp_path)))
    run.until(_in_flight(fake))
    run.proc.send_signal(signal.SIGINT)
    code, err = run.finish()
    assert code == 130, err
    assert "SIGINT: stopping the up, then taking the stack down" in err
    assert "up: ^C received; cancelling." in err  # the CLI's own message, from its events
    # The resource in flight finished (graceful), nothing after it started, and all went.
    assert "3 resources deleted, stack train removed" in err
    assert fake.cloud == [] and fake.stacks == []
    assert err.endswith("run train: exit 130 (interrupted)\n")


def test_ctrl_c_twice_stops_now_and_prints_the_exact_clean_up_command(
        fake: FakeAutoPulumi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.faults(hangAt=2, hangSeconds=60)
    proj = project(tmp_path)
    run = Run(run_argv(proj))
    run.until(_in_flight(fake))
    run.proc.send_signal(signal.SIGINT)
    run.until(lambda: any("SIGINT: stopping" in ln for ln in run.err))
    run.proc.send_signal(signal.SIGINT)
    code, err = run.finish()
    assert code == 6, err
    assert "SIGINT again: stopping now" in err
    command = f"submit reap --project-dir {proj} train"
    assert f"take it down with:\n  {command}\n" in err
    assert not any(c[0] == "destroy" for c in fake.commands())
    # Left: the stack (its tags say who made it and when it expires), what was created and
    # the cluster whose create was cut off (its request was made: it exists, pending).
    assert fake.stacks == ["train"] and len(fake.cloud) == 3
    assert tags(fake, "train")[pl.TAG_EPHEMERAL] == "true"
    # The printed command: the terminated CLI's lock (this machine, its pid gone) is
    # cleared; the pending create keeps the stack, and what to do is said (exit 6).
    monkeypatch.chdir(proj)
    result = CliRunner().invoke(main, command.split()[1:])
    assert result.exit_code == 6, result.output
    assert "stack train is locked by a process that has ended (pid " in result.stderr
    _resolve_pending(fake, proj, result.stderr)
    result = CliRunner().invoke(main, command.split()[1:])
    assert result.exit_code == 0, result.output
    assert fake.stacks == [] and fake.cloud == []


def _resolve_pending(fake: FakeAutoPulumi, proj: Path, said: str) -> None:
    """Do what `submit reap` said of a pending create that exists: import it by its ID
    (`pulumi import TYPE NAME ID --protect=false ...`), then clear the pending creates."""
    import subprocess

    urn = "urn:pulumi:train::accelstack::gcp:container/cluster:Cluster::cluster"
    rid = "projects/p/locations/l/clusters/train"
    assert ("train: NOT taken down: stack train is not removed: a create was cut off (the "
            "process running it was killed), and the resource may exist and bill:\n  "
            f"{urn}\n") in said
    assert ("if it exists: `pulumi import TYPE NAME ID --protect=false --generate-code=false "
            "--yes --stack train` (its type, any name, its provider ID), or delete it in the "
            "cloud; then `pulumi refresh --yes --stack train --clear-pending-creates`") in said
    assert fake.stack("train")["pending"] == [urn]  # type: ignore[index]
    # The cloud's ID for it (the fake reads an import by ID): this program's cluster has no
    # inputs, so the reaper knows no ID and leaves it to the user.
    (fake.home / "ids.json").write_text(json.dumps({urn: rid}))
    for argv in (["import", "gcp:container/cluster:Cluster", "cut-off", rid, "--protect=false",
                  "--generate-code=false", "--yes", "--stack", "train"],
                 ["refresh", "--yes", "--stack", "train", "--clear-pending-creates"]):
        subprocess.run([str(fake.bin / "pulumi"), *argv], cwd=proj / pl.RUNS_DIR, check=True,
                       capture_output=True)


def test_sigterm_while_the_work_runs_tears_down(
        fake: FakeAutoPulumi, tmp_path: Path, server: FakeApiServer) -> None:
    run = Run(run_argv(project(tmp_path)))
    run.until(lambda: bool(server.state.jobsets))
    # The wait phase's first state line ("train: ADMISSION/STATE"); the run's header also
    # holds "train: " and a "/" (its stack file's path), so the shape is matched.
    run.until(lambda: any(re.search(r"\btrain: [A-Za-z]*/[A-Za-z]+", ln) for ln in run.err))
    run.proc.send_signal(signal.SIGTERM)
    code, err = run.finish()
    assert code == 143, err
    assert "SIGTERM: stopping the wait, then taking the stack down" in err
    assert fake.cloud == [] and fake.stacks == []


def test_a_killed_run_is_found_by_its_tags_and_reaped_after_its_expiry(
        fake: FakeAutoPulumi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.faults(hangAt=2, hangSeconds=60)
    proj = project(tmp_path)
    run = Run(run_argv(proj, "--expires-in", "1h"))
    run.until(_in_flight(fake))
    run.proc.kill()
    run.finish()
    # The machine dies: the `pulumi up` it ran (a session of its own) dies with it, mid-create.
    import os

    from submit.cli.run import _alive

    cli = next(c["pid"] for c in fake.calls if "up" in c["argv"])
    os.kill(cli, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _alive(cli) and time.monotonic() < deadline:  # ended (a zombie counts as ended)
        time.sleep(0.05)
    # Left: the stack, what was created, and the cluster whose create was cut off (its
    # request was made: it exists, and the state holds it as a pending create).
    assert fake.stacks == ["train"] and len(fake.cloud) == 3
    monkeypatch.chdir(proj)
    listed = CliRunner().invoke(main, ["reap", "--dry-run"])
    assert listed.exit_code == 0
    assert listed.stdout.startswith("keep: train: expires in 0h59m; owner ")
    # An hour later, as the backend tells it (the fake's state, not this test's clock):
    data = fake.stack("train")
    assert data is not None
    data["tags"][pl.TAG_EXPIRES] = "2020-01-01T00:00:00Z"
    (fake.home / "stacks" / "train.json").write_text(json.dumps(data))
    listed = CliRunner().invoke(main, ["reap", "--dry-run"])
    assert listed.stdout.startswith("take down: train: expired ")
    assert "made by: submit run v5e-spot" in listed.stdout
    assert listed.stderr == "1 to take down (--dry-run: nothing done)\n"
    assert fake.stacks == ["train"]
    # The dead CLI's lock is cleared (this machine, its pid gone); the pending create keeps
    # the stack and is reported (exit 6), and once resolved, the reaper finishes.
    reaped = CliRunner().invoke(main, ["reap"])
    assert reaped.exit_code == 6, reaped.output
    assert "stack train is locked by a process that has ended (pid " in reaped.stderr
    _resolve_pending(fake, proj, reaped.stderr)
    reaped = CliRunner().invoke(main, ["reap"])
    assert reaped.exit_code == 0, reaped.output
    assert fake.stacks == [] and fake.cloud == []


def _in_teardown(fake: FakeAutoPulumi, tmp_path: Path, server: FakeApiServer,
                 step: float) -> Run:
    """A run whose work succeeded, once its teardown has started (each resource's delete
    taking ``step`` seconds)."""
    fake.faults(stepSeconds=step)
    finish(server)
    run = Run(run_argv(project(tmp_path)))
    run.until(lambda: any("teardown: pulumi destroy" in ln for ln in run.err))
    return run


def test_ctrl_c_during_the_teardown_lets_it_finish(
        fake: FakeAutoPulumi, tmp_path: Path, server: FakeApiServer) -> None:
    run = _in_teardown(fake, tmp_path, server, 1.0)
    run.proc.send_signal(signal.SIGINT)
    code, err = run.finish()
    assert "SIGINT: the teardown goes on; SIGINT again stops at once" in err
    assert code == 0, err  # the work succeeded and nothing was cut short
    assert fake.cloud == [] and fake.stacks == []


def test_ctrl_c_twice_during_the_teardown_terminates_the_cli_without_a_traceback(
        fake: FakeAutoPulumi, tmp_path: Path, server: FakeApiServer) -> None:
    # The first Ctrl-C of a teardown is not passed on (the destroy goes on); on the second
    # the CLI gets both SIGINTs it needs to terminate (pkg/backend/cancellation_scope.go:
    # the first cancels, the second terminates), and its pipes are read to their end.
    run = _in_teardown(fake, tmp_path, server, 3.0)
    run.until(lambda: any(" deleted" in ln for ln in run.err))  # the destroy is under way
    run.proc.send_signal(signal.SIGINT)
    run.until(lambda: any("the teardown goes on" in ln for ln in run.err))
    run.proc.send_signal(signal.SIGINT)
    code, err = run.finish()
    assert code == 6, err
    assert "SIGINT again: stopping now" in err
    assert "Traceback" not in err and "ValueError" not in err, err
    # The CLI terminated (the fake's "^C received; terminating"), not a graceful cancel
    # that would have finished the resource in flight and released the lock.
    data = fake.stack("train")
    assert data is not None and data["lock"] is not None, err
    assert fake.cloud, "the destroy was cut off"
