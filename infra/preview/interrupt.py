"""Ctrl-C during `accelstack-preview`: one outcome, whenever it comes: stop, exit 130, no
traceback.

Python turns SIGINT into a KeyboardInterrupt wherever the main thread happens to be: inside
Click it becomes "Aborted!" (exit 1); inside an import it leaves a module half made, and
the next import of it fails with an AttributeError traceback; inside a callback of the
Pulumi SDK's event loop it is printed as "Exception ignored" and the run goes on to exit 0.
So the preview takes SIGINT itself and ends the process at once (130 = 128 + SIGINT, the
shell's convention, as `submit run` uses). A file being written is finished first, so an
--outputs file or a snapshot is never left half written. Must not import pulumi.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from typing import Any, Iterator

EXIT_INTERRUPTED = 130


class _State:
    writing = 0
    pending = False


def install() -> None:
    """Take SIGINT for the rest of the process (the main thread only may call this)."""
    signal.signal(signal.SIGINT, _on_sigint)


def _on_sigint(_signum: int, _frame: Any) -> None:
    if _State.writing:
        _State.pending = True
        return
    _stop()


def _stop() -> None:
    try:
        sys.stderr.write("accelstack-preview: interrupted (Ctrl-C); stopped\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(EXIT_INTERRUPTED)  # no unwinding: nothing half-imported runs again


@contextmanager
def writing() -> Iterator[None]:
    """A file is being written: a Ctrl-C meanwhile stops the process once it is done."""
    _State.writing += 1
    try:
        yield
    finally:
        _State.writing -= 1
        if not _State.writing and _State.pending:
            _stop()
