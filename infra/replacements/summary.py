"""The replacement summary of a preview: every changed resource as created, updated in
place, replaced, deleted or unapplied, and, for each accelerator pool a change destroys, what
it holds. Built from the offline preview's documents (old snapshot, new desired state) or
from the real CLI's ``pulumi preview --json`` (pulumi_json.py); rendered as the block that
leads a pull request's diff, and as JSON for ``submit cluster at-risk`` (which adds the
workloads running there; this package never talks to a cluster).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from infra.cost.price import usd
from infra.record import record
from infra.replacements import forcenew
from infra.replacements.forcenew import CLUSTER, NODE_POOL, Change
from infra.replacements.pools import PoolFacts, facts

# What the JSON says when no one looked at the cluster (offline, or unreachable).
NOT_LOOKED = "not looked up"
VERBS = {"replace": "replaces", "delete": "deletes",
         "unapplied": "needs a replacement (the provider would not apply the change) of"}


@record
class ResourceChange:
    type: str
    name: str
    change: Change
    pool: PoolFacts | None = None  # an accelerator pool the change destroys
    extra: tuple[str, ...] = ()  # reasons from elsewhere (the CLI's replaceReasons, the cluster)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(r.text() for r in self.change.reasons) + self.extra

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "name": self.name, "op": self.change.op,
                               "reasons": list(self.reasons)}
        if self.pool is not None:
            out["pool"] = self.pool.to_dict()
        return out


@record
class Summary:
    stack: str
    changes: tuple[ResourceChange, ...]
    source: str  # "offline preview" or "pulumi preview --json"

    @property
    def destroyed_pools(self) -> tuple[ResourceChange, ...]:
        return tuple(c for c in self.changes if c.pool is not None and c.change.destroys)

    def counts(self) -> dict[str, int]:
        return dict(Counter(c.change.op for c in self.changes))

    def to_dict(self) -> dict[str, Any]:
        """The JSON of `--replacements FILE`: `submit cluster at-risk` fills ``workloads``
        and `python -m infra.replacements show FILE` renders it."""
        return {"stack": self.stack, "source": self.source, "counts": self.counts(),
                "headline": head(self),
                "block": block(self)[1:],
                "changes": [c.to_dict() for c in self.changes],
                "workloads": NOT_LOOKED,
                "forceNewSource": {k: forcenew.source()[k] for k in ("repo", "commit")}}


def _with_pools(changes: list[ResourceChange],
                old: Mapping[tuple[str, str], Mapping[str, Any]]) -> tuple[ResourceChange, ...]:
    """Attach pool facts to destroyed node pools; a replaced or deleted cluster takes every
    node pool of the stack with it (GKE deletes a cluster's node pools with it)."""
    cluster = next((c for c in changes if c.type == CLUSTER and c.change.destroys), None)
    out = []
    seen = set()
    for c in changes:
        seen.add((c.type, c.name))
        if c.type == NODE_POOL and (c.change.destroys or cluster is not None):
            pool = facts(c.name, old.get((c.type, c.name)) or {})
            if c.change.destroys:
                c = ResourceChange(c.type, c.name, c.change, pool, c.extra)
            elif pool is not None and cluster is not None:
                c = ResourceChange(c.type, c.name, Change("replace", (), c.change.changed),
                                   pool, c.extra + (f"its cluster {cluster.name} is "
                                                    f"{cluster.change.op}d",))
        out.append(c)
    if cluster is not None:
        for (type_, name), inputs in sorted(old.items()):
            if type_ == NODE_POOL and (type_, name) not in seen:
                pool = facts(name, inputs)
                if pool is not None:
                    out.append(ResourceChange(type_, name, Change("replace"), pool,
                                              (f"its cluster {cluster.name} is "
                                               f"{cluster.change.op}d",)))
    return tuple(sorted(out, key=lambda c: (c.type, c.name)))


def from_documents(old: Mapping[str, Any], new: Mapping[str, Any]) -> Summary:
    """The summary of a snapshot (``old``) against a desired state (``new``), both as the
    offline preview writes them."""
    def index(doc: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(r["type"], r["name"]): r.get("inputs") or {} for r in doc.get("resources", [])}

    before, after = index(old), index(new)
    changes = []
    for key in sorted(before.keys() | after.keys()):
        change = forcenew.classify(before.get(key), after.get(key), key[0])
        if change.op != "same":
            changes.append(ResourceChange(key[0], key[1], change))
    return Summary(str(new.get("stack") or old.get("stack")), _with_pools(changes, before),
                   "offline preview")


def _slices(pools: Iterable[PoolFacts]) -> str:
    groups = Counter((p.kind, p.accelerator, p.chips_per_slice) for p in pools
                     for _ in range(p.slices))
    parts = [f"{n} {kind.upper()} slice{'s' if n != 1 else ''} ({accel}, {chips} chips each)"
             for (kind, accel, chips), n in sorted(groups.items())]
    return ", ".join(parts)


def headline(summary: Summary, workloads: Mapping[str, Any] | str = NOT_LOOKED) -> str:
    """``replaces 2 TPU slices (v5p-128, 64 chips each): 1 workload running there``."""
    if not summary.destroyed_pools:
        return head(summary)
    return f"{head(summary)}: {workloads_text(workloads)}"


def head(summary: Summary) -> str:
    """The headline without what runs there: what the change destroys and what it holds."""
    pools = summary.destroyed_pools
    if not pools:
        return f"{summary.stack}: destroys no accelerator pool"
    parts = []
    for op in ("replace", "unapplied", "delete"):
        mine = [c.pool for c in pools if c.change.op == op and c.pool is not None]
        if mine:
            parts.append(f"{VERBS[op]} {_slices(mine)}")
    per_hour = [p.pool.per_hour for p in pools if p.pool is not None]
    cost = (f"{usd(sum(x for x in per_hour if x is not None))}/hour"
            + (" + unpriced parts" if any(x is None for x in per_hour) else ""))
    hosts = sum(c.pool.hosts for c in pools if c.pool is not None)
    chips = sum(c.pool.chips for c in pools if c.pool is not None)
    return f"{summary.stack}: {'; '.join(parts)} [{hosts} hosts, {chips} chips, {cost}]"


def workloads_text(workloads: Mapping[str, Any] | str) -> str:
    if isinstance(workloads, str):
        return (f"workloads there {workloads} (offline: no cluster; "
                "`submit cluster at-risk` looks)" if workloads == NOT_LOOKED else workloads)
    n = len(workloads.get("items") or [])
    return f"{n} workload{'s' if n != 1 else ''} running or admitted there"


def block(summary: Summary, workloads: Mapping[str, Any] | str = NOT_LOOKED) -> list[str]:
    """The lines that lead a stack's diff: the headline, then each destroying change."""
    counts = summary.counts()
    lines = [headline(summary, workloads),
             "  " + ", ".join(f"{counts.get(op, 0)} {label}" for op, label in (
                 ("create", "created"), ("update", "updated in place"),
                 ("replace", "replaced"), ("unapplied", "not applied in place"),
                 ("delete", "deleted")))]
    for c in summary.changes:
        if not c.change.destroys:
            continue
        what = f"{c.change.op:9s} {c.type} {c.name}"
        if c.pool is not None:
            p = c.pool
            what += (f" ({p.slices} x {p.accelerator}, {p.hosts} hosts, {p.chips} chips, "
                     f"{p.mode}, {usd(p.per_hour) + '/hour' if p.per_hour is not None else 'unpriced'})")
        lines.append(f"  {what}")
        lines += [f"      {r}" for r in c.reasons]
    return lines
