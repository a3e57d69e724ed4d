"""Carry out a RunPlan: stack up, work submitted and waited for, stack down, whatever happens.

Through pulumi.automation on this project's own program (a LocalWorkspace whose Pulumi.yaml
is the project's, written in plan.RUNS_DIR so run configs stay out of stacks/): select the
run's stack or make it (a stack it did not make is never taken: _prepare), stamp its
tags (expiry first: a killed run is found by the reaper), set its config, ``up``, read the
fresh outputs, submit and wait through submit.api, then ``destroy`` (retrying what the cloud
refuses for a passing reason) and ``remove_stack`` (without --force: Pulumi refuses to drop
a stack that still holds resources, so state never lets go of a live resource).

Signals: the first SIGINT or SIGTERM cancels the phase that runs (an `up` gets one SIGINT,
which the CLI takes as a graceful cancel; a wait stops) and the stack is torn down; a
teardown already running goes on. The second stops at once: the CLI gets its second SIGINT
(it terminates), nothing more runs, and the one command that cleans up is printed.
"""

from __future__ import annotations

import signal
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Protocol, Sequence

from infra.record import record, replace
from submit.ephemeral import plan as pl
from submit.ephemeral.backend import cli_message, locked
from submit.ephemeral.events import Tally
from submit.ephemeral.teardown import (Stop, lock_note, pending_left, take_down,
                                       unlock_if_gone)


class Console(Protocol):
    """Where progress goes: ``line`` stays, ``tick`` is a terminal's rewritten line; off a
    terminal (``tty`` False: a pipe, a CI log) each finished resource is a line instead."""

    tty: bool

    def line(self, text: str) -> None: ...
    def tick(self, text: str) -> None: ...


Interrupted = Stop  # raised by the signal handler: never inside `up`, only on a 2nd signal


class InUse(Exception):
    """The stack is held by a run that is still alive."""


@record
class Work:
    """What runs on the fresh stack: each entry renders one workload's objects."""

    describe: str
    render: Callable[[Any], list[list[dict[str, Any]]]]  # StackOutputs -> workloads
    timeout: float
    interval: float
    logs_dir: str | None = None


