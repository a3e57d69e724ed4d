"""`submit fleet ...`: a fleet's clusters at a glance.

`view` reads the manager and every worker at once (their ClusterQueues and the Workloads of
the fleet's namespaces; on the manager also its MultiKueueClusters and AdmissionChecks) and
prints one table: each cluster, its role and region, its queues, chips per flavor (nominal,
used, free), its workloads by state, and for a worker what the manager's MultiKueue says of
it (Active or why not) beside what the user's own read found. A cluster that does not answer
(in --timeout) is a row saying so; the others are still shown, and when none answers the
command exits EXIT_UNREACHABLE (1) after the view. Reads only; the kubeconfigs come from the
fleet's outputs (docs/fleets.md).

The table fits 100 columns: one line per cluster (its state and workload counts), one per
accelerator flavor (its chips), and below them the free texts (queues, why a cluster did
not answer, what the manager sees when it is not `active`), each wrapped at 100. `-o json`
and `-o yaml` keep one row per cluster and flavor with every field.
"""

from __future__ import annotations

import functools
import sys
import textwrap
from typing import Any, Callable

import click

from submit.cli.context import EXIT_UNREACHABLE, Context, pass_ctx
from submit.cli.options import Duration, stack_group_options, stack_options, table_output_option


def fleet_of(ctx: Context) -> Any:
    """The fleet of the outputs, or a usage error naming the option."""
    fleet = ctx.outputs.fleet
    if fleet is None:
        raise click.UsageError(f"stack {ctx.outputs.stack!r} is not a fleet stack (its outputs "
                               "have no 'accelstackFleet'); pass a fleet's --stack or --outputs")
    return fleet


@click.group("fleet")
@stack_group_options
@click.pass_context
def fleet(ctx: click.Context, stack: str | None, outputs_file: str | None, project_dir: str,
          namespace: str | None) -> None:
    """A fleet of clusters behind one queue (Kueue MultiKueue): its clusters and quota."""
    ctx.obj = Context(stack, outputs_file, project_dir, namespace)


# A cluster that has not answered in this long is shown as not answering, the rest as read.
READ_TIMEOUT = 20.0


def _reader(open_cluster: Callable[[], Any], namespaces: list[str],
            manager: bool = False) -> Callable[[], dict[str, Any]]:
    """One cluster's read: its ClusterQueues and the fleet's Workloads, and on the manager
    its MultiKueueClusters and AdmissionChecks (the manager's view of each worker)."""
    def read() -> dict[str, Any]:
        cluster = open_cluster()
        out = {"cqs": cluster.list_cluster_queues(),
               "workloads": [wl for ns in namespaces for wl in cluster.list_workloads(ns)]}
        if manager:
            from submit.cluster.kube import KubeError

            try:  # the manager's queues are still shown when these cannot be read
                out["mkcs"] = cluster.list_multikueue_clusters()
                out["checks"] = cluster.list_admission_checks()
            except KubeError as e:
                out["mkcs"] = out["checks"] = str(e)
        out["maintenance"] = _maintenance(cluster)
        return out
    return read


def _maintenance(cluster: Any) -> str:
    """Upcoming maintenance on the cluster (submit/state/maintenance.py summary); a read it
    may not make is said in the cell, never turns the cluster's row into an error."""
    from submit.cluster.kube import KubeError
    from submit.state import maintenance

    try:
        nodes = cluster.list_nodes("")
        plane = cluster.control_plane_version() if nodes else None
    except KubeError as e:
        return maintenance.summary(None, None) if e.status == 403 else f"unknown: {e}"
    return maintenance.summary(nodes, plane)


WIDTH = 100  # the view's lines, for an 100-column terminal
CLUSTER_COLUMNS = (("CLUSTER", "cluster"), ("ROLE", "role"), ("REGION", "region"),
                   ("VIA", "via"), ("STATUS", "state"), ("PENDING", "pending"),
                   ("ADMITTED", "admitted"), ("FINISHED", "finished"),
                   ("MANAGER SEES", "seen"))
FLAVOR_COLUMNS = (("CLUSTER", "cluster"), ("FLAVOR", "flavor"), ("NOMINAL", "nominal"),
                  ("USED", "used"), ("FREE", "free"))


