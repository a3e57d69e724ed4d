"""`submit workload describe`: why a workload is where it is, read from the cluster: its
Kueue conditions, events and pods, its Cloud Console links, why it is pending (admission
checks, queue position, scheduling events, a slice class's step, dynamic slices,
checkpointing tiers, upcoming maintenance) and the verdict. Registered on the `submit
workload` group by submit/cli/workload.py.
"""

from __future__ import annotations

import time
from typing import Any

import click

from submit.cli.context import Context, bad_input, kube_call, pass_ctx
from submit.cli.options import complete, namespace_option, stack_options
from submit.cli.workload_read import read_nodes
from submit.render import spec as sp


@click.command("describe")
@stack_options
@click.argument("name", shell_complete=complete("workloads"))
@namespace_option
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True,
              help="Output format: the text, or the same as data (fields documented in "
                   "submit/state/describe_data.py).")
@pass_ctx
def describe(ctx: Context, name: str, namespace: str | None, fmt: str = "table") -> None:
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
    wl = st.kueue_workload(js, kueue)
    fleet_lines: list[str] = []
    fleet_verdict = None
    pods_on = cluster
    if ctx.outputs.fleet is not None:
        from submit.cli import fleet_read
        from submit.state import fleet as fl

        fleet_lines, fleet_verdict = fleet_read.describe_lines(ctx, ns, wl, st.jobset_state(js))
        if fl.worker(wl):  # the pods and their events are on the worker
            pods_on = ctx.worker_cluster(str(fl.worker(wl)))
    pods = kube_call(lambda: pods_on.list_pods(ns, f"jobset.sigs.k8s.io/jobset-name={name}"))
    events = kube_call(lambda: cluster.events(ns, "JobSet", name))
    if wl is not None:
        wl_name = wl["metadata"]["name"]
        events += kube_call(lambda: cluster.events(ns, "Workload", wl_name))
    if fmt != "table":
        from submit.cli.output import emit
        from submit.state.describe_data import describe_data

        _, pending, pod_events = _pending_facts(cluster, ns, js, pods, pods_on)
        data = describe_data(js, wl, pods, events, pending, pod_events)
        sliced = _slices(cluster, js, wl, ctx.outputs)
        if sliced is not None:  # a dynamic slice: the Slices it was given (or null)
            from submit.state import slices as slice_state

            data["slices"] = (None if sliced[1] is None
                              else [slice_state.entry(x) for x in sliced[1]])
        data["links"] = _links(ctx, js)
        emit(data, fmt)
        return
    click.echo(st.describe(js, wl, pods, events, now=time.time()), nl=False)
    from submit.render.diagnostics import links  # late: describe only

    click.echo("\n".join(links.describe_lines(_links(ctx, js))))
    if fleet_lines:
        click.echo("\n".join(fleet_lines))
    click.echo(_why_pending(cluster, ns, js, wl, pods, ctx.outputs, pods_on, fleet_verdict))


def _links(ctx: Context, js: dict[str, Any]) -> dict[str, Any]:
    """Cloud Console links of the workload (docs/diagnostics.md), on the stack's cluster."""
    from submit.render.diagnostics import links  # late: describe only
    from submit.render.dashboard_link import with_dashboard

    return with_dashboard(links.links(ctx.outputs.cluster, js), ctx.outputs, js)


MAX_POD_EVENTS = 8  # pods whose events describe reads (the first ones tell the story)


