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


class _Where:
    """Where the outputs come from, as far as the command line says. During completion
    Click parses but runs no group callback, so this is read from the parsed options."""

    def __init__(self, ctx: click.Context) -> None:
        params: dict[str, Any] = {}
        for c in reversed(list(_chain(ctx))):
            params.update({k: v for k, v in c.params.items() if v is not None})
        self.stack = ctx.meta.get("accelstack.stack", params.get("stack"))
        self.outputs_file = ctx.meta.get("accelstack.outputs_file", params.get("outputs_file"))
        if "accelstack.stack" in ctx.meta and "accelstack.outputs_file" not in ctx.meta:
            self.outputs_file = None
        self.project_dir = ctx.meta.get("accelstack.project_dir",
                                        params.get("project_dir") or ".")
        self.namespace = params.get("namespace")


def _chain(ctx: click.Context | None) -> Any:
    while ctx is not None:
        yield ctx
        ctx = ctx.parent


def _project_dir(ctx: click.Context) -> Path:
    return Path(_Where(ctx).project_dir)


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
    obj = _Where(ctx)
    try:
        if obj.outputs_file:
            data = json.loads(Path(obj.outputs_file).read_text())
            contract = data.get("accelstack", data)
            return [(p["name"], p["accelerator"]) for p in contract.get("slicePools", [])]
        if obj.stack:
            from infra.config import stack as config
            from infra.config import stack_file

            sf = stack_file.load(_project_dir(ctx) / "stacks" / f"Pulumi.{obj.stack}.yaml")
            return [(s.name, s.accelerator.name)
                    for s in config.parse(sf.raw, sf.secret_keys).slices]
    except Exception:  # completion never fails: no suggestions
        return []
    return []


def pools(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The stack's pools; of the --accelerator already typed, when it is (in any of its
    accepted names)."""
    found = _pools(ctx)
    typed = next((c.params["accelerator"] for c in _chain(ctx)
                  if c.params.get("accelerator")), None)
    if typed:
        from infra.catalog import tables as catalog

        try:
            wanted = catalog.resolve(str(typed)).name
        except catalog.UnknownAccelerator:
            wanted = None
        if wanted is not None:
            found = [(p, a) for p, a in found if a == wanted]
    return _items([p for p, _ in found], incomplete)


def run_stacks(ctx: click.Context, param: click.Parameter,
               incomplete: str) -> list[CompletionItem]:
    """`submit run STACK`: the stacks of --project-dir (default here), and stack files."""
    where = Path(ctx.params.get("project_dir") or ".")
    names = stack_names(where)
    if "/" in incomplete or incomplete.endswith((".yaml", ".yml")):
        return [CompletionItem(incomplete, type="file")]
    return _items(names, incomplete)


def accelerators(ctx: click.Context, param: click.Parameter,
                 incomplete: str) -> list[CompletionItem]:
    """The stack's accelerators when it is known, else every catalog name."""
    offered = [a for _, a in _pools(ctx)]
    if offered:
        return _items(offered, incomplete)
    from infra.catalog import tables as catalog

    return _items((a.name for a in catalog.all_accelerators()), incomplete)


def priorities(ctx: click.Context, param: click.Parameter,
               incomplete: str) -> list[CompletionItem]:
    return _items(PRIORITIES, incomplete)


def workloads(ctx: click.Context, param: click.Parameter,
              incomplete: str) -> list[CompletionItem]:
    """Workload names from the cluster (within CLUSTER_TIMEOUT; nothing on any error)."""
    where = _Where(ctx)
    try:
        from submit.cluster.kube import Cluster
        from submit.cluster.stack_outputs import read

        outputs = read(where.stack, where.outputs_file, where.project_dir)
        cluster = Cluster(outputs.kubeconfig, timeout=CLUSTER_TIMEOUT, retries=0)
        ns = where.namespace or outputs.workload_namespace
        found = cluster.list_jobsets(ns, "app.kubernetes.io/managed-by=accelstack")
        return _items((j["metadata"]["name"] for j in found), incomplete)
    except BaseException:  # noqa: BLE001 - a click.Exit, a KubeError, a timeout: no names
        return []
