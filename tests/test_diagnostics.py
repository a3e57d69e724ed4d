"""Diagnostics of a run (docs/diagnostics.md): --stack-traces, --xla-dump, --debug-logs.

Refusals exit 2 naming the option and send nothing; what they render validates against the
real schemas; the two sidecar scripts run here with /bin/sh (the same POSIX shell language
busybox's ash speaks) against real directories; run-local runs the main container with the
dump folder a local directory and lists the sidecars it does not run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import schema
import stack_fixtures
from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.cli.app import main
from submit.local import plan as local_plan
from submit.render.build import build_spec
from submit.render.diagnostics import pod as diag_pod
from submit.render.jobset import render
from submit.render.spec import SpecError
from submit_cli import run, run_experiment

CREATE = ["create", "--workload", "w1", "--accelerator", "v6e-256", "--image", "python:3.12",
          "--command", "python3 train.py"]


pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    """The v6e-training example stack: datasets (read-only for pretraining and evals) and
    checkpoints (read-write for pretraining only)."""
    return stacks.write_outputs(tmp_path / "v6e.json", "v6e-training", server.kubeconfig())


def refused(option: str, message: str) -> str:
    return ("Usage: main workload create [OPTIONS]\n"
            "Try 'main workload create --help' for help.\n\n"
            f"Error: Invalid value for '{option}': {message}\n")


@pytest.mark.parametrize("args,option,message", [
    (["--xla-dump", "checkpoint"], "--xla-dump", "'checkpoint' is not a store of the stack; "
     "did you mean checkpoints? its stores: datasets, checkpoints"),
    (["--xla-dump", "datasets"], "--xla-dump", "namespace 'pretraining' may only read store "
     "'datasets', and --xla-dump writes to it; stores it may write: checkpoints"),
    (["--namespace", "evals", "--xla-dump", "checkpoints"], "--xla-dump", "store "
     "'checkpoints' grants namespace 'evals' no access; namespaces with access: pretraining"),
    (["--xla-dump", ":dumps"], "--xla-dump", "':dumps' is not STORE[:PATH] (no store name "
     "before ':')"),
    (["--xla-dump", "checkpoints:/abs"], "--xla-dump", "'/abs' is not a folder of the store "
     "such as dumps/run-1 (letters, digits, '-', '_', '.' and '/', relative, no '..')"),
    (["--xla-dump", "checkpoints:a/../b"], "--xla-dump", "'a/../b' is not a folder of the "
     "store such as dumps/run-1 (letters, digits, '-', '_', '.' and '/', relative, no '..')"),
    (["--xla-dump", "checkpoints", "--env", "XLA_FLAGS=--xla_dump_to=/tmp/x"], "--xla-dump",
     "XLA_FLAGS already sets --xla_dump_to; give --xla-dump or --xla_dump_to in XLA_FLAGS, "
     "not both"),
    (["--xla-dump", "checkpoints", "--secret-env", "XLA_FLAGS=flags/xla"], "--xla-dump",
     "XLA_FLAGS comes from a Secret (--secret-env), which cannot be extended with "
     "--xla_dump_to; set it with --env"),
    (["--stack-traces", "--pathways"], "--stack-traces", "is not supported with --pathways "
     "yet (its workers run Pathways' own containers); see docs/diagnostics.md"),
])
def test_refused_before_anything_is_sent(outputs: Path, server: FakeApiServer,
                                         args: list[str], option: str, message: str) -> None:
    result = run(outputs, *CREATE, *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == refused(option, message)
    assert server.state.requests == []


def test_debug_logs_are_for_tpu_slices() -> None:
    with pytest.raises(SpecError) as e:
        build_spec(stack_fixtures.outputs("g2"), workload="w", accelerator="l4-8",
                   namespace="training", image="python:3.12", debug_logs=True)
    assert (e.value.option, e.value.message) == (
        "--debug-logs", "sets libtpu's log levels, which apply to TPU slices only; this "
        "workload runs on a GPU pool")


def _dry_run(outputs: Path, *args: str) -> dict[str, Any]:
    result = run(outputs, *CREATE, "--dry-run", "-o", "json", *args)
    assert result.exit_code == 0, result.stderr
    js = json.loads(result.stdout)
    assert js["kind"] == "JobSet"
    schema.validate(js)
    return js  # type: ignore[no-any-return]


def _pod(js: dict[str, Any]) -> dict[str, Any]:
    return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]  # type: ignore


def test_every_option_renders_a_valid_jobset(outputs: Path) -> None:
    js = _dry_run(outputs, "--stack-traces", "--xla-dump", "checkpoints", "--debug-logs",
                  "--env", "XLA_FLAGS=--xla_dump_hlo_as_text")
    pod = _pod(js)["spec"]
    [main_c] = pod["containers"]
    env = {e["name"]: e.get("value") for e in main_c["env"]}
    # The user's flags stay, once; the dump flag is added to them.
    assert [e["name"] for e in main_c["env"]].count("XLA_FLAGS") == 1
    assert env["XLA_FLAGS"] == "--xla_dump_hlo_as_text --xla_dump_to=/tmp/accelstack/xla-dump"
    assert {k: env[k] for k, _ in diag_pod.DEBUG_LOG_ENV} == dict(diag_pod.DEBUG_LOG_ENV)
    sidecars = pod["initContainers"]
    assert [c["name"] for c in sidecars] == ["stack-traces", "xla-dump-upload"]
    for c in sidecars:
        assert c["restartPolicy"] == "Always"
        assert c["image"] == diag_pod.SIDECAR_IMAGE
        assert c["resources"]["requests"] == c["resources"]["limits"]
        assert c["securityContext"] == {"allowPrivilegeEscalation": False,
                                        "capabilities": {"drop": ["ALL"]}}
    upload = sidecars[1]
    store_env = {e["name"]: e.get("value") for e in upload["env"]}
    assert store_env["DUMP_FOLDER"] == "xla-dumps/w1"
    [store] = [v for v in pod["volumes"] if v["name"] == "xla-dump-store"]
    assert store["csi"]["volumeAttributes"]["hostNetworkPodKSA"] == "true"
    assert _pod(js)["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    assert pod["serviceAccountName"]  # the namespace's job account writes the bucket


def test_user_xla_flags_from_an_env_file_are_kept(outputs: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "run.env"
    env_file.write_text("XLA_FLAGS=--xla_dump_hlo_pass_re=.*\n")
    js = _dry_run(outputs, "--xla-dump", "checkpoints:dumps/a", "--env-file", str(env_file))
    [main_c] = _pod(js)["spec"]["containers"]
    assert [e["value"] for e in main_c["env"] if e["name"] == "XLA_FLAGS"] == [
        "--xla_dump_hlo_pass_re=.* --xla_dump_to=/tmp/accelstack/xla-dump"]


def test_a_debug_log_variable_the_user_set_wins(outputs: Path) -> None:
    js = _dry_run(outputs, "--debug-logs", "--env", "TPU_STDERR_LOG_LEVEL=1")
    [main_c] = _pod(js)["spec"]["containers"]
    assert [e["value"] for e in main_c["env"] if e["name"] == "TPU_STDERR_LOG_LEVEL"] == ["1"]


def test_without_options_nothing_is_added(outputs: Path) -> None:
    pod = _pod(_dry_run(outputs))["spec"]
    assert "initContainers" not in pod
    assert not any(e["name"] in ("XLA_FLAGS", "TPU_STDERR_LOG_LEVEL")
                   for e in pod["containers"][0]["env"])


# ----------------------------------------------------------------------------------
# The sidecar scripts, run with /bin/sh against real directories.


def _start(script: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(["/bin/sh", "-c", script], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(predicate: Any, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_trace_sidecar_streams_every_trace_file_once_and_stops_on_sigterm(
        tmp_path: Path) -> None:
    traces = tmp_path / "debugging"
    traces.mkdir()
    (traces / "stack_trace_1.txt").write_text("Thread 0x1 (most recent call first):\n")
    proc = _start(diag_pod.TRACE_SCRIPT, {"TRACE_DIR": str(traces)})
    try:
        time.sleep(1)
        (traces / "stack_trace_2.txt").write_text("Thread 0x2 (most recent call first):\n")
        time.sleep(7)  # one pass of the loop (5 s) finds the new file
        with (traces / "stack_trace_1.txt").open("a") as f:
            f.write("  File \"train.py\", line 7 in step\n")
        time.sleep(2)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert time.monotonic() - started < 7  # not the kubelet's grace period
    assert out.count("Thread 0x1") == 1 and out.count("Thread 0x2") == 1
    assert 'File "train.py", line 7 in step' in out


def test_dump_sidecar_uploads_per_host_and_once_more_on_sigterm(tmp_path: Path) -> None:
    src, store = tmp_path / "dump", tmp_path / "store"
    (src / "module_0001").mkdir(parents=True)
    store.mkdir()
    (src / "module_0001" / "before_optimizations.txt").write_text("HloModule a\n")
    proc = _start(diag_pod.DUMP_SCRIPT, {
        "DUMP_DIR": str(src), "DUMP_STORE": str(store), "DUMP_FOLDER": "xla-dumps/w1",
        "DUMP_INTERVAL": "1", "RESTART_ATTEMPT": "2", "SLICE": "1", "WORKER": "3"})
    host = store / "xla-dumps/w1/attempt-2/slice-1-worker-3"
    try:
        _wait_for(lambda: (host / "module_0001/before_optimizations.txt").is_file())
        # The main container crashes after writing more: the final upload takes it.
        (src / "module_0001" / "before_optimizations.txt").write_text("HloModule a\nmore\n")
        (src / "late.txt").write_text("written just before the crash\n")
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert (host / "module_0001/before_optimizations.txt").read_text() == "HloModule a\nmore\n"
    assert (host / "late.txt").read_text() == "written just before the crash\n"


# ----------------------------------------------------------------------------------
# run-local: the main container runs here; the dump folder is a local directory.


def test_run_local_plan_lists_the_sidecars_and_dumps_locally(tmp_path: Path) -> None:
    spec = build_spec(stack_fixtures.outputs("g2"), workload="w", accelerator="l4-8",
                      namespace="training", image="python:3.12", command="python3 t.py",
                      stack_traces=True, xla_dump="scratch")
    plan = local_plan.build(render(spec), local_plan.Options(run_dir=str(tmp_path), cwd="."),
                            0, iter(range(20000, 21000)).__next__)
    [proc] = plan.processes
    assert {"container stack-traces is not run (only main runs locally)",
            "container xla-dump-upload is not run (only main runs locally)"} <= set(plan.notes)
    host = proc.hostname
    assert dict(proc.env)["XLA_FLAGS"] == \
        f"--xla_dump_to={tmp_path}/volumes/{host}/xla-dump"
    assert {f"{tmp_path}/volumes/{host}/xla-dump",
            f"{tmp_path}/volumes/{host}/stack-traces"} <= set(plan.dirs)


# ----------------------------------------------------------------------------------
# describe: how to read what the diagnostics produce, in the text and in -o json.


def test_describe_says_where_traces_and_dumps_are(outputs: Path,
                                                  server: FakeApiServer) -> None:
    created = run(outputs, *CREATE, "--stack-traces", "--xla-dump", "checkpoints:dbg",
                  "--debug-logs", "--mount", "datasets:ro")
    assert created.exit_code == 0, created.stderr
    text = run(outputs, "describe", "w1")
    assert text.exit_code == 0, text.stderr
    query = ('resource.type="k8s_container" resource.labels.namespace_name="pretraining" '
             'resource.labels.container_name="stack-traces" '
             'resource.labels.pod_name=~"^w1-[a-z0-9-]+$"')
    lines = text.stdout.splitlines()
    start = lines.index("Diagnostics:")
    assert lines[start + 1].startswith("  stack traces: the stack-traces sidecar of each pod")
    assert lines[start + 2] == "    kubectl logs -n pretraining POD -c stack-traces"
    assert lines[start + 3] == "    or in Logs Explorer: " + query
    assert lines[start + 4].startswith("  XLA dumps: gs://")
    assert lines[start + 4].endswith("/dbg/attempt-<restart>/slice-<slice>-worker-<worker>/ "
                                     "(uploaded every minute and when the pod ends)")
    assert lines[start + 5] == ("  debug logs: TPU_STDERR_LOG_LEVEL=0 TPU_MIN_LOG_LEVEL=0 "
                                "TF_CPP_MIN_LOG_LEVEL=0 TPU_VMODULE=real_program_continuator=1")
    data = json.loads(run(outputs, "describe", "w1", "-o", "json").stdout)["diagnostics"]
    assert data["stackTraces"] == {"container": "stack-traces", "directory": "/tmp/debugging",
                                   "loggingQuery": query}
    assert data["xlaDump"]["folder"] == "dbg" and data["debugLogs"] is True
    assert data["xlaDump"]["location"].startswith("gs://")
    # The Cloud Console links: logs, the GKE page, and the buckets' folders.
    contract = json.loads(outputs.read_text())["accelstack"]
    cluster, stores = contract["cluster"], {s["name"]: s["source"]
                                            for s in contract["storage"]["stores"]}
    project = cluster["project"]
    links = json.loads(run(outputs, "describe", "w1", "-o", "json").stdout)["links"]
    assert links["stores"] == [
        {"store": "datasets", "path": "/mnt/datasets",
         "link": f"https://console.cloud.google.com/storage/browser/{stores['datasets']}"
                 f"?project={project}"},
        {"store": "xla-dump", "path": "dbg",
         "link": f"https://console.cloud.google.com/storage/browser/{stores['checkpoints']}"
                 f"/dbg?project={project}"}]
    assert links["workload"] == (
        f"https://console.cloud.google.com/kubernetes/service/{cluster['location']}/"
        f"{cluster['name']}/pretraining/w1/details?project={project}")
    assert f"  xla-dump (dbg): {links['stores'][1]['link']}" in text.stdout.splitlines()


# ----------------------------------------------------------------------------------
# --tensorboard: a log folder per workload (so per trial) on a bucket the namespace writes.


def test_tensorboard_folder_per_workload(outputs: Path) -> None:
    js = _dry_run(outputs, "--tensorboard", "checkpoints:runs")
    [main_c] = _pod(js)["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in main_c["env"]}
    bucket = next(s["source"] for s in json.loads(outputs.read_text())["accelstack"]["storage"]
                  ["stores"] if s["name"] == "checkpoints")
    assert env["TENSORBOARD_LOG_DIR"] == env["AIP_TENSORBOARD_LOG_DIR"] == \
        f"gs://{bucket}/runs/w1"
    default = _dry_run(outputs, "--tensorboard", "checkpoints")
    [main_c] = _pod(default)["spec"]["containers"]
    assert {e["name"]: e.get("value") for e in main_c["env"]}["TENSORBOARD_LOG_DIR"] == \
        f"gs://{bucket}/tensorboard/w1"


@pytest.mark.parametrize("args,message", [
    (["--tensorboard", "datasets"], "namespace 'pretraining' may only read store 'datasets', "
     "and --tensorboard writes to it; stores it may write: checkpoints"),
    (["--tensorboard", "checkpoints:../x"], "'../x' is not a folder of the store such as "
     "dumps/run-1 (letters, digits, '-', '_', '.' and '/', relative, no '..')"),
    (["--tensorboard", "nope"], "'nope' is not a store of the stack; its stores: datasets, "
     "checkpoints"),
])
def test_tensorboard_refusals(outputs: Path, server: FakeApiServer, args: list[str],
                              message: str) -> None:
    result = run(outputs, *CREATE, *args)
    assert (result.exit_code, result.stderr) == (2, refused("--tensorboard", message))
    assert server.state.requests == []


def test_tensorboard_needs_a_bucket() -> None:
    with pytest.raises(SpecError) as e:
        build_spec(stack_fixtures.outputs("g2"), workload="w", accelerator="l4-8",
                   namespace="training", image="python:3.12", tensorboard="scratch")
    assert (e.value.option, e.value.message) == (
        "--tensorboard", "store 'scratch' is a filestore store; TensorBoard logs go to a "
        "Cloud Storage bucket (gs://) that TensorBoard and Vertex AI TensorBoard read; "
        "buckets it may write: checkpoints")


def test_describe_links_the_tensorboard_folder(outputs: Path, server: FakeApiServer) -> None:
    assert run(outputs, *CREATE, "--tensorboard", "checkpoints:runs").exit_code == 0
    data = json.loads(run(outputs, "describe", "w1", "-o", "json").stdout)
    board = data["diagnostics"]["tensorboard"]
    assert board.startswith("gs://") and board.endswith("/runs/w1")
    [store] = data["links"]["stores"]
    assert store["store"] == "tensorboard" and store["path"] == "runs/w1"
    assert store["link"].startswith("https://console.cloud.google.com/storage/browser/")
    assert store["link"].split("?")[0].endswith("/runs/w1")
    assert f"  TensorBoard logs: {board}/" in run(outputs, "describe", "w1").stdout


def test_experiment_describe_lists_each_trials_log_folder(outputs: Path, tmp_path: Path,
                                                          server: FakeApiServer) -> None:
    sweep = tmp_path / "lr.yaml"
    sweep.write_text("name: lr\nworkload:\n  accelerator: v6e-256\n  image: python:3.12\n"
                     "  command: python3 train.py\n  tensorboard: checkpoints:runs\n"
                     "sweep:\n  env.LR: ['1e-4', '3e-4']\n")

    created = run_experiment(outputs, "create", str(sweep))
    assert created.exit_code == 0, created.output
    data = json.loads(run_experiment(outputs, "describe", "lr", "-o", "json").stdout)
    folders = [[s["path"] for s in t["links"]["stores"]] for t in data["trials"]]
    assert folders == [["runs/lr-0"], ["runs/lr-1"]]
    text = run_experiment(outputs, "describe", "lr").stdout
    for t in data["trials"]:
        link = t["links"]["stores"][0]["link"]
        assert f"  tensorboard ({t['links']['stores'][0]['path']}): {link}" in text
    # The default dump folder is the trial's too.
    sweep.write_text(sweep.read_text().replace("tensorboard: checkpoints:runs",
                                               "xla-dump: checkpoints").replace("lr", "xd"))
    plan = CliRunner().invoke(main, ["experiment", "--outputs", str(outputs), "create",
                                     str(sweep), "--dry-run", "-o", "json"])
    assert plan.exit_code == 0, plan.output
    assert plan.stdout.count('"value": "xla-dumps/xd-0"') == 1
    assert plan.stdout.count('"value": "xla-dumps/xd-1"') == 1


def test_run_local_dumps_into_a_local_folder(outputs: Path, tmp_path: Path) -> None:
    """run-local runs the main container here: XLA_FLAGS names a local folder the process
    writes, /tmp/debugging is a local folder, and the sidecars are said not to run."""
    script = ('d="${XLA_FLAGS#*--xla_dump_to=}"; echo hlo > "$d/module.txt"; '
              'echo "$XLA_FLAGS"; ls -d /tmp/debugging 2>/dev/null || echo no-tmp-debugging')
    r = CliRunner().invoke(main, [
        "workload", "--outputs", str(outputs), "run-local", "--workload", "w1",
        "--accelerator", "v6e-256", "--image", "python:3.12", "--scale-down", "1x1",
        "--xla-dump", "checkpoints", "--stack-traces", "--command", script,
        "--run-dir", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    dumps = list((tmp_path / "run" / "volumes").glob("*/xla-dump/module.txt"))
    assert [d.read_text() for d in dumps] == ["hlo\n"]
    assert f"--xla_dump_to={dumps[0].parent}" in r.output
    assert "container xla-dump-upload is not run" in r.output
    assert "container stack-traces is not run" in r.output
