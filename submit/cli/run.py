"""`submit run` and `submit reap`: an ephemeral stack for one piece of work, and the reaper
that takes down the ones a crash left behind (submit/ephemeral, docs/ephemeral.md).

Everything a user can get wrong is checked before the stack is touched: the stack file,
the overrides, the run name and the work (the options of `workload create`, a job-group
file or an experiment file) fail with exit 2 and nothing created. The exit code of a run
is decided by submit/ephemeral/plan.py (Exit) and printed with its meaning.
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
from typing import Any, Callable

import click
import yaml

from infra.record import field_names
from submit.cli.create_options import CreateOptions, create_options
from submit.cli.options import DURATION, PositiveNumber, complete
from submit.ephemeral import plan as pl

_NOT_FOR_RUN = ("dry_run", "fmt", "export_file", "replace", "after")
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
        if p.name in _NOT_FOR_RUN:
            continue
        p.required = False
        out.append(p)
    return out


def _project_settings(project_dir: str) -> dict[str, Any]:
    path = Path(project_dir) / "Pulumi.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise click.BadParameter(f"{path}: not a Pulumi project file ({e.__class__.__name__})",
                                 param_hint="'--project-dir'") from None
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path}: not a Pulumi project file",
                                 param_hint="'--project-dir'")
    return data


def _stack_file(stack: str, project_dir: str) -> Path:
    """STACK: a stack file's path, or a stack name found in the project's stackConfigDir."""
    if stack.endswith((".yaml", ".yml")) or os.sep in stack:
        path = Path(stack)
    else:
        config_dir = str(_project_settings(project_dir).get("stackConfigDir") or ".")
        path = Path(project_dir) / config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        from infra.config.errors import did_you_mean

        names = sorted(p.name[len("Pulumi."):-len(".yaml")]
                       for p in path.parent.glob("Pulumi.*.yaml"))
        hint = did_you_mean(stack, names) if names and stack == path.name[7:-5] else ""
        raise click.BadParameter(f"{path}: no such stack file{hint}"
                                 + (f" (stacks: {', '.join(names)})" if names else ""),
                                 param_hint="'STACK'")
    return path


def _stack_config(path: Path) -> tuple[dict[str, Any], Any]:
    """The stack file's config, namespaced keys as Pulumi stores them, checked as the offline
    preview checks it (FILE:LINE errors). Secrets cannot be carried over: their ciphertext
    belongs to the stack file's own secrets provider."""
    from infra.config.stack_file import NAMESPACE, PROVIDER_NAMESPACES, StackFileError, load

    try:
        sf = load(path)
    except StackFileError as e:
        raise click.BadParameter(e.problems[0], param_hint="'STACK'") from None
    if sf.secret_keys:
        key = sorted(sf.secret_keys)[0]
        raise click.BadParameter(
            f"{sf.path}:{sf.line_of(key)}: {NAMESPACE}:{key} is a Pulumi secret, encrypted for "
            f"stack {sf.stack}; a run's stack cannot decrypt it: pass the value with --set",
            param_hint="'STACK'")
    raw = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("config") or {}
    config = {k: v for k, v in raw.items()
              if str(k).partition(":")[0] in PROVIDER_NAMESPACES}
    config.update({f"{NAMESPACE}:{k}": v for k, v in sf.raw.items()})
    return config, sf