def view_text(rows: list[dict[str, Any]]) -> str:
    """The view as people read it: the clusters, their flavors' chips, then the notes."""
    from submit.cli.output import table
    from submit.state import fleet as fl

    clusters: dict[str, dict[str, Any]] = {}
    for r in rows:
        clusters.setdefault(r["cluster"], r)
    lines: list[str] = []
    notes: list[str] = []
    shown = []
    for name, r in clusters.items():
        status, seen = str(r["status"]), r.get("manager_view")
        down = status.startswith(fl.UNREACHABLE)
        short = (None if seen is None else seen if seen == "active" else
                 "unknown" if seen.startswith("unknown") else "not active")
        shown.append({**r, "state": fl.UNREACHABLE if down else status, "seen": short})
        notes.append(f"{name}: queues {r['queues'] or '-'}")
        if r.get("maintenance") not in (None, "none"):  # submit/state/maintenance.py
            notes.append(f"{name}: maintenance: {r['maintenance']}")
        if down:
            notes.append(f"{name}: {status}")
        if short not in (None, "active"):
            notes.append(f"{name}: the manager sees: {seen}")
    lines.append(table(shown, CLUSTER_COLUMNS))
    flavors = [r for r in rows if r.get("flavor") is not None]
    if flavors:
        lines.append("\n" + table(flavors, FLAVOR_COLUMNS))
    lines.append("\n" + "".join(textwrap.fill(n, WIDTH, subsequent_indent="    ") + "\n"
                                for n in notes))
    return "".join(lines)


def _problem(e: Exception) -> str:
    return e.message if isinstance(e, click.ClickException) else str(e)


@fleet.command("view")
@stack_options
@table_output_option
@click.option("--timeout", type=Duration(minimum=0.1), default=READ_TIMEOUT,
              show_default=True, metavar="DURATION",
              help="How long to wait for each cluster; one that has not answered by then is "
                   "shown as not answering.")
@pass_ctx
def view(ctx: Context, fmt: str, timeout: float) -> None:
    """Every cluster of the fleet: queues, chips per flavor (nominal, used, free),
    workloads by state, and for each worker whether the manager's MultiKueue reaches it
    (its MultiKueueCluster and AdmissionCheck Active), and each cluster's upcoming
    maintenance (host maintenance notices, node pools behind the control plane). The
    clusters are read at once."""
    from submit.cli.output import emit
    from submit.cluster.parallel import gather
    from submit.state import fleet as fl
    from submit.state import fleet_manager

    f = fleet_of(ctx)
    namespaces = sorted({q.namespace for q in f.queues})
    manager_queues = sorted({q.name for q in f.queues})
    reads = {"": _reader(lambda: ctx.cluster, namespaces, manager=True)}
    for w in f.workers:
        reads[w.name] = _reader(functools.partial(ctx.worker_cluster, w.name), namespaces)
    found = gather(reads, timeout=timeout)
    mine = found[""]
    rows = []
    if isinstance(mine, Exception):
        rows += fl.view_rows(ctx.outputs.cluster.name, "manager", ctx.outputs.cluster.location,
                             manager_queues, _problem(mine), [])
    else:
        rows += [{**r, "maintenance": mine["maintenance"]} for r in fl.view_rows(
            ctx.outputs.cluster.name, "manager", ctx.outputs.cluster.location, manager_queues,
            mine["cqs"], mine["workloads"])]
    for w in f.workers:
        queues = sorted({q.name for q in w.outputs.local_queues if q.namespace in namespaces})
        if isinstance(mine, Exception):
            seen = "unknown: the manager could not be read"
        elif isinstance(mine["mkcs"], str):
            seen = f"unknown: {mine['mkcs']}"
        else:
            cq = next((q.cluster_queue for q in f.queues if q.scope == f"worker:{w.name}"),
                      None)
            seen = fleet_manager.view(w.name, mine["mkcs"], mine["checks"], mine["cqs"], cq)
        got = found[w.name]
        if isinstance(got, Exception):
            worker_rows = fl.view_rows(w.name, "worker", w.region, queues, _problem(got), [],
                                       w.manager_via)
        else:
            worker_rows = [{**r, "maintenance": got["maintenance"]} for r in fl.view_rows(
                w.name, "worker", w.region, queues, got["cqs"], got["workloads"],
                w.manager_via)]
        rows += [{**r, "manager_view": seen} for r in worker_rows]
    rows = [{"manager_view": None, "maintenance": None, **r} for r in rows]
    if fmt == "table":
        click.echo(view_text(rows), nl=False)
    else:
        emit(rows, fmt)
    if all(str(r["status"]).startswith(fl.UNREACHABLE) for r in rows):
        sys.exit(EXIT_UNREACHABLE)  # the view said why, cluster by cluster
