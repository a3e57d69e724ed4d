"""The local plan: golden files of the processes, argv and env a workload becomes, and the
rules behind them (kubelet expansion, JobSet metadata, ports, mounts, failure policy).

``tests/golden_local/<case>/input.yaml`` names either a stack from ``stack_fixtures`` and
``build_spec`` arguments (``args``, as in tests/golden) or an exported file (``from``), plus
``scale_down``, ``restart_attempt``, ``mounts`` and ``local_env``. ``expected.yaml`` is
``Plan.to_dict()``; regenerate with ``pytest tests/test_local_plan.py --update-golden``.
Free ports are handed out from 20000 up, the run directory is /run/local and the working
directory /src, so the files do not depend on the machine.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

import stack_fixtures
from submit.local import plan as lp
from submit.local import policy as pol
from submit.render.jobset import render
from submit.render.build import build_spec

GOLDEN = Path(__file__).resolve().parent / "golden_local"
CASES = sorted(p for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())


def objects_for(case: Path) -> tuple[list[Any], dict[str, Any]]:
    data = yaml.safe_load((case / "input.yaml").read_text())
    shape = lp.parse_shape(data["scale_down"]) if data.get("scale_down") else None
    if "from" in data:
        objs = [d for d in yaml.safe_load_all((case / data["from"]).read_text()) if d]
        if shape:
            objs = [lp.scale_down(o, *shape) if o["kind"] == "JobSet" else o for o in objs]
        return objs, data
    args = dict(data["args"])
    for key in ("env_file", "config_file"):
        if key in args:
            args[key] = str(case / args[key])
    spec = build_spec(stack_fixtures.outputs(data["stack"]), **args)
    if shape:
        spec = dataclasses.replace(spec, replicas=shape[0], parallelism=shape[1])
    return render(spec), data


def plan_for(case: Path) -> lp.Plan:
    objs, data = objects_for(case)
    opts = lp.Options(run_dir="/run/local", cwd="/src",
                      mounts=tuple((data.get("mounts") or {}).items()),
                      local_env=tuple((data.get("local_env") or {}).items()))
    ports = itertools.count(20000)
    return lp.build(objs, opts, int(data.get("restart_attempt", 0)), lambda: next(ports))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_plan(case: Path, update_golden: bool) -> None:
    actual = yaml.safe_dump(plan_for(case).to_dict(), sort_keys=False)
    expected = case / "expected.yaml"
    if update_golden:
        expected.write_text(actual)
    elif not expected.is_file():
        pytest.fail(f"{expected} is missing; run pytest --update-golden and review it")
    assert actual == expected.read_text()


def test_there_are_golden_plans() -> None:
    assert {"tpu-multislice", "gpu-g2", "from-jobset", "a3mega-sidecar"} <= {
        c.name for c in CASES}


# -- the rules behind the plan --------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("$(A)-$(B)", "1-2"),
    ("$$(A)", "$(A)"),  # escaped: never expanded
    ("$$$(A)", "$1"),
    ("$(MISSING)", "$(MISSING)"),  # unresolved: left as written
    ("$(A", "$(A"),  # unterminated
    ("$A $", "$A $"),  # not a reference; a trailing $
    ("a$$b", "a$b"),
    ("$()", "$()"),
    ("$(A)$(A)", "11"),
])
def test_expand_follows_the_kubelet(text: str, expected: str) -> None:
    assert lp.expand(text, {"A": "1", "B": "2"}) == expected


def test_env_expands_only_earlier_variables() -> None:
    # EARLY refers to RANK before RANK is defined: the kubelet leaves it as written.
    env = plan_for(GOLDEN / "from-jobset").processes[1].env_dict()
    assert env["EARLY"] == "$(RANK)" and env["RANK"] == "0"


def test_ports_move_only_when_several_processes_declare_them() -> None:
    plan = plan_for(GOLDEN / "from-jobset")
    by_label = {p.label: p for p in plan.processes}
    assert by_label["driver:0/0"].ports == ((9000, 9000),)  # one process: kept
    workers = [p for p in plan.processes if p.replicated_job == "workers"]
    assert len({p.ports[0][1] for p in workers}) == 4  # four processes: four ports
    # Each slice's PEERS point at that slice's own moved ports.
    for p in workers:
        peers = [w.ports[0][1] for w in workers if w.job_index == p.job_index]
        assert p.env_dict()["PEERS"] == ",".join(f"127.0.0.1:{x}" for x in peers)


def test_gpu_coordinator_port_follows_its_address() -> None:
    plan = plan_for(GOLDEN / "gpu-g2")
    port0 = dict(plan.processes[0].ports)[6002]
    for p in plan.processes:
        env = p.env_dict()
        assert env["COORDINATOR_PORT"] == str(port0) == env["JAX_COORDINATOR_PORT"]
        assert env["JAX_COORDINATOR_ADDRESS"] == f"127.0.0.1:{port0}"


def test_tpu_webhook_variables_only_for_multi_host_tpu_jobs() -> None:
    outputs = stack_fixtures.outputs("g2")
    spec = build_spec(outputs, workload="w", accelerator="l4-8", num_nodes=2, image="x:1",
                      command="true")
    opts = lp.Options(run_dir="/r", cwd="/c")
    for p in lp.build(render(spec), opts, 0, lambda: 1).processes:
        assert "TPU_WORKER_ID" not in p.env_dict()


def test_scale_down_refuses_to_grow_and_fixes_nnodes() -> None:
    objs, _ = objects_for(GOLDEN / "gpu-g2")
    js = objs[-1]
    small = lp.scale_down(js, 1, 1)
    env = {e["name"]: e.get("value") for e in small["spec"]["replicatedJobs"][0]["template"][
        "spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["NNODES"] == "1"
    with pytest.raises(lp.PlanError, match="larger than replicated job 'worker' \\(1x2\\)"):
        lp.scale_down(js, 1, 3)


def test_unknown_volume_needs_a_local_mount() -> None:
    objs, _ = objects_for(GOLDEN / "from-jobset")
    with pytest.raises(lp.PlanError) as e:
        lp.build(objs, lp.Options(run_dir="/r", cwd="/c", local_env=(("HF_TOKEN", "x"),)),
                 0, lambda: 1)
    assert e.value.option == "--local-mount"
    assert e.value.message == ("volume 'data' (persistentVolumeClaim) mounted at /data has no "
                               "local directory: pass --local-mount data=DIR")


def test_failure_policy_decisions() -> None:
    objs, _ = objects_for(GOLDEN / "from-jobset")
    policy = pol.from_jobset(objs[-1])
    workers = policy.job("workers")
    assert workers.pod_action(3, "main") == ("FailJob", 0)
    assert workers.pod_action(3, "sidecar") == ("Count", None)
    assert workers.pod_action(1, "main") == ("Count", None)
    assert policy.on_job_failure("workers", pol.POD_FAILURE_POLICY, "m", 0) == (
        pol.FAIL_JOB_SET, "rule fatal")
    assert policy.on_job_failure("driver", pol.BACKOFF_LIMIT_EXCEEDED, "m", 5) == (
        pol.RESTART_IGNORE_MAX, "rule driverOnly")
    assert policy.on_job_failure("workers", pol.BACKOFF_LIMIT_EXCEEDED, "m", 2) == (
        pol.RESTART_JOB_SET, "no rule matched (default RestartJobSet)")
    assert policy.on_job_failure("workers", pol.BACKOFF_LIMIT_EXCEEDED, "m", 3)[0] == \
        pol.FAIL_JOB_SET
    assert policy.succeeded({"driver": [True], "workers": [False, False]})
    assert not policy.succeeded({"driver": [False], "workers": [True, True]})
    assert pol.exit_status(-9) == 137 and pol.exit_status(3) == 3


def test_unsupported_jobset_features_are_refused() -> None:
    objs, _ = objects_for(GOLDEN / "from-jobset")
    js = objs[-1]
    js["spec"]["failurePolicy"]["rules"][0]["action"] = "RestartJob"
    with pytest.raises(pol.PolicyError, match="'RestartJob' is not supported"):
        pol.from_jobset(js)


def test_plan_and_policy_are_pure() -> None:
    import subprocess
    import sys

    code = ("import sys, submit.local.plan, submit.local.policy; bad = sorted(m for m in "
            "sys.modules if m.split('.')[0] in ('subprocess', 'pulumi', 'kubernetes', "
            "'threading', 'socket') and m not in ORIG); assert not bad, bad")
    subprocess.run([sys.executable, "-c", "import sys; ORIG = set(sys.modules); " + code],
                   check=True)


@pytest.mark.parametrize("doc,message", [
    ({"kind": "JobSet", "metadata": {}}, "the JobSet has no valid metadata.name"),
    ({"kind": "JobSet", "metadata": {"name": "x"}, "spec": {"replicatedJobs": []}},
     "the JobSet has no valid spec.replicatedJobs"),
    ({"kind": "JobSet", "metadata": {"name": "x"}, "spec": {"replicatedJobs": [
        {"name": "a", "template": {"spec": {"template": {"spec": {}}}}}]}},
     "the JobSet has no valid spec.replicatedJobs[0].template.spec.template.spec.containers"),
])
def test_malformed_exported_files_name_the_missing_field(doc: dict[str, Any],
                                                         message: str) -> None:
    with pytest.raises(lp.PlanError) as e:
        lp.split_objects([doc], "--from")
    assert (e.value.option, e.value.message) == ("--from", message)


@pytest.mark.parametrize("stack, accel, names", [
    ("a3high", "h100-80gb-8", ["nvidia-libs", "tcpx-socket"]),
    ("a3mega", "h100-mega-80gb-8", ["aperture-devices", "nvidia"]),
    ("a4", "b200-8", ["gib", "nvidia"]),
])
def test_gpu_plumbing_volumes_get_stand_ins(stack: str, accel: str, names: list[str]) -> None:
    # The node's driver libraries and GPUDirect files (submit.render.gpu_net) exist only on
    # a GKE GPU node: run-local gives them empty directories without any --local-mount, and
    # says so in one note.
    spec = build_spec(stack_fixtures.outputs(stack), workload="w", accelerator=accel,
                      num_nodes=1, image="x:1", command="python3 train.py")
    plan = lp.build(render(spec), lp.Options(run_dir="/r", cwd="/c"), 0, lambda: 1)
    [proc] = plan.processes
    for name in names:
        assert f"/r/volumes/{proc.hostname}/{name}" in plan.dirs
    [note] = [n for n in plan.notes if n.startswith("GPU node volumes")]
    assert note == (f"GPU node volumes {', '.join(names)} are empty stand-in directories (the "
                    "node's drivers and GPUDirect files exist only on GKE GPU nodes; pass "
                    "--local-mount NAME=DIR to use your own)")
    # The NCCL settings script the command sources is there (empty), so the shell goes on.
    script = proc.argv[-1].split(";")[0].removeprefix(". ")
    if script != proc.argv[-1]:
        assert script in dict(plan.files)


def test_a_users_own_host_path_still_needs_a_local_mount() -> None:
    spec = build_spec(stack_fixtures.outputs("a3high"), workload="w", accelerator="h100-80gb-8",
                      num_nodes=1, image="x:1", command="true")
    objs = render(spec)
    pod = objs[-1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["volumes"].append({"name": "nvidia", "hostPath": {"path": "/opt/my-drivers"}})
    pod["volumes"] = [v for v in pod["volumes"] if v["name"] != "nvidia-libs"]
    pod["volumes"].append({"name": "nvidia-libs", "hostPath": {"path": "/opt/other"}})
    with pytest.raises(lp.PlanError) as e:
        lp.build(objs, lp.Options(run_dir="/r", cwd="/c"), 0, lambda: 1)
    assert e.value.option == "--local-mount"
    assert "volume 'nvidia-libs' (hostPath)" in e.value.message
