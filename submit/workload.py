"""`submit workload ...`: create, apply, list, describe, logs, wait and delete workloads.

Commands read the stack's outputs (--stack through the Pulumi CLI, or --outputs FILE),
build and check the workload spec, render it with ``submit.render`` and only then reach the
cluster through ``submit.kube``. Errors become Click exceptions here, in one place.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import click
import yaml

from submit import status as st
from submit.output import emit
from submit.render import render
from submit.spec import SpecError, build_spec
from submit.stack_outputs import OutputsError, read

EXIT_FAILED = 3  # `wait`: the workload failed
EXIT_TIMEOUT = 4  # `wait`: the timeout passed first


class Context:
    """What every command shares: where the outputs come from, loaded once, on demand."""

    def __init__(self, stack: str | None, outputs_file: str | None, project_dir: str) -> None:
        self.stack = stack
        self.outputs_file = outputs_file
        self.project_dir = project_dir
        self._outputs: Any = None
        self._cluster: Any = None

    @property
    def outputs(self) -> Any:
        if self._outputs is None:
            try:
                self._outputs = read(self.stack, self.outputs_file, self.project_dir)
            except OutputsError as e:
                raise click.ClickException(str(e)) from None
        return self._outputs

    @property
    def cluster(self) -> Any:
        if self._cluster is None:
            from submit.kube import Cluster, KubeError

            try:
                self._cluster = Cluster(self.outputs.kubeconfig)
            except KubeError as e:
                raise click.ClickException(str(e)) from None
        return self._cluster


pass_ctx = click.make_pass_decorator(Context)


def kube_call(fn: Callable[[], Any]) -> Any:
    """Run a cluster call; its KubeError becomes the command's error (exit 1)."""
    from submit.kube import KubeError

    try:
        return fn()
    except KubeError as e:
        raise click.ClickException(str(e)) from None


@click.group("workload")
@click.option("--stack", envvar="ACCELSTACK_STACK", metavar="NAME",
              help="Pulumi stack whose outputs describe the cluster [env ACCELSTACK_STACK].")
@click.option("--outputs", "outputs_file", envvar="ACCELSTACK_OUTPUTS", metavar="FILE",
              help="Read the outputs from FILE (JSON of `pulumi stack output --json "
                   "--show-secrets`, or an offline preview's) [env ACCELSTACK_OUTPUTS].")
@click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", default=".",
              show_default=True, help="Pulumi project directory [env ACCELSTACK_PROJECT_DIR].")
@click.pass_context
def workload(ctx: click.Context, stack: str | None, outputs_file: str | None,
             project_dir: str) -> None:
    """Run training workloads as JobSets on a stack's cluster."""
    ctx.obj = Context(stack, outputs_file, project_dir)


def _emit_objects(objs: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(objs if len(objs) > 1 else objs[0], indent=2))
    else:
        click.echo(yaml.safe_dump_all(objs, sort_keys=False), nl=False)


def apply_objects(ctx: Context, objs: list[dict[str, Any]], replace: bool = False) -> None:
    """Apply a rendered workload: refuse to overwrite a live one unless --replace."""
    js = next(o for o in objs if o["kind"] == "JobSet")
    ns, name = js["metadata"]["namespace"], js["metadata"]["name"]
    cluster = ctx.cluster
    existing = kube_call(lambda: cluster.get_jobset(ns, name))
    if existing is not None:
        if not replace:
            raise click.ClickException(
                f"workload {name} already exists in namespace {ns}; delete it with `submit "
                f"workload delete {name}`, or pass --replace to delete and recreate it")
        kube_call(lambda: cluster.delete_jobset(ns, name))
        for _ in range(120):  # foreground deletion: wait until it is gone
            if kube_call(lambda: cluster.get_jobset(ns, name)) is None:
                break
            time.sleep(1)
        for cm in (o for o in objs if o["kind"] == "ConfigMap"):
            # Its owner is gone; do not apply onto an object being garbage-collected.
            cm_name = cm["metadata"]["name"]
            kube_call(lambda: cluster.delete_config_map(ns, cm_name))
    for obj in objs:
        applied = kube_call(lambda obj=obj: cluster.apply(obj))  # type: ignore[misc]
        if obj["kind"] == "JobSet":
            uid = (applied.get("metadata") or {}).get("uid")
            for cm in (o for o in objs if o["kind"] == "ConfigMap"):
                # The ConfigMap goes when the JobSet goes.
                owned = json.loads(json.dumps(cm))
                owned["metadata"]["ownerReferences"] = [{
                    "apiVersion": obj["apiVersion"], "kind": "JobSet", "name": name,
                    "uid": uid, "blockOwnerDeletion": False}]
                kube_call(lambda owned=owned: cluster.apply(owned))  # type: ignore[misc]
    click.echo(f"workload {name} submitted to namespace {ns} "
               f"(queue {js['metadata']['labels'].get('kueue.x-k8s.io/queue-name')})", err=True)


