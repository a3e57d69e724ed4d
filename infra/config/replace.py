"""The ``allowReplace`` key: the written allowances that let a change replace or delete an
accelerator pool (infra/replacements/guard.py refuses it otherwise).

Stack config ``allowReplace: [{pool, reason}]``: ``pool`` is a node pool's name (as the
preview names it, e.g. ``v5litepod-16-0``) or a slice pool's name (every node pool of it);
``reason`` is at least 10 characters a reviewer can judge. An allowance is meant for the
one change that needs it: remove it after the change is deployed (a stale one lets the next
replacement of that pool through unseen).

Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.errors import show
from infra.config.reader import Reader
from infra.record import record

KEY = "allowReplace"
MIN_REASON = 10
_NAME_MAX = 63  # node pool names: at most 40 for GKE, slice pools are shorter; a safe bound


@record
class Allowance:
    pool: str
    reason: str


def parse_allow_replace(r: Reader, value: Any) -> tuple[Allowance, ...]:
    """The allowances, each checked; problems go to ``r`` with their key path."""
    out: list[Allowance] = []
    if value is None:
        return ()
    if not isinstance(value, list):
        r.fail(KEY, f"{show(value)} is not a list; expected [{{pool: NAME, reason: TEXT}}]")
        return ()
    seen: set[str] = set()
    for i, item in enumerate(value):
        path = f"{KEY}[{i}]"
        raw = r.obj(item, path, ("pool", "reason"))
        if not raw and not isinstance(item, dict):
            continue
        pool = r.get(raw, "pool", path, str, required=True)
        reason = r.get(raw, "reason", path, str, required=True)
        if pool is not None and not (0 < len(pool) <= _NAME_MAX):
            r.fail(f"{path}.pool", f"{show(pool)} is not a pool name")
            continue
        if reason is not None and len(reason.strip()) < MIN_REASON:
            r.fail(f"{path}.reason", f"an allowance needs a written reason (at least "
                   f"{MIN_REASON} characters) that reviewers can judge")
            continue
        if pool is None or reason is None:
            continue
        if pool in seen:
            r.fail(f"{path}.pool", f"{show(pool)} is allowed twice")
            continue
        seen.add(pool)
        out.append(Allowance(pool, reason.strip()))
    return tuple(out)
