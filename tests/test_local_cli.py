"""Contract tests for `submit workload run-local`: its options are `create`'s, bad input
exits 2 with one line naming the option and starts nothing, --dry-run prints the plan,
--from runs an exported JobSet, and the example of docs/local-runs.md runs as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from fakes import stacks
from submit.cli.app import main
from submit.cli.local import run_local
from submit.cli.workload import create

ROOT = Path(__file__).resolve().parent.parent
BASE = ["--workload", "w1", "--accelerator", "v5litepod-16", "--image", "python:3.12"]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    """v5e-spot: one pool of two v5litepod-16 slices (4 hosts each)."""
    return stacks.write_outputs(tmp_path / "v5e.json", "v5e-spot")


def run(outputs: Path | None, *args: str) -> Result:
    pre = ["workload", "--outputs", str(outputs)] if outputs else ["workload"]
    result = CliRunner().invoke(main, [*pre, "run-local", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def error(option: str, message: str) -> str:
    return (f"Usage: main workload run-local [OPTIONS]\n"
            f"Try 'main workload run-local --help' for help.\n\n"
            f"Error: Invalid value for '{option}': {message}\n")


def test_takes_every_create_option_but_replace_and_after() -> None:
    mine = {p.name for p in run_local.params}
    theirs = {p.name for p in create.params}
    # about other workloads; run-local has its own --stack and --outputs; the image is not
    # used, so there is nothing to resolve
    assert theirs - mine == {"replace", "after", "stack_after", "outputs_after",
                             "project_dir_after", "resolve_image"}
    assert {"from_file", "scale_down", "local_mount", "image_check", "stack",
            "outputs_file"} <= mine


def test_too_many_processes_for_this_machine(outputs: Path, tmp_path: Path) -> None:
    r = run(outputs, *BASE, "--num-slices", "2", "--command", "true", "--max-processes", "4",
            "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 2
    assert r.output == error("--scale-down", "the workload runs 8 processes (2 x 4); this "
                             "machine takes at most 4 (4 per core, --max-processes): pass a "
                             "smaller --scale-down such as 2x2")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value,message", [
    ("2by2", "'2by2' is not SLICESxHOSTS (replicas x pods per replica), such as 2x2 or 1x2"),
    ("3x2", "3x2 is larger than the workload (2x4); it can only shrink it"),
    ("0x2", "'0x2' is not SLICESxHOSTS (replicas x pods per replica), such as 2x2 or 1x2"),
])
def test_bad_scale_down(outputs: Path, value: str, message: str) -> None:
    r = run(outputs, *BASE, "--num-slices", "2", "--command", "true", "--scale-down", value)
    assert (r.exit_code, r.output) == (2, error("--scale-down", message))


def test_local_mount_must_name_a_volume_of_the_pod(outputs: Path, tmp_path: Path) -> None:
    r = run(outputs, *BASE, "--command", "true", "--scale-down", "1x1",
            "--local-mount", f"checkpoints={tmp_path}")
    assert (r.exit_code, r.output) == (2, error(
        "--local-mount", "'checkpoints' is not a volume of the workload's pods; they have: "
        "dshm"))
    r = run(outputs, *BASE, "--command", "true", "--local-mount", "dshm")
    assert (r.exit_code, r.output) == (2, error("--local-mount", "'dshm' is not VOLUME=DIR"))
    r = run(outputs, *BASE, "--command", "true", "--local-mount", f"dshm={tmp_path}/nope")
    assert (r.exit_code, r.output) == (2, error(
        "--local-mount", f"'{tmp_path}/nope' (for volume dshm) is not a directory"))


def test_create_errors_keep_their_option(outputs: Path) -> None:
    r = run(outputs, *BASE, "--num-slices", "9", "--command", "true")
    assert (r.exit_code, r.output) == (2, error(
        "--num-slices", "9 is more than the 2 v5litepod-16 slices pool v5litepod-16 has"))


def test_needs_a_command_since_the_image_is_not_used(outputs: Path) -> None:
    r = run(outputs, *BASE, "--scale-down", "1x1")
    assert (r.exit_code, r.output) == (2, error(
        "--command", "the container has no command: run-local runs the command on this "
                     "machine and cannot use the image's entrypoint"))


def test_needs_workload_options_or_from(outputs: Path) -> None:
    r = run(outputs, "--accelerator", "v5litepod-16")
    assert r.exit_code == 2
    assert r.output.endswith("Error: Missing option '--workload' (or pass --from FILE).\n")


def test_secret_values_come_from_the_local_shell(outputs: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    args = [*BASE, "--command", "true", "--scale-down", "1x1", "--secret-env",
            "HF_TOKEN=hf/token", "--dry-run"]
    monkeypatch.delenv("HF_TOKEN", raising=False)
    r = run(outputs, *args)
    assert (r.exit_code, r.output) == (2, error(
        "--secret-env", "HF_TOKEN comes from Secret hf/token, which run-local cannot read: "
                        "export HF_TOKEN in this shell to give it a local value"))
    monkeypatch.setenv("HF_TOKEN", "s3cr3t-value")
    r = run(outputs, *args)
    assert r.exit_code == 0, r.output
    assert "s3cr3t-value" not in r.output
    assert yaml.safe_load(r.output)["processes"][0]["env"]["HF_TOKEN"] == "<secret>"


def test_dry_run_prints_the_plan(outputs: Path, tmp_path: Path) -> None:
    r = run(outputs, *BASE, "--num-slices", "2", "--scale-down", "2x2", "--command",
            "python3 train.py", "--run-dir", str(tmp_path / "run"), "--dry-run", "-o", "json")
    assert r.exit_code == 0, r.output
    plan = json.loads(r.output)
    assert [p["label"] for p in plan["processes"]] == ["0/0", "0/1", "1/0", "1/1"]
    env = plan["processes"][3]["env"]
    assert (env["MEGASCALE_SLICE_ID"], env["TPU_WORKER_ID"], env["MEGASCALE_NUM_SLICES"]) == (
        "1", "1", "2")
    assert env["TPU_WORKER_HOSTNAMES"] == "127.0.0.1,127.0.0.1"
    coordinator = plan["processes"][0]["ports"]["8482"]
    assert env["JAX_COORDINATOR_ADDRESS"] == f"127.0.0.1:{coordinator}"
    assert not (tmp_path / "run").exists()


def test_from_an_exported_jobset(outputs: Path, tmp_path: Path) -> None:
    exported = tmp_path / "w1.yaml"
    r = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "create", *BASE,
                                  "--num-slices", "2", "--command", "echo hi $(JOBSET_NAME)",
                                  "--dry-run", "--export", str(exported)])
    assert r.exit_code == 0, r.output
    r = run(None, "--from", str(exported), "--scale-down", "1x2", "--run-dir",
            str(tmp_path / "run"))
    assert r.exit_code == 0, r.output
    assert "[0/0] hi w1\n" in r.output and "[0/1] hi w1\n" in r.output
    assert "workload w1 succeeded: every process exited 0 (restarts: 0)" in r.output
    r = run(None, "--from", str(exported), "--accelerator", "v5litepod-16")
    assert (r.exit_code, r.output) == (2, error(
        "--accelerator", "cannot be combined with --from, which runs the exported JobSet as "
                         "it is"))
    r = run(None, "--from", str(exported), "--scale-down", "3x1")
    assert (r.exit_code, r.output) == (2, error(
        "--scale-down", "3x1 is larger than replicated job 'slice' (2x4); it can only shrink "
                        "a workload"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Deployment\n")
    r = run(None, "--from", str(bad))
    assert (r.exit_code, r.output) == (2, error(
        "--from", "must hold one JobSet (and optionally ConfigMaps), not ['Deployment']"))


def test_config_file_lands_where_the_variable_points(outputs: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text("steps: 3\n")
    r = run(outputs, *BASE, "--scale-down", "1x1", "--config-file", str(cfg), "--command",
            'cat "$ACCELSTACK_CONFIG"', "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 0, r.output
    assert "[0/0] steps: 3\n" in r.output


def test_exit_code_is_the_failing_process_s(outputs: Path, tmp_path: Path) -> None:
    r = run(outputs, *BASE, "--scale-down", "1x2", "--command",
            'if [ "$TPU_WORKER_ID" = 1 ]; then exit 9; fi; sleep 30',
            "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 9
    assert r.output.splitlines()[-1] == (
        "workload w1 failed: process 0/1 exited 9 (PodFailurePolicy); rule "
        "failFastOnUserErrors (restarts: 0)")  # 9 is not a default restart code: fail fast


def test_image_check_warns_about_what_only_the_image_has(outputs: Path) -> None:
    r = run(outputs, *BASE, "--scale-down", "1x1", "--image-check", "--command",
            "nvidia-smi; python3 -m not_a_module_here.train; python3 missing.py; true")
    assert r.exit_code == 0, r.output
    assert ("warning: nvidia-smi: not found on this machine (the image would provide it)"
            in r.output)
    assert "warning: python3 -m not_a_module_here.train: module 'not_a_module_here' is not " \
           "importable by" in r.output
    assert "warning: python3 missing.py: no such file in" in r.output
    assert "run-local: the image python:3.12 is not used" in r.output


def _readme_commands() -> list[list[str]]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "docs" / "local-runs.md").read_text(),
                        re.S)
    out = []
    for block in blocks:
        for cmd in block.replace("\\\n", " ").splitlines():
            cmd = cmd.split(" #", 1)[0].strip()
            if cmd:
                out.append(shlex.split(cmd))
    return out


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.preview import cli as preview

    cmds = _readme_commands()
    assert [c[0] for c in cmds] == ["accelstack-preview", "submit", "submit"]
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    for tool, *args in cmds:
        args = [a.replace("v5e-spot.outputs.json", str(tmp_path / "v5e-spot.outputs.json"))
                .replace("/tmp/jax-out", str(out)) for a in args]
        r = CliRunner().invoke(preview.main if tool == "accelstack-preview" else main, args)
        assert r.exit_code == 0, (args, r.output)
        if "--dry-run" not in args and tool == "submit":
            got = [json.loads(p.read_text()) for p in out.glob("process-*.json")]
            assert sorted(g["process_id"] for g in got) == [0, 1, 2, 3]
            assert all(g["psum"] == 10 for g in got)
    plan = yaml.safe_load(r.output)
    assert len(plan["processes"]) == 4


def test_ctrl_c_through_the_command_leaves_no_process(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    from test_local_run import _alive, jobset

    js = jobset("sleep 300 & echo $! > " + str(tmp_path) + "/pid-$JOB_COMPLETION_INDEX; "
                "echo up; wait", pods=2)
    path = tmp_path / "js.yaml"
    path.write_text(yaml.safe_dump(js))
    submit = Path(sys.executable).parent / "submit"
    proc = subprocess.Popen([str(submit), "workload", "run-local", "--from", str(path),
                             "--run-dir", str(tmp_path / "run")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    ups = 0
    while ups < 2:
        line = proc.stdout.readline()
        assert line, "run-local ended before its processes started"
        ups += line.rstrip().endswith("] up")
    pids = [int((tmp_path / f"pid-{i}").read_text()) for i in range(2)]
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130, rest
    assert rest.splitlines()[-1] == "workload t interrupted: stopped by SIGINT (restarts: 0)"
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)


SCRIPTLESS = ["--workload", "w1", "--accelerator", "v5litepod-16"]


def test_script_dir_is_the_working_directory_and_nothing_is_pushed(
        outputs: Path, tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("print('trained in', __import__('os').getcwd())\n")
    r = run(outputs, *SCRIPTLESS, "--script-dir", str(code), "--base-image", "python:3.12",
            "--scale-down", "1x1", "--command", "python3 train.py",
            "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 0, r.output
    assert f"[0/0] trained in {code.resolve()}\n" in r.output
    assert "the image python:3.12 is not used" in r.output


@pytest.mark.parametrize("args, option, message", [
    (["--base-image", "python:3.12"], "--base-image",
     "needs --script-dir (the directory to add to it)"),
    (["--script-dir", ".", "--image", "python:3.12"], "--image",
     "cannot be used with --script-dir (the image is built from --base-image and the "
     "directory)"),
    (["--script-dir", "."], "--base-image", "is required with --script-dir"),
])
def test_script_dir_follows_creates_rules(outputs: Path, args: list[str], option: str,
                                          message: str) -> None:
    r = run(outputs, *SCRIPTLESS, *args, "--command", "true")
    assert (r.exit_code, r.output) == (2, error(option, message))


def test_ctrl_c_before_any_process_is_one_line_and_130(tmp_path: Path) -> None:
    # Ctrl-C while run-local still reads its --from file (a FIFO nobody writes: the read
    # blocks there, deterministically) used to end in Click's "Aborted!", exit 1.
    import signal
    import subprocess
    import time

    fifo = tmp_path / "js.yaml"
    os.mkfifo(fifo)
    submit = Path(sys.executable).parent / "submit"
    proc = subprocess.Popen([str(submit), "workload", "run-local", "--from", str(fifo),
                             "--run-dir", str(tmp_path / "run")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wchan = Path(f"/proc/{proc.pid}/wchan")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        where = wchan.read_text() if wchan.exists() else ""
        if "fifo" in where or "partner" in where:
            break  # blocked opening the FIFO (wait_for_partner): past start-up
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (
        130, "", "run-local: interrupted (Ctrl-C) before any process started; nothing ran\n")
