"""The guard: a change that replaces or deletes an accelerator pool (or changes a field the
provider would not apply, which needs a replacement) is refused unless the stack carries a
written allowance for that pool (``allowReplace``, infra/config/replace.py) or the pipeline
passes one (``--allow POOL=REASON``). One line per refused pool, naming the pool and the
field that forces it."""

from __future__ import annotations

from typing import Iterable

from infra.config.replace import Allowance
from infra.replacements.summary import Summary

HOW = ("add `accelstack:allowReplace: [{{pool: {pool}, reason: \"...\"}}]` to the stack "
       "file (a reason of at least 10 characters), or pass --allow {pool}=REASON")


def refusals(summary: Summary, allowances: Iterable[Allowance]) -> list[str]:
    """One line per destroyed accelerator pool that no allowance names."""
    allowed = {a.pool for a in allowances}
    out = []
    for c in summary.destroyed_pools:
        assert c.pool is not None
        if c.name in allowed or c.pool.slice_pool in allowed:
            continue
        why = c.reasons[0] if c.reasons else {"delete": "the node pool is deleted",
                                               "replace": "the engine replaces it"}.get(
                                                   c.change.op, c.change.op)
        verb = {"replace": "replaces", "delete": "deletes",
                "unapplied": "needs a replacement of"}[c.change.op]
        out.append(f"{summary.stack}: refused: the change {verb} accelerator pool {c.name} "
                   f"({c.pool.slices} x {c.pool.accelerator}): {why}; "
                   + HOW.format(pool=c.name))
    return out


def allowed(summary: Summary, allowances: Iterable[Allowance]) -> list[str]:
    """The destroyed pools an allowance lets through, with its reason (shown in review)."""
    by_pool = {a.pool: a.reason for a in allowances}
    out = []
    for c in summary.destroyed_pools:
        assert c.pool is not None
        reason = by_pool.get(c.name) or by_pool.get(c.pool.slice_pool)
        if reason:
            out.append(f"{summary.stack}: allowed: {c.change.op} of accelerator pool {c.name}: "
                       f"{reason}")
    return out