@workload.command("create")
@click.option("--workload", "name", required=True, help="Workload (JobSet) name.")
@click.option("--accelerator", required=True,
              help="Slice type, any accepted name form (v5p-128, v5p-4x4x4, h100-mega-80gb-8).")
@click.option("--pool", help="Slice pool, when the stack has several of this accelerator.")
@click.option("--num-slices", type=int, help="TPU slices (multislice).")
@click.option("--num-nodes", type=int, help="GPU or CPU nodes.")
@click.option("--image", required=True, help="Container image.")
@click.option("--command", help="Command, run with /bin/sh -c in the container.")
@click.option("--env", multiple=True, metavar="KEY=VALUE", help="Environment variable.")
@click.option("--env-file", type=click.Path(dir_okay=False), help="File of KEY=VALUE lines.")
@click.option("--secret-env", multiple=True, metavar="NAME=SECRET/KEY",
              help="Environment variable from a key of a Kubernetes Secret.")
@click.option("--priority", help="Kueue priority class (very-low .. very-high).")
@click.option("--max-restarts", type=int, default=0, show_default=True,
              help="Times the whole workload may restart after a failure.")
@click.option("--restart-on-exit-codes", metavar="CODES",
              help="Comma-separated exit codes that restart the workload; any other failure "
                   "fails it at once.")
@click.option("--ttl", type=int, metavar="SECONDS", help="Delete the workload this long after "
              "it finishes.")
@click.option("--termination-grace-period", type=int, metavar="SECONDS",
              help="Grace period for pods to stop.")
@click.option("--config-file", type=click.Path(dir_okay=False),
              help="File delivered to every pod at /etc/accelstack/config/<name> "
                   "($ACCELSTACK_CONFIG).")
@click.option("--shm-size", metavar="QUANTITY", help="Limit of /dev/shm (memory-backed).")
@click.option("--cpu", metavar="QUANTITY", help="CPU each pod requests (counted by Kueue).")
@click.option("--memory", metavar="QUANTITY",
              help="Memory each pod requests and may use (counted by Kueue).")
@click.option("--mount", "mount", multiple=True, metavar="STORE[:PATH][:ro]",
              help="Mount a store of the stack (default path /mnt/STORE, read-write unless "
                   ":ro); its path is in $ACCELSTACK_MOUNT_<STORE>. Repeatable.")
@click.option("--namespace", help="Namespace (default: the stack's workload namespace).")
@click.option("--queue", help="LocalQueue (default: the namespace's queue).")
@click.option("--dry-run", is_flag=True, help="Print the objects; apply nothing.")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Format of --dry-run and --export.")
@click.option("--export", "export_file", type=click.Path(dir_okay=False),
              help="Also write the objects to FILE (for `submit workload apply`).")
