"""The local runner against real processes: logs and prefixes, fail-fast stops, SIGKILL
after the grace period, Job backoff and JobSet restarts with the restart attempt bumped,
the success policy, and Ctrl-C leaving no process behind."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any


from submit.local import plan as lp
from submit.local.run import FreePorts, Runner, summary

ATTEMPT = "metadata.annotations['jobset.sigs.k8s.io/restart-attempt']"


def jobset(script: str, replicas: int = 1, pods: int = 2, *, max_restarts: int | None = 0,
           retriable: tuple[int, ...] = (), backoff: int = 0, grace: int | None = None,
           extra_rjobs: list[dict[str, Any]] | None = None,
           success: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JobSet like the renderer's: one Indexed Job per replica, ``script`` as the command,
    RANK/SLICE/ATTEMPT from the pod's metadata."""
    job: dict[str, Any] = {
        "parallelism": pods, "completions": pods, "completionMode": "Indexed",
        "backoffLimit": backoff,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{
            "name": "main", "image": "busybox:1.37", "command": ["/bin/sh", "-c", script],
            "env": [
                {"name": "SLICE", "valueFrom": {"fieldRef": {
                    "fieldPath": "metadata.annotations['jobset.sigs.k8s.io/job-index']"}}},
                {"name": "ATTEMPT", "valueFrom": {"fieldRef": {"fieldPath": ATTEMPT}}},
            ]}]}},
    }
    if grace is not None:
        job["template"]["spec"]["terminationGracePeriodSeconds"] = grace
    spec: dict[str, Any] = {"replicatedJobs": [{"name": "slice", "replicas": replicas,
                                                "template": {"spec": job}}]}
    spec["replicatedJobs"] += extra_rjobs or []
    if retriable:
        job["podFailurePolicy"] = {"rules": [{"action": "FailJob", "onExitCodes": {
            "containerName": "main", "operator": "NotIn", "values": list(retriable)}}]}
    if max_restarts is not None:
        spec["failurePolicy"] = {"maxRestarts": max_restarts}
        if retriable:
            spec["failurePolicy"]["rules"] = [{"name": "failFast", "action": "FailJobSet",
                                               "onJobFailureReasons": ["PodFailurePolicy"]}]
    if success:
        spec["successPolicy"] = success
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "t", "namespace": "ns"}, "spec": spec}


def run(tmp_path: Path, js: dict[str, Any]) -> tuple[Any, str]:
    opts = lp.Options(run_dir=str(tmp_path / "run"), cwd=str(tmp_path))
    ports = FreePorts()
    out = io.StringIO()
    outcome = Runner(lambda a: lp.build([js], opts, a, ports), out).run()
    return outcome, out.getvalue()


def test_success_streams_prefixed_logs_and_keeps_a_file_per_process(tmp_path: Path) -> None:
    outcome, out = run(tmp_path, jobset('echo "hello from $SLICE/$JOB_COMPLETION_INDEX"',
                                        replicas=2, pods=2))
    assert (outcome.state, outcome.exit_code, outcome.restarts) == ("Succeeded", 0, 0)
    for s in range(2):
        for w in range(2):
            assert f"[{s}/{w}] hello from {s}/{w}\n" in out
            log = tmp_path / "run" / "logs" / f"t-slice-{s}-{w}.attempt-0.log"
            assert log.read_text() == f"hello from {s}/{w}\n"
    table = summary(outcome).splitlines()
    assert table[0].split() == ["ATTEMPT", "PROCESS", "HOST", "EXIT", "DURATION", "LOG"]
    assert sorted(row.split()[1] for row in table[1:]) == ["0/0", "0/1", "1/0", "1/1"]
    assert all(row.split()[3] == "0" for row in table[1:])


def test_a_failure_stops_the_group_and_fails_fast(tmp_path: Path) -> None:
    # Worker 1 fails at once; worker 0 would sleep for a minute and records the SIGTERM.
    script = textwrap.dedent("""\
        trap 'echo got-term; exit 143' TERM
        if [ "$JOB_COMPLETION_INDEX" = 1 ]; then sleep 1; exit 7; fi
        sleep 60 & wait""")
    start = time.monotonic()
    outcome, out = run(tmp_path, jobset(script, max_restarts=3, retriable=(42,)))
    assert time.monotonic() - start < 20
    assert (outcome.state, outcome.exit_code, outcome.restarts) == ("Failed", 7, 0)
    assert "[0/0] got-term" in out
    assert "rule failFast" in outcome.message
    rows = {r["label"]: r for r in outcome.rows}
    assert rows["0/1"]["exit"] == "7" and rows["0/0"]["exit"] == "143 (stopped)"


