"""Carry out a local plan: start one process per pod, stream and keep their logs, apply the
JobSet's failure rules (``policy``) and stop everything cleanly.

Each process runs in a session (process group) of its own, so a stop reaches everything it
started: SIGTERM to the group, SIGKILL after the pod's grace period, as the kubelet stops a
container; when a process ends, what is left of its group is killed, as when a container's
main process exits. Ctrl-C (SIGINT) or SIGTERM to this runner stops every group and exits
130 or 143. On Linux each child also dies with the runner (PR_SET_PDEATHSIG), should the
runner itself be killed.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any, Callable

from submit.local import policy as pol
from submit.local.plan import Plan, Process
from submit.cli.output import table

POLL_SECONDS = 0.05
SUMMARY_COLUMNS = (("ATTEMPT", "attempt"), ("PROCESS", "label"), ("HOST", "hostname"),
                   ("EXIT", "exit"), ("DURATION", "duration"), ("LOG", "log"))
_PR_SET_PDEATHSIG = 1


class FreePorts:
    """Distinct free TCP ports on loopback, none handed out twice in one run."""

    def __init__(self) -> None:
        self._given: set[int] = set()

    def __call__(self) -> int:
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in self._given:
                self._given.add(port)
                return port


@dataclass
class Outcome:
    state: str  # Succeeded, Failed or Interrupted
    exit_code: int
    message: str
    restarts: int
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Result:
    state: str
    code: int
    replicated_job: str = ""
    reason: str = ""
    message: str = ""  # the Job's failure message, as onJobFailureMessagePatterns see it
    human: str = ""


@dataclass
class _Running:
    proc: Process
    popen: subprocess.Popen[bytes]
    started: float
    reader: threading.Thread
    log: IO[bytes]
    stopped: bool = False


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Runner:
    def __init__(self, make_plan: Callable[[int], Plan], out: IO[str],
                 base_env: dict[str, str] | None = None) -> None:
        self.make_plan = make_plan
        self.out = out
        self.base_env = dict(os.environ if base_env is None else base_env)
        self._lock = threading.Lock()
        self._signal: int | None = None
        self._rows: list[dict[str, Any]] = []

    # -- output -------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        with self._lock:
            self.out.write(text + "\n")
            self.out.flush()

    def _pump(self, label: str, stream: IO[bytes], log: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            log.write(raw)
            log.flush()
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self._say(f"[{label}] {line}")
        stream.close()

    # -- processes ----------------------------------------------------------------------

    def _start(self, proc: Process, attempt: int) -> _Running:
        env = {**self.base_env, **dict(proc.env)}
        log = open(proc.log, "ab")
        popen = subprocess.Popen(
            list(proc.argv), env=env, cwd=proc.cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        assert popen.stdout is not None
        reader = threading.Thread(target=self._pump, args=(proc.label, popen.stdout, log),
                                  daemon=True)
        reader.start()
        return _Running(proc, popen, time.monotonic(), reader, log)

    def _finish(self, r: _Running, attempt: int) -> int:
        code = pol.exit_status(r.popen.wait())
        _signal_group(r.popen.pid, signal.SIGKILL)  # what the process left behind
        r.reader.join(timeout=5)
        r.log.close()
        self._rows.append({
            "attempt": attempt, "label": r.proc.label, "hostname": r.proc.hostname,
            "exit": f"{code} (stopped)" if r.stopped else str(code),
            "duration": f"{time.monotonic() - r.started:.1f}s", "log": r.proc.log})
        return code

    def _stop(self, running: list[_Running], grace: float, attempt: int) -> None:
        """SIGTERM every group, SIGKILL what is left after the grace period."""
        live = [r for r in running if r.popen.poll() is None]
        for r in live:
            r.stopped = True
            _signal_group(r.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(r.popen.poll() is None for r in live) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        for r in live:
            if r.popen.poll() is None:
                _signal_group(r.popen.pid, signal.SIGKILL)
        for r in running:
            self._finish(r, attempt)

    # -- the workload -------------------------------------------------------------------

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signal = signum

    def run(self) -> Outcome:
        handlers = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                handlers[sig] = signal.signal(sig, self._on_signal)
        try:
            return self._run()
        finally:
            for sig, h in handlers.items():
                signal.signal(sig, h)

    def _run(self) -> Outcome:
        attempt = counted = 0
        while True:
            plan = self.make_plan(attempt)
            res = self._attempt(plan)
            if res.state != "Failed":
                return Outcome(res.state, res.code, res.human, attempt, self._rows)
            action, why = plan.policy.on_job_failure(res.replicated_job, res.reason,
                                                     res.message, counted)
            if action == pol.FAIL_JOB_SET:
                return Outcome("Failed", res.code, f"{res.human} ({res.reason}); {why}",
                               attempt, self._rows)
            if action == pol.RESTART_JOB_SET:
                counted += 1
            self._say(f"restarting the workload ({res.human}; {res.reason}; {why}): "
                      f"restart attempt {attempt + 1}")
            attempt += 1

    def _attempt(self, plan: Plan) -> _Result:
        for d in plan.dirs:
            Path(d).mkdir(parents=True, exist_ok=True)
        for path, content in plan.files:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(content)
        attempt = plan.restart_attempt
        # JobSet dependsOn: a replicated job's processes start once the one it depends on
        # is Ready (every process started: local pods have no readiness probe, so running
        # is ready) or Complete (every process exited 0).
        waiting = {rj: (other, status) for rj, other, status in plan.depends_on}
        started: set[str] = set()
        running = [self._start(p, attempt) for p in plan.processes
                   if p.replicated_job not in waiting]
        started.update(p.replicated_job for p in plan.processes if p.replicated_job not in waiting)
        failures: dict[tuple[str, int], int] = {}
        ok: set[str] = set()
        jobs: dict[str, dict[int, list[str]]] = {}
        for p in plan.processes:
            jobs.setdefault(p.replicated_job, {}).setdefault(p.job_index, []).append(p.label)
        while True:
            if self._signal is not None:
                sig = self._signal
                self._say(f"{signal.Signals(sig).name}: stopping every process")
                self._stop(running, plan.grace_seconds, attempt)
                return _Result("Interrupted", 128 + sig,
                               human=f"stopped by {signal.Signals(sig).name}")
            for r in [r for r in running if r.popen.poll() is not None]:
                running.remove(r)
                code = self._finish(r, attempt)
                p = r.proc
                if code == 0:
                    ok.add(p.label)
                    continue
                action, index = plan.policy.job(p.replicated_job).pod_action(code, p.container)
                key = (p.replicated_job, p.job_index)
                reason = None
                if action == "FailJob":
                    reason = pol.POD_FAILURE_POLICY
                elif action == "Count":
                    failures[key] = failures.get(key, 0) + 1
                    if failures[key] > plan.policy.job(p.replicated_job).backoff_limit:
                        reason = pol.BACKOFF_LIMIT_EXCEEDED
                if reason is None:  # the Job replaces the pod
                    self._say(f"[{p.label}] exited {code}; the Job replaces the pod")
                    running.append(self._start(p, attempt))
                    continue
                message = pol.job_failure_message(reason, p.container, p.pod_name, code, index)
                self._say(f"[{p.label}] exited {code}: Job {plan.jobset}-{p.replicated_job}-"
                          f"{p.job_index} failed ({reason}); stopping the other processes")
                self._stop(running, plan.grace_seconds, attempt)
                return _Result("Failed", code, p.replicated_job, reason, message,
                               f"process {p.label} exited {code}")
            for rj, (other, status) in list(waiting.items()):
                complete = all(p.label in ok for p in plan.processes if p.replicated_job == other)
                if other in started and (status == "Ready" or complete):
                    del waiting[rj]
                    started.add(rj)
                    self._say(f"starting {rj}: {other} is {status}")
                    running += [self._start(p, attempt) for p in plan.processes
                                if p.replicated_job == rj]
            done = {rj: [all(label in ok for label in labels) for labels in by_job.values()]
                    for rj, by_job in jobs.items()}
            if plan.policy.succeeded(done):
                human = "the success policy is met" if running else "every process exited 0"
                self._stop(running, plan.grace_seconds, attempt)
                return _Result("Succeeded", 0, human=human)
            time.sleep(POLL_SECONDS)


def summary(outcome: Outcome) -> str:
    return table(outcome.rows, SUMMARY_COLUMNS)
