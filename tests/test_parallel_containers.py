"""--parallel-containers N (TPU7x): N containers per pod, each with chips/N of the VM's chips
and 1/N of the pod's CPU and memory, the same environment, the TPU ports declared once; and
the one-line refusals (exit 2) of every case the sources do not cover."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

import schema
import stack_fixtures
from fakes import stacks
from infra.catalog import pod_resources
from submit.cli.app import main
from submit.local import plan as local_plan
from submit.render import jobset as render_mod
from submit.render.build import build_spec
from submit.render.spec import SpecError
from test_render_golden import list_map_duplicates, pod_of

GOLDEN = Path(__file__).resolve().parent / "golden" / "parallel-containers-tpu7x"
IMAGE = "us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ACCELSTACK_RESOLVE_IMAGE", "0")


def _golden_args() -> dict[str, Any]:
    return dict(yaml.safe_load((GOLDEN / "input.yaml").read_text())["args"])


def _pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    js = objs[-1]
    pod: dict[str, Any] = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return pod


def test_golden_case_reads_as_asked() -> None:
    args = _golden_args()
    spec = build_spec(stack_fixtures.outputs("tpu7x"), **args)
    objs = list(yaml.safe_load_all((GOLDEN / "expected.yaml").read_text()))
    assert objs == render_mod.render(spec)
    js = objs[-1]
    schema.validate(js)
    schema.validate(pod_of(js))
    assert list_map_duplicates(js) == []
    pod = _pod(objs)
    containers = pod["containers"]
    n = args["parallel_containers"]
    assert [c["name"] for c in containers] == ["main", "main-2"] == ["main"] + [
        f"main-{i}" for i in range(2, n + 1)]
    share = pod_resources.container_share(spec.pool.machine_type)
    assert share is not None
    for c in containers:
        for part in ("requests", "limits"):
            res = c["resources"][part]
            assert res["google.com/tpu"] == str(spec.pool.chips_per_vm // n) == "2"
            assert pod_resources.cpu_milli(res["cpu"]) == share.cpu_milli // n
            assert pod_resources.memory_mi(res["memory"]) == share.memory_mi // n
        # The same environment, image, command and hardening in every container.
        assert {k: v for k, v in c.items() if k not in ("name", "ports")} == {
            k: v for k, v in containers[0].items() if k not in ("name", "ports")}
        assert c["securityContext"]["allowPrivilegeEscalation"] is False
        assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    # The pod's whole never exceeds one pod's share.
    assert sum(pod_resources.cpu_milli(c["resources"]["requests"]["cpu"]) or 0
               for c in containers) <= share.cpu_milli
    # The TPU ports once: a host-network pod may not repeat a host port.
    assert pod["hostNetwork"] is True
    assert [c.get("ports") for c in containers[1:]] == [None]
    assert {"containerPort": 8471} in containers[0]["ports"]
    # A failing exit code of any container fails the Job, not only main's.
    rules = js["spec"]["replicatedJobs"][0]["template"]["spec"]["podFailurePolicy"]["rules"]
    assert "containerName" not in rules[1]["onExitCodes"]


def test_without_the_option_one_container_with_all_chips() -> None:
    args = _golden_args()
    del args["parallel_containers"]
    pod = _pod(render_mod.render(build_spec(stack_fixtures.outputs("tpu7x"), **args)))
    [main_c] = pod["containers"]
    assert main_c["resources"]["limits"]["google.com/tpu"] == "4"


def test_four_containers_of_one_chip() -> None:
    args = {**_golden_args(), "parallel_containers": 4}
    objs = render_mod.render(build_spec(stack_fixtures.outputs("tpu7x"), **args))
    pod = _pod(objs)
    assert [c["resources"]["limits"]["google.com/tpu"] for c in pod["containers"]] == ["1"] * 4
    schema.validate(pod_of(objs[-1]))


def test_a_count_that_does_not_divide_the_chips_is_refused() -> None:
    args = {**_golden_args(), "parallel_containers": 3}
    with pytest.raises(SpecError) as e:
        build_spec(stack_fixtures.outputs("tpu7x"), **args)
    assert str(e.value) == ("--parallel-containers: 3 does not divide the 4 chips of a "
                            "tpu7x-128 VM; allowed: 2, 4")


def _cli(tmp_path: Path, stack: str, accelerator: str, *extra: str) -> Result:
    outputs = stacks.write_outputs(tmp_path / f"{stack}.json", stack)
    result = CliRunner().invoke(main, [
        "workload", "--outputs", str(outputs), "create", "--workload", "w1",
        "--accelerator", accelerator, "--image", IMAGE, "--command", "python3 train.py",
        "--dry-run", *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _refusal(result: Result) -> str:
    assert result.exit_code == 2, result.output
    [line] = [ln for ln in result.output.splitlines() if ln.startswith("Error:")]
    return line


def test_cli_renders_two_containers(tmp_path: Path) -> None:
    result = _cli(tmp_path, "tpu7x-dynamic", "tpu7x-4x8x8", "--parallel-containers", "2")
    assert result.exit_code == 0, result.output
    [js] = [o for o in yaml.safe_load_all(result.output) if o and o.get("kind") == "JobSet"]
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert [(c["name"], c["resources"]["limits"]["google.com/tpu"])
            for c in pod["containers"]] == [("main", "2"), ("main-2", "2")]


@pytest.mark.parametrize(("stack", "accelerator", "extra", "message"), [
    ("v5e-spot", "v5litepod-16", ["--parallel-containers", "2"],
     "--parallel-containers: applies to TPU7x (Ironwood) pools; v5litepod-16 is not one"),
    ("tpu7x-dynamic", "tpu7x-4x8x8", ["--parallel-containers", "3"],
     "--parallel-containers: 3 does not divide the 4 chips of a tpu7x-512 VM; allowed: "
     "2, 4"),
    ("tpu7x-dynamic", "tpu7x-4x8x8", ["--parallel-containers", "1"],
     "--parallel-containers: 1 is below 2 (one container per pod is the default)"),
    ("tpu7x-dynamic", "tpu7x-4x8x8", ["--parallel-containers", "2", "--pathways"],
     "--parallel-containers: does not apply with --pathways (Pathways workers own the "
     "host's chips; xpk turns parallel containers off for Pathways too)"),
    ("tpu7x-dynamic", "tpu7x-4x8x8", ["--parallel-containers", "2", "--stack-traces"],
     "--parallel-containers: is not offered with --stack-traces: its per-host folder would "
     "be shared by N TPU processes (docs/limits.md)"),
])
def test_refusals_are_one_line_exit_2(tmp_path: Path, stack: str, accelerator: str,
                                       extra: list[str], message: str) -> None:
    line = _refusal(_cli(tmp_path, stack, accelerator, *extra))
    assert line == f"Error: Invalid value for '--parallel-containers': {message.split(': ', 1)[1]}"


def test_run_local_runs_the_first_container_and_names_the_others(tmp_path: Path) -> None:
    """run-local has no TPU to split: each pod's first container runs, with the pod's env,
    and the notes say which containers were not run."""
    args = {**_golden_args(), "parallel_containers": 4}
    objs = render_mod.render(build_spec(stack_fixtures.outputs("tpu7x"), **args))
    plan = local_plan.build(objs, local_plan.Options(run_dir=str(tmp_path), cwd="."), 0,
                            iter(range(20000, 21000)).__next__)
    assert len(plan.processes) == 16  # one per VM of the 4x4x4 slice
    assert {f"container main-{i} is not run (only main runs locally)"
            for i in (2, 3, 4)} <= set(plan.notes)
