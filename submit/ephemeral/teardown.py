"""Take one stack down: destroy (retrying what the cloud refuses for a passing reason), then
remove the stack. Shared by a run's own teardown and by the reaper.

Retries: a small explicit loop, not a library: the project has no retry library, and what
is retried is a whole `pulumi destroy` chosen by the text of the provider's error
(plan.TRANSIENT), with a few fixed waits (plan.RETRY_DELAYS). Each retry destroys with
``--refresh``: the state is first read back from the cloud, so resources a failed attempt
(or the cloud) already deleted leave the state instead of being deleted twice. The stack is
removed without ``--force``: Pulumi refuses to remove a stack that still has resources
("'NAME' still has resources; removal rejected", pulumi stack rm), so the state never lets
go of a resource that still exists. `stack rm` does not look at pending creates: before the
destroy, those of a type whose provider ID is known (pending.py) are read from the cloud by
that ID (imported if they exist), and after it the exported state is read again and a
stack still holding one is kept and reported (backend.py).

A lock (backend.py): a self-managed backend's lock left by a holder that provably ended
(on this machine, its pid gone) is cleared with `pulumi cancel` and the destroy runs again;
any other lock is named, with the CLI's whole message and what to do.
"""

from __future__ import annotations

from typing import Any, Callable

from submit.ephemeral import plan as pl
from submit.ephemeral.backend import (cli_message, holders_gone, locked, locks,
                                       pending_creates)
from submit.ephemeral.events import Tally


class Stop(Exception):
    """Raised (by a signal handler) to give up at once."""


def take_down(stack: Any, name: str, say: Callable[[str], None],
              sleep: Callable[[float], None], stopped: Callable[[], bool],
              on_event: Callable[[Tally], Callable[[Any], None]] | None = None,
              now: Callable[[], float] | None = None, *, host: str = "",
              alive: Callable[[int], bool] = lambda pid: True) -> tuple[bool, str]:
    """Destroy and remove ``stack``; (True, what was done) or (False, why not). A diy lock
    whose holders are provably gone (``host`` is this machine, ``alive`` asks for a pid) is
    cleared with `pulumi cancel` once; a stack that still holds pending creates after the
    destroy is not removed (backend.py: removing it would forget what they made)."""
    import time

    from pulumi.automation.errors import CommandError

    clock = now or time.monotonic
    unlocked = imported = False
    delays = list((*pl.RETRY_DELAYS, None))
    while delays:
        if stopped():
            return False, "stopped"
        tally = Tally("deleted")
        listen = on_event(tally) if on_event is not None else (
            lambda event: tally.add(event, clock()))
        try:
            if not imported:
                import_pending(stack, name, say)
                imported = True
            stack.destroy(on_event=listen, color="never", refresh=len(delays) <= len(
                pl.RETRY_DELAYS) or None, message=f"accelstack: take down {name}")
            left = pending_left(stack, name)
            if left:
                say(left)
                return False, left
            stack.workspace.remove_stack(name)
            note = f"{len(tally.done)} resources deleted, stack {name} removed"
            say(note)
            return True, note
        except Stop:
            return False, "stopped"
        except CommandError as e:
            reason = tally.failure() or cli_message(e)
            if stopped():
                return False, "stopped"
            if locked(reason):
                if not unlocked and unlock_if_gone(stack, name, reason, say, host, alive):
                    unlocked = True
                    continue
                note = lock_note(name, reason)
                say(note)
                return False, note
            delay = delays.pop(0)
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


def unlock_if_gone(stack: Any, name: str, message: str, say: Callable[[str], None],
                   host: str, alive: Callable[[int], bool]) -> bool:
    """Clear a diy lock (`pulumi cancel`, which deletes the stack's lock files) when every
    holder it names ran on this machine and its process has ended; False otherwise (a
    holder elsewhere, or Pulumi Cloud's conflict, which names no process)."""
    from pulumi.automation.errors import CommandError

    found = locks(message)
    if not holders_gone(found, host, alive):
        return False
    who = ", ".join(f"pid {lk.pid}" for lk in found)
    say(f"stack {name} is locked by a process that has ended ({who} on {host}): "
        "`pulumi cancel` deletes its lock")
    try:
        stack.cancel()
    except CommandError as e:
        say(f"pulumi cancel failed: {cli_message(e)}")
        return False
    return True


def lock_note(name: str, message: str) -> str:
    """What to say of a stack left locked: the CLI's message, and what to do."""
    return (f"stack {name} is locked, by an update that may still run:\n{message}\n"
            f"If that process has ended, clear the lock with `pulumi cancel --yes --stack "
            f"{name}` (run in the project's {pl.RUNS_DIR}), then run this again")


def import_pending(stack: Any, name: str, say: Callable[[str], None]) -> None:
    """Resolve the pending creates of the types with a known provider ID (pending.py): each
    is read from the cloud by that ID with `pulumi import TYPE NAME ID --protect=false`
    (import.go; protect defaults to true, which would refuse the destroy), so a resource
    that exists enters the state and the destroy deletes it, and one that does not fails
    the import with "resource 'ID' does not exist" (step.go, ImportStep.Apply). When every
    pending create was resolved so, `refresh --clear-pending-creates` drops them. Not
    `refresh --import-pending-creates`: the pending import it makes is read by no engine
    step and dropped from the next snapshot, so the resource would be forgotten, not
    adopted (backend.py). Says, per URN, what was found; another CLI error (a lock, say) is
    raised for take_down to handle."""
    from pulumi.automation.errors import CommandError

    from submit.ephemeral.pending import pending_creates as creates, provider_id
    from submit.ephemeral.pulumi_process import run

    found = creates(stack.export_stack().deployment)
    known = {c.urn: (c.type, i) for c in found if (i := provider_id(c)) is not None}
    if not known:
        return
    say(f"stack {name}: {len(known)} create(s) cut off by a killed run; reading each from "
        "the cloud by its ID (`pulumi import`)")
    common = ["--yes", "--skip-preview", "--generate-code=false", "--protect=false",
              "--non-interactive", "--color", "never", "--stack", name]
    for urn, (rtype, rid) in known.items():
        try:
            run(stack.workspace, ["import", rtype, urn.rsplit("::", 1)[-1], rid, *common])
            say(f"  {urn}: exists ({rid}); imported, the destroy deletes it")
        except CommandError as e:
            if f"resource '{rid}' does not exist" not in str(e):
                raise
            say(f"  {urn}: nothing at {rid}; its create never reached the cloud")
    if len(known) == len(found):
        run(stack.workspace, ["refresh", "--yes", "--skip-preview", "--non-interactive",
                              "--color", "never", "--stack", name, "--clear-pending-creates"])
        say(f"  pending creates of {name} cleared (`pulumi refresh --clear-pending-creates`)")


def pending_left(stack: Any, name: str, lead: str = "is not removed") -> str | None:
    """None when the exported state holds no pending create; else what to say and do."""
    urns = pending_creates(stack.export_stack().deployment)
    if not urns:
        return None
    listed = "".join(f"\n  {u}" for u in urns)
    # Not `refresh --import-pending-creates`: it drops the create without adopting the
    # resource (import_pending above).
    return (f"stack {name} {lead}: a create was cut off (the process running it was "
            f"killed), and the resource may exist and bill:{listed}\n"
            f"In the project's {pl.RUNS_DIR}, if it exists: `pulumi import TYPE NAME ID "
            f"--protect=false --generate-code=false --yes --stack {name}` (its type, any "
            f"name, its provider ID), or delete it in the cloud; then `pulumi refresh --yes "
            f"--stack {name} --clear-pending-creates`, and run this again")
