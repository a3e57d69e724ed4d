"""`submit workload list` and `submit experiment describe` over 10,000 JobSets: lists read in
pages of 500 (submit/cluster/paging.py, as kubectl reads them), each page made into rows and
dropped, against the same commands reading each list in one page (paging.PAGE = 0: one
request, no limit, every JobSet in memory at once, as before issue 42).

The fake API server (tests/fake_apiserver.py, serving limit and continue as kube-apiserver
does) runs in a process of its own, holding N JobSets as the submitter renders them (the
golden v5e multislice JobSet, about 7 KB each: tests/fakes/many.py), their Kueue workloads and
an N-trial experiment's record; each command runs in a fresh process of its own, which
reports its wall time and the peak resident memory the command added: the process's
peak (``VmHWM`` of /proc/self/status; unlike ``ru_maxrss``, Linux does not carry it over
from the process that started this one) less its resident memory just before the command,
once Click, the Kubernetes client and the submitter are imported. Target: paged, the peak
memory of either command at most TARGET_MEMORY_RATIO of one page's, and its wall time at
most TARGET_TIME_RATIO of one page's (paging must not cost time).

Run: python bench/lists.py [--jobsets N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

TARGET_MEMORY_RATIO = 0.5
TARGET_TIME_RATIO = 1.2
NS = "training"
EXPERIMENT = "sweep"
COMMANDS = {
    "workload list": ["workload", "list"],
    "experiment describe": ["experiment", "describe", EXPERIMENT],
}


def serve(n: int) -> int:
    """The fake API server with N JobSets; prints its kubeconfig as one JSON line, serves
    until its stdin closes."""
    from fake_apiserver import FakeApiServer
    from fakes import many

    server = FakeApiServer().start()
    names = [f"{EXPERIMENT}-{i}" for i in range(n)]
    server.state.jobsets = many.jobsets(NS, names, experiment=EXPERIMENT)
    server.state.workloads[NS] = many.workloads(NS, names)
    server.state.configmaps[(NS, f"{EXPERIMENT}-experiment")] = many.record(
        NS, EXPERIMENT, names)
    print(json.dumps(server.kubeconfig()), flush=True)
    sys.stdin.read()
    server.stop()
    return 0


def run_one(outputs: str, page: int, argv: list[str]) -> int:
    """One command in this process; prints its wall time, peak memory and row count."""
    from click.testing import CliRunner

    from submit.cli.app import main as submit
    from submit.cluster import paging

    import kubernetes.client  # noqa: F401  (in the baseline: every list command loads it)

    paging.PAGE = page
    group, *rest = argv
    before = _memory_mb("VmRSS")
    start = time.perf_counter()
    result = CliRunner().invoke(submit, [group, "--outputs", outputs, *rest])
    wall = time.perf_counter() - start
    if result.exit_code != 0:
        print(result.output[-2000:], file=sys.stderr)
        return 1
    print(json.dumps({"wall": wall, "rss_mb": _memory_mb("VmHWM") - before,
                      "lines": len(result.output.splitlines())}))
    return 0


def _memory_mb(field: str) -> float:
    """This process's ``VmRSS`` (now) or ``VmHWM`` (peak) resident memory, in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(outputs: Path, page: int, argv: list[str], repeat: int) -> dict[str, float]:
    best: dict[str, float] = {}
    for _ in range(repeat):
        done = subprocess.run([sys.executable, __file__, "--run", str(outputs), str(page),
                               *argv], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr}")
        got = json.loads(done.stdout.strip().splitlines()[-1])
        if not best or got["wall"] < best["wall"]:
            best = got
    return best


def main() -> int:
    if sys.argv[1:2] == ["--serve"]:
        return serve(int(sys.argv[2]))
    if sys.argv[1:2] == ["--run"]:
        return run_one(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobsets", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    from fakes import stacks
    from submit.cluster import paging

    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.jobsets)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        kubeconfig = json.loads(server.stdout.readline())
        outputs = stacks.write_outputs(
            Path(tempfile.mkdtemp(prefix="accelstack-bench-")) / "v5e-spot.json", "v5e-spot",
            kubeconfig)
        verdicts = []
        for label, argv in COMMANDS.items():
            paged = _measure(outputs, paging.PAGE, argv, args.repeat)
            whole = _measure(outputs, 0, argv, args.repeat)
            memory, wall = paged["rss_mb"] / whole["rss_mb"], paged["wall"] / whole["wall"]
            ok = memory <= TARGET_MEMORY_RATIO and wall <= TARGET_TIME_RATIO
            verdicts.append(ok)
            print(f"{label}, {args.jobsets:,} JobSets ({paged['lines']:.0f} lines out): paged "
                  f"by {paging.PAGE}: {paged['wall']:.2f} s, peak +{paged['rss_mb']:.0f} MB; "
                  f"one page: {whole['wall']:.2f} s, peak +{whole['rss_mb']:.0f} MB")
            print(f"{'PASS' if ok else 'FAIL'}: paged / one page = {memory:.2f}x memory "
                  f"(target <= {TARGET_MEMORY_RATIO}x), {wall:.2f}x time (target <= "
                  f"{TARGET_TIME_RATIO}x)")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=60)
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
