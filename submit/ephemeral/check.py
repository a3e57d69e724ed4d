"""What `submit run` knows about a run's stack before it looks for the pulumi CLI: pure.

The run's config (the stack file's, the overrides, the run's own keys) is parsed by the
program's own parser (infra.config), so a bad key or value fails here with exit 2, named by
its FILE:LINE or by the ``--set`` that gave it, instead of at `pulumi up` after the CLI and
the backend were found. A fleet stack is refused: it makes no cluster and no pools, so
there is nothing to run the work on (docs/fleets.md). The slice types the stack offers
(its pools and its slice classes) are listed for `--dry-run`; the work itself is checked
against the outputs the stack will have (derive.py), by the render the run does after `up`.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Mapping, Sequence

from infra.catalog import tables as catalog
from infra.config import fleet as fleet_config
from infra.config import pools as pools_config
from infra.config import stack as stack_config
from infra.config.errors import ConfigError
from infra.record import record
from submit.ephemeral.plan import NAMESPACE, PlanError


@record
class Offer:
    """What the run's stack makes, as far as its config shows without the cloud."""

    kind: str  # "cluster" (a whole stack) or "pools" (pools on a standing cluster)
    pools: tuple[str, ...]  # one line per slice pool or class: "name: accelerator xN (mode)"
    shapes: tuple[str, ...]  # accelerator names (catalog names) the pools and classes offer
    # Whether the stack makes a workload image repository (accelstack:registry); None for a
    # pools stack, whose host's is read from the host's outputs once the run starts.
    registry: bool | None = None


def _raw(config: Mapping[str, Any]) -> dict[str, Any]:
    prefix = f"{NAMESPACE}:"
    return {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}


def _where(problem: str, overridden: Collection[str],
           locate: Callable[[str], str]) -> tuple[str, str]:
    """(the option to blame, the problem as shown): a key given with --set is the option's
    fault; any other is the stack file's, at its line."""
    top = problem.split(": ", 1)[0].split(".", 1)[0].split("[", 1)[0]
    if f"{NAMESPACE}:{top}" in overridden:
        return "--set", problem
    return "STACK", locate(problem)


def checked(config: Mapping[str, Any], stack: str, overridden: Collection[str],
            locate: Callable[[str], str]) -> Offer:
    """Parse the run's ``config`` (namespaced keys) as the program will; PlanError naming
    the first problem's option (every problem in its message, one per line)."""
    raw = _raw(config)
    if fleet_config.is_fleet(raw):
        raise PlanError("STACK", f"stack {stack!r} is a fleet stack (accelstack:fleet): it "
                        "makes no cluster and no pools to run work on; give `submit run` a "
                        "cluster stack or a pools stack (accelstack:onCluster)")
    try:
        if pools_config.is_pools(raw):
            cfg = pools_config.parse_pools(raw, stack)
            return _pools_offer(cfg.slices, cfg.slice_classes)
        parsed = stack_config.parse(raw)
    except ConfigError as e:
        shown = [_where(p, overridden, locate) for p in e.problems]
        raise PlanError(shown[0][0], "\n".join(text for _, text in shown)) from None
    lines = [f"{p.name}: {p.accelerator.name} x{p.count} ({p.capacity.mode})"
             for p in parsed.slices]
    lines += [f"{c.name}: slice class of {', '.join(a.name for a in c.shapes)}"
              for c in parsed.slice_classes]
    shapes = [p.accelerator.name for p in parsed.slices]
    shapes += [a.name for c in parsed.slice_classes for a in c.shapes]
    return Offer("cluster", tuple(lines), tuple(dict.fromkeys(shapes)),
                 registry=parsed.registry is not None)


def _pools_offer(slices: Sequence[Any], classes: Sequence[Any]) -> Offer:
    """A pools stack's slices are parsed against its host at `up`; their accelerators are
    read here as written (a name the catalog does not know is the parser's to report)."""
    lines, shapes = [], []
    for item in slices:
        if isinstance(item, Mapping):
            name = _catalog_name(item.get("accelerator"))
            lines.append(f"{item.get('name', name)}: {name} x{item.get('count', 1)}")
            shapes.append(name)
    for item in classes:
        if isinstance(item, Mapping):
            names = [_catalog_name(s) for s in item.get("shapes") or []]
            lines.append(f"{item.get('name')}: slice class of {', '.join(names)}")
            shapes += names
    return Offer("pools", tuple(lines), tuple(dict.fromkeys(shapes)))


def _catalog_name(name: Any) -> str:
    try:
        return catalog.resolve(str(name)).name
    except catalog.UnknownAccelerator:
        return str(name)

