"""The one place that starts `pulumi` for the Automation API, so signals can reach it.

pulumi.automation runs the CLI in a subprocess it keeps to itself (``PulumiCommand.run``);
to cancel an `up` gracefully the runner must send that process SIGINT itself: the CLI's
first SIGINT or SIGTERM cancels (the operations in flight finish, nothing new starts) and
its second terminates (pulumi/pulumi pkg/backend/cancellation_scope.go). The process is
started in its own session, so a Ctrl-C typed in the terminal reaches `submit run` alone
and the runner decides what the CLI gets, exactly once per Ctrl-C (a terminal's SIGINT
would otherwise reach both, and the CLI would take one Ctrl-C as two).

``Command`` keeps ``PulumiCommand``'s contract (LocalWorkspace(pulumi_command=...) takes
it): ``--non-interactive`` first, ``PULUMI_AUTOMATION_API=true``, output read line by line
to the callbacks, a failure raised as pulumi.automation.errors.create_command_error does
(pulumi/automation/_cmd.py in the pulumi SDK this project pins).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import Any, Callable, Mapping, Optional

from pulumi.automation import PulumiCommand
from pulumi.automation._cmd import CommandResult
from pulumi.automation.errors import create_command_error

OnOutput = Callable[[str], Any]


class Command(PulumiCommand):
    def __init__(self) -> None:
        super().__init__()  # runs `pulumi version` and checks it, as the SDK does
        self._lock = threading.RLock()  # taken by signal handlers too (main thread)
        self._live: subprocess.Popen[str] | None = None
        self._sent = 0  # SIGINTs the running process has been sent

    def signal(self, signum: int = signal.SIGINT) -> bool:
        """Send the running `pulumi` process a signal; False when none runs."""
        with self._lock:
            proc = self._live
            if proc is not None and signum == signal.SIGINT:
                self._sent += 1
        if proc is None or proc.poll() is not None:
            return False
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            return False
        return True

    def terminate(self) -> None:
        """Make the running `pulumi` terminate: its second SIGINT does (its first only
        cancels: cancellation_scope.go), so it gets as many as it lacks, apart enough that
        the two are not merged into one pending signal."""
        import time

        while True:
            with self._lock:
                sent = self._sent if self._live is not None else 2
            if sent >= 2:
                return
            if not self.signal(signal.SIGINT):
                return
            if sent == 0:
                time.sleep(0.2)

    def run(self, args: list[str], cwd: str, additional_env: Mapping[str, str],
            on_output: Optional[OnOutput] = None,
            on_error: Optional[OnOutput] = None) -> CommandResult:
        sep = args.index("--") if "--" in args else len(args)
        if "--non-interactive" not in args[:sep]:
            args.insert(0, "--non-interactive")
        env = {**os.environ, **additional_env, "PULUMI_AUTOMATION_API": "true"}
        out: list[str] = []
        err: list[str] = []

        def pump(stream: Any, callback: Optional[OnOutput], lines: list[str]) -> None:
            for line in iter(stream.readline, ""):
                text = line.rstrip()
                if callback is not None:
                    callback(text)
                lines.append(text)
            stream.close()

        with subprocess.Popen([self.command, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=cwd, env=env, encoding="utf-8",
                              errors="replace", start_new_session=True) as proc:
            with self._lock:
                self._live, self._sent = proc, 0
            readers = [threading.Thread(target=pump, args=(proc.stdout, on_output, out)),
                       threading.Thread(target=pump, args=(proc.stderr, on_error, err))]
            try:
                for t in readers:
                    t.start()
                for t in readers:
                    t.join()
                proc.wait()
            except BaseException:
                # A signal handler raised here (a second Ctrl-C, after it sent the CLI its
                # second SIGINT): let the CLI end and its readers drain before Popen's exit
                # closes the pipes, or they read a closed file.
                _drain(proc, readers)
                raise
            finally:
                with self._lock:
                    self._live = None
        result = CommandResult(stdout="\n".join(out), stderr="\n".join(err),
                               code=proc.returncode)
        if proc.returncode != 0:
            raise create_command_error(result)
        return result


def _drain(proc: subprocess.Popen[str], readers: list[threading.Thread]) -> None:
    """Wait for ``proc`` to end (it got its second SIGINT and terminates; after a grace of
    30 s it is killed) and for its readers to reach the end of its output."""
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for t in readers:
        if t.ident is not None:
            t.join()


def run_json(ws: Any, args: list[str]) -> Any:
    """Run a `pulumi` command in ``ws`` (a LocalWorkspace) as the SDK runs its own (its
    PULUMI_HOME and environment) and parse its JSON output."""
    import json

    return json.loads(run(ws, args).stdout)


def run(ws: Any, args: list[str]) -> Any:
    """Run a `pulumi` command the SDK has no method for, in ``ws`` as the SDK runs its own;
    its CommandResult (a CommandError when it fails)."""
    env = {"PULUMI_HOME": ws.pulumi_home} if ws.pulumi_home else {}
    return ws.pulumi_command.run(args, ws.work_dir, {**env, **ws.env_vars})


class Unavailable(Exception):
    """No usable `pulumi` CLI: the message says why and what to do."""


def command() -> Command:
    """The CLI, checked (found on PATH, a version the SDK accepts and not older than
    backend.MIN_CLI), before anything is made."""
    from pulumi.automation.errors import InvalidVersionError

    from submit.ephemeral.backend import version_refusal

    try:
        found = Command()
    except FileNotFoundError:
        raise Unavailable("the pulumi CLI is not on PATH; install it "
                          "(https://www.pulumi.com/docs/install/)") from None
    except InvalidVersionError as e:
        raise Unavailable(f"pulumi CLI: {e}") from None
    refusal = version_refusal(found.version)
    if refusal is not None:
        raise Unavailable(refusal)
    return found


def workspace(project_dir: str, pulumi: Command) -> Any:
    """The LocalWorkspace of ephemeral stacks: the project's own program, its settings written
    in plan.RUNS_DIR (see there why not in the project directory itself)."""
    from pathlib import Path

    import yaml
    from pulumi.automation import LocalWorkspace

    from submit.ephemeral.plan import RUNS_DIR, runs_settings

    settings = yaml.safe_load((Path(project_dir) / "Pulumi.yaml").read_text(encoding="utf-8"))
    runs = Path(project_dir) / RUNS_DIR
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "Pulumi.yaml").write_text(yaml.safe_dump(runs_settings(settings), sort_keys=False))
    return LocalWorkspace(work_dir=str(runs), pulumi_command=pulumi)

