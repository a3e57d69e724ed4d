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

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import click
import yaml

from submit import api
from submit.render import spec as sp
from submit.experiment import expand as ex
from submit.cli.options import DURATION, namespace_option, stack_group_options, stack_options
from submit.cli.output import emit, table
from submit.render.spec import SpecError
from submit.cli.context import EXIT_FAILED, EXIT_TIMEOUT, Context, bad_input, kube_call, pass_ctx

RECORD_SUFFIX = "-experiment"
RECORD_KEY = "expansion.json"
RECORD_LABEL = "accelstack.dev/experiment-record"
STATES = ("Held", "Pending", "Suspended", "Running", "Completed", "Failed")


def record_name(name: str) -> str:
    return f"{name}{RECORD_SUFFIX}"


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


def _bad_file(e: ex.ExperimentError) -> click.BadParameter:
    return click.BadParameter(e.message, param_hint="'FILE'")


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
              help="Also write one file per trial into DIR (for `submit workload apply`).")
@click.option("--script-dir", type=click.Path(exists=True, file_okay=False),
              help="Run the code in DIR in every trial: added as a layer on --base-image and "
                   "pushed once for the whole sweep (the file then names no image).")
@click.option("--base-image", help="Image to add --script-dir to.")
@click.option("--image-repository", envvar="ACCELSTACK_IMAGE_REPOSITORY", metavar="REPO",
              help="Push the --script-dir image here instead of the stack's repository.")
@pass_ctx
def create(ctx: Context, file: str, max_trials: int, max_running: int | None, dry_run: bool,
           fmt: str, export_dir: str | None, script_dir: str | None, base_image: str | None,
           image_repository: str | None) -> None:
    """Expand FILE into trials, check every one, then submit them all."""
    with bad_input():
        sp.check_range("--max-trials", max_trials, 1)
        sp.check_range("--max-running", max_running, 1)
        if export_dir and (Path(export_dir).exists() and not Path(export_dir).is_dir()
                           or not Path(export_dir).resolve().parent.is_dir()):
            raise SpecError("--export", f"{export_dir}: not a directory, nor one that can be "
                            "created (its parent does not exist)")
    if base_image is not None and script_dir is None:
        raise click.BadParameter("needs --script-dir (the directory to add to it)",
                                 param_hint="'--base-image'")
    if script_dir is not None and base_image is None:
        raise click.BadParameter("is required with --script-dir", param_hint="'--base-image'")
    try:
        exp = ex.load(file, image_built=script_dir is not None)
    except ex.ExperimentError as e:
        raise _bad_file(e) from None
    if len(exp.trials) > max_trials:
        raise click.BadParameter(
            f"{file}: the sweep expands to {len(exp.trials)} trials, more than --max-trials "
            f"{max_trials}; raise --max-trials if that is intended", param_hint="'FILE'")
    if script_dir is not None:
        exp = _script_image(ctx, exp, script_dir, base_image, image_repository, not dry_run)
    try:
        plans = ex.plan(exp, ctx.outputs)
    except ex.ExperimentError as e:
        raise _bad_file(e) from None
    if export_dir:
        Path(export_dir).mkdir(exist_ok=True)
        for p in plans:
            text = (json.dumps(p.objects, indent=2) + "\n" if fmt == "json"
                    else yaml.safe_dump_all(p.objects, sort_keys=False))
            (Path(export_dir) / f"{p.name}.{'json' if fmt == 'json' else 'yaml'}").write_text(text)
    if dry_run:
        click.echo(table(ex.table(exp, plans), [("TRIAL", "trial")] +
                         [(k.upper(), k) for k in exp.keys]), nl=False)
        objs = [o for p in plans for o in p.objects]
        click.echo(json.dumps(objs, indent=2) if fmt == "json"
                   else "---\n" + yaml.safe_dump_all(objs, sort_keys=False), nl=False)
        return
    _submit(ctx, exp, plans, max_running)


