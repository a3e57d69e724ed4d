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


def _lock(fake: FakeAutoPulumi, name: str, host: str, pid: int) -> None:
    data = json.loads((fake.home / "stacks" / f"{name}.json").read_text())
    data["lock"] = {"id": "l1", "user": "ada", "host": host, "pid": pid,
                    "at": "2026-01-01T00:00:00Z"}
    (fake.home / "stacks" / f"{name}.json").write_text(json.dumps(data))


@pytest.mark.parametrize("holder", ["alive here", "on another machine"])
def test_a_diy_lock_is_cleared_only_when_its_holder_provably_ended(
        fake: FakeAutoPulumi, proj: str, holder: str) -> None:
    import os
    import socket

    # A self-managed backend prints no updateInProgress (stack_list.go); its lock is found
    # when the destroy refuses (diy/lock.go), and named with the CLI's whole message.
    _stack(fake, "old", _tags("2020-01-01T00:00:00Z"))
    here = socket.gethostname()
    _lock(fake, "old", here if holder == "alive here" else "elsewhere",
          os.getpid() if holder == "alive here" else 999999)
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 6, result.output
    assert not any(c[0] == "cancel" for c in fake.commands())
    assert ("old: NOT taken down: stack old is locked, by an update that may still run:\n"
            "error: the stack is currently locked by 1 lock(s). Either wait for the other "
            "process(es) to end or delete the lock file with `pulumi cancel`.\n"
            f"  file://{fake.home}/.pulumi/locks/organization/accelstack/old/l1.json: created "
            f"by ada@{here if holder == 'alive here' else 'elsewhere'} (pid "
            f"{os.getpid() if holder == 'alive here' else 999999}) at 2026-01-01T00:00:00Z\n"
            "If that process has ended, clear the lock with `pulumi cancel --yes --stack old` "
            "(run in the project's .accelstack/runs), then run this again\n") in result.stderr
    assert fake.stacks == ["old"]


def test_a_dead_holders_diy_lock_is_cleared_and_the_stack_taken_down(
        fake: FakeAutoPulumi, proj: str) -> None:
    import socket

    _stack(fake, "old", _tags("2020-01-01T00:00:00Z"))
    _lock(fake, "old", socket.gethostname(), 999999)
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 0, result.output
    assert (f"stack old is locked by a process that has ended (pid 999999 on "
            f"{socket.gethostname()}): `pulumi cancel` deletes its lock") in result.stderr
    assert ["cancel", "--yes", "--stack", "old"] in fake.commands()
    assert fake.stacks == [] and fake.cloud == []


def test_the_backend_filters_by_tag_and_no_other_stack_is_read(
        fake: FakeAutoPulumi, proj: str) -> None:
    for i in range(3):
        _stack(fake, f"prod-{i}", {"team": "infra"})
    _stack(fake, "old", _tags("2020-01-01T00:00:00Z"))
    result = CliRunner().invoke(main, ["reap", "--dry-run", "--project-dir", proj])
    assert result.exit_code == 0, result.output
    cmds = fake.commands()
    assert ["stack", "ls", "--json", "--tag", "accelstack:ephemeral=true"] in cmds
    assert [c for c in cmds if c[:3] == ["stack", "tag", "ls"]] == [
        ["stack", "tag", "ls", "--json", "--stack", "old"]]


@pytest.mark.parametrize("command", [["reap"], ["run", "v5e-spot", "--name", "x",
                                                "--workload", "x", "--accelerator", "v5e-16",
                                                "--image", "python:3.12"]])
def test_a_cli_older_than_the_floor_is_refused_before_anything(
        fake: FakeAutoPulumi, proj: str, command: list[str]) -> None:
    fake.faults(version="3.210.0")
    result = CliRunner().invoke(main, [*command, "--project-dir", proj])
    assert result.exit_code == 1, result.output
    assert result.stderr.endswith(
        "Error: pulumi CLI 3.210.0 is older than 3.211.0, the oldest `submit run` and `submit "
        "reap` work with (stack tags and `stack ls --tag` on every backend); upgrade it "
        "(https://www.pulumi.com/docs/install/)\n")
    assert fake.commands() == []


POOL = "gcp:container/nodePool:NodePool"
POOL_INPUTS = {"project": "my-ml-project", "location": "us-west4",
               "cluster": "projects/my-ml-project/locations/us-west4/clusters/v5e-spot",
               "name": "v5litepod-16"}
# terraform-provider-google resource_container_node_pool.go (the importer's ReplaceVars).
POOL_ID = "projects/my-ml-project/locations/us-west4/clusters/v5e-spot/nodePools/v5litepod-16"


def _killed_create(fake: FakeAutoPulumi, name: str, rtype: str, inputs: dict[str, str],
                   provider_id: str | None) -> str:
    """A stack whose last resource's create a killed CLI left pending; ``provider_id`` is
    the resource's ID in the cloud, None if the create never reached it."""
    _stack(fake, name, _tags("2020-01-01T00:00:00Z"))
    urn = f"urn:pulumi:{name}::accelstack::{rtype}::v5litepod-16"
    data = json.loads((fake.home / "stacks" / f"{name}.json").read_text())
    data.update(pending=[urn], inputs={urn: inputs})
    (fake.home / "stacks" / f"{name}.json").write_text(json.dumps(data))
    if provider_id is not None:
        (fake.home / "cloud.json").write_text(json.dumps(fake.cloud + [urn]))
        (fake.home / "ids.json").write_text(json.dumps({urn: provider_id}))
    return urn


@pytest.mark.parametrize("in_cloud", [True, False])
def test_a_killed_create_of_a_node_pool_is_read_by_its_id_and_taken_down(
        fake: FakeAutoPulumi, proj: str, in_cloud: bool) -> None:
    urn = _killed_create(fake, "old", POOL, POOL_INPUTS, POOL_ID if in_cloud else None)
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 0, result.output
    assert [POOL, "v5litepod-16", POOL_ID, "--yes", "--skip-preview", "--generate-code=false",
            "--protect=false", "--color", "never", "--stack", "old"] in [
        c[1:] for c in fake.commands() if c[0] == "import"]
    said = (f"  {urn}: exists ({POOL_ID}); imported, the destroy deletes it" if in_cloud
            else f"  {urn}: nothing at {POOL_ID}; its create never reached the cloud")
    assert said in result.stderr
    assert "  pending creates of old cleared (`pulumi refresh --clear-pending-creates`)" in (
        result.stderr)
    assert f"{3 if in_cloud else 2} resources deleted, stack old removed" in result.stderr
    assert fake.stacks == [] and fake.cloud == []


def test_a_killed_create_of_a_type_without_an_id_rule_keeps_the_stack(
        fake: FakeAutoPulumi, proj: str) -> None:
    urn = _killed_create(fake, "old", "gcp:compute/address:Address",
                         {"project": "my-ml-project", "region": "us-west4",
                          "name": "v5litepod-16"}, "projects/my-ml-project/x")
    result = CliRunner().invoke(main, ["reap", "--project-dir", proj])
    assert result.exit_code == 6, result.output
    assert not any(c[0] in ("import", "refresh") for c in fake.commands())
    assert (f"old: NOT taken down: stack old is not removed: a create was cut off (the "
            f"process running it was killed), and the resource may exist and bill:\n  "
            f"{urn}\n") in result.stderr
    assert fake.stacks == ["old"] and fake.cloud == [urn]
