"""A 1,000-trial `submit experiment create --dry-run` as a whole process, default (YAML)
output and `-o json`: expansion, every trial rendered and checked, the table and every
JobSet printed. Targets: the YAML run at most 1 s (as fast as JSON, issue 26), and, as a
ratio that holds on any machine, at most ``TARGET_FLOOR_RATIO`` times a bare
`python -c "import click, yaml"` (the floor any Click + PyYAML tool pays) timed in the same
run, interleaved. ``MEASURED_FLOOR_RATIO`` is the figure recorded side by side on a quiet
machine (issue 42: 15.9x); docs/benchmarks.md states both.

Run: python bench/sweep_dry_run.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import outputs_file  # noqa: E402

TARGET_S = 1.0
TARGET_FLOOR_RATIO = 20.0  # YAML best wall / `import click, yaml` best wall
MEASURED_FLOOR_RATIO = 15.9  # recorded on a quiet 2-core machine (issue 42)
SWEEP = """\
name: big
workload:
  accelerator: v5litepod-16
  image: us-docker.pkg.dev/p/r/maxtext@sha256:{digest}
  command: python train.py
sweep:
  env.LR: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  env.SEED: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  env.BATCH: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
""".format(digest="0" * 64)


def _times(cmd: list[str], runs: int) -> tuple[float, float, float, int]:
    """(best wall, median wall, median CPU of the child) in seconds, and the output size.
    The figure is the best wall time: as timeit's documentation puts it, higher values are
    typically other processes interfering (https://docs.python.org/3/library/timeit.html)."""
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        before = os.times()
        start = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(after.children_user + after.children_system
                    - before.children_user - before.children_system)
        size = len(out.stdout)
    return min(walls), statistics.median(walls), statistics.median(cpus), size


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    outputs = outputs_file("v5e-spot")
    sweep = Path(tempfile.mkdtemp(prefix="accelstack-bench-")) / "big.yaml"
    sweep.write_text(SWEEP)
    exe = shutil.which("submit") or str(Path(sys.executable).with_name("submit"))
    cmd = [exe, "experiment", "--outputs", str(outputs), "create", str(sweep), "--dry-run",
           "--max-trials", "1000"]
    subprocess.run(cmd, check=True, capture_output=True, env=os.environ)  # warm the caches
    floor_cmd = [sys.executable, "-c", "import click, yaml"]
    yaml_best, yaml_median, yaml_cpu, yaml_bytes = _times(cmd, args.runs)
    json_best, json_median, json_cpu, json_bytes = _times(cmd + ["-o", "json"], args.runs)
    # The floor, timed after both: best of as many runs again, so a slow stretch of the
    # machine does not fall on one side only.
    floor_best = _times(floor_cmd, args.runs * 2)[0]
    ratio = yaml_best / floor_best
    print(f"1,000-trial experiment dry-run over {args.runs} runs, best (median) wall, median "
          f"CPU:\n  YAML  {yaml_best:.2f} s ({yaml_median:.2f} s), CPU {yaml_cpu:.2f} s, "
          f"{yaml_bytes / 1e6:.1f} MB\n  JSON  {json_best:.2f} s ({json_median:.2f} s), CPU "
          f"{json_cpu:.2f} s, {json_bytes / 1e6:.1f} MB\n"
          f"  import click, yaml  {floor_best * 1000:.0f} ms (best)\n"
          f"YAML / import floor = {ratio:.1f}x (target <= {TARGET_FLOOR_RATIO:g}x; recorded "
          f"{MEASURED_FLOOR_RATIO:g}x on a quiet machine)\n"
          f"target: YAML best wall <= {TARGET_S:.1f} s")
    ok = yaml_best <= TARGET_S and ratio <= TARGET_FLOOR_RATIO
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
