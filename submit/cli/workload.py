"""`submit workload ...`: create, apply, list, describe, logs, wait and delete workloads.

Commands read the stack's outputs (--stack through the Pulumi CLI, or --outputs FILE),
build and check the workload spec, render it with ``submit.render.jobset`` and only then reach the
cluster through ``submit.cluster.kube``. Errors become Click exceptions here, in one place: a bad
option or argument is a BadParameter or UsageError (exit 2), found before the cluster is
contacted and, when the check needs no stack outputs, before `pulumi` runs; what the
cluster or the outputs report is a ClickException (exit 1).
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from submit.render import spec as sp
from submit.cli.options import (DURATION, complete, lazy_group, namespace_option,
                                 stack_group_options, stack_options)
from submit.cli.output import dump_objects
from submit.render.spec import SpecError


EXIT_FAILED = 3  # `wait`: the workload failed
EXIT_TIMEOUT = 4  # `wait`: the timeout passed first


@contextmanager
def bad_input() -> Iterator[None]:
    """Where a SpecError (a bad option or argument) becomes Click's usage error, exit 2."""
    try:
        yield
    except SpecError as e:
        raise click.BadParameter(e.message, param_hint=f"'{e.option}'") from None


class Context:
    """What every command shares: where the outputs come from, loaded once, on demand."""

    def __init__(self, stack: str | None, outputs_file: str | None, project_dir: str,
                 namespace: str | None = None) -> None:
        self.stack = stack
        self.outputs_file = outputs_file
        self.project_dir = project_dir
        self.namespace = namespace
        self._outputs: Any = None
        self._cluster: Any = None

    @property
    def outputs(self) -> Any:
        if self._outputs is None:
            from submit.cluster.stack_outputs import OptionError, OutputsError, read

            try:
                self._outputs = read(self.stack, self.outputs_file, self.project_dir)
            except OptionError as e:
                if e.option is None:
                    raise click.UsageError(str(e)) from None
                raise click.BadParameter(str(e), param_hint=f"'{e.option}'") from None
            except OutputsError as e:
                raise click.ClickException(str(e)) from None
        return self._outputs

    @property
    def cluster(self) -> Any:
        if self._cluster is None:
            from submit.cluster.kube import Cluster, KubeError

            try:
                self._cluster = Cluster(self.outputs.kubeconfig)
            except KubeError as e:
                raise click.ClickException(str(e)) from None
        return self._cluster


pass_ctx = click.make_pass_decorator(Context)


def kube_call(fn: Callable[[], Any]) -> Any:
    """Run a cluster call; its KubeError becomes the command's error (exit 1)."""
    from submit.cluster.kube import KubeError

    try:
        return fn()
    except KubeError as e:
        raise click.ClickException(str(e)) from None


