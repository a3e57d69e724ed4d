"""Shell completion for `submit`: accelerator names, pool names, priorities, stack names
and workload names. Loaded only when the shell asks for completions (Click's
``_SUBMIT_COMPLETE`` protocol), never on a normal run.

Completion must be fast and must never fail loudly: a stack's pools come from an
``--outputs`` file or the stack's file in ``stacks/`` (never from `pulumi`, which may take
seconds), and workload names from the cluster with a short timeout; any error gives no
suggestions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

CLUSTER_TIMEOUT = 2.0  # seconds: a shell waiting for completions must not hang
PRIORITIES = ("very-low", "low", "medium", "high", "very-high", "none")


def _items(names: Any, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(n) for n in sorted(set(names)) if n.startswith(incomplete)]


def _project_dir(ctx: click.Context) -> Path:
    obj = ctx.find_root().obj or ctx.obj
    return Path(getattr(obj, "project_dir", None) or ".")


def stack_names(project_dir: Path) -> list[str]:
    """The stacks of the project: its `stacks/Pulumi.<name>.yaml` (or top-level) files."""
    found = list(project_dir.glob("stacks/Pulumi.*.yaml")) + list(
        project_dir.glob("Pulumi.*.yaml"))
    return [p.name[len("Pulumi."):-len(".yaml")] for p in found]


def stacks(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return _items(stack_names(_project_dir(ctx)), incomplete)


def _pools(ctx: click.Context) -> list[tuple[str, str]]:
    """(pool, accelerator) pairs of the stack named on the command line, if it can be told
    without running anything."""
    obj = ctx.obj
    try:
        if getattr(obj, "outputs_file", None):
            data = json.loads(Path(obj.outputs_file).read_text())
            contract = data.get("accelstack", data)
            return [(p["name"], p["accelerator"]) for p in contract.get("slicePools", [])]
        if getattr(obj, "stack", None):
            from infra import config, stack_file

            sf = stack_file.load(_project_dir(ctx) / "stacks" / f"Pulumi.{obj.stack}.yaml")
            return [(s.name, s.accelerator.name)
                    for s in config.parse(sf.raw, sf.secret_keys).slices]
    except Exception:  # completion never fails: no suggestions
        return []
    return []


def pools(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return _items([p for p, _ in _pools(ctx)], incomplete)


def accelerators(ctx: click.Context, param: click.Parameter,
                 incomplete: str) -> list[CompletionItem]:
    """The stack's accelerators when it is known, else every catalog name."""
    offered = [a for _, a in _pools(ctx)]
    if offered:
        return _items(offered, incomplete)
    from infra import catalog

    return _items((a.name for a in catalog.all_accelerators()), incomplete)


def priorities(ctx: click.Context, param: click.Parameter,
               incomplete: str) -> list[CompletionItem]:
    return _items(PRIORITIES, incomplete)


def workloads(ctx: click.Context, param: click.Parameter,
              incomplete: str) -> list[CompletionItem]:
    """Workload names from the cluster (within CLUSTER_TIMEOUT; nothing on any error)."""
    obj = ctx.obj
    try:
        from submit.kube import Cluster

        outputs = obj.outputs
        cluster = Cluster(outputs.kubeconfig, timeout=CLUSTER_TIMEOUT)
        ns = ctx.params.get("namespace") or obj.namespace or outputs.workload_namespace
        found = cluster.list_jobsets(ns, "app.kubernetes.io/managed-by=accelstack")
        return _items((j["metadata"]["name"] for j in found), incomplete)
    except BaseException:  # noqa: BLE001 - a click.Exit, a KubeError, a timeout: no names
        return []