@click.option("--replace", is_flag=True, help="Delete and recreate a workload of that name.")
@pass_ctx
def create(ctx: Context, name: str, accelerator: str, pool: str | None,
           num_slices: int | None, num_nodes: int | None, image: str, command: str | None,
           env: tuple[str, ...], env_file: str | None, secret_env: tuple[str, ...],
           priority: str | None, max_restarts: int, restart_on_exit_codes: str | None,
           ttl: int | None, termination_grace_period: int | None, config_file: str | None,
           shm_size: str | None, cpu: str | None, memory: str | None,
           mount: tuple[str, ...], namespace: str | None, queue: str | None, dry_run: bool,
           fmt: str, export_file: str | None, replace: bool) -> None:
    """Render a workload for the stack, check it, and apply it (or print it)."""
    try:
        spec = build_spec(
            ctx.outputs, workload=name, accelerator=accelerator, image=image, command=command,
            num_slices=num_slices, num_nodes=num_nodes, pool=pool, namespace=namespace,
            queue=queue, env=env, env_file=env_file, secret_env=secret_env, priority=priority,
            max_restarts=max_restarts, restart_on_exit_codes=restart_on_exit_codes, ttl=ttl,
            termination_grace_period=termination_grace_period, config_file=config_file,
            shm_size=shm_size, cpu=cpu, memory=memory, mount=mount)
    except SpecError as e:
        raise click.BadParameter(e.message, param_hint=f"'{e.option}'") from None
    objs = render(spec)
    if export_file:
        text = (json.dumps(objs, indent=2) + "\n" if fmt == "json"
                else yaml.safe_dump_all(objs, sort_keys=False))
        Path(export_file).write_text(text)
    if dry_run:
        _emit_objects(objs, fmt)
        return
    apply_objects(ctx, objs, replace)


@workload.command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--replace", is_flag=True, help="Delete and recreate a workload of that name.")
@pass_ctx
def apply_cmd(ctx: Context, file: str, replace: bool) -> None:
    """Apply a manifest written by `submit workload create --export`."""
    text = Path(file).read_text()
    try:
        loaded = json.loads(text) if text.lstrip().startswith(("[", "{")) else \
            [d for d in yaml.safe_load_all(text) if d]
    except (ValueError, yaml.YAMLError) as e:
        raise click.BadParameter(f"{file} is not YAML or JSON: {e}", param_hint="'FILE'") \
            from None
    objs = loaded if isinstance(loaded, list) else [loaded]
    kinds = [o.get("kind") if isinstance(o, dict) else None for o in objs]
    if kinds.count("JobSet") != 1 or any(k not in ("JobSet", "ConfigMap") for k in kinds):
        raise click.BadParameter(f"{file} must hold one JobSet (and optionally its ConfigMap), "
                                 f"not {kinds}", param_hint="'FILE'")
    for obj in objs:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        missing = [k for k in ("name", "namespace") if not meta.get(k)]
        if obj["kind"] == "JobSet" and not (meta.get("labels") or {}).get(
                "kueue.x-k8s.io/queue-name"):
            missing.append("labels.kueue.x-k8s.io/queue-name")
        if missing:
            raise click.BadParameter(
                f"{file}: the {obj['kind']} has no metadata.{', metadata.'.join(missing)}; "
                "apply files written by `submit workload create --export`",
                param_hint="'FILE'")
    apply_objects(ctx, objs, replace)


# -- reading workloads ------------------------------------------------------------------

@workload.command("list")
@click.option("--namespace", help="Namespace (default: the stack's workload namespace).")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True)
@pass_ctx
def list_cmd(ctx: Context, namespace: str | None, fmt: str) -> None:
    """List workloads with their Kueue admission and JobSet state."""
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    jobsets = kube_call(lambda: cluster.list_jobsets(ns, "app.kubernetes.io/managed-by=accelstack"))
    kueue = kube_call(lambda: cluster.list_workloads(ns))
    rows = [st.summary(js, kueue, now=time.time()) for js in jobsets]
    emit(rows, fmt, st.LIST_COLUMNS)


