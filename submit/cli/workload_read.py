"""`submit workload list|queue|logs|wait`: reading workloads from the cluster (describe is
in workload_describe.py). Registered on the `submit workload` group by submit/cli/workload.py.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from submit.cli.context import EXIT_FAILED, EXIT_TIMEOUT, Context, bad_input, kube_call, pass_ctx
from submit.cli.options import DURATION, complete, namespace_option, stack_options, \
    table_output_option
from submit.render import spec as sp


@click.command("list")
@stack_options
@namespace_option
@table_output_option
@pass_ctx
def list_cmd(ctx: Context, namespace: str | None, fmt: str) -> None:
    """List workloads with their Kueue admission and JobSet state."""
    from submit.state import status as st

    with bad_input():
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    from submit.cli import listing
    from submit.cli.output import emit_pages

    # The Kueue workloads as a small index, then the JobSets a page at a time, each page's
    # rows printed as it comes (submit/cli/listing.py).
    kueue = listing.kueue_index(cluster, ns)
    columns: tuple[tuple[str, str], ...] = (st.LIST_COLUMNS[:3] + (("SOURCE", "source"),)
                                           + st.LIST_COLUMNS[3:])
    fleet = ctx.outputs.fleet is not None
    if fleet:
        columns = columns + (("WORKER", "worker"),)  # the worker MultiKueue dispatched it to
    nodes: list[Any] = []  # read once, for the first workload on a slice class

    def rows(jobsets: list[dict[str, Any]]) -> list[dict[str, Any]]:
        found = [st.summary(js, listing.owned(kueue, js), now=time.time()) for js in jobsets]
        _add_sources(ctx, cluster, ns, jobsets, found, nodes)
        if fleet:
            from submit.state import fleet as fl

            for js, row in zip(jobsets, found):
                row["worker"] = fl.worker(st.kueue_workload(js, listing.owned(kueue, js)))
        return found

    emit_pages(listing.mapped(cluster.jobset_pages(
        ns, "app.kubernetes.io/managed-by=accelstack"), rows), fmt, columns)


def _add_sources(ctx: Context, cluster: Any, ns: str, jobsets: list[dict[str, Any]],
                 rows: list[dict[str, Any]], read: list[Any] | None = None) -> None:
    """Each row's capacity source; the nodes and pods are read only for class workloads
    (the nodes once: ``read`` keeps them across a list's pages)."""
    from submit.state import capacity

    outputs = ctx.outputs
    on_class = [js for js in jobsets
                if getattr(capacity.pool_entry(js, outputs), "compute_class", None)]
    read = [] if read is None else read
    if on_class and not read:
        read.append(read_nodes(cluster, capacity.CLASS_NODES))
    nodes = read[0] if on_class else []
    for js, row in zip(jobsets, rows):
        pods: list[dict[str, Any]] = []
        if js in on_class:
            name = js["metadata"]["name"]
            pods = kube_call(lambda: cluster.list_pods(
                ns, f"jobset.sigs.k8s.io/jobset-name={name}"))
        row["source"] = capacity.workload_source(js, outputs, pods, nodes)


def read_nodes(cluster: Any, selector: str) -> list[dict[str, Any]] | None:
    """Nodes by label; None when the account may not list nodes (a cluster-scoped read
    that namespace-scoped roles lack), so `list` and `describe` still answer."""
    from submit.cluster.kube import KubeError

    try:
        return list(cluster.list_nodes(selector))
    except KubeError as e:
        if e.status == 403:
            return None
        raise click.ClickException(str(e)) from None


@click.command("queue")
@stack_options
@table_output_option
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


@click.command("logs")
@stack_options
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
    from submit.cli.fleet_read import pods_cluster

    cluster = pods_cluster(ctx, ns, name)  # a fleet's pods are on its worker
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


@click.command("wait")
@stack_options
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
        on = ""
        if ctx.outputs.fleet is not None:
            from submit.state import fleet as fl

            on = f" worker={fl.worker(st.kueue_workload(js, kueue)) or '-'}"
        state = (row["admission"], row["state"], row["restarts"], on)
        if state != last:
            progress.line(f"{time.strftime('%H:%M:%S')} {name}: admission={row['admission']} "
                          f"state={row['state']} restarts={row['restarts']}{on}")
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
