"""The reaper: find ephemeral stacks in the backend and destroy the expired ones.

A run that was killed (or whose machine died) cannot take its stack down; its stack carries
its expiry in its tags (submit/ephemeral/plan.py), and this lists the project's stacks in
the backend (`pulumi stack ls --json`, then each one's `pulumi stack tag ls --json`) and
takes down those whose expiry has passed, or those named, with the same destroy-and-remove
as a run's own teardown. Stacks without the ephemeral tag are never touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Sequence

from submit.ephemeral import plan as pl
from submit.ephemeral.teardown import take_down


@dataclass(frozen=True)
class Reaped:
    name: str
    destroyed: bool
    note: str


def find(project_dir: str, command: Any) -> dict[str, dict[str, str]]:
    """Every stack of the project in the backend, with its tags."""
    from pulumi.automation import LocalWorkspace

    ws = LocalWorkspace(work_dir=project_dir, pulumi_command=command)
    return {s.name: ws.list_tags(s.name) for s in ws.list_stacks()}


def reap(project_dir: str, command: Any, chosen: Sequence[pl.Reapable],
         say: Callable[[str], None], sleep: Callable[[float], None],
         stopped: Callable[[], bool]) -> list[Reaped]:
    from pulumi.automation import LocalWorkspace, Stack

    ws = LocalWorkspace(work_dir=project_dir, pulumi_command=command)
    done = []
    for item in chosen:
        stack = Stack.select(item.name, ws)
        ok, note = take_down(stack, item.name, say, sleep, stopped)
        done.append(Reaped(item.name, ok, note))
    return done


def describe(item: pl.Reapable, now: datetime) -> str:
    if item.expires is None:
        when = "no readable expiry"
    else:
        left = int((item.expires - now).total_seconds())
        when = (f"expired {_span(-left)} ago" if left <= 0 else f"expires in {_span(left)}")
    return f"{item.name}: {when}; owner {item.owner}; made by: {item.command}"


def _span(seconds: int) -> str:
    h, rem = divmod(seconds, 3600)
    return f"{h}h{rem // 60:02d}m"
