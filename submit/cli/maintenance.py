"""`submit cluster hold POOL` / `submit cluster resume POOL`: GKE's procedure for
maintaining accelerator nodes (stop the work, maintain every node, start it again) done
through Kueue rather than by deleting pods: `hold` sets ``spec.stopPolicy`` on every
ClusterQueue with quota in the pool's ResourceFlavor (``Hold``: admitted workloads run to
completion, nothing new is admitted; ``--drain``: ``HoldAndDrain``, admitted workloads are
evicted and requeued), `resume` removes it. Kueue's v1beta2 ClusterQueue stopPolicy
(../shared/reference/crds/kueue.x-k8s.io_clusterqueues.yaml). Also the create warning
when a workload's expected run reaches the next maintenance window (``--runs-for``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

import click

from submit.cli.options import stack_source_options

F = Callable[..., Any]


def _queues(stack: str | None, outputs_file: str | None, project_dir: str, pool: str
            ) -> tuple[Any, list[str]]:
    from submit.cli.context import Context, kube_call
    from submit.state import maintenance

    ctx = Context(stack, outputs_file, project_dir)
    entry = ctx.outputs.pool(pool)
    if entry is None:
        names = ", ".join(p.name for p in ctx.outputs.slice_pools) or "none"
        raise click.BadParameter(f"{pool!r} is not a slice pool of the stack (pools: {names})",
                                 param_hint="'POOL'")
    cluster = ctx.cluster
    flavors = kube_call(cluster.list_resource_flavors)
    cqs = kube_call(cluster.list_cluster_queues)
    _, queues = maintenance.hold_targets(entry.node_selector, flavors, cqs)
    if not queues:
        raise click.ClickException(f"no ClusterQueue admits to pool {pool} (no ResourceFlavor "
                                   "selects its nodes): nothing to hold")
    return cluster, queues


@click.command("hold")
@stack_source_options
@click.argument("pool")
@click.option("--drain", is_flag=True,
              help="Also evict the workloads admitted there (Kueue HoldAndDrain; they are "
                   "requeued); without it they run to completion (Hold).")
def hold(stack: str | None, outputs_file: str | None, project_dir: str, pool: str,
         drain: bool) -> None:
    """Stop Kueue admitting work to POOL before its nodes are maintained: every
    ClusterQueue with quota there stops (stopPolicy); `resume` starts them again."""
    from submit.cli.context import kube_call

    cluster, queues = _queues(stack, outputs_file, project_dir, pool)
    policy = "HoldAndDrain" if drain else "Hold"
    for name in queues:
        kube_call(lambda: cluster.set_stop_policy(name, policy))
    what = ("admitted workloads are evicted and requeued" if drain else
            "admitted workloads run to completion")
    click.echo(f"held ClusterQueue(s) {', '.join(queues)} ({policy}): nothing new is admitted, "
               f"{what}; every pool those queues admit to is held. Resume with `submit "
               f"cluster resume {pool}`")


@click.command("resume")
@stack_source_options
@click.argument("pool")
def resume(stack: str | None, outputs_file: str | None, project_dir: str, pool: str) -> None:
    """Let Kueue admit work to POOL again: removes the stopPolicy `hold` set."""
    from submit.cli.context import kube_call

    cluster, queues = _queues(stack, outputs_file, project_dir, pool)
    for name in queues:
        kube_call(lambda: cluster.set_stop_policy(name, None))
    click.echo(f"resumed ClusterQueue(s) {', '.join(queues)}: Kueue admits again")


def warn_create(outputs: Any, seconds: float | None, now: datetime | None = None) -> None:
    """`create --runs-for`: one line on stderr when the run reaches the next window."""
    if seconds is None or outputs.maintenance is None:
        return
    from infra.contract import maintenance

    line = maintenance.create_warning(outputs.maintenance, now or datetime.now(timezone.utc),
                                      seconds)
    if line:
        click.echo(line, err=True)


def runs_for_option(f: F) -> F:
    """`create --runs-for DURATION`: how long the workload is expected to run."""
    from submit.cli.options import DURATION

    return click.option(
        "--runs-for", "runs_for", type=DURATION, metavar="DURATION",
        help="How long the workload is expected to run (72h, 3d is 72h): create warns on "
             "stderr when that reaches the stack's next maintenance window, after any "
             "exclusion (docs/maintenance.md). Nothing is limited by it.")(f)
