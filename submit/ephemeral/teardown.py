"""Take one stack down: destroy (retrying what the cloud refuses for a passing reason), then
remove the stack. Shared by a run's own teardown and by the reaper.

Retries: a small explicit loop, not a library: the project has no retry library, and what
is retried is a whole `pulumi destroy` chosen by the text of the provider's error
(plan.TRANSIENT), with a few fixed waits (plan.RETRY_DELAYS). Each retry destroys with
``--refresh``: the state is first read back from the cloud, so resources a failed attempt
(or the cloud) already deleted leave the state instead of being deleted twice. The stack is
removed without ``--force``: Pulumi refuses to remove a stack that still has resources
("'NAME' still has resources; removal rejected", pulumi stack rm), so the state never lets
go of a resource that still exists.
"""

from __future__ import annotations

from typing import Any, Callable

from submit.ephemeral import plan as pl
from submit.ephemeral.events import Tally


class Stop(Exception):
    """Raised (by a signal handler) to give up at once."""


def take_down(stack: Any, name: str, say: Callable[[str], None],
              sleep: Callable[[float], None], stopped: Callable[[], bool],
              on_event: Callable[[Tally], Callable[[Any], None]] | None = None,
              now: Callable[[], float] | None = None) -> tuple[bool, str]:
    """Destroy and remove ``stack``; (True, what was done) or (False, why not)."""
    import time

    from pulumi.automation.errors import CommandError

    clock = now or time.monotonic
    for attempt, delay in enumerate((*pl.RETRY_DELAYS, None)):
        if stopped():
            return False, "stopped"
        tally = Tally("deleted")
        listen = on_event(tally) if on_event is not None else (
            lambda event: tally.add(event, clock()))
        try:
            stack.destroy(on_event=listen, color="never", refresh=attempt > 0 or None,
                          message=f"accelstack: take down {name}")
            stack.workspace.remove_stack(name)
            note = f"{len(tally.done)} resources deleted, stack {name} removed"
            say(note)
            return True, note
        except Stop:
            return False, "stopped"
        except CommandError as e:
            reason = tally.failure() or last_line(e)
            if stopped():
                return False, "stopped"
            if delay is None or not pl.is_transient(reason):
                say(f"destroy of {name} failed: {reason}")
                return False, reason
            say(f"destroy of {name} refused for now ({reason}); again in {delay:.0f}s, "
                "refreshing the state first")
            try:
                sleep(delay)
            except Stop:
                return False, "stopped"
    return False, "gave up"  # not reached: the last attempt has no delay


def last_line(error: Exception) -> str:
    """The CLI's last error line (a CommandError's text holds its stdout and stderr)."""
    text = str(error)
    stderr = text.split("\n stderr: ", 1)[-1]
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else "pulumi failed"
