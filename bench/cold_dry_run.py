"""Cold `submit workload create --dry-run` for a TPU multislice workload: process start to
YAML out, as a user types it (an image given by tag). Target: median <= 150 ms, and
within 1.3x of a bare `import click, yaml` measured in the same run, interleaved, as the median of each run's ratio to the floor timed just
before it (the floor any Click + PyYAML tool pays; `python -c pass` is reported too). docs/benchmarks.md states the same targets and the last figures.
Also checks that the render path loads no pulumi, no Kubernetes client and no subprocess.

Run: python bench/cold_dry_run.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import outputs_file  # noqa: E402

TARGET_MS = 150.0
TARGET_RATIO = 1.3  # to `python -c "import click, yaml"` (docs/benchmarks.md states it)
# Recorded side by side on a quiet 2-core machine (issue 42), kept as facts to compare a
# run with; this benchmark does not run xpk (it is not a dependency of the project).
MEASURED_RATIO = 1.14  # cold dry-run / `import click, yaml`
MEASURED_VS_XPK = 12.8  # xpk's cold `workload create --dry-run` / ours (11.5x under load)
MEASURED_VS_XPK_UNDER_LOAD = 11.5


def _median_ms(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    outputs = outputs_file("v5e-spot")
    exe = shutil.which("submit") or str(Path(sys.executable).with_name("submit"))
    cmd = [exe, "workload", "--outputs", str(outputs), "create", "--workload", "bench",
           "--accelerator", "v5litepod-16", "--num-slices", "2",
           "--image", "us-docker.pkg.dev/p/r/maxtext:1", "--command", "python3 train.py",
           "--env", "A=1", "--priority", "high", "--max-restarts", "3", "--dry-run"]
    # As a user types it: an image by tag and no --no-resolve-image. A dry-run contacts no
    # registry (the tag is pinned at submit), so this times start-up and render alone.
    # Any non-empty PYTHONDONTWRITEBYTECODE (even "0") stops Python writing bytecode, and
    # then every module changed since its last .pyc is compiled again on every run: drop it,
    # and warm the cache once.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    times = []
    bare, floor = [], []
    for _ in range(args.runs):  # interleaved: the machine's load falls on all three alike
        bare.append(_median_ms([sys.executable, "-c", "pass"], 1, env))
        floor.append(_median_ms([sys.executable, "-c", "import click, yaml"], 1, env))
        start = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
        assert b"kind: JobSet" in out.stdout
    probe = ("import sys, submit.cli.app, submit.render.jobset, submit.render.spec; "
             "bad=[m for m in sys.modules if m.split('.')[0] in "
             "('pulumi','pulumi_gcp','pulumi_kubernetes','kubernetes','subprocess', "
             "'urllib3')]; print(bad)")
    loaded = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                            text=True).stdout.strip()
    median = statistics.median(times)
    print(f"cold dry-run: median {median:.1f} ms, p90 {sorted(times)[int(len(times) * 0.9)]:.1f}"
          f" ms, min {min(times):.1f} ms over {args.runs} runs (target <= {TARGET_MS:.0f} ms)")
    # Each run's ratio to the floor timed just before it, then the median of those: a
    # slow stretch of the machine falls on both sides of a pair alike.
    ratio_bare = statistics.median(t / b for t, b in zip(times, bare))
    ratio_floor = statistics.median(t / f for t, f in zip(times, floor))
    print(f"python -c pass: median {statistics.median(bare):.1f} ms; import click, yaml: "
          f"median {statistics.median(floor):.1f} ms")
    print(f"dry-run / python -c pass = {ratio_bare:.2f}x; dry-run / import click, yaml = "
          f"{ratio_floor:.2f}x (target <= {TARGET_RATIO}x; recorded {MEASURED_RATIO}x on a "
          f"quiet machine, where xpk's took {MEASURED_VS_XPK}x as long as ours)")
    print(f"heavy modules loaded on the render path: {loaded}")
    ok = median <= TARGET_MS and ratio_floor <= TARGET_RATIO and loaded == "[]"
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
