"""`submit cluster ...`: the stack's cluster for other tools. `credentials` writes or
merges a kubeconfig context for it (authenticating with gke-gcloud-auth-plugin)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from submit.cli.options import (OUTPUTS_HELP, PROJECT_DIR_HELP, STACK_HELP, complete,
                                one_source)


@click.group("cluster")
def cluster() -> None:
    """The stack's cluster for other tools (kubectl)."""


def _default_kubeconfig() -> str:
    """kubectl's file: the first of $KUBECONFIG's paths, else ~/.kube/config."""
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), None)
    return first or str(Path.home() / ".kube" / "config")


@cluster.command("credentials")
@click.option("--stack", envvar="ACCELSTACK_STACK", show_envvar=True, metavar="NAME",
              shell_complete=complete("stacks"), help=STACK_HELP, callback=one_source("stack"))
@click.option("--outputs", "outputs_file", envvar="ACCELSTACK_OUTPUTS", show_envvar=True,
              metavar="FILE", type=click.Path(dir_okay=False), help=OUTPUTS_HELP,
              callback=one_source("outputs"))
@click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
              default=".", show_default=True, metavar="DIR", type=click.Path(file_okay=False),
              help=PROJECT_DIR_HELP)
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


# `hold` / `resume` (a pool's ClusterQueues through Kueue's stopPolicy): submit/cli/maintenance.py
from submit.cli.maintenance import hold, resume  # noqa: E402

cluster.add_command(hold)
cluster.add_command(resume)
