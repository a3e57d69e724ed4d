"""Pulumi's engine events folded into one progress line: pure.

The engine announces each resource operation with a resourcePreEvent and ends it with a
resOutputsEvent (done) or a resOpFailedEvent (failed), a diagnosticEvent carrying the
provider's error first (sdk/go/common/apitype/events.go in pulumi/pulumi; the Python SDK's
pulumi/automation/events.py mirrors it). The engine does not say up front how many
operations an update will run, so "n of N" counts the operations started so far; on a
stack Pulumi has deployed before, ``expected`` (its resource count) is shown as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Operations that only read or keep a resource: counted as done, never as slow.
_QUIET_OPS = frozenset({"same", "read", "refresh"})


def short_name(urn: str) -> str:
    """``urn:pulumi:STACK::PROJECT::TYPE::NAME`` -> ``NAME (TYPE's last part)``."""
    parts = urn.split("::")
    if len(parts) < 4:
        return urn
    kind = parts[2].split("$")[-1].split(":")[-1]
    return f"{parts[3]} ({kind})"


@dataclass
class Tally:
    """The state of one `up` or `destroy`, updated event by event."""

    verb: str  # "created" for up, "deleted" for destroy
    expected: int | None = None
    started: dict[str, float] = field(default_factory=dict)  # urn -> time started
    done: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)  # urn -> the provider's message
    errors: dict[str, str] = field(default_factory=dict)  # urn -> last error diagnostic
    messages: list[str] = field(default_factory=list)  # the CLI's own (cancelling, ...)

    def add(self, event: Any, now: float) -> bool:
        """Fold one EngineEvent in; True when the line to show changed."""
        pre = getattr(event, "resource_pre_event", None)
        if pre is not None:
            meta = pre.metadata
            if meta.op in _QUIET_OPS:
                self.done.add(meta.urn)
            self.started.setdefault(meta.urn, now)
            return True
        out = getattr(event, "res_outputs_event", None)
        if out is not None:
            self.done.add(out.metadata.urn)
            return True
        failed = getattr(event, "res_op_failed_event", None)
        if failed is not None:
            urn = failed.metadata.urn
            self.failed[urn] = self.errors.get(urn, "failed")
            return True
        diag = getattr(event, "diagnostic_event", None)
        if diag is not None and diag.severity == "error" and diag.urn:
            self.errors[diag.urn] = diag.message.strip()
            return False
        std = getattr(event, "stdout_event", None)
        if std is not None and std.message.strip():
            self.messages.append(std.message.strip().splitlines()[0])
            return True
        return False

    def slowest(self, now: float) -> tuple[str, float] | None:
        waiting = [(now - t, urn) for urn, t in self.started.items()
                   if urn not in self.done and urn not in self.failed]
        if not waiting:
            return None
        seconds, urn = max(waiting)
        return short_name(urn), seconds

    def line(self, now: float) -> str:
        n, total = len(self.done), len(self.started)
        text = f"{n} of {total} {self.verb}"
        if self.expected is not None and self.expected > total:
            text += f" (the stack had {self.expected})"
        if self.failed:
            text += f", {len(self.failed)} failed"
        slow = self.slowest(now)
        if slow is not None:
            text += f"; waiting longest: {slow[0]} {_clock(slow[1])}"
        return text

    def failure(self) -> str | None:
        """The first failed resource and its error, for the summary."""
        for urn, message in self.failed.items():
            return f"{short_name(urn)}: {message}"
        return None


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}m{s % 60:02d}s"
