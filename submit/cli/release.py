"""`submit workload release`: hand a workload created held (create --after) to Kueue once the
workload it waits for has succeeded (submit.api.release; experiments release their held
trials from `submit experiment wait`).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from submit import api
from submit.render import spec as sp
from submit.cli.options import DURATION, namespace_option
from submit.cli.context import EXIT_FAILED, EXIT_TIMEOUT, Context, bad_input, kube_call, pass_ctx


@click.command("release")
@click.argument("name")
@click.option("--wait", "wait_", is_flag=True, help="Wait for the workload it is held "
              "after (--after) to succeed, then release it.")
@click.option("--timeout", type=DURATION, default="24h", show_default=True,
              metavar="DURATION", help="With --wait: how long to wait for the other workload.")
@click.option("--interval", type=DURATION, default="30s", show_default=True,
              metavar="DURATION",
              help="With --wait: how often the other workload's state is read afresh (its "
                   "changes arrive at once through a watch).")
@click.option("--force", is_flag=True, help="Release it whatever the other workload's state.")
@namespace_option
@pass_ctx
def release(ctx: Context, name: str, wait_: bool, timeout: float, interval: float, force: bool,
            namespace: str | None) -> None:
    """Hand a held workload (create --after) to Kueue once the workload it waits for has
    succeeded. Exit 3 if that one failed (NAME stays held), 4 if --wait timed out."""
    with bad_input():
        sp.check_workload_name(name)
        sp.check_wait(timeout, interval)
        sp.check_namespace(namespace)
    ns = namespace or ctx.outputs.workload_namespace
    cluster = ctx.cluster
    js = kube_call(lambda: cluster.get_jobset(ns, name))
    if js is None:
        raise click.ClickException(f"workload {name} not found in namespace {ns}")
    after = ((js.get("metadata") or {}).get("annotations") or {}).get(api.AFTER)
    if after and not force:
        _check_after(cluster, ns, name, after, wait_, timeout, interval)
    try:
        queue = api.release(cluster, ns, name)
    except api.ClusterError as e:
        raise click.ClickException(e.message) from None
    click.echo(f"workload {name} released to queue {queue}")


def _check_after(cluster: Any, ns: str, name: str, after: str, wait_: bool, timeout: float,
                 interval: float) -> None:
    """Return if ``after`` has succeeded (with --wait, once it has); else exit or raise,
    leaving ``name`` held."""
    try:
        s = (api.wait(cluster, ns, after, timeout, interval) if wait_
             else api.status(cluster, ns, after))
    except api.ClusterError as e:
        raise click.ClickException(f"{e.message}; workload {name} stays held (--force "
                                   "releases it anyway)") from None
    if s.state == "Failed":
        click.echo(f"workload {after} failed: workload {name} stays held")
        sys.exit(EXIT_FAILED)
    if s.state != "Completed":
        if wait_:
            click.echo(f"workload {after} still {s.state} after {timeout}s: workload "
                       f"{name} stays held")
            sys.exit(EXIT_TIMEOUT)
        raise click.ClickException(f"workload {after} is {s.state}, not Completed: "
                                   f"workload {name} stays held (pass --wait to wait "
                                   "for it)")
