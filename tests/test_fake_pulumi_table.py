"""The fake `pulumi` against its table of behaviours (tests/fakes/pulumi_behaviours.py):
every row is played against the fake executable here, and a row without a check, or a
check without a row, fails. The rows cite the Pulumi CLI source each behaviour comes from."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from fakes.pulumi_auto import FakeAutoPulumi, install
from fakes.pulumi_behaviours import BEHAVIOURS

URN = "urn:pulumi:eph::accelstack::gcp:container/nodePool:NodePool::pool"
POOL_ID = "projects/p/locations/l/clusters/c/nodePools/pool"
POOL_INPUTS = {"project": "p", "location": "l", "cluster": "projects/p/locations/l/clusters/c",
               "name": "pool"}


class Cli:
    def __init__(self, fake: FakeAutoPulumi, cwd: Path) -> None:
        self.fake, self.cwd = fake, cwd

    def __call__(self, *argv: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(self.fake.bin / "pulumi"), "--non-interactive", *argv],
                              cwd=self.cwd, capture_output=True, text=True)
        assert (done.returncode == 0) == ok, (argv, done.stdout, done.stderr)
        return done

    def stack(self, name: str = "eph", **change: Any) -> dict[str, Any]:
        path = self.fake.home / "stacks" / f"{name}.json"
        data: dict[str, Any] = json.loads(path.read_text())
        if change:
            data.update(change)
            path.write_text(json.dumps(data))
        return data


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    fake = install(tmp_path, monkeypatch)
    fake.program([("gcp:container/cluster:Cluster", "cluster"),
                  ("gcp:container/nodePool:NodePool", "pool")], {},
                 made={"pool": (POOL_INPUTS, POOL_ID)})
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: accelstack\nruntime: python\n")
    c = Cli(fake, project)
    c("stack", "init", "eph")
    return c


def _lock(cli: Cli, host: str = "h1", pid: int = 4242) -> None:
    cli.stack(lock={"id": "l1", "user": "ada", "host": host, "pid": pid,
                    "at": "2026-01-01T00:00:00Z"})


def _up_held(cli: Cli, ready: Callable[[dict[str, Any]], bool]) -> subprocess.Popen[bytes]:
    """`pulumi up` held at the node pool's create (fault hangAt), once ``ready(state)``."""
    cli.fake.faults(hangAt=2, hangSeconds=60)
    proc = subprocess.Popen([str(cli.fake.bin / "pulumi"), "up", "--yes", "--stack", "eph"],
                            cwd=cli.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not ready(cli.stack()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def lock_diy(cli: Cli) -> None:
    _lock(cli)
    err = cli("destroy", "--yes", "--stack", "eph", ok=False).stderr
    assert err == (
        "error: the stack is currently locked by 1 lock(s). Either wait for the other "
        "process(es) to end or delete the lock file with `pulumi cancel`.\n"
        f"  file://{cli.fake.home}/.pulumi/locks/organization/accelstack/eph/l1.json: created "
        "by ada@h1 (pid 4242) at 2026-01-01T00:00:00Z\n")


def lock_holder(cli: Cli) -> None:
    proc = _up_held(cli, lambda state: bool(state["lock"]))
    lock = cli.stack()["lock"]
    assert (lock["pid"], lock["host"]) == (proc.pid, socket.gethostname())
    proc.kill()
    proc.wait()
    assert cli.stack()["lock"] == lock  # no deferred unlock after a kill


def lock_service(cli: Cli) -> None:
    cli.fake.faults(backend="service")
    _lock(cli)
    err = cli("up", "--yes", "--stack", "eph", ok=False).stderr
    assert err == "error: [409] Conflict: Another update is currently in progress.\n"


def cancel(cli: Cli) -> None:
    _lock(cli)
    cli("cancel", "--yes", "--stack", "eph")
    assert cli.stack()["lock"] is None
    cli("destroy", "--yes", "--stack", "eph")


def ls_progress(cli: Cli) -> None:
    cli("up", "--yes", "--stack", "eph")
    _lock(cli)
    [row] = json.loads(cli("stack", "ls", "--json").stdout)
    assert "updateInProgress" not in row and "lastUpdate" in row
    cli.fake.faults(backend="service")
    [row] = json.loads(cli("stack", "ls", "--json").stdout)
    assert row["updateInProgress"] is True and "lastUpdate" not in row
    cli.stack(lock=None)
    [row] = json.loads(cli("stack", "ls", "--json").stdout)
    assert row["updateInProgress"] is False and "lastUpdate" in row


def ls_tag(cli: Cli) -> None:
    cli("stack", "init", "other")
    cli("stack", "tag", "set", "team", "a", "--stack", "eph")
    cli("stack", "tag", "set", "team", "b", "--stack", "other")

    def names(*tag: str) -> list[str]:
        rows = json.loads(cli("stack", "ls", "--json", *tag).stdout)
        assert all("tags" not in r for r in rows)
        return [r["name"] for r in rows]

    assert names() == ["eph", "other"]
    assert names("--tag", "team") == ["eph", "other"]
    assert names("--tag", "team=b") == ["other"]
    assert names("--tag", "nope") == []


def tags_diy_old(cli: Cli) -> None:
    cli.fake.faults(tagsUnsupported=True)
    err = cli("stack", "tag", "set", "a", "b", "--stack", "eph", ok=False).stderr
    assert err == "error: stack tags not supported in diy mode\n"


def _killed_mid_create(cli: Cli) -> None:
    # Killed once the create is pending and its request made (the resource exists).
    proc = _up_held(cli, lambda state: URN in state["pending"] and URN in cli.fake.cloud)
    proc.kill()
    proc.wait()
    cli.fake.faults()
    cli("cancel", "--yes", "--stack", "eph")


def pending_create(cli: Cli) -> None:
    _killed_mid_create(cli)
    assert cli.stack()["pending"] == [URN] and URN not in cli.stack()["resources"]
    assert URN in cli.fake.cloud


def pending_kept(cli: Cli) -> None:
    _killed_mid_create(cli)
    cli("destroy", "--yes", "--stack", "eph")
    assert cli.stack()["pending"] == [URN] and URN in cli.fake.cloud
    events = cli.fake.home / "events.txt"
    cli("destroy", "--yes", "--stack", "eph", "--event-log", str(events))
    warnings = [json.loads(ln)["diagnosticEvent"]["message"] for ln in
                events.read_text().splitlines() if "diagnosticEvent" in ln]
    assert warnings[0].startswith("Attempting to deploy or update resources with 1 pending "
                                  f"operations from previous deployment.\n  * {URN}, "
                                  "interrupted while creating\n")


def export_pending(cli: Cli) -> None:
    _killed_mid_create(cli)
    state = json.loads(cli("stack", "export", "--show-secrets", "--stack", "eph").stdout)
    assert state["version"] == 3
    assert state["deployment"]["pending_operations"] == [
        {"resource": {"urn": URN, "type": "gcp:container/nodePool:NodePool", "custom": True,
                      "inputs": POOL_INPUTS},
         "type": "creating"}]


def rm_ignores_pending(cli: Cli) -> None:
    cli("up", "--yes", "--stack", "eph")
    err = cli("stack", "rm", "--yes", "eph", ok=False).stderr
    assert err.startswith("error: 'eph' still has resources; removal rejected. Possible "
                          "actions:\n")
    cli.stack(resources=[], pending=[URN])
    cli("stack", "rm", "--yes", "eph")


def refresh_pending(cli: Cli) -> None:
    _killed_mid_create(cli)
    err = cli("refresh", "--yes", "--stack", "eph", "--skip-pending-creates",
              "--clear-pending-creates", ok=False).stderr
    assert err == "error: cannot set both --skip-pending-creates and --clear-pending-creates\n"
    err = cli("refresh", "--yes", "--stack", "eph", f"--import-pending-creates={URN}",
              ok=False).stderr
    assert err == "error: each URN must be followed by an ID: found an odd number of entries\n"
    cli("refresh", "--yes", "--stack", "eph", f"--import-pending-creates={URN}",
        f"--import-pending-creates={POOL_ID}")
    assert cli.stack()["pending"] == [] and URN not in cli.stack()["resources"]
    cli.stack(pending=[URN])
    cli("refresh", "--yes", "--stack", "eph", "--clear-pending-creates")
    assert cli.stack()["pending"] == []


def refresh_import_drops(cli: Cli) -> None:
    _killed_mid_create(cli)
    # The flag's other spelling: its value in the next argument.
    cli("refresh", "--yes", "--stack", "eph", "--import-pending-creates", URN,
        "--import-pending-creates", POOL_ID)
    assert cli.stack()["pending"] == [] and URN not in cli.stack()["resources"]
    assert URN in cli.fake.cloud


def import_(cli: Cli) -> None:
    _killed_mid_create(cli)
    err = cli("import", "gcp:container/nodePool:NodePool", "p2", POOL_ID + "-x", "--yes",
              "--stack", "eph", ok=False).stderr
    assert err == f"error: resource '{POOL_ID}-x' does not exist\n"
    cli("import", "gcp:container/nodePool:NodePool", "p2", POOL_ID, "--yes", "--stack", "eph")
    mine = "urn:pulumi:eph::accelstack::gcp:container/nodePool:NodePool::p2"
    assert mine in cli.stack()["resources"] and mine in cli.stack()["protected"]
    cli.stack(protected=[])
    cli("destroy", "--yes", "--stack", "eph")
    assert URN not in cli.fake.cloud  # the destroy deleted what the import read


def signals(cli: Cli) -> None:
    proc = _up_held(cli, lambda state: URN in state["pending"])
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert proc.poll() is None  # the first only cancels
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) != 0
    assert cli.stack()["lock"] is not None and cli.stack()["pending"] == [URN]


def version(cli: Cli) -> None:
    cli.fake.faults(version="3.211.0")
    assert cli("version").stdout == "v3.211.0\n"


CHECKS: dict[str, Callable[[Cli], None]] = {
    "lock-diy": lock_diy, "lock-holder": lock_holder, "lock-service": lock_service,
    "cancel": cancel, "ls-progress": ls_progress, "ls-tag": ls_tag,
    "tags-diy-old": tags_diy_old, "pending-create": pending_create,
    "pending-kept": pending_kept, "export-pending": export_pending,
    "rm-ignores-pending": rm_ignores_pending, "refresh-pending": refresh_pending,
    "refresh-import-drops": refresh_import_drops, "import": import_, "signals": signals,
    "version": version}


def test_every_row_has_a_check_and_a_source() -> None:
    assert set(CHECKS) == set(BEHAVIOURS)
    for what, source in BEHAVIOURS.values():
        assert what and ("pkg/" in source or "sdk/" in source), source


@pytest.mark.parametrize("row", sorted(BEHAVIOURS))
def test_the_fake_does_what_its_table_says(cli: Cli, row: str) -> None:
    CHECKS[row](cli)
