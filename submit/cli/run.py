"""`submit run` and `submit reap`: an ephemeral stack for one piece of work, and the reaper
that takes down the ones a crash left behind (submit/ephemeral, docs/ephemeral.md).

Everything a user can get wrong is checked before the stack is touched: the stack file,
the overrides, the run name and the work (the options of `workload create`, a job-group
file or an experiment file; checked against the outputs the run's stack will have,
derived offline: submit/ephemeral/derive.py, submit/cli/run_work.py) and its cost bound
fail with exit 2 and nothing created. Then the pulumi CLI is looked for, then the network
is used (an image's registry). The exit code of a run is decided by
submit/ephemeral/plan.py (Exit) and printed with its meaning.
"""

from __future__ import annotations

import getpass
import os
import signal
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from submit.cli.create_options import create_options
from submit.cli.options import DURATION, PositiveNumber, complete
from submit.cli.run_work import NOT_FOR_RUN
from submit.ephemeral import plan as pl
_MEANING = {
    pl.Exit.OK: "the work succeeded", pl.Exit.ERROR: "refused before `up`: nothing was made",
    pl.Exit.WORK_FAILED: "the work failed", pl.Exit.TIMEOUT: "--timeout passed first",
    pl.Exit.INFRA_FAILED: "the infrastructure failed",
    pl.Exit.TEARDOWN_FAILED: "resources may still be up",
    pl.Exit.INTERRUPTED: "interrupted", pl.Exit.TERMINATED: "terminated"}


def _workload_params() -> list[click.Parameter]:
    """`workload create`'s own options, declared once (submit/cli/create_options.py), less
    those that do not apply to a run; none is required, since a run may take a file."""
    def holder() -> None:
        """Collects the options."""
    params: list[click.Parameter] = list(reversed(
        getattr(create_options(holder), "__click_params__")))
    out = []
    for p in params:
        if p.name in NOT_FOR_RUN:
            continue
        p.required = False
        out.append(p)
    return out


