"""`submit workload ...`: the group, and create, apply and delete; the read commands (list,
queue, logs, wait) are in workload_read.py, describe in workload_describe.py, run-local in
local.py.

Commands read the stack's outputs (--stack through the Pulumi CLI, or --outputs FILE),
build and check the workload spec, render it with ``submit.render.jobset`` and only then reach the
cluster through ``submit.cluster.kube``. Errors become Click exceptions in one place
(submit/cli/context.py): a bad option or argument is a BadParameter or UsageError (exit 2),
found before the cluster is contacted and, when the check needs no stack outputs, before
`pulumi` runs; what the cluster or the outputs report is a ClickException (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import click

from submit.cli.context import Context, apply_objects, bad_input, kube_call, pass_ctx
from submit.cli.create_options import CreateOptions, create_options
from submit.cli import maintenance
from submit.cli.options import complete, lazy_group, namespace_option, stack_group_options, \
    stack_options
from submit.cli.output import dump_objects
from submit.render import spec as sp
from submit.render.spec import SpecError

_READ = "submit.cli.workload_read"


@click.group("workload", cls=lazy_group({
    # Loaded when run: `create` (the command whose start-up bench/cold_dry_run.py measures)
    # never pays for the read commands.
    "list": (_READ, "list_cmd", "List workloads with their Kueue admission and JobSet state."),
    "describe": ("submit.cli.workload_describe", "describe", "Why a workload is where it is: "
                 "Kueue conditions, events, pods by slice and worker."),
    "queue": (_READ, "queue", "Kueue's ClusterQueues: per flavor, nominal quota, usage, "
              "borrowing, pending and admitted counts, then the pending workloads in order with "
              "their priority."),
    "logs": (_READ, "logs", "Print a worker's log (default: slice 0, worker 0)."),
    "wait": (_READ, "wait", "Wait until the workload succeeds (exit 0), fails (exit 3) or the "
             "timeout passes (exit 4), printing each change of state."),
    "run-local": ("submit.cli.local", "run_local",
                  "Run a workload here, one process per pod, as `create` would render it."),
    "release": ("submit.cli.release", "release",
                "Hand a held workload (create --after, experiment --max-running) to Kueue."),
    "create-group": ("submit.cli.group", "create_group",
                     "Create one workload of several roles (a job group) from a file."),
    "goodput": ("submit.cli.goodput", "goodput",
                "A workload's goodput and badput breakdown (ml-goodput-measurement)."),
}))
@stack_group_options
@click.pass_context
def workload(ctx: click.Context, stack: str | None, outputs_file: str | None,
             project_dir: str, namespace: str | None) -> None:
    """Run training workloads as JobSets on a stack's cluster.

    --stack, --outputs, --project-dir and -n/--namespace may also be given after the
    command (`submit workload create --stack dev ...`).
    """
    ctx.obj = Context(stack, outputs_file, project_dir, namespace)


def command(name: str) -> Callable[[Callable[..., Any]], click.Command]:
    """A `submit workload` command: the stack options are accepted after it too."""
    def wrap(f: Callable[..., Any]) -> click.Command:
        return workload.command(name)(stack_options(f))
    return wrap


@command("create")
@create_options
@maintenance.runs_for_option
@pass_ctx
def create(ctx: Context, /, **options: Any) -> None:
    """Render a workload for the stack, check it, and apply it (or print it)."""
    runs_for = options.pop("runs_for", None)  # the maintenance warning's (below)
    o = CreateOptions(**options)
    wl = _checked(o)
    # The kubeconfig is a local input too: a bad one is said before any registry is asked
    # (after the options' own checks, which are bad input, exit 2).
    submits = not (o.dry_run or o.export_file)
    if submits and o.builds_image:
        ctx.cluster  # noqa: B018
    if o.builds_image:
        from submit.cli.bundle import script_image  # late: only --script-dir needs HTTP

        wl = wl.replace(image=script_image(
            ctx.outputs, script_dir=o.script_dir, base_image=o.base_image, image=o.image,
            image_repository=o.image_repository, accelerator=o.accelerator, pool=o.pool,
            push=not o.dry_run))
    with bad_input():
        objs = wl.render(ctx.outputs)  # every check first: bad input reaches no registry
        node_version = _node_version(ctx, o)
        if node_version is not None:  # the floors again, against what the nodes run
            objs = wl.render(ctx.outputs, node_version)
        fleet = ctx.outputs.fleet
        if fleet is not None:
            able = wl.spec(ctx.outputs).fleet_workers
            click.echo(f"fleet {fleet.name}: workers that can run it: {', '.join(able)} "
                       "(MultiKueue runs it on the first to admit it)", err=True)
    maintenance.warn_create(ctx.outputs, runs_for)  # one line on stderr, never a failure
    if submits and not o.builds_image:
        ctx.cluster  # noqa: B018
    if not o.builds_image:
        from submit.cli.image_pin import resolve_all_for
        from submit.render.jobset import pin_images

        pin_images(objs, resolve_all_for([o.image], o.resolve_image, dry_run=o.dry_run,
                                         export=bool(o.export_file)))
    if o.after is not None:
        from submit import api

        objs = api.hold(objs, o.after)
    if o.export_file:
        _export(objs, o.fmt, o.export_file)
    if o.dry_run:
        click.echo(dump_objects(objs, o.fmt), nl=False)
    if o.dry_run or o.export_file:
        return
    if o.image_pull_secret:  # late: only workloads that pull with a Secret
        from submit.cli import pull_secrets

        pull_secrets.check(ctx, objs)
    apply_objects(ctx, objs, o.replace)
    if o.pathways and o.headless:
        _proxy_hint(objs)


def _node_version(ctx: Context, o: CreateOptions) -> str | None:
    """For a real submit with --mount: the oldest GKE version the chosen pool's nodes
    report (its floors: submit/render/mounts.py). None when no node is up (pools that
    scale from zero) or the submitter may not list nodes; the stack's pinned version is
    checked then, as offline."""
    if not o.mount or o.dry_run or o.export_file:
        return None
    from infra.catalog.gke_versions import version_tuple
    from submit.render.build import pick_pool

    chosen = pick_pool(ctx.outputs, o.accelerator, o.pool)
    selector = ",".join(f"{k}={v}" for k, v in sorted(chosen.node_selector.items()))
    versions = kube_call(lambda: ctx.cluster.node_versions(selector)) or []
    known = [v for v in versions if v]
    return min(known, key=version_tuple) if known else None


def _checked(o: CreateOptions) -> Any:
    """The workload, its options checked before the outputs: a bad option never runs
    `pulumi`."""
    wl = o.workload()
    with bad_input():
        wl.check()
        if o.after is not None:
            sp.check_workload_name(o.after, "--after")
        from submit.cli import export_file as export

        bad = export.problem(o.export_file) if o.export_file else None
        if bad:
            raise SpecError("--export", bad)
    return wl


def _proxy_hint(objs: list[dict[str, Any]]) -> None:
    from submit.render.pathways import PROXY_PORT, port_forward_command

    meta = next(o for o in objs if o["kind"] == "JobSet")["metadata"]
    click.echo("once the head pod runs, reach the Pathways proxy with:\n  "
               f"{port_forward_command(meta['name'], meta['namespace'])}\nand point JAX at it: "
               f"JAX_PLATFORMS=proxy JAX_BACKEND_TARGET=grpc://localhost:{PROXY_PORT}")


def _export(objs: list[dict[str, Any]], fmt: str, export_file: str) -> None:
    from submit.cli import export_file as export

    export.write(export_file, dump_objects(objs, fmt))
    click.echo(f"wrote {export_file}; apply it with `submit workload apply {export_file}`",
               err=True)


@command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--replace", is_flag=True, help="Delete and recreate a workload of that name.")
@pass_ctx
def apply_cmd(ctx: Context, file: str, replace: bool) -> None:
    """Apply a manifest written by `submit workload create --export`."""
    objs = _read_manifest(file)
    apply_objects(ctx, objs, replace)


_KINDS = {"JobSet": "jobset.x-k8s.io/v1alpha2", "ConfigMap": "v1"}


def _read_manifest(file: str) -> list[dict[str, Any]]:
    """The objects of an exported manifest, checked before the outputs are read. Messages
    give positions, never the file's text: its env values may be secrets."""
    def bad(message: str) -> click.BadParameter:
        return click.BadParameter(f"{file}{message}", param_hint="'FILE'")

    try:
        text = Path(file).read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise bad(f": cannot read it: {e.strerror}") from None
    except UnicodeDecodeError:
        raise bad(" is not YAML or JSON: it is not UTF-8 text") from None
    import yaml

    from submit.cli.output import unwrap

    try:
        loaded = json.loads(text) if text.lstrip().startswith(("[", "{")) else \
            [d for d in yaml.safe_load_all(text) if d]
        loaded = unwrap(loaded if isinstance(loaded, list) else [loaded])
    except (ValueError, yaml.YAMLError) as e:
        from submit.cli.output import not_a_manifest

        raise click.BadParameter(not_a_manifest(file, e), param_hint="'FILE'") from None
    objs = loaded if isinstance(loaded, list) else [loaded]
    kinds = [o.get("kind") if isinstance(o, dict) else None for o in objs]
    if kinds.count("JobSet") != 1 or any(k not in _KINDS for k in kinds):
        raise bad(f" must hold one JobSet (and optionally its ConfigMap), not {kinds}")
    namespaces = set()
    for obj in objs:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        missing = [k for k in ("name", "namespace") if not meta.get(k)]
        if obj["kind"] == "JobSet" and not (meta.get("labels") or {}).get(
                "kueue.x-k8s.io/queue-name"):
            missing.append("labels.kueue.x-k8s.io/queue-name")
        if missing:
            raise bad(f": the {obj['kind']} has no metadata.{', metadata.'.join(missing)}; "
                      "apply files written by `submit workload create --export`")
        if obj.get("apiVersion") != _KINDS[obj["kind"]]:
            raise bad(f": the {obj['kind']}'s apiVersion {obj.get('apiVersion')!r} is not "
                      f"{_KINDS[obj['kind']]!r}")
        try:
            if obj["kind"] == "JobSet":
                sp.check_workload_name(str(meta["name"]), "FILE", new=True)
            sp.check_namespace(str(meta["namespace"]))
        except SpecError as e:
            raise bad(f": metadata of the {obj['kind']}: {e.message}") from None
        namespaces.add(meta["namespace"])
    if len(namespaces) > 1:
        raise bad(f": the objects are in several namespaces ({', '.join(sorted(namespaces))})")
    return objs


