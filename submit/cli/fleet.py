"""`submit fleet ...`: a fleet's clusters at a glance.

`view` reads the manager and every worker (their ClusterQueues and the Workloads of the
fleet's namespaces) and prints one table: each cluster, its role and region, its queues,
chips per flavor (nominal, used, free) and its workloads by state. A worker that does not
answer is a row saying so; the others are still shown. Reads only; the kubeconfigs come from
the fleet's outputs (docs/fleets.md).
"""

from __future__ import annotations

from typing import Any

import click

from submit.cli.context import Context, pass_ctx
from submit.cli.options import stack_group_options, stack_options, table_output_option


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


def _read(cluster: Any, namespaces: list[str]) -> tuple[list[dict[str, Any]] | str,
                                                        list[dict[str, Any]]]:
    from submit.cluster.kube import KubeError

    try:
        cqs = cluster.list_cluster_queues()
        workloads = [wl for ns in namespaces for wl in cluster.list_workloads(ns)]
    except KubeError as e:
        return str(e), []
    return cqs, workloads


@fleet.command("view")
@stack_options
@table_output_option
@pass_ctx
def view(ctx: Context, fmt: str) -> None:
    """Every cluster of the fleet: queues, chips per flavor (nominal, used, free) and
    workloads by state."""
    from submit.cli.output import emit
    from submit.state import fleet as fl

    f = fleet_of(ctx)
    namespaces = sorted({q.namespace for q in f.queues})
    manager_queues = sorted({q.name for q in f.queues})
    cqs, wls = _read(ctx.cluster, namespaces)
    rows = fl.view_rows(ctx.outputs.cluster.name, "manager", ctx.outputs.cluster.location,
                        manager_queues, cqs, wls)
    for w in f.workers:
        queues = sorted({q.name for q in w.outputs.local_queues if q.namespace in namespaces})
        try:
            cluster = ctx.worker_cluster(w.name)
        except click.ClickException as e:
            rows += fl.view_rows(w.name, "worker", w.region, queues, e.message, [],
                                 w.manager_via)
            continue
        cqs, wls = _read(cluster, namespaces)
        rows += fl.view_rows(w.name, "worker", w.region, queues, cqs, wls, w.manager_via)
    emit(rows, fmt, fl.VIEW_COLUMNS)
