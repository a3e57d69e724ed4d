"""`submit run` end to end in this process: the Automation API against the fake `pulumi`
(tests/fakes/pulumi_engine.py, checked against the CLI's documented behaviour in
tests/test_fake_pulumi_auto.py) and the work against the fake API server. Every path ends
with the fake cloud empty and the stack removed, or says exactly what is left.

Signals (Ctrl-C once and twice, SIGTERM) and a killed process need a process of their
own: tests/test_ephemeral_signals.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ephemeral_env import finish, installed, project, run_argv, run_cli
from fake_apiserver import FakeApiServer, Fault
from fakes.pulumi_auto import FakeAutoPulumi
from submit.ephemeral import plan as pl


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         server: FakeApiServer) -> FakeAutoPulumi:
    return installed(tmp_path, monkeypatch, server)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return project(tmp_path)


def test_success_creates_runs_and_takes_everything_down(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    finish(server, "Completed")
    code, err = run_cli(*run_argv(proj))
    assert code == 0, err
    assert fake.cloud == [] and fake.stacks == []
    # Off a terminal, one line per finished resource (here the engine runs them one by one).
    assert [ln.split("] ", 1)[1] for ln in err.splitlines() if "created" in ln] == [
        f"up: {n} of {n} created" for n in (1, 2, 3, 4)] + ["up: 4 of 4 created"]
    assert "workload train in namespace training (queue main)" in err
    assert "train: " in err and "Completed" in err
    assert "4 resources deleted, stack train removed" in err
    assert err.endswith("run train: exit 0 (the work succeeded)\n")
    # The stack goes with `stack rm` without --force: Pulumi refuses it while resources
    # remain, so the state never lets go of a live resource.
    assert ["stack", "rm", "--yes", "train"] in fake.commands()
    assert not any("--force" in c for c in fake.commands())
    # The stack was born with its expiry, owner and command before `up` ran.
    cmds = fake.commands()
    up = next(i for i, c in enumerate(cmds) if c[0] == "up")
    expires = next(i for i, c in enumerate(cmds) if c[:4] == ["stack", "tag", "set",
                                                                pl.TAG_EXPIRES])
    assert expires < up
    config = json.loads(next(c for c in cmds if c[:2] == ["config", "set-all"])[5])
    assert config["accelstack:clusterName"] == {"value": "train", "secret": False}
    assert config["accelstack:deletionProtection"] == {"value": "false", "secret": False}
    assert config["accelstack:region"] == {"value": "us-west4", "secret": False}
    # what reached the cluster: the JobSet, rendered against the fresh outputs
    [(ns, name)] = list(server.state.jobsets)
    assert (ns, name) == ("training", "train")


def test_the_work_fails_exit_3_and_still_tears_down(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    finish(server, "Failed")
    code, err = run_cli(*run_argv(proj))
    assert code == 3, err
    assert fake.cloud == [] and fake.stacks == []
    assert "train failed: Failed: jobset failed" in err
    assert err.endswith("run train: exit 3 (the work failed)\n")


def test_up_fails_part_way_exit_5_and_takes_down_what_was_made(
        fake: FakeAutoPulumi, proj: Path) -> None:
    fake.faults(upFailAt=2, upFailMessage="googleapi: Error 403: TPU quota exceeded")
    code, err = run_cli(*run_argv(proj))
    assert code == 5, err
    assert "pulumi up failed: cluster (Cluster): googleapi: Error 403: TPU quota exceeded" in err
    assert "2 resources deleted, stack train removed" in err  # the stack and the network
    assert fake.cloud == [] and fake.stacks == []


def test_a_transient_destroy_failure_is_retried_with_a_refresh(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pl, "RETRY_DELAYS", (0.0, 0.0, 0.0))
    fake.faults(destroyFails=1)
    finish(server)
    code, err = run_cli(*run_argv(proj))
    assert code == 0, err
    assert ("destroy of train refused for now (v5litepod-16 (NodePool): googleapi: Error "
            "503: The service is currently unavailable.)") in err
    destroys = [c for c in fake.commands() if c[0] == "destroy"]
    assert ["--refresh" in c for c in destroys] == [False, True]
    assert fake.cloud == [] and fake.stacks == []


def test_a_lasting_destroy_failure_exits_6_and_prints_the_clean_up_command(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    fake.faults(destroyFails=9, destroyFailMessage="googleapi: Error 400: The network "
                "resource 'net' is already being used by 'fw'")
    finish(server)
    code, err = run_cli(*run_argv(proj))
    assert code == 6, err
    assert len([c for c in fake.commands() if c[0] == "destroy"]) == 1  # not transient
    assert f"take it down with:\n  submit reap --project-dir {proj} train\n" in err
    assert fake.stacks == ["train"]  # the state still holds what is left
    assert len(fake.cloud) == 4


def test_a_lost_cluster_connection_exits_5_and_tears_down(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    # The JobSet is applied, then every request the run makes fails (the API server gone).
    def lose() -> None:
        import threading
        import time

        def cut() -> None:
            while not server.state.jobsets:
                time.sleep(0.02)
            server.state.faults = [Fault(503, "connection lost")] * 200
        threading.Thread(target=cut, daemon=True).start()
    lose()
    code, err = run_cli(*run_argv(proj))
    assert code == 5, err
    assert "lost the cluster while waiting" in err
    assert fake.cloud == [] and fake.stacks == []


def test_keep_leaves_it_up_and_prints_the_command(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    finish(server)
    code, err = run_cli(*run_argv(proj, "--keep"))
    assert code == 0, err
    assert f"take it down with:\n  submit reap --project-dir {proj} train\n" in err
    assert fake.stacks == ["train"] and len(fake.cloud) == 4
    # The run's stack config lives beside the project, never in stacks/ (where CI's
    # per-stack jobs and the offline preview would take it for a stack).
    assert sorted(p.name for p in (proj / "stacks").iterdir()) == ["Pulumi.v5e-spot.yaml"]
    assert (proj / ".accelstack" / "runs" / "Pulumi.train.yaml").is_file()
    settings = yaml.safe_load((proj / ".accelstack" / "runs" / "Pulumi.yaml").read_text())
    assert (settings["name"], settings["main"], settings["runtime"]["options"]["virtualenv"]) \
        == ("accelstack", "../../infra/", "../../.venv")
    assert "stackConfigDir" not in settings
    code, err = run_cli("reap", "--project-dir", str(proj), "train")
    assert code == 0, err
    assert fake.stacks == [] and fake.cloud == []
    assert not (proj / ".accelstack" / "runs" / "Pulumi.train.yaml").exists()


def test_timeout_exits_4_and_tears_down(fake: FakeAutoPulumi, proj: Path) -> None:
    # 3 s: the shortest whole-second limit whose bound is not $0.00 (a $0 bound is refused).
    code, err = run_cli(*run_argv(proj, "--timeout", "3s"))
    assert code == 4, err
    assert fake.cloud == [] and fake.stacks == []


def test_a_backend_without_stack_tags_stops_before_anything_is_created(
        fake: FakeAutoPulumi, proj: Path) -> None:
    fake.faults(tagsUnsupported=True)
    code, err = run_cli(*run_argv(proj))
    # Refused before `up` (plan.Exit.ERROR), not an infrastructure failure: the stack the
    # run had just made is removed again, and nothing else was made.
    assert code == 1, err
    assert "prepare: preparing stack train: error: stack tags not supported in diy mode" in err
    assert not any(c[0] == "up" for c in fake.commands())
    assert ["stack", "rm", "--yes", "train"] in fake.commands()
    assert fake.cloud == [] and fake.stacks == []
    assert err.endswith("run train: exit 1 (refused before `up`: nothing was made)\n")


def test_a_live_run_of_the_same_name_is_never_shared(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    finish(server)
    code, _ = run_cli(*run_argv(proj, "--keep"))
    assert code == 0
    import os
    import socket

    data = fake.stack("train")
    assert data is not None
    # As if another live process on this machine (this test's own parent) held it.
    data["tags"][pl.TAG_RUN] = f"train-x u@{socket.gethostname()} pid {os.getppid()}"
    (fake.home / "stacks" / "train.json").write_text(json.dumps(data))
    code, err = run_cli(*run_argv(proj))
    assert code == 1
    assert "\nError: stack train is in use by run train-x (pid" in err
    assert not any(c[0] == "destroy" for c in fake.commands())
    assert fake.stacks == ["train"]


def test_a_rerun_after_a_crash_resumes_the_same_stack(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    finish(server)
    code, _ = run_cli(*run_argv(proj, "--keep"))
    data = fake.stack("train")
    assert data is not None
    # The holder died mid-up: its pid is gone and its DIY lock is left behind.
    data["tags"][pl.TAG_RUN] = "train-old u@" + __import__("socket").gethostname() + " pid 999999"
    data["lock"] = {"id": "old", "user": "u", "host": __import__("socket").gethostname(),
                    "pid": 999999, "at": "2026-01-01T00:00:00Z"}
    (fake.home / "stacks" / "train.json").write_text(json.dumps(data))
    server.state.jobsets.clear()
    finish(server)
    code, err = run_cli(*run_argv(proj))
    assert code == 0, err
    assert "resuming stack train, left by run train-old" in err
    # A self-managed backend: no updateInProgress; `up` finds the lock, whose holder (this
    # machine, pid 999999) is gone, so it is cleared and `up` runs again.
    assert "stack train is locked by a process that has ended (pid 999999 on " in err
    assert "`pulumi cancel` deletes its lock" in err
    cmds = fake.commands()
    assert ["cancel", "--yes", "--stack", "train"] in cmds
    assert [c for c in cmds if c[:2] == ["stack", "init"]] == [["stack", "init", "train"]]
    assert fake.stacks == [] and fake.cloud == []


def test_bad_input_exits_2_before_pulumi_runs(fake: FakeAutoPulumi, proj: Path) -> None:
    cases = [
        (run_argv(proj, name="Bad_Name"), "Invalid value for '--name': 'Bad_Name' is not a run "
         "name: 1-24 lowercase letters"),
        (run_argv(proj, "--set", "clusterName=x"), "Invalid value for '--set': "
         "accelstack:clusterName is set by `submit run`"),
        (["run", "nope", "--project-dir", str(proj), "--workload", "w", "--accelerator",
          "v5e-16", "--image", "i"], f"Invalid value for 'STACK': {proj}/stacks/Pulumi.nope.yaml: "
         "no such stack file"),
        (["run", "v5e-spot", "--project-dir", str(proj)], "give the work as one of"),
        (run_argv(proj, "--num-slices", "0"), "Invalid value for '--num-slices'"),
    ]
    for argv, message in cases:
        code, err = run_cli(*argv)
        assert code == 2, (argv, err)
        assert message in err, err
    assert fake.calls == []


def test_run_takes_the_options_of_workload_create_and_no_name_collides() -> None:
    from submit.cli.run import run
    from submit.cli.workload import create

    names = [p.name for p in run.params]
    assert len(names) == len(set(names)), names  # e.g. its --expires-in vs create's --ttl
    create_names = {p.name for p in create.params}
    left_out = {"dry_run", "fmt", "export_file", "replace", "after", "stack_after",
                "outputs_after", "project_dir_after",
                # a standing cluster's maintenance warning (docs/maintenance.md); a run's
                # own cluster lives only as long as the run (--expires-in)
                "runs_for"}
    assert create_names - left_out <= set(names)
    assert {p.opts[0] for p in run.params if p.name in create_names} >= {
        "--workload", "--accelerator", "--image", "--ttl", "--mount", "--pathways"}


def test_without_pulumi_nothing_starts(proj: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code, err = run_cli(*run_argv(proj))
    assert code == 1
    assert err.endswith("Error: the pulumi CLI is not on PATH; install it "
                        "(https://www.pulumi.com/docs/install/)\n")


def test_a_standing_stack_of_that_name_is_never_taken_over(
        fake: FakeAutoPulumi, proj: Path) -> None:
    urn = "urn:pulumi:train::accelstack::gcp:container/cluster:Cluster::cluster"
    (fake.home / "stacks" / "train.json").write_text(json.dumps({
        "config": {}, "tags": {}, "resources": [urn], "outputs": {}, "lock": None,
        "pending": [], "history": [{"kind": "update", "startTime": "2026-01-01T00:00:00.000Z",
                                    "endTime": "2026-01-01T00:10:00.000Z", "message": "",
                                    "environment": {}, "config": {}, "result": "succeeded",
                                    "resourceChanges": {"create": 1}}]}))
    code, err = run_cli(*run_argv(proj))
    assert code == 1
    assert "Error: stack train exists and is not an ephemeral stack; `submit run` never " \
           "takes over a stack it did not make: pick another --name" in err
    assert not any(c[0] in ("up", "destroy") or c[:2] == ["stack", "rm"] or
                   c[:3] == ["stack", "tag", "set"] for c in fake.commands())


def test_a_signal_while_preparing_stops_before_up(fake: FakeAutoPulumi, proj: Path) -> None:
    import signal as sig
    from datetime import datetime, timezone

    from submit.ephemeral.pulumi_process import command
    from submit.ephemeral.runner import Runner, Work

    class Console:
        tty = False
        lines: list[str] = []

        def line(self, text: str) -> None:
            self.lines.append(text)
            if "prepare: stack train: expires" in text:  # the last step of `prepare`
                runner.on_signal(sig.SIGINT)

        def tick(self, text: str) -> None:
            pass

    plan = pl.RunPlan(name="train", project_dir=str(proj), stack_file="stacks/x.yaml",
                      config={}, ttl_seconds=60, keep=False, owner="u@h", command="submit run",
                      created=datetime.now(timezone.utc))
    console = Console()
    runner = Runner(plan, Work("w", lambda outputs: [], 10, 1), console, user="u", host="h",
                    pid=1, alive=lambda pid: False)
    outcome = runner.run(command())
    assert (outcome.signal, outcome.torn_down) == ("SIGINT", True)
    assert pl.exit_code(outcome) == 130
    assert not any(c[0] == "up" for c in fake.commands())
    assert fake.stacks == []


def test_an_image_tag_is_resolved_before_anything_is_made(fake: FakeAutoPulumi,
                                                          proj: Path) -> None:
    # Every worker runs the same bytes: the tag becomes a digest before `up`, and a registry
    # that cannot answer stops the run while it has made nothing (nothing listens on :1).
    # The pulumi CLI is looked for (its version read) first: offline checks, the CLI, then
    # the network.
    argv = run_argv(proj) + ["--image", "127.0.0.1:1/trainer:v1", "--resolve-image"]
    code, err = run_cli(*argv)
    assert code == 1, err
    assert "cannot resolve --image 127.0.0.1:1/trainer:v1 to a digest" in err, err
    assert [c["argv"] for c in fake.calls] == [["version"]]


def _someone_elses(fake: FakeAutoPulumi, tags: dict[str, str], resources: bool) -> list[str]:
    urns = fake.standing("train", [("gcp:container/cluster:Cluster", "cluster")] if resources
                         else [], {})
    data = fake.stack("train")
    assert data is not None
    data["tags"] = tags
    (fake.home / "stacks" / "train.json").write_text(json.dumps(data))
    return urns


def _touched(fake: FakeAutoPulumi) -> list[list[str]]:
    return [c for c in fake.commands() if c[0] in ("up", "destroy", "cancel", "refresh")
            or c[:2] == ["stack", "rm"] or c[:3] == ["stack", "tag", "set"]
            or c[:2] == ["config", "set-all"]]


@pytest.mark.parametrize("fault", ["tagLsFails", "lsFails"])
def test_a_backend_read_error_never_tears_down_a_stack_this_run_did_not_stamp(
        fake: FakeAutoPulumi, proj: Path, fault: str) -> None:
    # A stack of that name exists; reading its tags (or the stack list) fails. The run
    # refuses and touches nothing: teardown only ever takes a stack this run stamped.
    import socket

    tags = {} if fault == "tagLsFails" else {
        pl.TAG_EPHEMERAL: "true", pl.TAG_RUN: f"train-old u@{socket.gethostname()} pid 999999"}
    urns = _someone_elses(fake, tags, resources=True)
    message = "error: could not read the backend: connection reset by peer"
    fake.faults(**{fault: message})
    code, err = run_cli(*run_argv(proj))
    assert code == 1, err
    assert (f"prepare: preparing stack train: {message} (the stack is not this run's: it is "
            "left as it is, not taken down)") in err
    assert _touched(fake) == []
    assert fake.stacks == ["train"] and set(urns) <= set(fake.cloud)


def test_an_empty_stack_someone_else_made_is_never_taken_over(
        fake: FakeAutoPulumi, proj: Path) -> None:
    _someone_elses(fake, {}, resources=False)
    code, err = run_cli(*run_argv(proj))
    assert code == 1, err
    assert "Error: stack train exists and is not an ephemeral stack; `submit run` never " \
           "takes over a stack it did not make: pick another --name" in err
    assert _touched(fake) == []
    assert fake.stacks == ["train"]


def test_a_stack_this_run_made_is_removed_when_preparing_fails(
        fake: FakeAutoPulumi, proj: Path) -> None:
    fake.faults(tagsUnsupported=True)
    code, err = run_cli(*run_argv(proj))
    assert code == 1, err
    assert ("(the stack this run had just made is removed again)") in err
    assert fake.stacks == [] and fake.cloud == []


def test_a_stack_with_a_pending_create_is_not_resumed(
        fake: FakeAutoPulumi, proj: Path) -> None:
    # A killed run's create, pending: `up` would only warn and create it again, and the
    # teardown could not remove the stack (docs/ephemeral.md, "Pending creates").
    import socket

    urn = "urn:pulumi:train::accelstack::gcp:container/cluster:Cluster::cluster"
    _someone_elses(fake, {pl.TAG_EPHEMERAL: "true",
                          pl.TAG_RUN: f"train-old u@{socket.gethostname()} pid 999999"},
                   resources=False)
    data = fake.stack("train")
    assert data is not None
    data["pending"] = [urn]
    (fake.home / "stacks" / "train.json").write_text(json.dumps(data))
    code, err = run_cli(*run_argv(proj))
    assert code == 1, err
    assert ("prepare: stack train is not resumed: a create was cut off (the process running "
            f"it was killed), and the resource may exist and bill:\n  {urn}\n") in err
    assert _touched(fake) == []
