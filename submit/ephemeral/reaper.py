"""The reaper: find ephemeral stacks in the backend and destroy the expired ones.

A run that was killed (or whose machine died) cannot take its stack down; its stack carries
its expiry in its tags (submit/ephemeral/plan.py), and this lists the project's stacks in
the backend that carry the ephemeral tag (`pulumi stack ls --json --tag`, then each one's
`pulumi stack tag ls --json`) and takes down those whose expiry has passed, or those named,
with the same destroy-and-remove as a run's own teardown (a dead holder's lock cleared, a
stack with pending creates kept and reported: teardown.py). Stacks without the ephemeral tag are never touched. A pools stack's
queued work is deleted from its host first, as a run's teardown does (pools_work.py): the
reaper finds the host and the queue in the stack's own outputs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from infra.record import record
from submit.ephemeral import plan as pl
from submit.ephemeral.pools_work import clear
from submit.ephemeral.backend import cli_message
from submit.ephemeral.teardown import take_down


@record
class Reaped:
    name: str
    destroyed: bool
    note: str


class BackendError(Exception):
    """The backend could not be read; the message is the CLI's."""


def find(project_dir: str, command: Any) -> dict[str, Mapping[str, str]]:
    """The project's ephemeral stacks in the backend, with their tags: the backend filters
    by the ephemeral tag (`pulumi stack ls --json --tag NAME=VALUE`,
    pkg/cmd/pulumi/stack/stack_list.go; its JSON has no tags), then each one's tags are read
    (`pulumi stack tag ls --json`), so no other stack is read."""
    from pulumi.automation.errors import CommandError

    from submit.ephemeral.pulumi_process import run_json, workspace

    try:
        ws = workspace(project_dir, command)
        listed = run_json(ws, ["stack", "ls", "--json", "--tag", f"{pl.TAG_EPHEMERAL}=true"])
        return {s["name"]: ws.list_tags(s["name"]) for s in listed}
    except CommandError as e:
        raise BackendError(f"listing the stacks: {cli_message(e)}") from None


def reap(project_dir: str, command: Any, chosen: Sequence[pl.Reapable],
         say: Callable[[str], None], sleep: Callable[[float], None],
         stopped: Callable[[], bool], host: str, alive: Callable[[int], bool],
         now: datetime) -> list[Reaped]:
    """Take each chosen stack down. An update cut off by a dead run (its lock left behind)
    is cancelled first, as `pulumi cancel` is meant for ("After this command completes
    successfully, the stack will be ready for further updates", pulumi cancel's reference);
    a live run's update is left alone and that stack reported."""
    from pulumi.automation import Stack
    from pulumi.automation.errors import CommandError

    from submit.ephemeral.pulumi_process import workspace

    ws = workspace(project_dir, command)
    # Only Pulumi Cloud says an update is in progress; a self-managed backend's lock is
    # found when the destroy refuses, and cleared there if its holder is gone (teardown.py).
    busy = {s.name for s in ws.list_stacks() if s.update_in_progress}
    done = []
    for item in chosen:
        try:
            stack = Stack.select(item.name, ws)
            if item.name in busy:
                tags = ws.list_tags(item.name)
                if not pl.holder_gone(pl.holder(tags), tags, host, alive, now):
                    done.append(Reaped(item.name, False,
                                       "an update by a live run is in progress"))
                    continue
                say(f"{item.name}: its last update was cut off; `pulumi cancel`")
                stack.cancel()
        except CommandError as e:
            done.append(Reaped(item.name, False, cli_message(e)))
            continue
        # A pools stack's queued work goes first, or its ClusterQueue cannot (pools_work.py).
        clear(stack, item.name, say)
        ok, note = take_down(stack, item.name, say, sleep, stopped, host=host, alive=alive)
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
