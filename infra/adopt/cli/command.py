"""`accelstack-adopt PROJECT/LOCATION/CLUSTER --stack NAME`: write stacks/Pulumi.NAME.yaml
for a cluster made by xpk, gcloud or Cluster Toolkit (docs/adopt.md).

Exit codes: 0 written; 1 the cluster cannot be adopted, or the GKE API refused or failed
(one line saying what to do); 2 usage (a bad argument, an unreadable --answer file, a
stack file that exists); 3 refused: fields our config cannot express differ from the live
cluster (each named with its live value; --keep-unexpressed keeps them as they are).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from infra.adopt import installed as installed_mod
from infra.adopt import plan as plan_mod
from infra.config import stack as config_mod
from infra.adopt.errors import AdoptError, AdoptRefused
from infra.adopt.gke import api

_TARGET = re.compile(r"^(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/(?P<location>[a-z]+-[a-z]+"
                     r"[0-9]+(-[a-z])?)/(?P<cluster>[a-z]([-a-z0-9]*[a-z0-9])?)\Z")
_STACK = re.compile(r"^[a-zA-Z0-9][-a-zA-Z0-9_.]{0,99}\Z")


class Refused(click.ClickException):
    exit_code = 3


class Failed(click.ClickException):
    exit_code = 1


def _read_answer(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"{path}: cannot read it ({type(e).__name__})",
                                 param_hint="--answer") from None
    except json.JSONDecodeError as e:
        raise click.BadParameter(f"{path}:{e.lineno}: not JSON ({e.msg})",
                                 param_hint="--answer") from None
    if not isinstance(data, dict) or "name" not in data:
        raise click.BadParameter(f"{path}: not a GKE Cluster resource (no name)",
                                 param_hint="--answer")
    return data


@click.command(name="accelstack-adopt", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("target", metavar="PROJECT/LOCATION/CLUSTER")
@click.option("--stack", "stack", required=True, help="The stack to write (stacks/Pulumi.NAME.yaml).")
@click.option("--stacks-dir", default="stacks", show_default=True,
              type=click.Path(file_okay=False), help="Where stack files live.")
@click.option("--keep-unexpressed", is_flag=True,
              help="Keep fields our config cannot express as they are (ignore_changes) "
                   "instead of refusing.")
@click.option("--skip-pool", "skip", multiple=True, metavar="NAME",
              help="Leave this node pool out of the stack (it stays as it is); repeatable.")
@click.option("--answer", type=click.Path(dir_okay=False), default=None,
              help="Adopt offline from a recorded GKE API answer (Cluster JSON) instead of "
                   "reading the API.")
@click.option("--record", type=click.Path(dir_okay=False), default=None,
              help="Also save the GKE API's answer to this file (for --answer and review).")
@click.option("--installed", type=click.Path(dir_okay=False), default=None,
              help="The cluster's Deployments (`kubectl get deployments -A -o json`): say "
                   "which Kueue and JobSet run and what the stack's install meets.")
@click.option("--force", is_flag=True, help="Overwrite an existing stack file.")
def adopt(target: str, stack: str, stacks_dir: str, keep_unexpressed: bool,
          skip: tuple[str, ...], answer: str | None, record: str | None,
          installed: str | None, force: bool) -> None:
    """Adopt a GKE cluster made by xpk, gcloud or Cluster Toolkit into a stack: read the
    cluster and its node pools from the GKE API and write stacks/Pulumi.NAME.yaml in
    accelstack's config language, with the import IDs the first `pulumi up` uses.
    Nothing in the cluster is changed by this command.

    Exit codes: 0 written; 1 cannot be adopted, or the GKE API failed; 2 usage;
    3 refused (fields our config cannot express differ; see --keep-unexpressed).
    """
    m = _TARGET.match(target)
    if not m:
        raise click.BadParameter(f"{target!r} is not PROJECT/LOCATION/CLUSTER such as "
                                 "my-project/us-central2/my-cluster", param_hint="TARGET")
    if not _STACK.match(stack):
        raise click.BadParameter(f"{stack!r} is not a stack name (letters, digits, '-', '_', "
                                 "'.')", param_hint="--stack")
    out = Path(stacks_dir) / f"Pulumi.{stack}.yaml"
    if out.exists() and not force:
        raise click.UsageError(f"{out}: exists; pass --force to overwrite it, or another "
                               "--stack")
    project, location, name = m.group("project"), m.group("location"), m.group("cluster")
    running = _running(installed) if installed is not None else {}
    if answer is not None:
        cluster = _read_answer(answer)
    else:
        try:
            cluster = api.get_cluster(project, location, name)
        except api.GkeApiError as e:
            raise Failed(str(e)) from None
    if record is not None:
        Path(record).write_text(json.dumps(cluster, indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")
    try:
        result = plan_mod.plan(cluster, project=project, location=location, stack=stack,
                               keep=keep_unexpressed, skip_pools=skip)
    except AdoptRefused as e:
        for line in e.lines:
            click.echo(f"  {line}", err=True)
        raise Refused(str(e)) from None
    except AdoptError as e:
        raise Failed(str(e)) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.text(), encoding="utf-8")
    click.echo(f"wrote {out}: the cluster {name} and {len(cluster_pools(result))} node "
               "pool(s) to import")
    for note in result.notes:
        click.echo(f"  {note}")
    for resource, fields in result.kept.items():
        for path in fields:
            click.echo(f"  kept as it is: {resource}: {path}")
    cfg = config_mod.parse(result.config)
    for line in installed_mod.notes(running, {"Kueue": cfg.addons.kueue_version,
                                              "JobSet": cfg.addons.jobset_version}):
        click.echo(f"  {line}")
    click.echo(f"next: accelstack-preview {out}")


def _running(path: str) -> dict[str, str]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"{path}: cannot read it ({type(e).__name__})",
                                 param_hint="--installed") from None
    except json.JSONDecodeError as e:
        raise click.BadParameter(f"{path}:{e.lineno}: not JSON ({e.msg})",
                                 param_hint="--installed") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise click.BadParameter(f"{path}: not a Kubernetes List of Deployments (no items)",
                                 param_hint="--installed")
    return installed_mod.installed(data)


def cluster_pools(result: plan_mod.Plan) -> list[str]:
    return list(result.config["adopt"]["nodePools"])