def _script_image(ctx: Context, exp: ex.Experiment, script_dir: str, base_image: str | None,
                  image_repository: str | None, push: bool) -> ex.Experiment:
    """Bundle the directory once for the whole sweep (an unchanged tree costs only HEAD
    requests) and give every trial that image by digest."""
    from submit.cli.bundle import script_image  # late: only --script-dir needs HTTP
    from submit.bundle.plan import pool_platform

    if any(k == "image" for t in exp.trials for k, _ in t.params):
        raise click.BadParameter(f"{exp.file}: the sweep sets image; --script-dir builds the "
                                 "one image of every trial", param_hint="'--script-dir'")
    pools: dict[tuple[str, str | None], str] = {}
    for trial in exp.trials:
        w, _ = ex.trial_workload(exp, trial, f"{exp.name}-0")
        try:
            info = sp.pick_pool(ctx.outputs, w.accelerator, w.pool)
        except SpecError as e:
            raise click.BadParameter(f"{exp.file}: trial {trial.index} ({trial.describe()}): "
                                     f"{e.message}", param_hint=f"'{e.option}'") from None
        pools[(w.accelerator, w.pool)] = pool_platform(info).architecture
    if len(set(pools.values())) > 1:
        raise click.BadParameter(
            f"{exp.file}: the trials run on {' and '.join(sorted(set(pools.values())))} "
            "machines; --script-dir builds one image: split the sweep by architecture",
            param_hint="'--script-dir'")
    accelerator, pool = next(iter(pools))
    image = script_image(ctx.outputs, script_dir=script_dir, base_image=base_image, image=None,
                         image_repository=image_repository, accelerator=accelerator, pool=pool,
                         push=push)
    return dataclasses.replace(exp, base={**exp.base, "image": image})


def _record(exp: ex.Experiment, plans: list[ex.TrialPlan], ns: str,
            max_running: int | None) -> dict[str, Any]:
    expansion = {"name": exp.name, "description": exp.description,
                 "file": Path(exp.file).name, "maxRunning": max_running,
                 "keys": list(exp.keys),
                 "trials": [{"name": p.name, "parameters": dict(p.trial.params)}
                            for p in plans]}
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": record_name(exp.name), "namespace": ns,
                         "labels": {"app.kubernetes.io/managed-by": "accelstack",
                                    ex.EXPERIMENT: exp.name, RECORD_LABEL: "true"}},
            "data": {RECORD_KEY: json.dumps(expansion, indent=1)}}


def _submit(ctx: Context, exp: ex.Experiment, plans: list[ex.TrialPlan],
            max_running: int | None) -> None:
    namespaces = {o["metadata"]["namespace"] for p in plans for o in p.objects}
    if len(namespaces) > 1:
        raise click.BadParameter(f"{exp.file}: the trials are in several namespaces "
                                 f"({', '.join(sorted(namespaces))}); an experiment lives in "
                                 "one", param_hint="'FILE'")
    ns = namespaces.pop()
    cluster = ctx.cluster
    rec_name = record_name(exp.name)
    if kube_call(lambda: cluster.get_config_map(ns, rec_name)) is not None:
        raise click.ClickException(f"experiment {exp.name} already exists in namespace {ns}; "
                                   f"delete it with `submit experiment delete {exp.name}`")
    taken = [p.name for p in plans
             if kube_call(lambda p=p: cluster.get_jobset(ns, p.name)) is not None]  # type: ignore[misc]
    if taken:
        raise click.ClickException(f"workloads named like the trials already exist in {ns}: "
                                   f"{', '.join(taken)}; delete them first")
    record = kube_call(lambda: cluster.apply(_record(exp, plans, ns, max_running)))
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": rec_name,
             "uid": (record.get("metadata") or {}).get("uid"), "blockOwnerDeletion": False}
    done: list[str] = []
    try:
        for i, p in enumerate(plans):
            objs = json.loads(json.dumps(p.objects))
            js = next(o for o in objs if o["kind"] == "JobSet")
            js["metadata"]["ownerReferences"] = [owner]
            if max_running is not None and i >= max_running:
                objs = api.hold(objs)
            api.submit(cluster, objs)
            done.append(p.name)
    except api.ClusterError as e:
        # Nothing half-applied: the trials already created go, and the record with them.
        for name in done:
            try:
                kube_call(lambda name=name: cluster.delete_jobset(ns, name))  # type: ignore[misc]
            except click.ClickException:
                pass
        try:
            kube_call(lambda: cluster.delete_config_map(ns, rec_name))
        except click.ClickException:
            pass
        raise click.ClickException(f"experiment {exp.name} not created (trial "
                                   f"{plans[len(done)].name}): {e.message}") from None
    held = len(plans) - (max_running or len(plans)) if max_running else 0
    click.echo(f"experiment {exp.name}: {len(plans)} trials submitted to namespace {ns}"
               + (f" ({held} held until `submit experiment wait {exp.name}` releases them)"
                  if held > 0 else ""), err=True)


