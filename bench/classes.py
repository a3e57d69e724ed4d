"""A stack with slice classes evaluates, and renders workloads, as fast as one with the
same capacity as fixed pools. Target: the class stack's offline evaluation (the Pulumi
program under the mock engine, as `accelstack-preview` runs it) within 1.15x of the pool
stack's, and rendering a workload on a class within 1.15x of rendering it on a pool.

Both stacks are stacks/Pulumi.v6e-burst.yaml: as written (a reserved pool and two slice
classes), and with each class replaced by fixed pools holding its limits.

Run: python bench/classes.py [--repeat N]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.15


def _as_pools(raw: dict[str, Any]) -> dict[str, Any]:
    """The same stack with every class replaced by fixed pools of its limits."""
    out = copy.deepcopy(raw)
    classes = out.pop("sliceClasses")
    teams = out["queues"]["teams"]
    for team in teams:
        team["quota"] = {k: v for k, v in team["quota"].items()
                         if k not in {c["name"] for c in classes}}
    out["slices"] += [{"name": "burst", "accelerator": "v6e-64", "count": 4},
                      {"name": "short", "accelerator": "v6e-8-1vm", "count": 4,
                       "capacity": "spot"}]
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--renders", type=int, default=500)
    args = parser.parse_args()
    from bench.common import best_of
    from infra.contract.outputs import load
    from infra.preview import harness
    from submit.render.build import build_spec
    from submit.render.jobset import render

    classes = harness.read_stack_file(ROOT / "stacks" / "Pulumi.v6e-burst.yaml")
    pools = _as_pools(classes)
    evals = {"classes": 0.0, "pools": 0.0}
    for _ in range(args.repeat):  # interleaved: the machine's load falls on both alike
        for name, raw in (("classes", classes), ("pools", pools)):
            t = best_of(lambda: harness.evaluate(raw, name), 1)
            evals[name] = t if not evals[name] else min(evals[name], t)
    eval_ratio = evals["classes"] / evals["pools"]

    outputs = {name: load(harness.plain_outputs(harness.evaluate(raw, name), reveal=True))
               for name, raw in (("classes", classes), ("pools", pools))}

    def renders(name: str) -> Callable[[], None]:
        def run() -> None:
            for i in range(args.renders):
                spec = build_spec(outputs[name], workload=f"w{i}", accelerator="v6e-64",
                                  pool="burst", num_slices=2, namespace="research",
                                  image="us-docker.pkg.dev/p/r/maxtext:1",
                                  command="python3 train.py")
                render(spec)
        return run

    rend = {"classes": 0.0, "pools": 0.0}
    for _ in range(args.repeat):
        for name in ("classes", "pools"):
            t = best_of(renders(name), 1)
            rend[name] = t if not rend[name] else min(rend[name], t)
    render_ratio = rend["classes"] / rend["pools"]
    print(f"evaluate: classes {evals['classes'] * 1000:.0f} ms, pools "
          f"{evals['pools'] * 1000:.0f} ms: {eval_ratio:.2f}x (target <= {TARGET_RATIO}x)")
    print(f"render:   classes {args.renders / rend['classes']:,.0f} workloads/s, pools "
          f"{args.renders / rend['pools']:,.0f} workloads/s: {render_ratio:.2f}x "
          f"(target <= {TARGET_RATIO}x)")
    ok = eval_ratio <= TARGET_RATIO and render_ratio <= TARGET_RATIO
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