class _Console:
    def __init__(self) -> None:
        from submit.cli.progress import Progress

        self.progress = Progress()
        self.tty = self.progress.tty

    def line(self, text: str) -> None:
        self.progress.line(text)

    def tick(self, text: str) -> None:
        self.progress.tick(text)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """An ended process not yet reaped by its parent (state Z in /proc/PID/stat, proc(5));
    False where /proc cannot tell."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="ascii", errors="replace").read()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _pulumi() -> Any:
    from submit.ephemeral.pulumi_process import Unavailable, command

    try:
        return command()
    except Unavailable as e:
        raise click.ClickException(str(e)) from None


def _max_hours_gone(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None:
        raise click.BadParameter("was removed: a run's cost is bounded by its real limit, the "
                                 "shorter of --timeout and --expires-in, which both end it; "
                                 "give --timeout", ctx=ctx, param=param)


@click.command("run")
@click.argument("stack", shell_complete=complete("run_stacks"))
@click.option("--name", "run_name", metavar="RUN", help="The run: names its stack and its cluster "
              "(1-24 lowercase letters, digits, '-'). Default: the --workload name.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a stack-file key (accelstack: may be left out; VALUE is YAML). "
                   "Repeatable.")
@click.option("--keep", is_flag=True, help="Leave everything up afterwards and print the "
              "command that takes it down.")
@click.option("--expires-in", "expires_in", type=DURATION, default="6h", show_default=True,
              metavar="DURATION", help="The stack's expiry, stamped in its tags: `submit "
              "reap` takes it down after this, whatever happened to this process.")
@click.option("--timeout", type=DURATION, default="24h", show_default=True,
              metavar="DURATION", help="How long to wait for the work; then the run takes "
              "the stack down (exit 4).")
@click.option("--interval", type=DURATION, default="10s", show_default=True,
              metavar="DURATION", help="How often to read the work's state afresh.")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Save every pod's log in DIR before the teardown.")
@click.option("--group", "group_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="The work: a job group file (as `workload create-group`).")
@click.option("--experiment", "experiment_file", type=click.Path(dir_okay=False),
              metavar="FILE", help="The work: an experiment file (as `experiment create`).")
@click.option("--max-hours", hidden=True, expose_value=False, callback=_max_hours_gone,
              help="Removed: the cost bound is the run's real limit.")
@click.option("--max-cost", type=PositiveNumber("US dollars", "250 or 99.5"), metavar="USD",
              help="Refuse to start a run that may cost more than USD US dollars in its "
                   "time limit, the shorter of --timeout and --expires-in (or whose cost "
                   "cannot be bounded: a part the price table does not price).")
@click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
              default=".", show_default=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Pulumi project directory (where Pulumi.yaml is).")
@click.option("--dry-run", is_flag=True, help="Check everything and print what the run "
              "would do (stack, config, pools, work, expiry, teardown); make nothing, "
              "contact nothing.")
def run(stack: str, run_name: str | None, overrides: tuple[str, ...], keep: bool,
        expires_in: float, max_cost: float | None,
        timeout: float, interval: float, logs_dir: str | None, group_file: str | None,
        experiment_file: str | None, project_dir: str, dry_run: bool,
        **options: Any) -> None:
    """Bring up a stack from STACK (a stack file, or a stack name in the project's
    stackConfigDir), run the work on it, and take it down, whatever happens.

    Exit codes: 0 the work succeeded, 3 it failed, 4 --timeout passed, 5 the
    infrastructure failed, 6 the teardown did not finish (the command to finish it is
    printed), 130/143 interrupted (torn down); 1 (refused, the backend included) and 2 as
    for every command, with nothing created.
    """
    from submit.cli import run_stack, run_work
    from submit.ephemeral import check, derive
    from submit.ephemeral.runner import InUse, Runner

    if expires_in < 1:  # the expiry tag counts whole seconds
        raise click.BadParameter(f"{expires_in:g}s: the stack's expiry must be in the future "
                                 "(the reaper would take it down before `up` finished)",
                                 param_hint="'--expires-in'")
    work = run_work.prepare(options, group_file, experiment_file, timeout, interval, logs_dir)
    run_name = run_name or work.name
    path = run_stack.stack_file(stack, project_dir)
    stack_config, sf = run_stack.stack_config(path)
    try:
        pl.check_run_name(run_name)
        parsed = [pl.parse_override(o) for o in overrides]
        config = pl.run_config(stack_config, parsed, run_name)
        offer = check.checked(config, sf.stack, {k for k, _ in parsed}, sf.locate)
        # The outputs the run's stack will have, derived offline as the preview derives
        # them: the work is checked against them by the same render the run does after `up`.
        derived = derive.derive(config, run_name, path, sf.locate)
    except pl.PlanError as e:
        raise click.BadParameter(e.message, param_hint=f"'{e.option}'") from None
    work.check(derived.outputs)
    try:
        shown = os.path.relpath(path, project_dir)
    except ValueError:
        shown = str(path)
    _check_logs_dir(logs_dir, make=not dry_run)
    cost = _cost(derived.figures, timeout, expires_in, max_cost)
    user, host = getpass.getuser(), socket.gethostname()
    plan = pl.RunPlan(name=run_name, project_dir=project_dir, stack_file=shown, config=config,
                      ttl_seconds=int(expires_in), keep=keep, owner=f"{user}@{host}",
                      command=pl.command_line(sys.argv[1:]),
                      created=datetime.now(timezone.utc))
    if dry_run:
        click.echo("\n".join(pl.dry_run_lines(plan, offer.pools, work.work.describe,
                                               cost.lines())))
        click.echo("--dry-run: nothing made, nothing contacted"
                   + ("; an image given by tag is pinned by digest when the run submits it"
                      if options.get("resolve_image") is not False else ""), err=True)
        return
    # Every offline check has passed; then the pulumi CLI, then the network (the registry).
    command = _pulumi()
    work.pin()
    console = _Console()
    runner = Runner(plan, work.work, console, user=user, host=host, pid=os.getpid(),
                    alive=_alive)
    old = {s: signal.signal(s, runner.on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        where = (f"pools on the cluster of {plan.on_cluster} (stack {run_name}, from {shown})"
                 if plan.on_cluster else f"a stack from {shown}")
        console.line(f"run {run_name}: {work.work.describe} on {where}")
        for line in cost.lines():
            console.line(f"run {run_name}: {line}")
        started = time.monotonic()
        outcome = runner.run(command)
        held = time.monotonic() - started
    except InUse as e:
        raise click.ClickException(str(e)) from None
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        console.progress.done()
    code = pl.exit_code(outcome)
    if outcome.kept or code == pl.Exit.TEARDOWN_FAILED:
        click.echo(f"the stack {run_name} is still up; take it down with:\n  "
                   f"{pl.teardown_command(plan)}", err=True)
    click.echo(f"run {run_name}: {cost.spent(held)}" if not outcome.kept else
               f"run {run_name}: cost: it stays up at {cost.figures.total_text()}", err=True)
    click.echo(f"run {run_name}: exit {int(code)} ({_MEANING[code]})", err=True)
    sys.exit(int(code))


def _check_logs_dir(logs_dir: str | None, make: bool) -> None:
    """--logs is written after the work, before the teardown: a place that cannot hold it is
    refused now (and made now, unless --dry-run), not found out after an expensive run."""
    if not logs_dir:
        return
    from submit.cli import export_file

    why = export_file.problem(logs_dir, directory=True, make_parents=True)
    if why is None and make:
        try:
            Path(logs_dir).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            why = f"{logs_dir}: {e.strerror or e.__class__.__name__}"
    if why is not None:
        raise click.BadParameter(f"cannot save the logs in {why}", param_hint="'--logs'")


class _Refused(click.ClickException):
    """A run refused for what its options add up to (its cost): one line, exit 2."""

    exit_code = 2


def _cost(figures: Any, timeout: float, expires_in: float, max_cost: float | None) -> Any:
    """The run's cost lines (infra/cost/run.py), bounded by its real limit and checked
    before anything is made: a bound over --max-cost, or of $0 for a stack that costs
    money, is refused."""
    from infra.cost import run as run_cost

    cost = run_cost.for_run(figures, timeout, expires_in)
    problem = cost.refusal(max_cost)
    if problem:
        raise _Refused(problem)
    return cost


run.params.extend(_workload_params())


@click.command("reap")
@click.argument("names", nargs=-1, metavar="[RUN]...")
@click.option("--dry-run", is_flag=True, help="List the ephemeral stacks and what would be "
              "taken down; take down nothing.")
@click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
              default=".", show_default=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Pulumi project directory (where Pulumi.yaml is).")
def reap(names: tuple[str, ...], dry_run: bool, project_dir: str) -> None:
    """Take down the ephemeral stacks (made by `submit run`) whose expiry has passed, or
    the RUNs named, whatever their expiry. Stacks `submit run` did not make are never
    touched. Exit 0: nothing left to take down; 6: a teardown failed."""
    import time

    from submit.ephemeral import reaper

    for n in names:
        try:
            pl.check_run_name(n)
        except pl.PlanError as e:
            raise click.BadParameter(e.message, param_hint="'RUN'") from None
    from submit.cli.run_stack import project_settings

    project_settings(project_dir)
    command = _pulumi()
    now = datetime.now(timezone.utc)
    try:
        stacks = reaper.find(project_dir, command)
    except reaper.BackendError as e:
        raise click.ClickException(str(e)) from None
    chosen = pl.reapable(stacks, now, names)
    missing = sorted(set(names) - {c.name for c in chosen})
    if missing:
        raise click.BadParameter(f"{', '.join(missing)}: no ephemeral stack of that name in "
                                 "the backend", param_hint="'RUN'")
    for item in chosen:
        mark = "take down" if item.due else "keep"
        click.echo(f"{mark}: {reaper.describe(item, now)}")
    due = [c for c in chosen if c.due]
    if dry_run or not due:
        click.echo(f"{len(due)} to take down{' (--dry-run: nothing done)' if dry_run else ''}",
                   err=True)
        return
    done = reaper.reap(project_dir, command, due, lambda t: click.echo(t, err=True),
                       time.sleep, lambda: False, socket.gethostname(), _alive, now)
    failed = [d for d in done if not d.destroyed]
    for d in failed:
        click.echo(f"{d.name}: NOT taken down: {d.note}", err=True)
    if failed:
        sys.exit(int(pl.Exit.TEARDOWN_FAILED))