@command("delete")
@click.argument("names", nargs=-1, shell_complete=complete("workloads"))
@click.option("--all", "all_", is_flag=True, help="Every accelstack workload in the namespace.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation with --all.")
@namespace_option
@pass_ctx
def delete(ctx: Context, names: tuple[str, ...], all_: bool, yes: bool,
           namespace: str | None) -> None:
    """Delete workloads (their Jobs, pods and config go with them)."""
    if bool(names) == all_:
        raise click.UsageError("name one or more workloads, or pass --all")
    with bad_input():
        for name in names:
            sp.check_workload_name(name, "NAMES")
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    targets = list(names)
    if all_:
        found = kube_call(lambda: cluster.list_jobsets(
            ns, "app.kubernetes.io/managed-by=accelstack"))
        targets = [j["metadata"]["name"] for j in found]
        if not targets:
            click.echo(f"no workloads in namespace {ns}")
            return
        if not yes:
            click.confirm(f"delete {len(targets)} workloads in {ns} ({', '.join(targets)})?",
                          abort=True)
    missing = []
    for name in targets:
        if kube_call(lambda name=name: cluster.get_jobset(ns, name)) is None:  # type: ignore[misc]
            missing.append(name)
            continue
        kube_call(lambda name=name: cluster.delete_jobset(ns, name))  # type: ignore[misc]
        click.echo(f"deleted workload {name}")
    if missing:
        raise click.ClickException(f"not found in namespace {ns}: {', '.join(missing)}")