@click.group("workload", cls=lazy_group({
    "run-local": ("submit.cli.local", "run_local",
                  "Run a workload here, one process per pod, as `create` would render it."),
    "release": ("submit.cli.experiment", "release",
                "Hand a held workload (create --after, experiment --max-running) to Kueue."),
    "create-group": ("submit.cli.group", "create_group",
                     "Create one workload of several roles (a job group) from a file."),
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


def apply_objects(ctx: Context, objs: list[dict[str, Any]], replace: bool = False) -> None:
    """Apply a rendered workload (submit.api.submit): refuse to overwrite a live one unless
    --replace."""
    from submit import api

    progress: Any = None

    def waiting(seconds: float) -> None:
        nonlocal progress
        if progress is None:
            from submit.cli.progress import Progress

            progress = Progress()
            progress.line("--replace: deleting the running workload; waiting until it is gone")
        progress.sleep(seconds, "deleting the running workload")

    try:
        done = api.submit(ctx.cluster, objs, replace, waiting)
    except api.ClusterError as e:
        raise click.ClickException(e.message) from None
    finally:
        if progress is not None:
            progress.done()
    if done.held:
        click.echo(f"workload {done.name} created held in namespace {done.namespace} "
                   f"(queue {done.queue}); `submit workload release {done.name}` hands it to "
                   "Kueue", err=True)
        return
    from submit.cli.next_steps import lines

    js = next(o for o in objs if o["kind"] == "JobSet")
    stack_args = (["--outputs", ctx.outputs_file] if ctx.outputs_file
                  else ["--stack", ctx.stack] if ctx.stack else [])
    if done.namespace != ctx.outputs.workload_namespace:
        stack_args += ["-n", done.namespace]
    click.echo("\n".join(lines(js, ctx.outputs.cluster, stack_args)), err=True)


@command("create")
@click.option("--workload", "name", required=True, help="Workload (JobSet) name.")
@click.option("--accelerator", required=True, shell_complete=complete("accelerators"),
              help="Slice type, any accepted name form (v5p-128, v5p-4x4x4, h100-mega-80gb-8).")
@click.option("--pool", shell_complete=complete("pools"), help="Slice pool, when the stack has several of this accelerator.")
@click.option("--num-slices", type=int, help="TPU slices (multislice).")
@click.option("--num-nodes", type=int, help="GPU or CPU nodes.")
@click.option("--image", help="Container image (or --script-dir with --base-image).")
@click.option("--script-dir", type=click.Path(exists=True, file_okay=False),
              help="Run the code in DIR: add it as a layer on --base-image at /app, push it to "
                   "the stack's image repository, and run that image by digest.")
@click.option("--base-image", help="Image to add --script-dir to (amd64, or arm64 for Arm "
              "pools such as A4X).")
@click.option("--image-repository", envvar="ACCELSTACK_IMAGE_REPOSITORY", metavar="REPO",
              help="Push --script-dir images here instead of the stack's repository "
                   "[env ACCELSTACK_IMAGE_REPOSITORY].")
@click.option("--command", help="Command, run with /bin/sh -c in the container.")
@click.option("--env", multiple=True, metavar="KEY=VALUE", help="Environment variable.")
@click.option("--env-file", type=click.Path(dir_okay=False), help="File of KEY=VALUE lines.")
@click.option("--secret-env", multiple=True, metavar="NAME=SECRET/KEY",
              help="Environment variable from a key of a Kubernetes Secret.")
@click.option("--priority", shell_complete=complete("priorities"), help="Kueue priority class (very-low .. very-high), or 'none' "
              f"for Kueue's priority 0.  [default: {sp.DEFAULT_PRIORITY}]")
@click.option("--max-restarts", type=int, default=sp.DEFAULT_MAX_RESTARTS, show_default=True,
              help="Times the whole workload may restart after a failure that "
                   "--restart-on-exit-codes or a disruption (preemption, maintenance) "
                   "allows.")
@click.option("--restart-on-exit-codes", metavar="CODES",
              help="Exit codes and ranges that restart the workload; any other failure "
                   "fails it at once. 'any': every failure restarts.  "
                   f"[default: {sp.DEFAULT_RESTART_EXIT_CODES}]")
@click.option("--ttl", metavar="DURATION", help="Delete the workload this long after it "
              "finishes: seconds, or with s, m, h or d; 'none' keeps it.  "
              f"[default: {sp.DEFAULT_TTL}]")
@click.option("--termination-grace-period", type=int, metavar="SECONDS",
              help="Grace period for pods to stop.  "
                   f"[default: {sp.DEFAULT_TERMINATION_GRACE_SECONDS}]")
@click.option("--mount-service-account-token", is_flag=True,
              help="Mount the pod's Kubernetes service-account token (only for jobs that "
                   "call the Kubernetes API).")
@click.option("--add-capability", multiple=True, metavar="CAP",
              help="Give the main container back a Linux capability (all are dropped), "
                   "e.g. IPC_LOCK, or SETUID and SETGID for images that switch users.")
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
@click.option("--pathways", is_flag=True,
              help="Run on Pathways: a head pod (resource manager, proxy and your container, "
                   "JAX pointed at the proxy) on the stack's Pathways pool, and Pathways "
                   "workers on the TPU slices.")
@click.option("--headless", is_flag=True,
              help="With --pathways: no user container; connect a JAX client through the "
                   "port-forward command printed after submitting.")
@click.option("--elastic-slices", type=int, metavar="N",
              help="With --pathways: slices that may fail and come back without failing "
                   "the workload.")
@namespace_option
@click.option("--queue", help="LocalQueue (default: the namespace's queue).")
@click.option("--dry-run", is_flag=True, help="Print the objects; apply nothing.")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Format of --dry-run and --export (several objects: "
              "one Kubernetes List).")
@click.option("--export", "export_file", type=click.Path(dir_okay=False),
              help="Write the objects to FILE and apply nothing (then `submit workload "
                   "apply FILE`).")
@click.option("--replace", is_flag=True, help="Delete and recreate a workload of that name.")
@click.option("--after", metavar="WORKLOAD", help="Create it held (suspended, not queued) "
              "until WORKLOAD has succeeded: `submit workload release NAME` queues it.")
@pass_ctx
def create(ctx: Context, name: str, accelerator: str, pool: str | None,
           num_slices: int | None, num_nodes: int | None, image: str | None,
           script_dir: str | None, base_image: str | None, image_repository: str | None,
           command: str | None,
           env: tuple[str, ...], env_file: str | None, secret_env: tuple[str, ...],
           priority: str | None, max_restarts: int, restart_on_exit_codes: str | None,
           ttl: str | None, termination_grace_period: int | None,
           mount_service_account_token: bool, add_capability: tuple[str, ...],
           config_file: str | None,
           shm_size: str | None, cpu: str | None, memory: str | None,
           mount: tuple[str, ...], pathways: bool, headless: bool,
           elastic_slices: int | None, namespace: str | None,
           queue: str | None, dry_run: bool,
           fmt: str, export_file: str | None, replace: bool, after: str | None = None
           ) -> None:
    """Render a workload for the stack, check it, and apply it (or print it)."""
    from submit import api

    wl = api.Workload(
        name=name, accelerator=accelerator, image=image, command=command,
        num_slices=num_slices, num_nodes=num_nodes, pool=pool, namespace=namespace,
        queue=queue, env=env, env_file=env_file, secret_env=secret_env, priority=priority,
        max_restarts=max_restarts, restart_on_exit_codes=restart_on_exit_codes, ttl=ttl,
        termination_grace_period=termination_grace_period, config_file=config_file,
        shm_size=shm_size, cpu=cpu, memory=memory,
        mount_service_account_token=mount_service_account_token,
        add_capability=add_capability, mount=mount, pathways=pathways, headless=headless,
        elastic_slices=elastic_slices)
    with bad_input():
        wl.check()  # before the outputs: a bad option never runs `pulumi`
        if after is not None:
            sp.check_workload_name(after, "--after")
        if export_file and not Path(export_file).resolve().parent.is_dir():
            raise SpecError("--export", f"{export_file}: its directory does not exist")
    headless_without_image = pathways and headless and image is None and script_dir is None
    if not headless_without_image and (
            image is None or script_dir is not None or base_image is not None):
        from submit.cli.bundle import script_image  # late: only --script-dir needs HTTP

        wl = wl.replace(image=script_image(
            ctx.outputs, script_dir=script_dir, base_image=base_image, image=image,
            image_repository=image_repository, accelerator=accelerator, pool=pool,
            push=not dry_run))
    with bad_input():
        objs = wl.render(ctx.outputs)
    if after is not None:
        objs = api.hold(objs, after)
    if export_file:
        _export(objs, fmt, export_file)
    if dry_run:
        click.echo(dump_objects(objs, fmt), nl=False)
    if dry_run or export_file:
        return
    apply_objects(ctx, objs, replace)
    if pathways and headless:
        from submit.render.pathways import PROXY_PORT, port_forward_command

        meta = next(o for o in objs if o["kind"] == "JobSet")["metadata"]
        click.echo("once the head pod runs, reach the Pathways proxy with:\n  "
                   f"{port_forward_command(meta['name'], meta['namespace'])}\nand point JAX at it: "
                   f"JAX_PLATFORMS=proxy JAX_BACKEND_TARGET=grpc://localhost:{PROXY_PORT}")


def _export(objs: list[dict[str, Any]], fmt: str, export_file: str) -> None:
    try:
        Path(export_file).write_text(dump_objects(objs, fmt))
    except OSError as e:
        raise click.BadParameter(f"cannot write {export_file}: {e.strerror}",
                                 param_hint="'--export'") from None
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
    except ValueError as e:
        raise bad(f" is not YAML or JSON: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise bad(f" is not YAML or JSON: {where}"
                  f"{getattr(e, 'problem', None) or e.__class__.__name__}") from None
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


# -- reading workloads ------------------------------------------------------------------

@command("list")
@namespace_option
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True, help="Output format.")
@pass_ctx
def list_cmd(ctx: Context, namespace: str | None, fmt: str) -> None:
    """List workloads with their Kueue admission and JobSet state."""
    from submit.state import status as st

    with bad_input():
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    jobsets = kube_call(lambda: cluster.list_jobsets(ns, "app.kubernetes.io/managed-by=accelstack"))
    kueue = kube_call(lambda: cluster.list_workloads(ns))
    rows = [st.summary(js, kueue, now=time.time()) for js in jobsets]
    from submit.cli.output import emit

    emit(rows, fmt, st.LIST_COLUMNS)


@command("describe")
@click.argument("name", shell_complete=complete("workloads"))
@namespace_option
@pass_ctx
def describe(ctx: Context, name: str, namespace: str | None) -> None:
    """Why a workload is where it is: Kueue conditions, events, pods by slice and worker."""
    from submit.state import status as st

    with bad_input():
        sp.check_workload_name(name)
        sp.check_namespace(namespace)
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
    click.echo(_why_pending(cluster, ns, js, wl, pods))


MAX_POD_EVENTS = 8  # pods whose events describe reads (the first ones tell the story)


def _why_pending(cluster: Any, ns: str, js: dict[str, Any], wl: dict[str, Any] | None,
                 pods: list[dict[str, Any]]) -> str:
    """Admission checks, queue position, the pods' scheduling events and the verdict."""
    from submit.state import status as st
    from submit.state import why

    queue = (js["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name")
    pending = kube_call(lambda: cluster.pending_workloads(
        f"namespaces/{ns}/localqueues/{queue}")) if queue else None
    entry = why.position(pending, wl)
    pod_events: list[dict[str, Any]] = []
    for pod in pods[:MAX_POD_EVENTS]:
        pod_name = pod["metadata"]["name"]
        pod_events += kube_call(lambda: cluster.events(ns, "Pod", pod_name))
    lines = ["Admission checks:", *(why.admission_checks(wl) or ["  none"]),
             f"Queue position: {why.position_line(entry, pending, queue)}",
             "Pod scheduling events:"]
    sched = why.scheduling_events(pod_events)
    lines += [f"  {e.get('type', '')} {e.get('reason', '')} "
              f"{e['involvedObject'].get('name', '')}: {e.get('message', '')}" for e in sched]
    if not sched:
        lines.append("  none")
    lines.append(f"Verdict: {why.verdict(wl, st.jobset_state(js), entry, pod_events)}")
    return "\n".join(lines)


@command("queue")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True, help="Output format.")
@pass_ctx
def queue(ctx: Context, fmt: str) -> None:
    """Kueue's ClusterQueues: per flavor, nominal quota, usage, borrowing, pending and
    admitted counts, then the pending workloads in order with their priority.

    Needs `list` on clusterqueues (kueue.x-k8s.io) and `get` on
    clusterqueues/pendingworkloads (visibility.kueue.x-k8s.io); without the latter the
    pending list is left out and said so.
    """
    from submit.state import queue as queue_view
    from submit.cli.output import emit, table

    cluster = ctx.cluster
    cqs = kube_call(cluster.list_cluster_queues)
    rows = queue_view.quota_rows(cqs)
    pending: list[dict[str, Any]] = []
    unknown = []
    for cq in sorted(c["metadata"]["name"] for c in cqs):
        items = kube_call(lambda cq=cq: cluster.pending_workloads(  # type: ignore[misc]
            f"clusterqueues/{cq}"))
        if items is None:
            unknown.append(cq)
        else:
            pending += queue_view.pending_rows(cq, items)
    if fmt != "table":
        emit({"quotas": rows, "pending": pending, "pendingUnknown": unknown}, fmt)
        return
    click.echo(table(rows, queue_view.COLUMNS), nl=False)
    click.echo("\nPending workloads, in admission order:")
    click.echo(table(pending, queue_view.PENDING_COLUMNS) if pending else "  none\n", nl=False)
    if unknown:
        click.echo(f"(pending lists not readable for {', '.join(unknown)}: Kueue's visibility "
                   "API is not served, or your account may not get "
                   "clusterqueues/pendingworkloads)")


@command("logs")
@click.argument("name", shell_complete=complete("workloads"))
@click.option("--slice", "slice_index", type=int, default=0, show_default=True,
              help="Slice (TPU) or replica index.")
@click.option("--worker", type=int, default=0, show_default=True,
              help="Worker (pod) index within the slice.")
@click.option("-f", "--follow", is_flag=True, help="Stream new lines as they come.")
@click.option("--tail", type=int, help="Only the last N lines.")
@namespace_option
@pass_ctx
def logs(ctx: Context, name: str, slice_index: int, worker: int, follow: bool,
         tail: int | None, namespace: str | None) -> None:
    """Print a worker's log (default: slice 0, worker 0)."""
    from submit.state import status as st

    with bad_input():
        sp.check_workload_name(name)
        sp.check_index("--slice", slice_index)
        sp.check_index("--worker", worker)
        sp.check_range("--tail", tail, 1)
        sp.check_namespace(namespace)
        most_slices, most_workers = sp.index_limits(ctx.outputs)
        largest = "the largest workload this stack can run"
        sp.check_index("--slice", slice_index, most_slices, "slices", largest)
        sp.check_index("--worker", worker, most_workers, "workers per slice", largest)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    pods = kube_call(lambda: cluster.list_pods(ns, f"jobset.sigs.k8s.io/jobset-name={name}"))
    pod = st.pick_pod(pods, slice_index, worker)
    if pod is None:
        _check_shape(cluster, ns, name, slice_index, worker)
        raise click.ClickException(
            f"no pod for slice {slice_index}, worker {worker} of workload {name} in {ns} "
            f"({len(pods)} pods exist; it may still be queued: see `submit workload describe "
            f"{name}`)")
    pod_name = pod["metadata"]["name"]
    def stream() -> None:
        for line in cluster.logs(ns, pod_name, "main", follow, tail):
            click.echo(line)
    kube_call(stream)  # errors while following end the command cleanly too


def _check_shape(cluster: Any, ns: str, name: str, slice_index: int, worker: int) -> None:
    """With no pod to show: is the workload there, and are the indices within its shape?"""
    js = kube_call(lambda: cluster.get_jobset(ns, name))
    if js is None:
        raise click.ClickException(f"workload {name} not found in namespace {ns}")
    jobs = (js.get("spec") or {}).get("replicatedJobs") or [{}]
    slices = jobs[0].get("replicas")
    workers = (((jobs[0].get("template") or {}).get("spec") or {}).get("parallelism"))
    with bad_input():
        if isinstance(slices, int):
            sp.check_index("--slice", slice_index, slices, "slices", f"workload {name}")
        if isinstance(workers, int):
            sp.check_index("--worker", worker, workers, "workers per slice",
                           f"workload {name}")


@command("wait")
@click.argument("name", shell_complete=complete("workloads"))
@click.option("--timeout", type=DURATION, default="1h", show_default=True,
              metavar="DURATION", help="How long to wait: seconds, or 90s, 30m, 12h, 1h30m.")
@click.option("--interval", type=DURATION, default="10s", show_default=True,
              metavar="DURATION",
              help="Changes arrive at once through a watch; this is how often the state is "
                   "read afresh (Kueue's admission, a restarted watch): 90s, 1m, ...")
@namespace_option
@pass_ctx
def wait(ctx: Context, name: str, timeout: float, interval: float,
         namespace: str | None) -> None:
    """Wait until the workload succeeds (exit 0), fails (exit 3) or the timeout passes
    (exit 4), printing each change of state."""
    from submit.state import status as st
    from submit.cluster.watch import follow

    with bad_input():
        sp.check_workload_name(name)
        sp.check_wait(timeout, interval)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    from submit.cli.progress import Progress

    progress = Progress()
    last = None
    row: dict[str, Any] = {}
    changes = follow(cluster, ns, name, timeout, interval)
    while (js := kube_call(lambda: next(changes, False))) is not False:
        if js is None:
            progress.done()
            raise click.ClickException(f"workload {name} not found in namespace {ns}")
        kueue = kube_call(lambda: cluster.list_workloads(ns))
        row = st.summary(js, kueue, now=time.time())
        state = (row["admission"], row["state"], row["restarts"])
        if state != last:
            progress.line(f"{time.strftime('%H:%M:%S')} {name}: admission={row['admission']} "
                          f"state={row['state']} restarts={row['restarts']}")
            last = state
        if row["state"] == "Completed":
            progress.done()
            click.echo(f"workload {name} succeeded")
            return
        if row["state"] == "Failed":
            progress.done()
            click.echo(f"workload {name} failed: {st.failure_message(js)}")
            sys.exit(EXIT_FAILED)
        progress.tick(f"waiting for {name}: {row['state']}")
    progress.done()
    click.echo(f"workload {name} still {row['state']} after {timeout:g}s")
    sys.exit(EXIT_TIMEOUT)


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
