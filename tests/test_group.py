"""Job groups: one JobSet of several roles with dependsOn, checked against the JobSet CRD,
bad group files, and `submit workload create-group` against the fake API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import schema
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.contract.outputs import load as load_outputs
from submit.experiment import group as gr
from submit.cli.app import main

FILE = Path(__file__).resolve().parent / "groups" / "train_eval.yaml"


def _render(text: str, stack: str = "multi") -> list[dict[str, Any]]:
    return gr.render_group(gr.load("g.yaml", text), load_outputs(stacks.outputs(stack)["accelstack"]))


def _env(rj: dict[str, Any]) -> dict[str, Any]:
    c = rj["template"]["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in c["env"]}


def test_roles_become_replicated_jobs_in_dependency_order() -> None:
    (js,) = gr.render_group(gr.load(str(FILE), FILE.read_text()),
                            load_outputs(stacks.outputs("multi")["accelstack"]))
    schema.validate(js)
    trainer, evaluator = js["spec"]["replicatedJobs"]
    assert (trainer["name"], evaluator["name"]) == ("trainer", "evaluator")
    assert "dependsOn" not in trainer  # JobSet: the first replicated job cannot depend
    assert evaluator["dependsOn"] == [{"name": "trainer", "status": "Ready"}]
    assert trainer["replicas"] == 2 and trainer["template"]["spec"]["parallelism"] == 4
    assert evaluator["template"]["spec"]["template"]["spec"]["nodeSelector"][
        "cloud.google.com/gke-accelerator"] == "nvidia-l4"
    # Exclusive placement only for the multi-host TPU role.
    assert trainer["template"]["metadata"]["annotations"] == {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}
    assert "metadata" not in evaluator["template"]
    assert "alpha.jobset.sigs.k8s.io/exclusive-topology" not in js["metadata"]["annotations"]
    hosts = ",".join(f"train-eval-trainer-{j}-{i}.train-eval" for j in range(2) for i in range(4))
    for rj, role in ((trainer, "trainer"), (evaluator, "evaluator")):
        env = _env(rj)
        assert env["ACCELSTACK_ROLE"] == role
        assert env["ACCELSTACK_ROLES"] == "trainer,evaluator"
        assert env["ACCELSTACK_COORDINATOR"] == "train-eval-trainer-0-0.train-eval"
        assert env["ACCELSTACK_TRAINER_HOSTS"] == hosts
        assert env["ACCELSTACK_EVALUATOR_HOSTS"] == "train-eval-evaluator-0-0.train-eval"
        assert env["RUN"] == "7"
    assert _env(evaluator)["EVAL_EVERY"] == "100"
    assert js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"


def test_complete_dependency_and_a_chain() -> None:
    (js,) = _render("name: pipe\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
                    "  c: {depends-on: {b: Complete}}\n  b: {depends-on: a}\n  a: {}\n")
    schema.validate(js)
    assert [(r["name"], r.get("dependsOn")) for r in js["spec"]["replicatedJobs"]] == [
        ("a", None), ("b", [{"name": "a", "status": "Ready"}]),
        ("c", [{"name": "b", "status": "Complete"}])]


BAD = [
    ("name: g\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
     "  a: {depends-on: b}\n  b: {depends-on: c}\n  c: {depends-on: a}\n",
     "g.yaml:4: roles.a.depends-on: dependency cycle (a -> b -> c -> a)"),
    ("name: g\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
     "  a: {depends-on: {b: Started}}\n  b: {}\n",
     "g.yaml:4: roles.a.depends-on: 'Started' is not one of Ready, Complete"),
    ("name: g\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
     "  a: {depends-on: {b: Ready, c: Ready}}\n  b: {}\n  c: {}\n",
     "g.yaml:4: roles.a.depends-on: give one role and its status, such as {trainer: Ready} "
     "(JobSet supports one dependency per replicated job)"),
    ("name: g\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
     "  a: {depends-on: z}\n", "g.yaml:4: roles.a.depends-on: 'z' is not another role; roles: a"),
    ("name: g\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
     "  a: {priority: high}\n", "g.yaml:4: roles.a.priority: is the whole JobSet's: set it "
     "under workload"),
    ("name: g\nworkload: {image: python:3.12}\nroles:\n  a: {count: 0, accelerator: l4-1}\n",
     "g.yaml:4: roles.a.count: 0 is not a whole number from 1"),
    ("name: g\nworkload: {image: python:3.12}\nroles:\n  A: {accelerator: l4-1}\n",
     "g.yaml:4: roles.A: 'A' is not a role name (lowercase letters, digits and '-', starting "
     "with a letter, at most 20 characters)"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_bad_group_files(text: str, message: str) -> None:
    with pytest.raises(gr.GroupError) as e:
        _render(text)
    assert e.value.message == message


def test_a_role_over_the_hostname_budget_is_named() -> None:
    with pytest.raises(gr.GroupError) as e:
        _render("name: " + "g" * 40 + "\nworkload: {image: python:3.12}\nroles:\n"
                "  trainer-with-a-long-name: {accelerator: v5litepod-16, pool: v5e-flex, "
                "count: 3}\n".replace("trainer-with-a-long-name", "trainer-long-name"))
    assert e.value.message == (
        "g.yaml:4: roles.trainer-long-name: the name '" + "g" * 40 + "' is 40 characters; "
        "with this role's 3 x 4 pods it may have at most 35 so that every pod name stays "
        "within 63 characters")


def test_create_group_applies_one_jobset(tmp_path: Path, server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "multi.json", "multi", server.kubeconfig())
    r = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "create-group",
                                  str(FILE)])
    assert r.exit_code == 0
    assert r.output.startswith("workload train-eval submitted to namespace training (queue "
                               "main)\nwatch it:\n")  # then the next steps (create's)
    js = server.state.jobsets[("training", "train-eval")]
    assert [rj["name"] for rj in js["spec"]["replicatedJobs"]] == ["trainer", "evaluator"]
    r = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "create-group",
                                  str(FILE), "--dry-run"])
    assert r.exit_code == 0 and "dependsOn:" in r.output


def test_run_local_starts_a_role_after_the_one_it_depends_on(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "multi.json", "multi")
    flag = tmp_path / "flag"
    (tmp_path / "g.yaml").write_text(
        "name: ge\nworkload: {image: python:3.12, env: {FLAG: '%s'}}\nroles:\n"
        "  evaluator: {accelerator: l4-1, pool: l4, command: 'cat \"$FLAG\"', "
        "depends-on: {trainer: Complete}}\n"
        "  trainer: {accelerator: v5litepod-16, pool: v5e-spot, count: 1, "
        "command: 'sleep 0.5; echo \"$ACCELSTACK_ROLE done\" > \"$FLAG\"'}\n" % flag)
    exported = tmp_path / "ge.yaml"
    r = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "create-group",
                                  str(tmp_path / "g.yaml"), "--dry-run", "--export",
                                  str(exported)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["workload", "run-local", "--from", str(exported),
                                  "--scale-down", "1x1", "--run-dir", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "starting evaluator: trainer is Complete" in lines
    assert "[evaluator:0/0] trainer done" in lines
    assert lines.index("starting evaluator: trainer is Complete") < lines.index(
        "[evaluator:0/0] trainer done")
