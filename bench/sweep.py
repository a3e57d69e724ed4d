"""Render and validate a 1,000-workload sweep in one process (a hyper-parameter sweep:
one workload per setting). Target: >= 2,000 workloads/s.

Run: python bench/sweep.py [--workloads N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import outputs_file  # noqa: E402

TARGET_PER_S = 2000.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from submit.render.jobset import render
    from submit.render.build import build_spec
    from submit.cluster.stack_outputs import from_file

    outputs = from_file(str(outputs_file("v5e-spot")))
    best = 0.0
    for _ in range(args.repeat):
        start = time.perf_counter()
        for i in range(args.workloads):
            spec = build_spec(
                outputs, workload=f"sweep-lr-{i}", accelerator="v5litepod-16", num_slices=2,
                image="us-docker.pkg.dev/p/r/maxtext:1", command="python3 train.py",
                env=[f"LEARNING_RATE=1e-{i % 7}", f"SEED={i}"], priority="low",
                max_restarts=2, restart_on_exit_codes="42")
            objs = render(spec)
            assert objs[-1]["spec"]["replicatedJobs"][0]["replicas"] == 2
        elapsed = time.perf_counter() - start
        best = max(best, args.workloads / elapsed)
    print(f"sweep: {best:,.0f} workloads/s rendering and validating {args.workloads} workloads "
          f"(best of {args.repeat}; target >= {TARGET_PER_S:,.0f}/s)")
    ok = best >= TARGET_PER_S
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
