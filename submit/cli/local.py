"""`submit workload run-local`: render a workload exactly as `create` would (or read an
exported JobSet) and run it here, one process per pod.

The command reuses `create`'s option definitions (so the two never drift), builds the plan
(``submit.local.plan``) before starting anything, and hands it to ``submit.local.run``.
Bad input exits 2 with one line naming the option; the run exits 0 when every process
exited 0, else with the exit code of the process that failed the workload (130 or 143 when
interrupted).
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import click
import yaml

from infra.record import replace
from submit.local import image_check as image_check_mod
from submit.local import plan as lp
from submit.local import policy as pol
from submit.local.errors import PlanError
from submit.local.run import FreePorts, Runner, summary
from submit.cli.output import dump_objects, unwrap, yaml_text
from submit.render.jobset import render
from submit.render.build import build_spec
from submit.render.spec import SpecError
from submit.cli.context import Context
from submit.cli.workload import create

PROCESSES_PER_CORE = 4  # JAX/PyTorch CPU processes this machine runs at once, per core
# Options about other workloads in the cluster, and create's stack options (run-local
# has its own --stack and --outputs).
_CREATE_ONLY = {"replace", "after", "resolve_image", "stack_after", "outputs_after", "project_dir_after"}
_SPEC_ARGS = set(inspect.signature(build_spec).parameters) - {"outputs"}
_HELP = {
    "dry_run": "Print the plan (processes, argv, env); run nothing.",
    "fmt": "Format of --dry-run and --export.",
}


def _create_params() -> list[click.Parameter]:
    """`create`'s options, none required: --from FILE replaces them."""
    params = []
    for p in create.params:
        if p.name in _CREATE_ONLY:
            continue
        q = copy.copy(p)
        q.required = False
        if isinstance(q, click.Option) and q.name in _HELP:
            q.help = _HELP[q.name]
        params.append(q)
    return params


def _local_params() -> list[click.Parameter]:
    return [
        click.Option(["--stack"], metavar="NAME", help="Pulumi stack whose outputs give the "
                     "pool facts (overrides `submit workload --stack`)."),
        click.Option(["--outputs", "outputs_file"], metavar="FILE",
                     help="Read the outputs from FILE (overrides `submit workload --outputs`)."),
        click.Option(["--from", "from_file"], type=click.Path(dir_okay=False),
                     help="Run an exported JobSet (`create --export`) instead of rendering one."),
        click.Option(["--scale-down"], metavar="SLICESxHOSTS",
                     help="Run a smaller shape with the same structure: replicas x pods per "
                          "replica, e.g. 2x2 for 2 slices of 2 hosts."),
        click.Option(["--local-mount"], multiple=True, metavar="VOLUME=DIR",
                     help="Directory standing in for a volume the pod mounts (a store, a "
                          "PVC); repeat per volume."),
        click.Option(["--image-check"], is_flag=True,
                     help="Warn about programs, Python modules and scripts the command needs "
                          "that this machine lacks (the image is never used)."),
        click.Option(["--run-dir"], type=click.Path(file_okay=False),
                     help="Where logs, config files and emptyDirs go [default: a new "
                          "temporary directory]."),
        click.Option(["--max-processes"], type=click.IntRange(min=1), metavar="N",
                     help=f"Most processes to run at once [default: {PROCESSES_PER_CORE} per "
                          "core]."),
        click.Option(["--container"], metavar="NAME",
                     help="The container to run [default: main, else the first]."),
    ]


def _bad(option: str, message: str) -> click.BadParameter:
    return click.BadParameter(message, param_hint=f"'{option}'")


def _load(path: str) -> list[Any]:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise _bad("--from", f"cannot read {path}: {e.strerror}") from None
    try:
        loaded = json.loads(text) if text.lstrip().startswith(("[", "{")) else \
            [d for d in yaml.safe_load_all(text) if d]
    except (ValueError, yaml.YAMLError) as e:
        from submit.cli.output import not_a_manifest

        raise _bad("--from", not_a_manifest(path, e)) from None
    return unwrap(loaded if isinstance(loaded, list) else [loaded])


