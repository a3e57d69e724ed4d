"""submit/cluster/parallel.py: reads run at once, at most ``limit`` at a time, each bounded
by its timeout from its own start; errors and timeouts come back per read."""

from __future__ import annotations

import threading
import time

import pytest

from submit.cluster.parallel import TimedOut, gather


def test_results_errors_and_timeouts_per_read() -> None:
    stop = threading.Event()

    def hangs() -> str:
        stop.wait(5)
        return "late"

    def fails() -> str:
        raise ValueError("refused")

    try:
        got = gather({"a": lambda: "A", "b": fails, "c": hangs}, timeout=0.3)
    finally:
        stop.set()
    assert got["a"] == "A"
    assert isinstance(got["b"], ValueError) and str(got["b"]) == "refused"
    assert isinstance(got["c"], TimedOut) and str(got["c"]) == "no answer within 0.3s"
    assert list(got) == ["a", "b", "c"]  # in the order asked


def test_at_most_limit_at_once_and_each_timed_from_its_start() -> None:
    running, peak = 0, 0
    lock = threading.Lock()

    def read() -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.2)
        with lock:
            running -= 1
        return 1

    # 6 reads of 0.2s, 2 at a time: the last start 0.4s after the first, none times out
    got = gather({str(i): read for i in range(6)}, timeout=0.35, limit=2)
    assert peak == 2
    assert all(v == 1 for v in got.values())


def test_an_interrupt_is_not_swallowed() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        gather({"a": interrupted}, timeout=1)
