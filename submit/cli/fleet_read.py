"""Reading a fleet's workload (docs/fleets.md): `list`, `describe`, `wait` and `logs` on a
fleet's outputs read the manager, where the workload was submitted, and the worker
MultiKueue dispatched it to (the Workload's ``status.clusterName``, the MultiKueueCluster
named after the worker). The pods run on the worker, so its events and logs are read there,
with the kubeconfig of the worker's own contract. The workers a workload may be on are read
at once; a worker that does not answer (in READ_TIMEOUT) is said so and the rest is still
shown.
"""

from __future__ import annotations

import functools
from typing import Any

import click

from submit.cli.context import Context, kube_call

JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
READ_TIMEOUT = 20.0  # seconds a worker has to answer before it is shown as not answering


def manager_workload(ctx: Context, ns: str, name: str) -> dict[str, Any] | None:
    """The manager's Kueue Workload of JobSet ``name`` (None if it has none yet); the
    JobSet's absence is the command's error."""
    from submit.state import status as st

    cluster = ctx.cluster
    js = kube_call(lambda: cluster.get_jobset(ns, name))
    if js is None:
        raise click.ClickException(f"workload {name} not found in namespace {ns}")
    return st.kueue_workload(js, kube_call(lambda: cluster.list_workloads(ns)))


def pods_cluster(ctx: Context, ns: str, name: str) -> Any:
    """The cluster the workload's pods are on: the stack's, or the fleet worker's."""
    if ctx.outputs.fleet is None:
        return ctx.cluster
    from submit.state import fleet as fl

    wl = manager_workload(ctx, ns, name)
    worker = fl.worker(wl)
    if worker is None:
        raise click.ClickException(
            f"workload {name} is not running on a worker yet (worker: {fl.worker_line(wl)}); "
            f"see `submit workload describe {name}`")
    return ctx.worker_cluster(worker)


def remotes(ctx: Context, ns: str, wl: dict[str, Any] | None
            ) -> dict[str, dict[str, Any] | str | None]:
    """The workers MultiKueue copied the workload to (all of its queue's while none is
    named), each with its copy of the Workload, None, or why it could not be read."""
    from submit.cluster.kube import KubeError
    from submit.cluster.parallel import TimedOut, gather
    from submit.state import fleet as fl

    fleet = ctx.outputs.fleet
    if fleet is None or wl is None:
        return {}
    names = ([fl.worker(wl)] if fl.worker(wl) else fl.nominated(wl)) or []
    if not names:
        queue = (wl.get("spec") or {}).get("queueName")
        found = next((q for q in fleet.queues if q.namespace == ns and q.name == queue), None)
        names = list(found.workers) if found else [w.name for w in fleet.workers]
    # The workers are read at once, each bounded (submit/cluster/parallel.py).
    reads = {str(w): functools.partial(_copies, ctx, str(w), ns) for w in names}
    name = wl["metadata"]["name"]
    out: dict[str, dict[str, Any] | str | None] = {}
    for worker, copies in gather(reads, timeout=READ_TIMEOUT).items():
        if isinstance(copies, click.ClickException):
            out[worker] = f"{fl.UNREACHABLE}: {copies.message}"
        elif isinstance(copies, (KubeError, TimedOut)):
            out[worker] = f"{fl.UNREACHABLE}: {copies}"
        elif isinstance(copies, Exception):
            raise copies
        else:
            out[worker] = next((c for c in copies if c["metadata"]["name"] == name), None)
    return out


def _copies(ctx: Context, worker: str, ns: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ctx.worker_cluster(worker).list_workloads(ns)
    return found


def describe_lines(ctx: Context, ns: str, wl: dict[str, Any] | None, state: str
                   ) -> tuple[list[str], str | None]:
    """The fleet's lines of `describe` (the worker, the copies on the workers) and its
    verdict (None: the one-cluster verdict stands)."""
    from submit.state import fleet as fl

    copies = remotes(ctx, ns, wl)
    lines = [f"Worker:       {fl.worker_line(wl)}"]
    if copies:
        lines.append("On the workers:")
        lines += [f"  {fl.remote_line(n, c)}" for n, c in copies.items()]
    return lines, fl.verdict(wl, state, copies)