def _mounts(items: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    out = []
    for item in items:
        name, sep, d = item.partition("=")
        if not sep or not name or not d:
            raise _bad("--local-mount", f"{item!r} is not VOLUME=DIR")
        if not Path(d).is_dir():
            raise _bad("--local-mount", f"{d!r} (for volume {name}) is not a directory")
        out.append((name, str(Path(d).resolve())))
    return tuple(out)


def _volume_names(js: dict[str, Any]) -> list[str]:
    return sorted({v["name"] for rj in js["spec"]["replicatedJobs"]
                   for v in rj["template"]["spec"]["template"]["spec"].get("volumes") or []})


def _count(js: dict[str, Any]) -> tuple[int, str]:
    shapes, total = [], 0
    for rj in js["spec"]["replicatedJobs"]:
        job = rj["template"]["spec"]
        r, p = int(rj.get("replicas", 1)), int(job.get("completions", job.get("parallelism", 1)))
        total += r * p
        shapes.append(f"{r} x {p}")
    return total, " + ".join(shapes)


def _objects(ctx: Context, click_ctx: click.Context, kw: dict[str, Any],
             shape: tuple[int, int] | None) -> list[Any]:
    if kw["from_file"]:
        given = [p.opts[0] for p in _create_params() if p.name and click_ctx.get_parameter_source(
            p.name) in (click.core.ParameterSource.COMMANDLINE,
                        click.core.ParameterSource.ENVIRONMENT) and p.name != "dry_run"
                 and p.name != "fmt"]
        if given:
            raise _bad(given[0], "cannot be combined with --from, which runs the exported "
                       "JobSet as it is")
        objs = _load(kw["from_file"])
        try:
            js, _ = lp.split_objects(objs, "--from")
            if shape:
                objs = [lp.scale_down(o, *shape) if o is js else o for o in objs]
        except PlanError as e:
            raise _bad(e.option, e.message) from None
        return objs
    for opt, key in (("--workload", "name"), ("--accelerator", "accelerator"),
                     ("--image", "image")):
        if not kw.get(key):
            raise click.UsageError(f"Missing option '{opt}' (or pass --from FILE).")
    if kw["stack"] or kw["outputs_file"]:
        ctx = Context(kw["stack"], kw["outputs_file"], ctx.project_dir)
    args = {("workload" if k == "name" else k): v for k, v in kw.items()
            if (k if k != "name" else "workload") in _SPEC_ARGS}
    try:
        spec = build_spec(ctx.outputs, **args)
    except SpecError as e:
        raise _bad(e.option, e.message) from None
    if shape:
        r, p = shape
        if r > spec.replicas or p > spec.parallelism:
            raise _bad("--scale-down", f"{r}x{p} is larger than the workload "
                       f"({spec.replicas}x{spec.parallelism}); it can only shrink it")
        spec = replace(spec, replicas=r, parallelism=p)
    return render(spec)


def _script_dir(kw: dict[str, Any]) -> str | None:
    """`create`'s --script-dir rules; locally DIR is the working directory and the base
    image stands in as the rendered image (neither is built nor pushed)."""
    if kw.get("script_dir") is None:
        if kw.get("base_image") is not None:
            raise _bad("--base-image", "needs --script-dir (the directory to add to it)")
        return None
    if kw.get("image") is not None:
        raise _bad("--image", "cannot be used with --script-dir (the image is built from "
                   "--base-image and the directory)")
    if kw.get("base_image") is None:
        raise _bad("--base-image", "is required with --script-dir")
    kw["image"] = kw["base_image"]
    return str(Path(kw["script_dir"]).resolve())


@click.command("run-local", params=_create_params() + _local_params())
@click.pass_context
def run_local(click_ctx: click.Context, /, **kw: Any) -> None:
    """Run the workload here, one process per pod, with the environment the cluster would
    give each one (the image is not used: commands run with /bin/sh -c on this machine)."""
    try:
        _run_local(click_ctx, kw)
    except KeyboardInterrupt:
        # Ctrl-C before the runner takes SIGINT itself (reading --from, rendering,
        # planning): nothing was started. One line and 130 (128 + SIGINT), as the runner
        # ends an interrupted run, rather than Click's "Aborted!" and exit 1.
        click.echo("run-local: interrupted (Ctrl-C) before any process started; nothing ran",
                   err=True)
        click_ctx.exit(EXIT_INTERRUPTED)


EXIT_INTERRUPTED = 130


def _run_local(click_ctx: click.Context, kw: dict[str, Any]) -> None:
    ctx = click_ctx.find_object(Context)
    if ctx is None:  # invoked outside `submit workload`
        ctx = Context(None, None, ".")
    shape = None
    if kw["scale_down"]:
        try:
            shape = lp.parse_shape(kw["scale_down"])
        except PlanError as e:
            raise _bad(e.option, e.message) from None
    mounts = _mounts(kw["local_mount"])
    script_dir = _script_dir(kw)
    objs = _objects(ctx, click_ctx, kw, shape)
    if kw["export_file"]:
        from submit.cli import export_file

        export_file.write(kw["export_file"], dump_objects(objs, kw["fmt"]))
        if not kw["dry_run"]:  # --export writes and runs nothing, as on every command
            click.echo(f"wrote {kw['export_file']}; ran nothing (run it with `submit workload "
                       f"run-local --from {kw['export_file']}`)", err=True)
            return
    js, _ = lp.split_objects(objs, "--from")
    _check_fits(js, mounts, kw["max_processes"])
    run_dir = kw["run_dir"] or tempfile.mkdtemp(prefix=f"accelstack-{js['metadata']['name']}-")
    # --script-dir: on the cluster the command runs in the image's copy of DIR; here it
    # runs in DIR itself (nothing is built or pushed).
    opts = lp.Options(run_dir=str(Path(run_dir).resolve()), cwd=script_dir or os.getcwd(),
                      mounts=mounts,
                      local_env=tuple(os.environ.items()), container=kw["container"])
    ports = FreePorts()

    def make(attempt: int) -> lp.Plan:
        return lp.build(objs, opts, attempt, ports)

    first = _first_plan(make)
    if kw["dry_run"]:
        data = first.to_dict()
        click.echo(json.dumps(data, indent=2) if kw["fmt"] == "json"
                   else yaml_text(data), nl=kw["fmt"] == "json")
        return
    _announce(js, first, opts, kw["image_check"])
    plans = {0: first}
    outcome = Runner(lambda a: plans.pop(a) if a in plans else make(a), sys.stdout).run()
    click.echo(summary(outcome), nl=False)
    click.echo(f"workload {first.jobset} {outcome.state.lower()}: {outcome.message} "
               f"(restarts: {outcome.restarts})")
    click_ctx.exit(outcome.exit_code)


def _check_fits(js: dict[str, Any], mounts: Any, max_processes: int | None) -> None:
    """Every --local-mount names a volume of the pods, and the processes fit this machine."""
    known = _volume_names(js)
    for name, _d in mounts:
        if name not in known:
            raise _bad("--local-mount", f"{name!r} is not a volume of the workload's pods; "
                       f"they have: {', '.join(known) or 'none'}")
    total, shapes = _count(js)
    limit = max_processes or PROCESSES_PER_CORE * (os.cpu_count() or 1)
    if total > limit:
        raise _bad("--scale-down", f"the workload runs {total} processes ({shapes}); this "
                   f"machine takes at most {limit} ({PROCESSES_PER_CORE} per core, "
                   "--max-processes): pass a smaller --scale-down such as 2x2")


def _first_plan(make: Callable[[int], lp.Plan]) -> lp.Plan:
    try:
        return make(0)
    except PlanError as e:
        raise _bad(e.option, e.message) from None
    except pol.PolicyError as e:
        raise _bad("--from", str(e)) from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        # Only a hand-edited --from file gets here (rendered objects are complete).
        raise _bad("--from", f"the JobSet has a malformed field ({type(e).__name__}: {e})") \
            from None


def _announce(js: dict[str, Any], first: lp.Plan, opts: lp.Options, image_check: bool) -> None:
    """What runs where, the plan's notes and, with --image-check, what this machine lacks."""
    image = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0].get("image", "?")
    click.echo(f"run-local: the image {image} is not used; {len(first.processes)} processes "
               f"run with this machine's programs; logs in {opts.run_dir}/logs", err=True)
    for note in first.notes:
        click.echo(f"run-local: {note}", err=True)
    if image_check:
        p0 = first.processes[0]
        for w in image_check_mod.warnings(p0.argv, {**os.environ, **p0.env_dict()}, p0.cwd):
            click.echo(f"warning: {w}", err=True)
