"""What the `pulumi` CLI says about the backend, read without running anything: its error
text (whole, bounded), a stack's locks, the pending operations in an exported state, and
the oldest CLI the ephemeral runs work with. Pure: the runner and the reaper act on it.

Sources (pulumi/pulumi at 1b59498, August 2026):
- Self-managed ("diy": file://, gs://, s3://) backends lock a stack with one file per
  holder, ``.pulumi/locks/<org>/<project>/<stack>/<lock-id>.json`` holding the holder's pid,
  user name, host name and time; a second operation refuses with "the stack is currently
  locked by N lock(s). Either wait for the other process(es) to end or delete the lock file
  with `pulumi cancel`." and one line per lock, "  <url>: created by <user>@<host> (pid
  <pid>) at <RFC 3339 time>" (pkg/backend/diy/lock.go, checkForLock). The lock is deleted
  by a deferred Unlock, which a killed CLI never runs. `pulumi cancel` on such a backend
  deletes every lock file of the stack (pkg/backend/diy/backend.go, CancelCurrentUpdate).
- Pulumi Cloud refuses a second update with "[409] Conflict: Another update is currently in
  progress." (the text pulumi.automation's errors.py classifies); `pulumi cancel` asks the
  service to cancel the update (pkg/backend/httpstate/backend.go, CancelCurrentUpdate).
  `stack ls --json` prints ``updateInProgress`` only where the backend supports progress:
  the service does, a self-managed backend does not (pkg/cmd/pulumi/stack/stack_list.go,
  formatStackSummariesJSON; SupportsProgress in diy/backend.go and httpstate/backend.go).
- A create cut off by a kill stays in the state as a pending operation of type "creating"
  (``deployment.pending_operations[].type``, sdk/go/common/apitype/core.go, OperationV2),
  kept across every later update and destroy ("we don't want to clear pending CREATE
  operations because these must require user intervention", pkg/backend/snapshot.go); a
  destroy only warns about them (pkg/resource/deploy/deployment_executor.go,
  printPendingOperationsWarning), and `stack rm` looks only at the resources
  (diy/backend.go RemoveStack), so removing the stack would forget a resource that may exist.
  `pulumi refresh --clear-pending-creates` drops them (pkg/cmd/pulumi/operations/refresh.go,
  since 3.39.0, pulumi/pulumi#10394). Its `--import-pending-creates URN ID` turns one into a
  pending import of that ID (pendingCreatesToImports), which no engine step reads (nothing
  in pkg/resource/deploy or pkg/engine looks at OperationTypeImporting) and which the new
  snapshot drops, carrying over pending creates only (pkg/backend/snapshot.go, journal.go):
  the resource leaves the state without being adopted, so it is not used here.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from infra.record import record

# Stack tags on self-managed backends, and `stack ls --tag` filtering there, came with CLI
# 3.211.0 (CHANGELOG.md, "[backend/diy] Add stack tags support for DIY backends ... Tag
# filtering support in stack listing operations", pulumi/pulumi#19882); older CLIs refuse
# tags there ("stack tags not supported in diy mode"). Everything else the runs use is older.
MIN_CLI = (3, 211, 0)

_MESSAGE_LINES = 20
_MESSAGE_CHARS = 2000
DIY_LOCKED = "the stack is currently locked by"
SERVICE_LOCKED = "[409] Conflict: Another update is currently in progress."
_LOCK_LINE = re.compile(r"^\s*(\S+): created by (\S*)@(\S+) \(pid (\d+)\) at (\S+)\s*$")


def cli_message(error: Exception) -> str:
    """The CLI's own message, whole, from a pulumi.automation CommandError (its text holds
    the command, its stdout and its stderr): the stderr lines, at most 20 lines and 2000
    characters (the rest marked as cut)."""
    text = str(error)
    stderr = text.split("\n stderr: ", 1)[-1]
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return "pulumi failed"
    shown = "\n".join(lines[:_MESSAGE_LINES])
    if len(lines) > _MESSAGE_LINES or len(shown) > _MESSAGE_CHARS:
        shown = shown[:_MESSAGE_CHARS] + f"\n[... cut: {len(stderr)} characters in all]"
    return shown


@record
class Lock:
    """One diy lock file: who holds the stack."""

    url: str
    user: str
    host: str
    pid: int


def locked(message: str) -> bool:
    return DIY_LOCKED in message or SERVICE_LOCKED in message


def locks(message: str) -> list[Lock]:
    """The diy locks a "currently locked" error names (none for the service's conflict)."""
    out = []
    for line in message.splitlines():
        m = _LOCK_LINE.match(line)
        if m:
            out.append(Lock(m.group(1), m.group(2), m.group(3), int(m.group(4))))
    return out


def holders_gone(found: Sequence[Lock], host: str, alive: Any) -> bool:
    """Whether every lock's holder is provably gone: it ran on this machine and its process
    has ended. A holder on another machine cannot be asked, so its lock is never cleared."""
    return bool(found) and all(lk.host == host and not alive(lk.pid) for lk in found)


def pending_creates(deployment: Mapping[str, Any] | None) -> list[str]:
    """The URNs of the creates an exported state (`pulumi stack export`'s ``deployment``)
    holds as pending: each may be a resource that exists and bills."""
    ops = (deployment or {}).get("pending_operations") or []
    # "importing": a create given an ID by `refresh --import-pending-creates` (refresh.go,
    # pendingCreatesToImports) by hand, in a state not yet refreshed.
    return [op["resource"]["urn"] for op in ops if op.get("type") in ("creating", "importing")
            and isinstance(op.get("resource"), Mapping)]


def version_refusal(version: Any) -> str | None:
    """Why a CLI of ``version`` (a semver VersionInfo, or None when unknown) cannot run the
    ephemeral stacks; None when it can."""
    if version is None:
        return None
    found = (int(version.major), int(version.minor), int(version.patch))
    if found >= MIN_CLI:
        return None
    need = ".".join(map(str, MIN_CLI))
    return (f"pulumi CLI {'.'.join(map(str, found))} is older than {need}, the oldest "
            "`submit run` and `submit reap` work with (stack tags and `stack ls --tag` on "
            f"every backend); upgrade it (https://www.pulumi.com/docs/install/)")
