"""`submit fleet view` reads a fleet's clusters at once: it takes about the time of the
slowest cluster, not the sum over clusters. Target: the view of a manager and WORKERS
workers, each behind a fake API server that answers every request after LATENCY seconds
(a control plane in another region), within TARGET_RATIO of reading the slowest cluster
alone; the same view read one cluster after another (parallel.LIMIT = 1) is reported for
the ratio the concurrency buys.

The servers are tests/fake_fleet_apiserver.py's (tests/fake_apiserver.py with a latency);
the outputs are the example fleet's, made offline (stacks/Pulumi.fleet.yaml), with its two
workers copied to WORKERS and every kubeconfig pointed at a server.

Run: python bench/fleet_view.py [--workers N] [--latency S] [--repeat N]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

TARGET_RATIO = 1.5


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from click.testing import CliRunner

    from bench.common import best_of, outputs_file
    from fake_fleet_apiserver import FleetApiServer
    from submit.cli.app import main as submit
    from submit.cluster import parallel
    from submit.cluster.kube import Cluster

    data = json.loads(outputs_file("fleet").read_text())
    fleet = data["accelstackFleet"]
    first = fleet["workers"][0]
    fleet["workers"] = [{**copy.deepcopy(first), "name": f"w{i}"} for i in range(args.workers)]
    servers = [FleetApiServer(latency=args.latency).start() for _ in range(args.workers + 1)]
    fleet["manager"]["kubeconfig"] = servers[0].kubeconfig()
    for w, srv in zip(fleet["workers"], servers[1:]):
        w["outputs"]["kubeconfig"] = srv.kubeconfig()
    path = Path(tempfile.mkdtemp(prefix="accelstack-bench-")) / "fleet.json"
    path.write_text(json.dumps(data))
    namespaces = sorted({q["namespace"] for q in fleet["queues"]})

    def view() -> None:
        result = CliRunner().invoke(submit, ["fleet", "--outputs", str(path), "view",
                                             "-o", "json"])
        rows = json.loads(result.output)
        assert all(r["status"] == "ok" for r in rows), rows

    def slowest_alone() -> None:
        # The manager's read: the most requests of any cluster (its queues, the fleet's
        # Workloads, its MultiKueueClusters and AdmissionChecks).
        c = Cluster(fleet["manager"]["kubeconfig"])
        c.list_cluster_queues()
        for ns in namespaces:
            c.list_workloads(ns)
        c.list_multikueue_clusters()
        c.list_admission_checks()

    try:
        view()  # warm: imports and first connections
        alone = best_of(slowest_alone, args.repeat)
        at_once = best_of(view, args.repeat)
        parallel.LIMIT = 1
        one_by_one = best_of(view, args.repeat)
    finally:
        for srv in servers:
            srv.stop()
    ratio = at_once / alone
    verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(f"fleet view, manager and {args.workers} workers at {args.latency * 1000:.0f} ms "
          f"per request: {at_once:.2f} s at once, {one_by_one:.2f} s one after another "
          f"({one_by_one / at_once:.1f}x); the slowest cluster alone {alone:.2f} s")
    print(f"{verdict}: at once / slowest alone = {ratio:.2f}x (target <= {TARGET_RATIO}x)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
