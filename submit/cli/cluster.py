"""`submit cluster ...`: the stack's cluster for other tools. `credentials` writes or
merges a kubeconfig context for it (authenticating with gke-gcloud-auth-plugin)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from submit.cli.options import stack_source_options


@click.group("cluster")
def cluster() -> None:
    """The stack's cluster for other tools (kubectl)."""


def _default_kubeconfig() -> str:
    """kubectl's file: the first of $KUBECONFIG's paths, else ~/.kube/config."""
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), None)
    return first or str(Path.home() / ".kube" / "config")


@cluster.command("credentials")
@stack_source_options
@click.option("--kubeconfig", metavar="FILE", type=click.Path(dir_okay=False),
              help="The kubeconfig to write or merge into [default: the first path of "
                   "$KUBECONFIG, else ~/.kube/config].")
@click.option("--no-switch", is_flag=True,
              help="Keep the current context (default: switch to the stack's, as `gcloud "
                   "container clusters get-credentials` does).")
def credentials(stack: str | None, outputs_file: str | None, project_dir: str,
                kubeconfig: str | None, no_switch: bool) -> None:
    """Write or merge a kubeconfig context for the stack's cluster, authenticating with
    gke-gcloud-auth-plugin; the file's other clusters, users and contexts are kept."""
    from submit.cluster.kubeconfig import MergeError, merge
    from submit.cli.context import Context

    path = Path(kubeconfig or _default_kubeconfig())
    try:
        existing = path.read_text() if path.exists() else ""
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"cannot read {path}: {getattr(e, 'strerror', None) or e}",
                                 param_hint="'--kubeconfig'") from None
    outputs = Context(stack, outputs_file, project_dir).outputs
    try:
        text, context = merge(existing, outputs.kubeconfig, str(path), switch=not no_switch)
    except MergeError as e:
        raise click.BadParameter(str(e), param_hint="'--kubeconfig'") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole or not at all, readable by the user only (it names credentials).
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as e:
        raise click.BadParameter(f"cannot write {path}: {e.strerror}",
                                 param_hint="'--kubeconfig'") from None
    switched = "" if no_switch else "; it is the current context"
    click.echo(f"wrote context {context} to {path}{switched} (kubectl --context {context})")


@cluster.command("at-risk")
@click.option("--replacements", "replacements_file", required=True, metavar="FILE",
              type=click.Path(dir_okay=False),
              help="What a change destroys, as `accelstack-preview --diff --replacements FILE` "
                   "or `python -m infra.replacements pulumi-json ... --out FILE` wrote it; the "
                   "workloads found are written back into it (for `python -m "
                   "infra.replacements show FILE`).")
@stack_source_options
@click.option("--namespace", "-n", "namespaces", multiple=True, metavar="NS",
              help="Where to look for workloads [default: the namespaces of the stack's "
                   "local queues]. Repeatable.")
def at_risk(replacements_file: str, stack: str | None, outputs_file: str | None,
            project_dir: str, namespaces: tuple[str, ...]) -> None:
    """The JobSets running on, and the Kueue Workloads admitted to, the accelerator pools
    a previewed change replaces or deletes, with owner and age (docs/review.md)."""
    import json
    import time

    from submit.cli.context import Context
    from submit.cluster.at_risk import read
    from submit.cluster.kube import KubeError
    from submit.state.at_risk import at_risk as match

    path = Path(replacements_file)
    try:
        data = json.loads(path.read_text())
        stacks = data["stacks"]
        assert isinstance(stacks, list)
    except (OSError, ValueError, KeyError, AssertionError, TypeError):
        raise click.BadParameter(f"{path}: not a file written by accelstack-preview "
                                 "--replacements", param_hint="'--replacements'") from None
    ctx = Context(stack, outputs_file, project_dir)
    outputs = ctx.outputs
    # The stack's entry: by --stack, else by the cluster's name (a stack's cluster is
    # named after it in the shipped stacks), else the file's only entry.
    names = {(stack or "").rsplit("/", 1)[-1], outputs.cluster.name}
    mine = [s for s in stacks if s.get("stack") in names] or (
        stacks if len(stacks) == 1 else [])
    if not mine:
        raise click.BadParameter(f"{path} has no stack {stack!r} (it has "
                                 f"{', '.join(str(s.get('stack')) for s in stacks)})",
                                 param_hint="'--stack'")
    ns = namespaces or tuple(q.namespace for q in outputs.local_queues) or (
        outputs.workload_namespace,)
    for entry in mine:
        pools = [c["pool"] for c in entry.get("changes") or []
                 if c.get("pool") and c.get("op") in ("replace", "delete", "unapplied")]
        if not pools:
            click.echo(f"{entry['stack']}: the change destroys no accelerator pool")
            continue
        try:
            listed = read(ctx.cluster, [p["name"] for p in pools], ns)
        except KubeError as e:
            entry["workloads"] = f"not looked up: {e}"
            click.echo(f"{entry['stack']}: could not look: {e}", err=True)
            continue
        rows = match(pools, listed["nodes"], listed["pods"], listed["jobsets"],
                     listed["workloads"], listed["flavors"], time.time())
        entry["workloads"] = {"namespaces": list(ns), "items": rows}
        click.echo(f"{entry['stack']}: {len(rows)} workload{'s' if len(rows) != 1 else ''} "
                   f"running on or admitted to {', '.join(p['name'] for p in pools)}")
        for r in rows:
            click.echo(f"  {r['kind']:8s} {r['namespace']}/{r['name']}  {r['state']:8s} on "
                       f"{', '.join(r['nodePools'])}  owner {r['owner']}  age {r['age']}")
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
# `hold` / `resume` (a pool's ClusterQueues through Kueue's stopPolicy): submit/cli/maintenance.py
from submit.cli.maintenance import hold, resume  # noqa: E402

cluster.add_command(hold)
cluster.add_command(resume)