def _work(options: dict[str, Any], group_file: str | None, experiment_file: str | None,
          timeout: float, interval: float, logs_dir: str | None
          ) -> tuple[str, Any, tuple[str, ...], Callable[[], None]]:
    """(the default run name, the runner's Work, the accelerators it asks for, the step that
    pins its image by digest): everything checked that can be without the stack or the
    network. The pinning step asks the image's registry: it runs after every offline check,
    and not at all for --dry-run."""
    from submit.cli.context import bad_input
    from submit.ephemeral.runner import Work

    given = [o for o, v in (("--workload", options.get("name")), ("--group", group_file),
                            ("--experiment", experiment_file)) if v]
    if len(given) != 1:
        raise click.UsageError("give the work as one of: workload options (--workload NAME "
                               "--accelerator ... as for `workload create`), --group FILE "
                               f"or --experiment FILE{f' (got {given})' if given else ''}")
    if group_file:
        from submit.experiment import group as gr

        text = _read(group_file, "--group")
        try:
            group = gr.load(group_file, text)
        except gr.GroupError as e:
            raise click.BadParameter(e.message, param_hint="'--group'") from None
        return group.name, Work(f"job group {group.name}",
                                lambda outputs: [gr.render_group(group, outputs)],
                                timeout, interval, logs_dir), _accelerators(
            [r.options.get("accelerator") for r in group.roles]
            + [group.shared.get("accelerator")]), _nothing
    if experiment_file:
        from submit.experiment import expand, trials

        _read(experiment_file, "--experiment")
        try:
            exp = expand.load(experiment_file)
        except expand.ExperimentError as e:
            raise click.BadParameter(e.message, param_hint="'--experiment'") from None
        return exp.name, Work(f"experiment {exp.name} ({len(exp.trials)} trials)",
                              lambda outputs: [t.objects for t in trials.plan(exp, outputs)],
                              timeout, interval, logs_dir), _accelerators(
            [exp.base.get("accelerator")]
            + [v for t in exp.trials for k, v in t.params if k == "accelerator"]), _nothing
    given_options: dict[str, Any] = {f: options.get(f) for f in field_names(CreateOptions)
                                     if f not in _NOT_FOR_RUN}
    opts = CreateOptions(**given_options,
                         dry_run=False, fmt="yaml", export_file=None, replace=False)
    if not opts.accelerator:
        raise click.UsageError("Missing option '--accelerator' (with --workload).")
    wl = opts.workload()
    with bad_input():
        wl.check()
    if opts.builds_image and opts.script_dir is None and opts.image is None:
        raise click.UsageError("pass --image, or --script-dir with --base-image")
    pins: dict[str, str] = {}

    def pin() -> None:
        # The tag resolved once, before anything is made: every worker runs the same bytes,
        # and a tag that does not exist costs no cluster.
        if not opts.builds_image:
            from submit.cli.image_pin import resolve_all

            pins.update(resolve_all([opts.image], enabled=opts.resolve_image is not False,
                                    offline_ok=False))

    def render(outputs: Any) -> list[list[dict[str, Any]]]:
        workload = wl
        if opts.builds_image:
            from submit.cli.bundle import script_image

            workload = wl.replace(image=script_image(
                outputs, script_dir=opts.script_dir, base_image=opts.base_image,
                image=opts.image, image_repository=opts.image_repository,
                accelerator=opts.accelerator, pool=opts.pool, push=True))
        objs = workload.render(outputs)
        if pins:
            from submit.render.jobset import pin_images

            pin_images(objs, pins)
        return [objs]

    return (opts.name, Work(f"workload {opts.name}", render, timeout, interval, logs_dir),
            _accelerators([opts.accelerator]), pin)


def _nothing() -> None:
    """A job group's or an experiment's images are pinned as they are submitted."""


def _accelerators(names: list[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(n) for n in names if isinstance(n, str) and n))


def _read(file: str, option: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"{file}: cannot read it: "
                                 f"{getattr(e, 'strerror', None) or 'not UTF-8 text'}",
                                 param_hint=f"'{option}'") from None


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
              metavar="DURATION", help="How long to wait for the work.")
@click.option("--interval", type=DURATION, default="10s", show_default=True,
              metavar="DURATION", help="How often to read the work's state afresh.")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Save every pod's log in DIR before the teardown.")
