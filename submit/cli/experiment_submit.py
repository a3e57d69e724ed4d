"""`submit experiment create` behind its options: the sweep loaded and checked, the
--script-dir image built once for every trial, the trials exported or printed (--dry-run),
or submitted with the record that owns them, nothing half-applied.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from infra.record import record, replace
from submit import api
from submit.render import spec as sp
from submit.experiment import expand as ex
from submit.experiment import trials
from submit.cli.experiment_record import new_record, record_name
from submit.cli.output import dump_objects, table
from submit.render.build import pick_pool
from submit.render.spec import SpecError
from submit.cli.context import Context, bad_input, kube_call


@record
class Sweep:
    """FILE and the limits on its expansion (--max-trials, --max-running)."""
    file: str
    max_trials: int
    max_running: int | None


@record
class Output:
    """What becomes of the trials besides submitting them (--dry-run, -o, --export)."""
    dry_run: bool
    fmt: str
    export_dir: str | None


@record
class Code:
    """--script-dir, --base-image and --image-repository: the one image every trial runs."""
    script_dir: str | None
    base_image: str | None
    image_repository: str | None


def check_options(sweep: Sweep, out: Output, code: Code) -> None:
    with bad_input():
        sp.check_range("--max-trials", sweep.max_trials, 1)
        sp.check_range("--max-running", sweep.max_running, 1)
        from submit.cli import export_file

        bad = export_file.problem(out.export_dir, directory=True) if out.export_dir else None
        if bad:
            raise SpecError("--export", bad)
    if code.base_image is not None and code.script_dir is None:
        raise click.BadParameter("needs --script-dir (the directory to add to it)",
                                 param_hint="'--base-image'")
    if code.script_dir is not None and code.base_image is None:
        raise click.BadParameter("is required with --script-dir", param_hint="'--base-image'")


def load(sweep: Sweep, code: Code) -> ex.Experiment:
    try:
        exp = ex.load(sweep.file, image_built=code.script_dir is not None)
    except ex.ExperimentError as e:
        raise _bad_file(e) from None
    if len(exp.trials) > sweep.max_trials:
        raise click.BadParameter(
            f"{sweep.file}: the sweep expands to {len(exp.trials)} trials, more than "
            f"--max-trials {sweep.max_trials}; raise --max-trials if that is intended",
            param_hint="'FILE'")
    return exp


def plan(exp: ex.Experiment, ctx: Context) -> list[trials.TrialPlan]:
    try:
        return trials.plan(exp, ctx.outputs)
    except ex.ExperimentError as e:
        raise _bad_file(e) from None


def _bad_file(e: ex.ExperimentError) -> click.BadParameter:
    return click.BadParameter(e.message, param_hint="'FILE'")


def with_script_image(ctx: Context, exp: ex.Experiment, script_dir: str, code: Code,
                      push: bool) -> ex.Experiment:
    """Bundle the directory once for the whole sweep (an unchanged tree costs only HEAD
    requests) and give every trial that image by digest."""
    from submit.cli.bundle import script_image  # late: only --script-dir needs HTTP
    from submit.bundle.plan import pool_platform

    if any(k == "image" for t in exp.trials for k, _ in t.params):
        raise click.BadParameter(f"{exp.file}: the sweep sets image; --script-dir builds the "
                                 "one image of every trial", param_hint="'--script-dir'")
    pools: dict[tuple[str, str | None], str] = {}
    for trial in exp.trials:
        w, _ = trials.trial_workload(exp, trial, f"{exp.name}-0")
        try:
            info = pick_pool(ctx.outputs, w.accelerator, w.pool)
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
    image = script_image(ctx.outputs, script_dir=script_dir,
                         base_image=code.base_image, image=None,
                         image_repository=code.image_repository, accelerator=accelerator,
                         pool=pool, push=push)
    return replace(exp, base={**exp.base, "image": image})


def pin(exp: ex.Experiment, plans: list[trials.TrialPlan], resolve_image: bool | None, *,
        dry_run: bool, export: bool) -> None:
    """Every trial's image by digest: the base's and the swept ones, each resolved once."""
    from submit.cli.image_pin import resolve_all_for
    from submit.render.jobset import pin_images

    images = [exp.base.get("image"), *(v for t in exp.trials for k, v in t.params
                                       if k == "image")]
    pins = resolve_all_for(images, resolve_image, dry_run=dry_run, export=export)
    for p in plans:
        pin_images(p.objects, pins)


def export(plans: list[trials.TrialPlan], export_dir: str, fmt: str) -> None:
    """One file per trial in --export DIR (for `submit workload apply`)."""
    from submit.cli import export_file

    export_file.make_dir(export_dir)
    for p in plans:
        text = dump_objects(p.objects, fmt)  # as `submit workload create --export` writes
        export_file.write(Path(export_dir) / f"{p.name}.{'json' if fmt == 'json' else 'yaml'}",
                          text)
    click.echo(f"wrote {len(plans)} trials to {export_dir}/; submitted nothing (apply one with "
               f"`submit workload apply {export_dir}/{plans[0].name}."
               f"{'json' if fmt == 'json' else 'yaml'}`)", err=True)


def print_dry_run(exp: ex.Experiment, plans: list[trials.TrialPlan], fmt: str) -> None:
    """The trial table for people on stderr; stdout holds only the document, so that it can
    be piped to a parser: every trial's objects as one Kubernetes ``List`` (one object as
    itself), in JSON or YAML, the shape `submit workload create --dry-run` prints."""
    click.echo(table(trials.table(exp, plans), [("TRIAL", "trial")] +
                     [(k.upper(), k) for k in exp.keys]), nl=False, err=True)
    objs = [o for p in plans for o in p.objects]
    click.echo(dump_objects(objs, fmt), nl=False)


def submit(ctx: Context, exp: ex.Experiment, plans: list[trials.TrialPlan],
           max_running: int | None) -> None:
    """The record, then every trial owned by it (those past --max-running held)."""
    ns = _namespace(exp, plans)
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
    record = kube_call(lambda: cluster.apply(new_record(exp, plans, ns, max_running)))
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
        _roll_back(cluster, ns, done, rec_name)
        raise click.ClickException(f"experiment {exp.name} not created (trial "
                                   f"{plans[len(done)].name}): {e.message}") from None
    held = len(plans) - (max_running or len(plans)) if max_running else 0
    click.echo(f"experiment {exp.name}: {len(plans)} trials submitted to namespace {ns}"
               + (f" ({held} held until `submit experiment wait {exp.name}` releases them)"
                  if held > 0 else ""), err=True)


def _namespace(exp: ex.Experiment, plans: list[trials.TrialPlan]) -> str:
    namespaces = {o["metadata"]["namespace"] for p in plans for o in p.objects}
    if len(namespaces) > 1:
        raise click.BadParameter(f"{exp.file}: the trials are in several namespaces "
                                 f"({', '.join(sorted(namespaces))}); an experiment lives in "
                                 "one", param_hint="'FILE'")
    return str(namespaces.pop())


def _roll_back(cluster: Any, ns: str, done: list[str], rec_name: str) -> None:
    """Nothing half-applied: the trials already created go, and the record with them."""
    for name in done:
        try:
            kube_call(lambda name=name: cluster.delete_jobset(ns, name))  # type: ignore[misc]
        except click.ClickException:
            pass
    try:
        kube_call(lambda: cluster.delete_config_map(ns, rec_name))
    except click.ClickException:
        pass
