"""Shared set-up for the benchmarks: an outputs file made offline from an example stack, and
the best of repeated timings."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent


def outputs_file(stack: str = "v5e-spot") -> Path:
    """Write the offline preview's outputs of ``stack`` to a temporary file (in a process
    of its own, so the benchmark's process never loads the Pulumi SDK)."""
    path = Path(tempfile.mkdtemp(prefix="accelstack-bench-")) / f"{stack}.json"
    preview = Path(sys.executable).with_name("accelstack-preview")
    subprocess.run([str(preview), stack, "--quiet", "--outputs", str(path)], check=True,
                   cwd=ROOT, capture_output=True)
    return path


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """The shortest of ``repeat`` timed calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