class Runner:
    def __init__(self, plan: pl.RunPlan, work: Work, console: Console, *,
                 user: str, host: str, pid: int, alive: Callable[[int], bool],
                 sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.plan, self.work, self.console = plan, work, console
        self.user, self.host, self.pid, self.alive = user, host, pid, alive
        self.sleep, self.now = sleep, now
        self.started = now()
        self.phase = "prepare"
        self.signals: list[str] = []
        self.command: Any = None
        self.stack: Any = None
        self._tally: Tally | None = None
        self._tally_lock = threading.Lock()

    # -- signals -----------------------------------------------------------------------
    def on_signal(self, signum: int, _frame: Any = None) -> None:
        name = "SIGINT" if signum == signal.SIGINT else "SIGTERM"
        self.signals.append(name)
        if len(self.signals) == 1:
            if self.phase == "teardown":
                self.console.line(f"{name}: the teardown goes on; {name} again stops at once "
                                  "(and leaves the stack up)")
                return
            self.console.line(f"{name}: stopping the {self.phase}, then taking the stack down "
                              f"({name} again stops at once and leaves it up)")
            if self.phase in ("prepare", "up") and self.command is not None:
                self.command.signal(signal.SIGINT)  # the CLI's graceful cancel
            elif self.phase in ("submit", "wait"):
                raise Interrupted()
            return
        self.console.line(f"{name} again: stopping now")
        if self.command is not None:
            # The CLI's second SIGINT: it terminates. During a teardown (or a wait) it had
            # not been sent the first, so it gets both.
            self.command.terminate()
        raise Interrupted()

    @property
    def stopped(self) -> bool:
        return len(self.signals) >= 2

    # -- progress ----------------------------------------------------------------------
    def _elapsed(self) -> str:
        s = int(self.now() - self.started)
        return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"

    def say(self, text: str) -> None:
        self.console.line(f"[{self._elapsed()}] {self.phase}: {text}")

    def _on_event(self, event: Any) -> None:
        with self._tally_lock:
            tally = self._tally
            if tally is None or not tally.add(event, self.now()):
                return
            text = tally.line(self.now())
            news = tally.messages[-1:] if getattr(event, "stdout_event", None) else []
            ended = (getattr(event, "res_outputs_event", None) is not None
                     or getattr(event, "res_op_failed_event", None) is not None)
        for message in news:
            self.say(message)
        if self.console.tty:
            self.console.tick(f"{self.phase}: {text}")
        elif ended:
            self.say(text)

    # -- phases ------------------------------------------------------------------------
    def run(self, command: Any) -> pl.Outcome:
        """Carry the plan out with ``command`` (pulumi_process.Command); the teardown runs
        whatever happened before it, unless --keep or a second signal."""
        outcome = pl.Outcome()
        self.command = command
        try:
            self._prepare()
            self._next("up")
            outputs = self._up()
            self._next("submit")
            cluster, submitted = self._submit(outputs)
            self._next("wait")
            outcome = self._wait(cluster, submitted)
        except Interrupted:
            outcome = replace(outcome, signal=self.signals[0])
        except InUse:
            raise
        except _PrepareFailure as e:
            self.say(str(e))
            outcome = replace(outcome, prepare_error=str(e),
                              signal=self.signals[0] if self.signals else None)
        except _InfraFailure as e:
            self.say(str(e))
            outcome = replace(outcome, infra_error=str(e),
                              signal=self.signals[0] if self.signals else None)
        except Exception as e:  # whatever broke, the stack still comes down
            message = getattr(e, "message", None) or str(e) or e.__class__.__name__
            self.say(f"failed: {message}")
            outcome = replace(outcome, infra_error=message,
                              signal=self.signals[0] if self.signals else None)
        if self.plan.keep:
            self.phase = "keep"
            self.say(f"--keep: the stack stays up; take it down with: "
                     f"{pl.teardown_command(self.plan)}")
            return replace(outcome, kept=True)
        return replace(outcome, torn_down=self._teardown())

    def _next(self, phase: str) -> None:
        """Start ``phase``, unless a signal came while the last one finished (a signal
        during `prepare` or at the very end of `up` must not let the next phase start)."""
        if self.signals:
            raise Interrupted()
        self.phase = phase

    def _prepare(self) -> None:
        """Select the run's stack, or make it, and stamp it as this run's own. Teardown may
        touch the stack only once it is this run's (``self.stack`` set): made by this run
        (`stack init`), or an ephemeral stack whose holder is gone, once this run's tags are
        on it. A stack someone else made (no ephemeral tag), empty or not, is refused and
        never touched; so is any stack whose tags cannot be read."""
        from pulumi.automation import Stack
        from pulumi.automation.errors import CommandError, StackNotFoundError

        from submit.ephemeral.pulumi_process import workspace

        made = False
        try:
            ws = workspace(self.plan.project_dir, self.command)
            try:
                stack = Stack.select(self.plan.name, ws)
            except StackNotFoundError:
                stack = Stack.create(self.plan.name, ws)
                made = True
                self.stack = stack  # this run made it: its own from here on
            if not made:
                self._take_over(stack, ws)
            run_id = pl.run_id(self.plan.name, self.user, self.host, self.pid,
                               self.plan.created)
            tags = pl.stack_tags(self.plan, run_id)
            for key, value in tags.items():
                stack.set_tag(key, value)
            self.stack = stack  # stamped: this run's own
            stack.set_all_config_json(pl.config_json(self.plan.config))
            self.say(f"stack {self.plan.name}: expires {tags[pl.TAG_EXPIRES]}"
                     f" (tags {pl.TAG_EXPIRES}, {pl.TAG_OWNER})")
        except CommandError as e:
            if self.stack is None:
                left = "the stack is not this run's: it is left as it is, not taken down"
            elif made:
                left = "the stack this run had just made is removed again"
            else:
                left = "the stack, stamped as this run's, is taken down"
            raise _PrepareFailure(f"preparing stack {self.plan.name}: {cli_message(e)} "
                                  f"({left})") from None

    def _take_over(self, stack: Any, ws: Any) -> None:
        """Decide whether an existing stack may become this run's: only an ephemeral stack
        whose holder is gone (resumed). Raises InUse otherwise; a backend read error
        (CommandError) leaves it untouched."""
        tags = stack.list_tags()
        if tags.get(pl.TAG_EPHEMERAL) != "true":
            raise InUse(f"stack {self.plan.name} exists and is not an ephemeral stack; "
                        "`submit run` never takes over a stack it did not make: pick another "
                        "--name")
        held = pl.holder(tags)
        if held is not None and self._holder_alive(held, tags):
            raise InUse(f"stack {self.plan.name} is in use by run {held.run_id} "
                        f"(pid {held.pid} on {held.host}); wait for it, or pick another --name")
        left = f", left by run {held.run_id}" if held is not None else ""
        pending = pending_left(stack, self.plan.name, "is not resumed")
        if pending is not None:
            raise _PrepareFailure(pending)
        self.say(f"resuming stack {self.plan.name}{left}")
        # Pulumi Cloud says an update is in progress (`stack ls --json` updateInProgress);
        # a self-managed backend does not, and its lock is found when `up` refuses (_up).
        if any(s.name == self.plan.name and s.update_in_progress for s in ws.list_stacks()):
            self.say("its last update was cut off: `pulumi cancel` (the holder is gone)")
            stack.cancel()

    def _holder_alive(self, held: pl.Holder, tags: dict[str, str]) -> bool:
        if held.host == self.host and held.pid == self.pid:
            return False
        return not pl.holder_gone(held, tags, self.host, self.alive,
                                  datetime.now(timezone.utc))

    def _up(self) -> Any:
        from pulumi.automation.errors import CommandError

        self.say("pulumi up")
        for attempt in (1, 2):
            tally = self._tally = Tally("created")
            try:
                result = self.stack.up(on_event=self._on_event, color="never",
                                       message=f"submit run {self.plan.name}")
                break
            except CommandError as e:
                failure = tally.failure() or cli_message(e)
                if self.signals:
                    raise Interrupted() from None
                if not locked(failure):
                    raise _InfraFailure(f"pulumi up failed: {failure}") from None
                # A self-managed backend's lock, left by a killed holder (backend.py).
                if attempt == 2 or not unlock_if_gone(self.stack, self.plan.name, failure,
                                                      self.say, self.host, self.alive):
                    raise _InfraFailure(lock_note(self.plan.name, failure)) from None
        self.say(tally.line(self.now()))
        outputs = {k: v.value for k, v in result.outputs.items()}
        from submit.cluster.stack_outputs import OutputsError, from_mapping

        try:
            return from_mapping(outputs, f"stack {self.plan.name}")
        except OutputsError as e:
            raise _InfraFailure(str(e)) from None

    def _submit(self, outputs: Any) -> tuple[Any, list[Any]]:
        from submit import api

        try:
            workloads = self.work.render(outputs)
            cluster = api.connect(outputs)
            submitted = []
            for objs in workloads:
                done = api.submit(cluster, objs)
                self.say(f"workload {done.name} in namespace {done.namespace} "
                         f"(queue {done.queue})")
                submitted.append(done)
            return cluster, submitted
        except api.ClusterError as e:
            raise _InfraFailure(f"submitting the work: {e.message}") from None
        except api.BadInput as e:
            raise _InfraFailure(f"the work does not fit the new stack: {e}") from None

    def _wait(self, cluster: Any, submitted: Sequence[Any]) -> pl.Outcome:
        from submit import api

        deadline = self.now() + self.work.timeout
        states: list[str] = []
        for done in submitted:
            def changed(status: Any, name: str = done.name) -> None:
                self.say(f"{name}: {status.admission}/{status.state}"
                         + (f" (restarts {status.restarts})" if status.restarts else ""))
            try:
                status = api.wait(cluster, done.namespace, done.name,
                                  timeout=max(deadline - self.now(), 0.0),
                                  interval=self.work.interval, on_change=changed)
            except api.ClusterError as e:
                raise _InfraFailure(f"lost the cluster while waiting: {e.message}") from None
            self._save_logs(cluster, done)
            if not status.done:
                return pl.Outcome(timed_out=True)
            if status.state != "Completed":
                self.say(f"{done.name} failed: {status.message or status.state}")
            states.append(status.state)
        ok = all(s == "Completed" for s in states)
        return pl.Outcome(work_state="Completed" if ok else "Failed")

    def _save_logs(self, cluster: Any, done: Any) -> None:
        if not self.work.logs_dir:
            return
        from pathlib import Path

        from submit.cluster.kube import KubeError

        out = Path(self.work.logs_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
            pods = cluster.list_pods(done.namespace,
                                     f"jobset.sigs.k8s.io/jobset-name={done.name}")
            for pod in pods:
                name = pod["metadata"]["name"]
                lines = cluster.logs(done.namespace, name, "main", False, None)
                (out / f"{name}.log").write_text("".join(f"{line}\n" for line in lines))
            self.say(f"logs of {len(pods)} pods saved in {out}")
        except (OSError, KubeError) as e:
            self.say(f"could not save the logs: {e}")

    def _teardown(self) -> bool:
        self.phase = "teardown"
        if self.stack is None:
            return True  # not this run's stack (or none): nothing to take down
        if self.plan.on_cluster is not None and not self.stopped:
            # Every JobSet queued to the pools stack goes first, this run's and any other
            # (partly submitted, held, a crashed run's): the host outlives the run, and its
            # ClusterQueue cannot go while they hold quota (submit/ephemeral/pools_work.py).
            from submit.ephemeral.pools_work import clear

            try:
                clear(self.stack, self.plan.name, self.say)
            except Interrupted:  # a second signal: stop now, the stack stays up
                return False
            self.say(f"pulumi destroy: the pools of stack {self.plan.name}; the cluster of "
                     f"{self.plan.on_cluster} stays")
        else:
            self.say("pulumi destroy")

        def listen(tally: Tally) -> Callable[[Any], None]:
            self._tally = tally
            return self._on_event

        ok, _ = take_down(self.stack, self.plan.name, self.say, self.sleep,
                          lambda: self.stopped, listen, self.now, host=self.host,
                          alive=self.alive)
        return ok


class _InfraFailure(Exception):
    pass


class _PrepareFailure(Exception):
    """The backend refused the stack before `up` (select/init, tags, config): nothing but
    the stack itself was made, so the run exits as refused (plan.Exit.ERROR)."""