@workload.command("describe")
@click.argument("name")
@click.option("--namespace", help="Namespace (default: the stack's workload namespace).")
@pass_ctx
def describe(ctx: Context, name: str, namespace: str | None) -> None:
    """Why a workload is where it is: Kueue conditions, events, pods by slice and worker."""
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    js = kube_call(lambda: cluster.get_jobset(ns, name))
    if js is None:
        raise click.ClickException(f"workload {name} not found in namespace {ns}")
    kueue = kube_call(lambda: cluster.list_workloads(ns))
    pods = kube_call(lambda: cluster.list_pods(ns, f"jobset.sigs.k8s.io/jobset-name={name}"))
    events = kube_call(lambda: cluster.events(ns, "JobSet", name))
    wl = st.kueue_workload(js, kueue)
    if wl is not None:
        wl_name = wl["metadata"]["name"]
        events += kube_call(lambda: cluster.events(ns, "Workload", wl_name))
    click.echo(st.describe(js, wl, pods, events, now=time.time()), nl=False)


@workload.command("logs")
@click.argument("name")
@click.option("--slice", "slice_index", type=int, default=0, show_default=True,
              help="Slice (TPU) or replica index.")
@click.option("--worker", type=int, default=0, show_default=True,
              help="Worker (pod) index within the slice.")
@click.option("-f", "--follow", is_flag=True, help="Stream new lines as they come.")
@click.option("--tail", type=int, help="Only the last N lines.")
@click.option("--namespace", help="Namespace (default: the stack's workload namespace).")
@pass_ctx
def logs(ctx: Context, name: str, slice_index: int, worker: int, follow: bool,
         tail: int | None, namespace: str | None) -> None:
    """Print a worker's log (default: slice 0, worker 0)."""
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    pods = kube_call(lambda: cluster.list_pods(ns, f"jobset.sigs.k8s.io/jobset-name={name}"))
    pod = st.pick_pod(pods, slice_index, worker)
    if pod is None:
        raise click.ClickException(
            f"no pod for slice {slice_index}, worker {worker} of workload {name} in {ns} "
            f"({len(pods)} pods exist; it may still be queued: see `submit workload describe "
            f"{name}`)")
    pod_name = pod["metadata"]["name"]
    def stream() -> None:
        for line in cluster.logs(ns, pod_name, "main", follow, tail):
            click.echo(line)
    kube_call(stream)  # errors while following end the command cleanly too


@workload.command("wait")
@click.argument("name")
@click.option("--timeout", type=int, default=3600, show_default=True, metavar="SECONDS")
@click.option("--interval", type=float, default=10.0, show_default=True, metavar="SECONDS",
              help="Seconds between checks.")
@click.option("--namespace", help="Namespace (default: the stack's workload namespace).")
@pass_ctx
def wait(ctx: Context, name: str, timeout: int, interval: float, namespace: str | None) -> None:
    """Wait until the workload succeeds (exit 0), fails (exit 3) or the timeout passes
    (exit 4), printing each change of state."""
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    deadline = time.monotonic() + timeout
    last = None
    while True:
        js = kube_call(lambda: cluster.get_jobset(ns, name))
        if js is None:
            raise click.ClickException(f"workload {name} not found in namespace {ns}")
        kueue = kube_call(lambda: cluster.list_workloads(ns))
        row = st.summary(js, kueue, now=time.time())
        state = (row["admission"], row["state"], row["restarts"])
        if state != last:
            click.echo(f"{time.strftime('%H:%M:%S')} {name}: admission={row['admission']} "
                       f"state={row['state']} restarts={row['restarts']}", err=True)
            last = state
        if row["state"] == "Completed":
            click.echo(f"workload {name} succeeded")
            return
        if row["state"] == "Failed":
            click.echo(f"workload {name} failed: {st.failure_message(js)}")
            sys.exit(EXIT_FAILED)
        if time.monotonic() >= deadline:
            click.echo(f"workload {name} still {row['state']} after {timeout}s")
            sys.exit(EXIT_TIMEOUT)
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


@workload.command("delete")
@click.argument("names", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every accelstack workload in the namespace.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation with --all.")
@click.option("--namespace", help="Namespace (default: the stack's workload namespace).")
@pass_ctx
def delete(ctx: Context, names: tuple[str, ...], all_: bool, yes: bool,
           namespace: str | None) -> None:
    """Delete workloads (their Jobs, pods and config go with them)."""
    if bool(names) == all_:
        raise click.UsageError("name one or more workloads, or pass --all")
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