def test_sigkill_after_the_grace_period(tmp_path: Path) -> None:
    script = ('if [ "$JOB_COMPLETION_INDEX" = 1 ]; then sleep 0.5; exit 1; fi; '
              "trap '' TERM; echo ready; while true; do sleep 0.1; done")
    start = time.monotonic()
    outcome, _ = run(tmp_path, jobset(script, grace=1))
    assert outcome.exit_code == 1
    rows = {r["label"]: r for r in outcome.rows}
    assert rows["0/0"]["exit"] == "137 (stopped)"  # 128 + SIGKILL
    assert time.monotonic() - start < 15


def test_retriable_exit_code_restarts_with_the_attempt_bumped(tmp_path: Path) -> None:
    script = ('echo "attempt $ATTEMPT"; '
              'if [ "$ATTEMPT" = 0 ] && [ "$JOB_COMPLETION_INDEX" = 1 ]; then exit 42; fi')
    outcome, out = run(tmp_path, jobset(script, max_restarts=2, retriable=(42,)))
    assert (outcome.state, outcome.exit_code, outcome.restarts) == ("Succeeded", 0, 1)
    assert "[0/1] attempt 0" in out and "[0/1] attempt 1" in out
    assert "restart attempt 1" in out
    assert (tmp_path / "run/logs/t-slice-0-1.attempt-1.log").read_text() == "attempt 1\n"


def test_restarts_stop_at_max_restarts(tmp_path: Path) -> None:
    outcome, out = run(tmp_path, jobset("exit 42", pods=1, max_restarts=2, retriable=(42,)))
    assert (outcome.state, outcome.exit_code, outcome.restarts) == ("Failed", 42, 2)
    assert "maxRestarts 2 reached" in outcome.message


def test_no_failure_policy_fails_at_once(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, jobset("exit 3", pods=1, max_restarts=None))
    assert (outcome.state, outcome.exit_code, outcome.restarts) == ("Failed", 3, 0)
    assert "no failurePolicy" in outcome.message


def test_backoff_limit_replaces_the_pod(tmp_path: Path) -> None:
    # backoffLimit 1: the first failure of worker 0 is replaced within the same attempt.
    marker = tmp_path / "once"
    script = f'if [ ! -e {marker} ]; then touch {marker}; exit 5; fi; echo second'
    outcome, out = run(tmp_path, jobset(script, pods=1, backoff=1))
    assert (outcome.state, outcome.restarts) == ("Succeeded", 0)
    assert "the Job replaces the pod" in out and "[0/0] second" in out


def test_success_policy_any_stops_the_rest(tmp_path: Path) -> None:
    server = {"name": "server", "replicas": 1, "template": {"spec": {
        "parallelism": 1, "completions": 1, "completionMode": "Indexed", "backoffLimit": 0,
        "template": {"spec": {"containers": [{
            "name": "main", "image": "x", "command": ["/bin/sh", "-c", "sleep 60"]}]}}}}}
    js = jobset("true", pods=1, extra_rjobs=[server],
                success={"operator": "Any", "targetReplicatedJobs": ["slice"]})
    start = time.monotonic()
    outcome, _ = run(tmp_path, js)
    assert outcome.state == "Succeeded" and time.monotonic() - start < 20
    rows = {r["label"]: r for r in outcome.rows}
    assert rows["server:0/0"]["exit"].endswith("(stopped)")


CTRL_C = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_local_run import jobset
from submit.local import plan as lp
from submit.local.run import FreePorts, Runner
js = jobset("sh -c 'sleep 300' & echo $! > {tmp}/pid-$JOB_COMPLETION_INDEX; echo up; wait",
            pods=2)
opts = lp.Options(run_dir={tmp!r} + "/run", cwd={tmp!r})
ports = FreePorts()
outcome = Runner(lambda a: lp.build([js], opts, a, ports), sys.stdout).run()
print("outcome", outcome.state, outcome.exit_code, flush=True)
sys.exit(outcome.exit_code)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_ctrl_c_stops_every_child_and_leaves_no_orphan(tmp_path: Path) -> None:
    code = CTRL_C.format(tests=str(Path(__file__).parent), tmp=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).parent.parent)
    assert proc.stdout is not None
    ups = 0
    while ups < 2:
        line = proc.stdout.readline()
        assert line, "the runner ended before its processes started"
        ups += line.strip().endswith("up")
    pids = [int((tmp_path / f"pid-{i}").read_text()) for i in range(2)]
    assert all(_alive(p) for p in pids)
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "SIGINT: stopping every process" in rest
    assert "outcome Interrupted 130" in rest
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a grandchild survived Ctrl-C"