# -- reading experiments ---------------------------------------------------------------

def _load_record(ctx: Context, name: str, ns: str) -> dict[str, Any]:
    cluster = ctx.cluster
    cm = kube_call(lambda: cluster.get_config_map(ns, record_name(name)))
    if cm is None:
        raise click.ClickException(f"experiment {name} not found in namespace {ns}")
    try:
        data: dict[str, Any] = json.loads((cm.get("data") or {})[RECORD_KEY])
    except (KeyError, ValueError):
        raise click.ClickException(f"the record of experiment {name} ({record_name(name)}) "
                                   "is not one accelstack wrote") from None
    return data


def _trial_states(ctx: Context, name: str, ns: str, record: dict[str, Any]
                  ) -> list[dict[str, Any]]:
    cluster = ctx.cluster
    found = kube_call(lambda: cluster.list_jobsets(ns, f"{ex.EXPERIMENT}={name}"))
    kueue = kube_call(lambda: cluster.list_workloads(ns))
    by_name = {j["metadata"]["name"]: j for j in found}
    rows = []
    for t in record.get("trials", []):
        js = by_name.get(t["name"])
        if js is None:
            rows.append({"trial": t["name"], "state": "Deleted", "admission": "-",
                         "parameters": t["parameters"]})
            continue
        s = api.status_of(js, kueue)
        rows.append({"trial": t["name"], "state": s.state, "admission": s.admission,
                     "restarts": s.restarts, "message": s.message,
                     "parameters": t["parameters"]})
    return rows


def _counts(rows: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["state"]] = counts.get(r["state"], 0) + 1
    order = list(STATES) + ["Deleted"]
    return ", ".join(f"{counts[s]} {s}" for s in sorted(counts, key=order.index))


@experiment.command("list")
@stack_options
@namespace_option
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True, help="Output format.")
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
        record = _load_record(ctx, name, ns)
        trials = _trial_states(ctx, name, ns, record)
        rows.append({"name": name, "trials": len(trials), "progress": _counts(trials)})
    if fmt == "table" and not rows:
        click.echo(f"no experiments in namespace {ns}")
        return
    emit(rows, fmt, (("NAME", "name"), ("TRIALS", "trials"), ("PROGRESS", "progress")))


