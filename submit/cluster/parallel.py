"""Reading several clusters at once: a fleet's manager and workers.

Each read is a few TLS round trips to a control plane that may be in another region, so
reading the clusters one after another takes the sum of their times; read concurrently, a
fleet's view takes about the slowest cluster's. ``gather`` runs the reads on at most
``limit`` threads, each read bounded by ``timeout`` seconds from its start: a cluster that
does not answer in time is reported as such (``TimedOut``) and the others are still
returned. The threads are daemons, so a read left hanging never holds the process open at
exit (concurrent.futures' workers would: its pool joins them at interpreter exit).
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, Mapping, TypeVar

T = TypeVar("T")

LIMIT = 8  # reads at once: a fleet has at most 20 workers (MultiKueue's limit) and a manager


class TimedOut(Exception):
    """A read that did not finish within its timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:g}s")
        self.seconds = seconds


class _Slot(Generic[T]):
    def __init__(self) -> None:
        self.started: float | None = None
        self.done = False
        self.value: T | BaseException | None = None


def gather(reads: Mapping[str, Callable[[], T]], *, timeout: float, limit: int | None = None
           ) -> dict[str, T | Exception]:
    """Run every read, at most ``limit`` (default LIMIT) at once; each name maps to its
    result, the exception it raised, or ``TimedOut``. Returns once every read has finished
    or run out of time."""
    slots: dict[str, _Slot[T]] = {name: _Slot() for name in reads}
    seats = threading.Semaphore(max(1, LIMIT if limit is None else limit))
    changed = threading.Condition()

    def run(name: str, read: Callable[[], T]) -> None:
        with seats:
            with changed:
                slots[name].started = time.monotonic()
            try:
                value: T | BaseException = read()
            except BaseException as e:  # reported to the caller, never raised in a thread
                value = e
            with changed:
                slots[name].value, slots[name].done = value, True
                changed.notify_all()

    for name, read in reads.items():
        threading.Thread(target=run, args=(name, read), daemon=True,
                         name=f"read-{name}").start()
    out: dict[str, T | Exception] = {}
    with changed:
        while len(out) < len(slots):
            now = time.monotonic()
            wait = timeout
            for name, slot in slots.items():
                if name in out:
                    continue
                if slot.done:
                    v = slot.value
                    if isinstance(v, BaseException) and not isinstance(v, Exception):
                        raise v  # KeyboardInterrupt and the like stay what they are
                    out[name] = v  # type: ignore[assignment]
                elif slot.started is not None:
                    left = slot.started + timeout - now
                    if left <= 0:
                        out[name] = TimedOut(timeout)
                    else:
                        wait = min(wait, left)
            if len(out) < len(slots):
                changed.wait(wait)
    return {name: out[name] for name in reads}
