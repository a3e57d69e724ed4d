"""Small checks that issues 41 and 42 found missing, each from its source: multi-tier
checkpointing in job groups (the checkpointing controller's rank server), Linux capability
names (capabilities(7)), a run's Pathways images held to the stack's pin rule, the Python
API's one error for bad input, and one duration grammar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import ROOT
from infra.contract.outputs import StackOutputs, load as load_contract
from submit import api
from submit.cli.app import main
from submit.experiment import group as gr
from submit.render.jobset import EXCLUSIVE_TOPOLOGY

MTC = ROOT / "stacks" / "Pulumi.v6e-mtc.yaml"


@pytest.fixture(scope="module")
def mtc() -> StackOutputs:
    from infra.preview import harness

    return load_contract(harness.plain_outputs(harness.evaluate_file(MTC),
                                               reveal=True)["accelstack"])


def _group(roles: str) -> gr.Group:
    text = ("name: ckpt\nworkload:\n  image: python:3.12\n  command: python train.py\n"
            f"roles:\n{roles}")
    return gr.load("g.yaml", text)


TRAINER = ("  trainer:\n    accelerator: v6e-64\n    count: 2\n"
           "    local-checkpoint-dir: /local\n")


def test_a_one_role_group_with_a_local_checkpoint_renders_as_create(mtc: StackOutputs) -> None:
    # The JobSet create renders for the same workload carries exclusive-topology on its
    # metadata; a one-role group now does too (it used to move it to the replicated job).
    [js] = [o for o in gr.render_group(_group(TRAINER), mtc) if o["kind"] == "JobSet"]
    alone = api.Workload(name="ckpt", accelerator="v6e-64", num_slices=2, image="python:3.12",
                         command="python train.py", local_checkpoint_dir="/local").render(mtc)
    [plain] = [o for o in alone if o["kind"] == "JobSet"]
    assert js["metadata"]["annotations"][EXCLUSIVE_TOPOLOGY] == \
        plain["metadata"]["annotations"][EXCLUSIVE_TOPOLOGY] == "cloud.google.com/gke-nodepool"
    assert len(js["spec"]["replicatedJobs"]) == 1


def test_a_group_of_two_roles_with_a_local_checkpoint_is_refused(mtc: StackOutputs) -> None:
    # pkg/idfile/ranks_server.go HandleJobset: "replicated job count %d, not 1. Assuming not
    # a checkpointing job" (GoogleCloudPlatform/high-scale-checkpointing-controller).
    roles = TRAINER + "  evaluator:\n    accelerator: v6e-64\n    count: 1\n"
    with pytest.raises(gr.GroupError) as info:
        gr.render_group(_group(roles), mtc)
    assert info.value.message == (
        "g.yaml:9: roles.trainer: --local-checkpoint-dir needs a workload of one role: the "
        "multi-tier checkpointing controller serves ranks only to a JobSet of exactly one "
        "replicated job, and this group has 2 (give the checkpointing role a workload of "
        "its own)")


def _workload(**changes: Any) -> api.Workload:
    return api.Workload(name="w", accelerator="v5litepod-16", image="python:3.12",
                        command="python3 train.py").replace(**changes)


@pytest.mark.parametrize("name", ["FOO", "CAP_FOO", "NET_RAWW", "IPC-LOCK"])
def test_only_linux_capability_names_are_accepted(name: str) -> None:
    with pytest.raises(api.BadInput) as info:
        _workload(add_capability=(name,)).check()
    assert info.value.option == "--add-capability"
    assert "is not a Linux capability" in info.value.message


def test_a_misspelt_capability_gets_the_nearest_name() -> None:
    with pytest.raises(api.BadInput, match="did you mean NET_RAW"):
        _workload(add_capability=("NET_RAWW",)).check()


@pytest.mark.parametrize("name", ["IPC_LOCK", "cap_setuid", "CAP_CHECKPOINT_RESTORE",
                                  "sys_nice"])
def test_linux_capabilities_are_accepted_with_or_without_cap(name: str) -> None:
    _workload(add_capability=(name,)).check()


@pytest.mark.parametrize(("option", "image", "said"), [
    ("pathways_proxy_image", "us-docker.pkg.dev/p/r/proxy:latest", "uses :latest"),
    ("pathways_server_image", "us-docker.pkg.dev/p/r/server", "has no tag"),
    ("pathways_colocated_python_image", "us-docker.pkg.dev/p/r/sidecar:latest",
     "uses :latest"),
])
def test_a_run_s_pathways_image_is_pinned_as_the_stack_s_must_be(option: str, image: str,
                                                                   said: str) -> None:
    with pytest.raises(api.BadInput) as info:
        _workload(pathways=True, **{option: image}).check()
    assert info.value.option == "--" + option.replace("_", "-")
    assert info.value.message.startswith(f"{image!r} {said}")


def test_a_pinned_pathways_image_is_accepted() -> None:
    digest = "sha256:" + "a" * 64
    _workload(pathways=True, pathways_proxy_image=f"x.io/proxy:latest@{digest}",
              pathways_server_image="x.io/server:jax-0.10.0").check()


def test_the_api_raises_bad_input_for_a_bad_outputs_file(tmp_path: Path) -> None:
    with pytest.raises(api.BadInput) as info:
        api.load_outputs(outputs_file=str(tmp_path / "missing.json"))
    assert info.value.option == "--outputs"
    with pytest.raises(api.BadInput) as info:
        api.Session(outputs_file=str(tmp_path)).outputs  # noqa: B018 (a directory)
    assert info.value.option == "--outputs"
    with pytest.raises(api.BadInput) as info:
        api.load_outputs()
    assert info.value.option == "--stack"
    with pytest.raises(api.BadInput) as info:
        api.load_outputs(stack="bad stack!")
    assert info.value.option == "--stack"


@pytest.fixture(scope="module")
def spot_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from infra.preview import harness

    ev = harness.evaluate_file(ROOT / "stacks" / "Pulumi.v5e-spot.yaml")
    path = tmp_path_factory.mktemp("o") / "v5e-spot.json"
    path.write_text(json.dumps(harness.offline_outputs(ev)))
    return path


@pytest.mark.parametrize(("given", "seconds"), [("2m", 120), ("90", 90), ("1m30s", 90)])
def test_the_grace_period_takes_the_duration_grammar(spot_outputs: Path, given: str,
                                                     seconds: int) -> None:
    r = CliRunner().invoke(main, [
        "workload", "--outputs", str(spot_outputs), "create", "--workload", "w",
        "--accelerator", "v5litepod-16", "--image", "python:3.12", "--dry-run", "-o", "json",
        "--termination-grace-period", given])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    js = next(o for o in doc.get("items", [doc]) if o["kind"] == "JobSet")
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == seconds


def test_max_hours_is_gone_with_the_reason() -> None:
    r = CliRunner().invoke(main, ["run", "v5e-spot", "--project-dir", str(ROOT),
                                  "--max-hours", "1h", "--dry-run", "--workload", "w",
                                  "--accelerator", "v5litepod-16", "--image", "python:3.12"])
    assert r.exit_code == 2
    assert ("Invalid value for '--max-hours': was removed: a run's cost is bounded by its "
            "real limit, the shorter of --timeout and --expires-in") in r.output


def test_expires_in_zero_is_refused() -> None:
    r = CliRunner().invoke(main, ["run", "v5e-spot", "--project-dir", str(ROOT),
                                  "--expires-in", "0", "--dry-run", "--workload", "w",
                                  "--accelerator", "v5litepod-16", "--image", "python:3.12"])
    assert r.exit_code == 2
    assert "Invalid value for '--expires-in': 0s: the stack's expiry must be in the future" \
        in r.output


def test_a_zero_bound_is_refused_in_one_line() -> None:
    r = CliRunner().invoke(main, ["run", "v5e-spot", "--project-dir", str(ROOT),
                                  "--timeout", "1s", "--dry-run", "--workload", "w",
                                  "--accelerator", "v5litepod-16", "--image", "python:3.12"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("Error: the run's limit, --timeout 1s, prices a stack of $")
    assert "Usage:" not in r.stderr and len(r.stderr.splitlines()) == 1


def test_the_verdict_holds_every_refusal_of_the_options_alone(mtc: StackOutputs) -> None:
    verdict = _workload(add_capability=("FOO",), env=("NOVALUE",), cpu="lots",
                        ttl="forever").verdict(mtc)
    assert not verdict.ok and verdict.objects == ()
    assert [r.option for r in verdict.refusals] == ["--ttl", "--add-capability", "--cpu",
                                                   "--env"]
    with pytest.raises(api.BadInput) as info:
        verdict.rendered()
    assert info.value.option == "--ttl"


def test_a_good_verdict_holds_the_objects(mtc: StackOutputs) -> None:
    verdict = api.Workload(name="ckpt", accelerator="v6e-64", num_slices=2,
                           image="python:3.12").verdict(mtc)
    assert verdict.ok and verdict.spec is not None
    assert [o["kind"] for o in verdict.rendered()] == ["JobSet"]


def _duration_options() -> list[tuple[str, Any]]:
    """Every option of every `submit` command whose metavar says it takes a time."""
    from submit.cli.app import main as app

    out = []

    def walk(cmd: Any, path: str, ctx: Any) -> None:
        import click

        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, f"{path} {name}", ctx)
            return
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and p.metavar in (
                    "DURATION", "SECONDS", "HOURS", "MINUTES"):
                out.append((f"{path} {p.opts[-1]}", p))

    import click
    walk(app, "submit", click.Context(app))
    return out


def test_every_duration_option_takes_the_one_grammar() -> None:
    found = _duration_options()
    assert len(found) >= 10, found
    for where, p in found:
        assert p.metavar == "DURATION", where
        if p.type.name == "duration":
            assert p.type.convert("2m", p, None) == 120.0, where
        else:  # parsed by the render's own checks (--ttl, --termination-grace-period)
            assert p.name in ("ttl", "termination_grace_period"), where