@experiment.command("describe")
@stack_options
@click.argument("name")
@namespace_option
@pass_ctx
def describe(ctx: Context, name: str, namespace: str | None) -> None:
    """Progress (counts by state) and every trial's state with its parameters."""
    with bad_input():
        sp.check_workload_name(name)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    record = _load_record(ctx, name, ns)
    rows = _trial_states(ctx, name, ns, record)
    click.echo(f"Experiment:   {name}")
    if record.get("description"):
        click.echo(f"Description:  {record['description']}")
    click.echo(f"Namespace:    {ns}\nFile:         {record.get('file')}\n"
               f"Max running:  {record.get('maxRunning') or 'all'}\n"
               f"Trials:       {len(rows)} ({_counts(rows)})")
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
    _load_record(ctx, name, ns)
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
    record = _load_record(ctx, name, ns)
    limit = record.get("maxRunning")
    cluster = ctx.cluster
    deadline = time.monotonic() + timeout
    last = None
    while True:
        rows = _trial_states(ctx, name, ns, record)
        active = [r for r in rows if r["state"] not in ("Held", "Completed", "Failed",
                                                        "Deleted")]
        held = [r for r in rows if r["state"] == "Held"]
        free = len(held) if limit is None else max(0, int(limit) - len(active))
        for r in held[:free]:
            try:
                api.release(cluster, ns, r["trial"])
            except api.ClusterError as e:
                raise click.ClickException(e.message) from None
            click.echo(f"{time.strftime('%H:%M:%S')} released {r['trial']}", err=True)
            r["state"] = "Pending"
        progress = _counts(rows)
        if progress != last:
            click.echo(f"{time.strftime('%H:%M:%S')} {name}: {progress}", err=True)
            last = progress
        if all(r["state"] in ("Completed", "Failed", "Deleted") for r in rows):
            failed = [r["trial"] for r in rows if r["state"] != "Completed"]
            if failed:
                click.echo(f"experiment {name}: {len(failed)} of {len(rows)} trials did not "
                           f"succeed: {', '.join(failed)}")
                sys.exit(EXIT_FAILED)
            click.echo(f"experiment {name}: all {len(rows)} trials succeeded")
            return
        if time.monotonic() >= deadline:
            click.echo(f"experiment {name} not done after {timeout}s: {progress}")
            sys.exit(EXIT_TIMEOUT)
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


# -- `submit workload release` ----------------------------------------------------------

@click.command("release")
@click.argument("name")
@click.option("--wait", "wait_", is_flag=True, help="Wait for the workload it is held "
              "after (--after) to succeed, then release it.")
@click.option("--timeout", type=DURATION, default="24h", show_default=True,
              metavar="DURATION", help="With --wait: how long to wait for the other workload.")
@click.option("--interval", type=DURATION, default="30s", show_default=True,
              metavar="DURATION",
              help="With --wait: how often the other workload's state is read afresh (its "
                   "changes arrive at once through a watch).")
@click.option("--force", is_flag=True, help="Release it whatever the other workload's state.")
@namespace_option
@pass_ctx
def release(ctx: Context, name: str, wait_: bool, timeout: float, interval: float, force: bool,
            namespace: str | None) -> None:
    """Hand a held workload (create --after) to Kueue once the workload it waits for has
    succeeded. Exit 3 if that one failed (NAME stays held), 4 if --wait timed out."""
    with bad_input():
        sp.check_workload_name(name)
        sp.check_wait(timeout, interval)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    js = kube_call(lambda: cluster.get_jobset(ns, name))
    if js is None:
        raise click.ClickException(f"workload {name} not found in namespace {ns}")
    after = ((js.get("metadata") or {}).get("annotations") or {}).get(api.AFTER)
    if after and not force:
        try:
            s = (api.wait(cluster, ns, after, timeout, interval) if wait_
                 else api.status(cluster, ns, after))
        except api.ClusterError as e:
            raise click.ClickException(f"{e.message}; workload {name} stays held (--force "
                                       "releases it anyway)") from None
        if s.state == "Failed":
            click.echo(f"workload {after} failed: workload {name} stays held")
            sys.exit(EXIT_FAILED)
        if s.state != "Completed":
            if wait_:
                click.echo(f"workload {after} still {s.state} after {timeout}s: workload "
                           f"{name} stays held")
                sys.exit(EXIT_TIMEOUT)
            raise click.ClickException(f"workload {after} is {s.state}, not Completed: "
                                       f"workload {name} stays held (pass --wait to wait "
                                       "for it)")
    try:
        queue = api.release(cluster, ns, name)
    except api.ClusterError as e:
        raise click.ClickException(e.message) from None
    click.echo(f"workload {name} released to queue {queue}")
