"""`submit experiment ...`: create, list, describe, wait and delete sweeps of trials.

The experiment record is one ConfigMap, ``<name>-experiment``, holding the expansion (every
trial's name and parameters, and --max-running) as JSON. Each trial's JobSet carries an
ownerReference to it, so the cluster itself knows the trials are the experiment's
children: `list` and `describe` need no local state, and deleting the record alone would
let Kubernetes' garbage collector remove every trial. A ConfigMap, because it is a core
kind any namespace user may create (a CRD of our own would need a cluster-scoped install
and the stack's RBAC), holds up to 1 MiB (thousands of trials' parameters; --max-trials
keeps far below), and Kueue ignores it. Kueue does not treat a JobSet owned by a ConfigMap
as a child job: it only skips jobs whose owner is a job kind it manages.

Concurrency: trials beyond --max-running are created held (submit.api.hold: suspended and
without the queue label, so Kueue neither queues nor admits them). `experiment wait`
releases them, oldest first, as running trials finish; released trials join the
LocalQueue, and Kueue still admits them only when the ClusterQueue has quota. So
--max-running caps how many trials Kueue sees at once; Kueue decides how many of those run.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from submit import api
from submit.render import spec as sp
from submit.experiment import expand as ex
from submit.cli import experiment_submit as create_steps
from submit.cli.experiment_record import (RECORD_LABEL, counts, load_record, record_name,
                                          trial_states)
from submit.cli.experiment_submit import Code, Output, Sweep
from submit.cli.options import DURATION, namespace_option, stack_group_options, stack_options, \
    table_output_option
from submit.cli.output import emit, table
from submit.cli.image_pin import resolve_image_option
from submit.cli.context import EXIT_FAILED, EXIT_TIMEOUT, Context, bad_input, kube_call, pass_ctx

_FINISHED = ("Completed", "Failed", "Deleted")


@click.group("experiment")
@stack_group_options
@click.pass_context
def experiment(ctx: click.Context, stack: str | None, outputs_file: str | None,
               project_dir: str, namespace: str | None) -> None:
    """Sweeps: many trials (one JobSet each) created, watched and deleted as one.

    --stack, --outputs, --project-dir and -n/--namespace may also be given after the
    command, as on `submit workload`.
    """
    ctx.obj = Context(stack, outputs_file, project_dir, namespace)


@experiment.command("create")
@stack_options
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--max-trials", type=int, default=ex.DEFAULT_MAX_TRIALS, show_default=True,
              help="Refuse an expansion of more trials (a guard against typos).")
@click.option("--max-running", type=int, help="Hand at most N trials to Kueue at once; the "
              "rest wait, held, for `submit experiment wait` to release them.")
@click.option("--dry-run", is_flag=True, help="Print the expansion and the JobSets; apply "
              "nothing.")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Format of the JobSets (--dry-run, --export).")
@click.option("--export", "export_dir", type=click.Path(file_okay=False),
              help="Write one file per trial into DIR (for `submit workload apply`); submit "
                   "nothing.")
@click.option("--script-dir", type=click.Path(exists=True, file_okay=False),
              help="Run the code in DIR in every trial: added as a layer on --base-image and "
                   "pushed once for the whole sweep (the file then names no image).")
@click.option("--base-image", help="Image to add --script-dir to.")
@click.option("--image-repository", envvar="ACCELSTACK_IMAGE_REPOSITORY", metavar="REPO",
              help="Push the --script-dir image here instead of the stack's repository.")
@resolve_image_option
@pass_ctx
def create(ctx: Context, file: str, max_trials: int, max_running: int | None, dry_run: bool,
           fmt: str, export_dir: str | None, script_dir: str | None, base_image: str | None,
           image_repository: str | None, resolve_image: bool | None) -> None:
    """Expand FILE into trials, check every one, then submit them all."""
    sweep = Sweep(file, max_trials, max_running)
    out = Output(dry_run, fmt, export_dir)
    code = Code(script_dir, base_image, image_repository)
    create_steps.check_options(sweep, out, code)
    exp = create_steps.load(sweep, code)
    # The kubeconfig is a local input too: a bad one is said before any registry is asked.
    submits = not (out.dry_run or out.export_dir)
    if submits and code.script_dir is not None:
        ctx.cluster  # noqa: B018
    if code.script_dir is not None:
        exp = create_steps.with_script_image(ctx, exp, code.script_dir, code, not out.dry_run)
    plans = create_steps.plan(exp, ctx)
    if submits and code.script_dir is None:
        ctx.cluster  # noqa: B018
    if code.script_dir is None:  # (a built image is named by digest already)
        create_steps.pin(exp, plans, resolve_image, dry_run=out.dry_run,
                         export=bool(out.export_dir))
    if out.export_dir:
        create_steps.export(plans, out.export_dir, out.fmt)
    if out.dry_run:
        create_steps.print_dry_run(exp, plans, out.fmt)
    if out.dry_run or out.export_dir:
        return
    create_steps.submit(ctx, exp, plans, sweep.max_running)


@experiment.command("list")
@stack_options
@namespace_option
@table_output_option
@pass_ctx
def list_cmd(ctx: Context, namespace: str | None, fmt: str) -> None:
    """List experiments with their trials' progress."""
    with bad_input():
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    records = kube_call(lambda: cluster.list_config_maps(ns, f"{RECORD_LABEL}=true"))
    rows = []
    for cm in records:
        name = (cm["metadata"].get("labels") or {}).get(ex.EXPERIMENT, "")
        record = load_record(ctx, name, ns)
        trials = trial_states(ctx, name, ns, record)
        rows.append({"name": name, "trials": len(trials), "progress": counts(trials)})
    if fmt == "table" and not rows:
        click.echo(f"no experiments in namespace {ns}")
        return
    emit(rows, fmt, (("NAME", "name"), ("TRIALS", "trials"), ("PROGRESS", "progress")))