def _pending_facts(cluster: Any, ns: str, js: dict[str, Any], pods: list[dict[str, Any]],
                   pods_on: Any = None
                   ) -> tuple[str | None, list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """The queue, Kueue's pending list for it (None: not known) and the pods' events
    (read on ``pods_on``, the cluster the pods are on: a fleet's worker)."""
    queue = (js["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name")
    pending = kube_call(lambda: cluster.pending_workloads(
        f"namespaces/{ns}/localqueues/{queue}")) if queue else None
    pod_events: list[dict[str, Any]] = []
    for pod in pods[:MAX_POD_EVENTS]:
        pod_name = pod["metadata"]["name"]
        pod_events += kube_call(lambda: (pods_on or cluster).events(ns, "Pod", pod_name))
    return queue, pending, pod_events


def _why_pending(cluster: Any, ns: str, js: dict[str, Any], wl: dict[str, Any] | None,
                 pods: list[dict[str, Any]], outputs: Any, pods_on: Any = None,
                 fleet_verdict: str | None = None) -> str:
    """Admission checks, queue position, the pods' scheduling events and the verdict; on a
    slice class, also the step it waits on and where its slices came from. ``pods_on``:
    the cluster the pods are on; ``fleet_verdict``: a fleet's own (docs/fleets.md)."""
    from submit.state import capacity
    from submit.state import status as st
    from submit.state import why

    queue, pending, pod_events = _pending_facts(cluster, ns, js, pods, pods_on)
    entry = why.position(pending, wl)
    lines = ["Admission checks:", *(why.admission_checks(wl) or ["  none"]),
             f"Queue position: {why.position_line(entry, pending, queue)}",
             "Pod scheduling events:"]
    sched = why.scheduling_events(pod_events)
    lines += [f"  {e.get('type', '')} {e.get('reason', '')} "
              f"{e['involvedObject'].get('name', '')}: {e.get('message', '')}" for e in sched]
    if not sched:
        lines.append("  none")
    verdict = why.verdict(wl, st.jobset_state(js), entry, pod_events)
    sliced = _slices(cluster, js, wl, outputs)
    if sliced is not None:
        from submit.state import slices as slice_state

        lines += slice_state.lines(*sliced)
        verdict = slice_state.verdict(sliced[1], st.admission(wl) in ("Admitted", "Finished")
                                      ) or verdict
    pool = capacity.pool_entry(js, outputs)
    info = outputs.slice_class(pool.compute_class) if pool and pool.compute_class else None
    if info is not None:
        nodes = read_nodes(cluster, f"{capacity.COMPUTE_CLASS_LABEL}={info.name}")
        state = st.jobset_state(js)
        admitted = st.admission(wl) in ("Admitted", "Finished")
        step = capacity.class_step(info.name, info.capacity, admitted, state == "Running",
                                   pod_events)
        lines += capacity.describe_lines(info, step, capacity.slice_sources(pods, nodes),
                                         nodes_readable=nodes is not None)
        if admitted and state not in ("Running", "Completed", "Failed"):
            verdict = step
    from submit.state import checkpointing  # the tiers, when the pods use them

    lines += checkpointing.describe_lines(js, pool)
    lines += _maintenance(cluster, pool)
    lines.append(f"Verdict: {fleet_verdict or verdict}")
    return "\n".join(lines)


def _maintenance(cluster: Any, pool: Any) -> list[str]:
    """Upcoming maintenance of the workload's pool: host maintenance notices on its nodes
    and a pending node upgrade (submit/state/maintenance.py); none for a class's shapes."""
    if pool is None or not pool.node_pools:
        return []
    from submit.state import maintenance

    selector = ",".join(f"{k}={v}" for k, v in sorted(pool.node_selector.items()))
    nodes = read_nodes(cluster, selector)
    nodes = None if nodes is None else [n for n in nodes if (n["metadata"].get("labels") or {})
                                        .get(maintenance.NODEPOOL_LABEL) in pool.node_pools]
    plane = kube_call(cluster.control_plane_version) if nodes else None
    return maintenance.lines(nodes, plane, pool.kind == "tpu" and pool.vms_per_slice > 1)


def _slices(cluster: Any, js: dict[str, Any], wl: dict[str, Any] | None, outputs: Any
            ) -> tuple[str, list[dict[str, Any]] | None] | None:
    """For a workload on a dynamic slice: its shape and the Slices GKE made for it (None:
    not readable); None for any other workload."""
    from submit.state import capacity
    from submit.state import slices as slice_state

    pool = capacity.pool_entry(js, outputs)
    if pool is None or not pool.slice_topology:
        return None
    found = kube_call(cluster.list_slices)
    return pool.slice_topology, None if found is None else slice_state.owned(found, wl)