@click.option("--group", "group_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="The work: a job group file (as `workload create-group`).")
@click.option("--experiment", "experiment_file", type=click.Path(dir_okay=False),
              metavar="FILE", help="The work: an experiment file (as `experiment create`).")
@click.option("--max-hours", type=PositiveNumber("hours", "12 or 1.5"), metavar="HOURS",
              help="The time the run's cost is bounded for (docs/cost.md) [default: its "
                   "--expires-in].")
@click.option("--max-cost", type=PositiveNumber("US dollars", "250 or 99.5"), metavar="USD",
              help="Refuse to start a run that may cost more than USD US dollars in its "
                   "time limit (or whose cost cannot be bounded: a part the price table "
                   "does not price).")
@click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
              default=".", show_default=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Pulumi project directory (where Pulumi.yaml is).")
@click.option("--dry-run", is_flag=True, help="Check everything and print what the run "
              "would do (stack, config, pools, work, expiry, teardown); make nothing, "
              "contact nothing.")
def run(stack: str, run_name: str | None, overrides: tuple[str, ...], keep: bool,
        expires_in: float, max_hours: float | None, max_cost: float | None,
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
    from submit.ephemeral import check
    from submit.ephemeral.runner import InUse, Runner

    default_name, work, accelerators, pin = _work(options, group_file, experiment_file,
                                                  timeout, interval, logs_dir)
    run_name = run_name or default_name
    path = _stack_file(stack, project_dir)
    stack_config, sf = _stack_config(path)
    try:
        pl.check_run_name(run_name)
        parsed = [pl.parse_override(o) for o in overrides]
        config = pl.run_config(stack_config, parsed, run_name)
        offer = check.checked(config, sf.stack, {k for k, _ in parsed}, sf.locate)
        check.check_shapes(offer, sf.stack, accelerators)
        check.check_image_repository(offer, sf.stack, options.get("script_dir") is not None,
                                     options.get("image_repository"))
    except pl.PlanError as e:
        raise click.BadParameter(e.message, param_hint=f"'{e.option}'") from None
    try:
        shown = os.path.relpath(path, project_dir)
    except ValueError:
        shown = str(path)
    _check_logs_dir(logs_dir, make=not dry_run)
    cost = _cost(config, expires_in, max_hours, max_cost)
    user, host = getpass.getuser(), socket.gethostname()
    plan = pl.RunPlan(name=run_name, project_dir=project_dir, stack_file=shown, config=config,
                      ttl_seconds=int(expires_in), keep=keep, owner=f"{user}@{host}",
                      command=pl.command_line(sys.argv[1:]),
                      created=datetime.now(timezone.utc))
    if dry_run:
        click.echo("\n".join(pl.dry_run_lines(plan, offer.pools, work.describe,
                                               cost.lines())))
        click.echo("--dry-run: nothing made, nothing contacted"
                   + ("; an image given by tag is pinned by digest when the run submits it"
                      if options.get("resolve_image") is not False else ""), err=True)
        return
    pin()
    command = _pulumi()
    console = _Console()
    runner = Runner(plan, work, console, user=user, host=host, pid=os.getpid(),
                    alive=_alive)
    old = {s: signal.signal(s, runner.on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        where = (f"pools on the cluster of {plan.on_cluster} (stack {run_name}, from {shown})"
                 if plan.on_cluster else f"a stack from {shown}")
        console.line(f"run {run_name}: {work.describe} on {where}")
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


def _cost(config: dict[str, Any], expires_in: float, max_hours: float | None,
          max_cost: float | None) -> Any:
    """The run's cost lines (infra/cost/run.py), checked against --max-cost before anything
    is made."""
    from infra.cost import run as run_cost

    limit = ("--max-hours" if max_hours is not None else
             f"its TTL, --expires-in {expires_in / 3600:g}h")
    cost = run_cost.estimate(config, max_hours or expires_in / 3600, limit)
    problem = cost.refusal(max_cost)
    if problem:
        raise click.BadParameter(problem, param_hint="'--max-cost'")
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
    _project_settings(project_dir)
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