@experiment.command("describe")
@stack_options
@click.argument("name")
@namespace_option
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True,
              help="Output format: the text, or the same as data: name, description, "
                   "namespace, file, maxRunning, keys, counts {state: n}, trials [{trial, "
                   "state, admission, restarts, message, parameters, links {logs, workload, "
                   "stores}}] (links: docs/diagnostics.md).")
@pass_ctx
def describe(ctx: Context, name: str, namespace: str | None, fmt: str = "table") -> None:
    """Progress (counts by state) and every trial's state with its parameters."""
    with bad_input():
        sp.check_workload_name(name)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    record = load_record(ctx, name, ns)
    rows = trial_states(ctx, name, ns, record, links=True)
    if fmt != "table":
        by_state: dict[str, int] = {}
        for r in rows:
            by_state[r["state"]] = by_state.get(r["state"], 0) + 1
        emit({"name": name, "description": record.get("description") or "", "namespace": ns,
              "file": record.get("file"), "maxRunning": record.get("maxRunning"),
              "keys": list(record.get("keys", [])), "counts": by_state,
              "trials": [{"trial": r["trial"], "state": r["state"],
                          "admission": r["admission"], "restarts": r.get("restarts"),
                          "message": r.get("message") or None,
                          "parameters": r["parameters"],
                          "links": r["links"]} for r in rows]}, fmt)
        return
    click.echo(f"Experiment:   {name}")
    if record.get("description"):
        click.echo(f"Description:  {record['description']}")
    click.echo(f"Namespace:    {ns}\nFile:         {record.get('file')}\n"
               f"Max running:  {record.get('maxRunning') or 'all'}\n"
               f"Trials:       {len(rows)} ({counts(rows)})")
    keys = list(record.get("keys", []))
    cells = [{"trial": r["trial"], "state": r["state"], "admission": r["admission"],
              **{k: ex._text(r["parameters"][k]) if k in r["parameters"] else "-"
                 for k in keys}} for r in rows]
    click.echo(table(cells, [("TRIAL", "trial"), ("STATE", "state"),
                             ("ADMISSION", "admission")] + [(k.upper(), k) for k in keys]),
               nl=False)
    for r in rows:
        if r.get("message"):
            click.echo(f"{r['trial']} failed: {r['message']}")
    for r in rows:
        found = r["links"]
        if found is not None:
            from submit.render.diagnostics import links  # late: describe only

            click.echo("\n".join([f"{r['trial']}:"] + links.describe_lines(found)[1:]))


@experiment.command("delete")
@stack_options
@click.argument("name")
@namespace_option
@pass_ctx
def delete(ctx: Context, name: str, namespace: str | None) -> None:
    """Cancel every trial and delete the experiment's record."""
    with bad_input():
        sp.check_workload_name(name)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    load_record(ctx, name, ns)
    cluster = ctx.cluster
    found = kube_call(lambda: cluster.list_jobsets(ns, f"{ex.EXPERIMENT}={name}"))
    for js in found:
        trial = js["metadata"]["name"]
        kube_call(lambda trial=trial: cluster.delete_jobset(ns, trial))  # type: ignore[misc]
    kube_call(lambda: cluster.delete_config_map(ns, record_name(name)))
    click.echo(f"deleted experiment {name} ({len(found)} trials)")


@experiment.command("wait")
@stack_options
@click.argument("name")
@click.option("--timeout", type=DURATION, default="24h", show_default=True,
              metavar="DURATION", help="How long to wait: seconds, or 90s, 30m, 12h, 1h30m.")
@click.option("--interval", type=DURATION, default="30s", show_default=True,
              metavar="DURATION", help="Time between checks.")
@namespace_option
@pass_ctx
def wait(ctx: Context, name: str, timeout: float, interval: float, namespace: str | None
         ) -> None:
    """Wait until every trial has finished, releasing held trials as others finish (see
    --max-running). Exit 0: all succeeded; 3: some failed; 4: the timeout passed first."""
    with bad_input():
        sp.check_workload_name(name)
        sp.check_wait(timeout, interval)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    record = load_record(ctx, name, ns)
    cluster = ctx.cluster
    deadline = time.monotonic() + timeout
    last = None
    while True:
        rows = trial_states(ctx, name, ns, record)
        _release_held(cluster, ns, rows, record.get("maxRunning"))
        progress = counts(rows)
        if progress != last:
            click.echo(f"{time.strftime('%H:%M:%S')} {name}: {progress}", err=True)
            last = progress
        if all(r["state"] in _FINISHED for r in rows):
            _report_finished(name, rows)
            return
        if time.monotonic() >= deadline:
            click.echo(f"experiment {name} not done after {timeout}s: {progress}")
            sys.exit(EXIT_TIMEOUT)
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def _release_held(cluster: Any, ns: str, rows: list[dict[str, Any]], limit: Any) -> None:
    """Release held trials, oldest first, while fewer than ``limit`` (--max-running) are
    active; their rows become Pending."""
    active = [r for r in rows if r["state"] not in ("Held",) + _FINISHED]
    held = [r for r in rows if r["state"] == "Held"]
    free = len(held) if limit is None else max(0, int(limit) - len(active))
    for r in held[:free]:
        try:
            api.release(cluster, ns, r["trial"])
        except api.ClusterError as e:
            raise click.ClickException(e.message) from None
        click.echo(f"{time.strftime('%H:%M:%S')} released {r['trial']}", err=True)
        r["state"] = "Pending"


def _report_finished(name: str, rows: list[dict[str, Any]]) -> None:
    """Every trial has finished: say so, exit 3 if any did not succeed."""
    failed = [r["trial"] for r in rows if r["state"] != "Completed"]
    if failed:
        click.echo(f"experiment {name}: {len(failed)} of {len(rows)} trials did not "
                   f"succeed: {', '.join(failed)}")
        sys.exit(EXIT_FAILED)
    click.echo(f"experiment {name}: all {len(rows)} trials succeeded")


# `experiment goodput` lives with `workload goodput` (docs/observability.md).
from submit.cli.goodput import experiment_goodput  # noqa: E402

experiment.add_command(experiment_goodput)
