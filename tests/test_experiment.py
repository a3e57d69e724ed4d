"""Experiments: golden expansions, schema validation of every trial, bad experiment files,
and `submit experiment ...` end to end against the fake API server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

import schema
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.contract.outputs import load as load_outputs
from submit.cli.app import main
from submit.experiment import expand as ex
from submit.experiment import trials
from submit_cli import run_experiment as run

HERE = Path(__file__).resolve().parent / "experiments"
NS = "training"


def _outputs(name: str) -> Any:
    return load_outputs(stacks.outputs(name)["accelstack"])


def _table(file: Path, stack: str) -> list[dict[str, Any]]:
    exp = ex.load(str(file))
    return trials.table(exp, trials.plan(exp, _outputs(stack)))


# -- golden expansions -------------------------------------------------------------------

def test_product_times_zip() -> None:
    assert _table(HERE / "lr_sweep.yaml", "v5e-spot") == [
        {"trial": "lr-sweep-0", "env.LR": "1e-4", "args": "--model=small", "env.BATCH": "64"},
        {"trial": "lr-sweep-1", "env.LR": "1e-4", "args": "--model=large", "env.BATCH": "32"},
        {"trial": "lr-sweep-2", "env.LR": "3e-4", "args": "--model=small", "env.BATCH": "64"},
        {"trial": "lr-sweep-3", "env.LR": "3e-4", "args": "--model=large", "env.BATCH": "32"},
    ]


def test_union_of_shape_sweeps() -> None:
    assert _table(HERE / "scaling.yaml", "multi") == [
        {"trial": "scaling-0", "num-slices": "1", "config.optimizer.lr": "0.001",
         "accelerator": "-", "pool": "-", "num-nodes": "-"},
        {"trial": "scaling-1", "num-slices": "2", "config.optimizer.lr": "0.001",
         "accelerator": "-", "pool": "-", "num-nodes": "-"},
        {"trial": "scaling-2", "num-slices": "4", "config.optimizer.lr": "0.001",
         "accelerator": "-", "pool": "-", "num-nodes": "-"},
        {"trial": "scaling-3", "num-slices": "-", "config.optimizer.lr": "-",
         "accelerator": "l4-1", "pool": "l4", "num-nodes": "2"},
    ]


@pytest.mark.parametrize("file,stack", [("lr_sweep.yaml", "v5e-spot"), ("scaling.yaml", "multi")])
def test_every_trial_validates(file: str, stack: str) -> None:
    exp = ex.load(str(HERE / file))
    for p in trials.plan(exp, _outputs(stack)):
        for obj in p.objects:
            schema.validate(obj)


def test_trials_render_what_they_sweep() -> None:
    exp = ex.load(str(HERE / "scaling.yaml"))
    plans = trials.plan(exp, _outputs("multi"))
    js = [o for o in plans[2].objects if o["kind"] == "JobSet"][0]
    assert js["spec"]["replicatedJobs"][0]["replicas"] == 4
    assert js["metadata"]["labels"][ex.EXPERIMENT] == "scaling"
    assert js["metadata"]["labels"][ex.TRIAL] == "scaling-2"
    assert js["metadata"]["labels"]["params.accelstack.dev/num-slices"] == "4"
    assert json.loads(js["metadata"]["annotations"][ex.PARAMETERS]) == {
        "num-slices": 4, "config.optimizer.lr": 0.001}
    cm = [o for o in plans[2].objects if o["kind"] == "ConfigMap"][0]
    assert yaml.safe_load(cm["data"]["train.yaml"]) == {"optimizer": {"lr": 0.001}, "steps": 10}
    gpu = [o for o in plans[3].objects if o["kind"] == "JobSet"][0]
    assert gpu["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 2
    cm3 = [o for o in plans[3].objects if o["kind"] == "ConfigMap"][0]
    assert yaml.safe_load(cm3["data"]["train.yaml"])["optimizer"]["lr"] == 0.01  # base file


def test_args_are_appended_quoted_and_priority_is_the_experiment_s() -> None:
    exp = ex.load(str(HERE / "lr_sweep.yaml"))
    js = trials.plan(exp, _outputs("v5e-spot"))[1].objects[-1]
    c = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert c["command"] == ["/bin/sh", "-c", "python train.py --model=large"]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert (env["LR"], env["BATCH"], env["STEPS"]) == ("1e-4", "32", "100")
    assert js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"
    assert "params.accelstack.dev/args" not in js["metadata"]["labels"]  # '=' cannot be a label


def test_long_names_get_a_hash_within_the_hostname_budget() -> None:
    assert trials.trial_name("a" * 40, 7, 12, 60) == "a" * 40 + "-07"
    short = trials.trial_name("a" * 40, 7, 12, 30)
    assert len(short) <= 30 and short.endswith("-7") and short != trials.trial_name("a" * 40, 8, 12, 30)
    assert short == trials.trial_name("a" * 40, 7, 12, 30)  # stable
    exp = ex.load("x.yaml", text=(
        "name: " + "n" * 40 + "\nworkload: {accelerator: v5litepod-16, pool: v5e-flex, "
        "image: python:3.12}\nsweep: {num-slices: [1, 12]}\n"))
    for p in trials.plan(exp, _outputs("multi")):
        js = p.objects[-1]
        rj = js["spec"]["replicatedJobs"][0]
        host = f"{p.name}-slice-{rj['replicas'] - 1}-{rj['template']['spec']['parallelism'] - 1}"
        assert len(host) + 6 <= 63, host
        schema.validate(js)


# -- bad experiment files ----------------------------------------------------------------

BAD = [
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\nsweep:\n"
     "  env.LR: []\n", "x.yaml:4: sweep.env.LR: the axis is empty; give at least one value"),
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\nsweep:\n"
     "  learning-rate: [1]\n", "x.yaml:4: sweep.learning-rate: unknown sweep key (give "
     "env.NAME, args, config.KEY, zip or one of: accelerator, image, command, pool, num-slices, "
     "num-nodes, env, priority, max-restarts, restart-on-exit-codes, ttl, "
     "termination-grace-period, shm-size, cpu, memory, namespace, queue, "
     "mount-service-account-token, add-capability, mount, pathways, headless, elastic-slices, "
     "fleet-worker, fleet-region, local-checkpoint-dir, stack-traces, xla-dump, debug-logs, tensorboard, "
     "image-pull-secret, "
     "pathways-server-image, pathways-proxy-image, pathways-colocated-python, "
     "pathways-colocated-python-image, pathways-server-arg, pathways-proxy-arg, "
     "pathways-worker-arg, parallel-containers, ml-diagnostics, goodput)"),
    ("name: e\nworkloads: {}\n", "x.yaml:2: workloads: unknown key; did you mean workload? "
     "(allowed: name, description, workload, sweep)"),
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12, gpus: 2}\n",
     "x.yaml:2: workload.gpus: unknown option (allowed: " + ", ".join(ex.OPTIONS) + ")"),
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\nsweep:\n  zip:\n"
     "    env.A: [1, 2]\n    env.B: [1]\n", "x.yaml:4: sweep.zip: zipped lists must have "
     "equal lengths (env.A: 2, env.B: 1)"),
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\nsweep:\n"
     "  num-slices: [1, two]\n", "x.yaml:4: sweep.num-slices[1]: 'two' is not a whole number"),
    ("name: e\nname: f\n", "x.yaml:2: name: duplicate key (first on line 1)"),
    ("name: E\nworkload: {}\n", "x.yaml:1: name: 'E' is not a DNS-1035 label of at most 40 "
     "characters (lowercase letters, digits and '-', starting with a letter)"),
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\nsweep: []\n",
     "x.yaml:3: sweep: is an empty list; give at least one sweep block"),
    ("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\nsweep:\n"
     "  args: [--x]\n", "x.yaml:4: sweep.args: args are appended to the command: set "
     "workload.command"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_bad_files_are_one_line_with_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ex.ExperimentError) as e:
        ex.load("x.yaml", text=text)
    assert e.value.message == message


def test_no_sweep_is_one_trial_of_the_base() -> None:
    exp = ex.load("x.yaml", text="name: e\nworkload: {accelerator: v5litepod-16, image: "
                  "python:3.12}\nsweep:\n")
    (plan,) = trials.plan(exp, _outputs("v5e-spot"))
    assert (plan.name, plan.trial.describe()) == ("e-0", "(base)")


def test_a_bad_trial_is_named_with_its_parameters() -> None:
    exp = ex.load("x.yaml", text="name: e\nworkload: {accelerator: v5litepod-16, image: "
                  "python:3.12}\nsweep:\n  num-slices: [1, 3]\n")
    with pytest.raises(ex.ExperimentError) as e:
        trials.plan(exp, _outputs("v5e-spot"))
    assert e.value.message == ("x.yaml:4: trial 1 (num-slices=3): --num-slices: 3 is more than "
                               "the 2 v5litepod-16 slices pool v5litepod-16 has")


# -- the command line against the fake API server ---------------------------------------

@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", server.kubeconfig())


def _finish(server: FakeApiServer, name: str, state: str) -> None:
    js = server.state.jobsets[(NS, name)]
    js["status"] = {"conditions": [{"type": state, "status": "True", "reason": state}]}


def test_create_describe_wait_delete(outputs: Path, server: FakeApiServer) -> None:
    r = run(outputs, "create", str(HERE / "lr_sweep.yaml"), "--max-running", "3")
    assert r.exit_code == 0, r.output
    assert r.output == ("experiment lr-sweep: 4 trials submitted to namespace training (1 held "
                        "until `submit experiment wait lr-sweep` releases them)\n")
    record = server.state.configmaps[(NS, "lr-sweep-experiment")]
    schema.validate(record)
    assert [t["name"] for t in json.loads(record["data"]["expansion.json"])["trials"]] == [
        f"lr-sweep-{i}" for i in range(4)]
    for i in range(4):
        js = server.state.jobsets[(NS, f"lr-sweep-{i}")]
        assert js["metadata"]["ownerReferences"][0]["kind"] == "ConfigMap"
        assert js["metadata"]["ownerReferences"][0]["uid"] == "uid-configmap-lr-sweep-experiment"
    held = server.state.jobsets[(NS, "lr-sweep-3")]
    assert held["spec"]["suspend"] is True
    assert "kueue.x-k8s.io/queue-name" not in held["metadata"]["labels"]
    schema.validate(held)

    r = run(outputs, "list")
    assert r.output == ("NAME      TRIALS  PROGRESS\n"
                        "lr-sweep  4       1 Held, 3 Pending\n")
    _finish(server, "lr-sweep-0", "Completed")
    _finish(server, "lr-sweep-1", "Failed")
    r = run(outputs, "describe", "lr-sweep")
    assert r.exit_code == 0
    assert r.output.startswith("Experiment:   lr-sweep\nDescription:  learning rate x model "
                               "size\nNamespace:    training\nFile:         lr_sweep.yaml\n"
                               "Max running:  3\n")
    assert "Trials:       4 (1 Held, 1 Pending, 1 Completed, 1 Failed)\n" in r.output
    assert ("lr-sweep-1  Failed     NotQueued  1e-4    --model=large  32\n") in r.output
    r = run(outputs, "describe", "lr-sweep", "-o", "json")  # the documented shape, pinned
    data = json.loads(r.stdout)
    assert {k: v for k, v in data.items() if k != "trials"} == {
        "name": "lr-sweep", "description": "learning rate x model size",
        "namespace": "training", "file": "lr_sweep.yaml", "maxRunning": 3,
        "keys": ["env.LR", "args", "env.BATCH"],
        "counts": {"Held": 1, "Pending": 1, "Completed": 1, "Failed": 1}}
    assert [(t["trial"], t["state"], t["parameters"]) for t in data["trials"]] == [
        ("lr-sweep-0", "Completed", {"env.LR": "1e-4", "args": "--model=small",
                                     "env.BATCH": 64}),
        ("lr-sweep-1", "Failed", {"env.LR": "1e-4", "args": "--model=large", "env.BATCH": 32}),
        ("lr-sweep-2", "Pending", {"env.LR": "3e-4", "args": "--model=small", "env.BATCH": 64}),
        ("lr-sweep-3", "Held", {"env.LR": "3e-4", "args": "--model=large", "env.BATCH": 32})]
    assert set(data["trials"][1]) == {"trial", "state", "admission", "restarts", "message",
                                      "parameters", "links"}
    # Each trial's Cloud Console links (docs/diagnostics.md): its logs and GKE page.
    links = data["trials"][1]["links"]
    cluster = json.loads(outputs.read_text())["accelstack"]["cluster"]
    assert links["workload"] == (
        f"https://console.cloud.google.com/kubernetes/service/{cluster['location']}/"
        f"{cluster['name']}/training/lr-sweep-1/details?project={cluster['project']}")
    assert links["logs"].startswith("https://console.cloud.google.com/logs/query;query=")
    assert "%5Elr-sweep-1-%5Ba-z0-9-%5D%2B%24" in links["logs"]
    assert links["stores"] == []
    text = run(outputs, "describe", "lr-sweep").output
    assert f"lr-sweep-1:\n  logs:      {links['logs']}\n  workload:  {links['workload']}\n" \
        in text
    assert yaml.safe_load(run(outputs, "describe", "lr-sweep", "-o", "yaml").stdout) == data

    # wait releases the held trial (two slots are free), then sees all done: one failed.
    r = run(outputs, "wait", "lr-sweep", "--timeout", "0", "--interval", "0.01")
    assert r.exit_code == 4, r.output
    assert "released lr-sweep-3" in r.output
    assert server.state.jobsets[(NS, "lr-sweep-3")]["metadata"]["labels"][
        "kueue.x-k8s.io/queue-name"] == "main"
    _finish(server, "lr-sweep-2", "Completed")
    _finish(server, "lr-sweep-3", "Completed")
    r = run(outputs, "wait", "lr-sweep", "--interval", "0.01")
    assert r.exit_code == 3
    assert r.output.endswith("experiment lr-sweep: 1 of 4 trials did not succeed: "
                             "lr-sweep-1\n")

    r = run(outputs, "delete", "lr-sweep")
    assert r.output == "deleted experiment lr-sweep (4 trials)\n"
    assert not server.state.jobsets and not server.state.configmaps
    r = run(outputs, "describe", "lr-sweep")
    assert (r.exit_code, r.output) == (1, "Error: experiment lr-sweep not found in namespace "
                                          "training\n")


def test_wait_succeeds_when_every_trial_did(outputs: Path, server: FakeApiServer) -> None:
    assert run(outputs, "create", str(HERE / "lr_sweep.yaml")).exit_code == 0
    for i in range(4):
        _finish(server, f"lr-sweep-{i}", "Completed")
    r = run(outputs, "wait", "lr-sweep", "--interval", "0.01")
    assert (r.exit_code, r.output.splitlines()[-1]) == (
        0, "experiment lr-sweep: all 4 trials succeeded")


def test_dry_run_and_export_send_nothing(outputs: Path, server: FakeApiServer,
                                         tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    r = run(outputs, "create", str(HERE / "lr_sweep.yaml"), "--dry-run", "--export", str(out))
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == [
        f"wrote 4 trials to {out}/; submitted nothing (apply one with `submit workload apply "
        f"{out}/lr-sweep-0.yaml`)",
        "TRIAL       ENV.LR  ARGS           ENV.BATCH",
        "lr-sweep-0  1e-4    --model=small  64",
        "lr-sweep-1  1e-4    --model=large  32",
        "lr-sweep-2  3e-4    --model=small  64",
        "lr-sweep-3  3e-4    --model=large  32"]
    assert [d["metadata"]["name"] for d in yaml.safe_load(r.stdout)["items"]] == [
        f"lr-sweep-{i}" for i in range(4)]
    assert sorted(p.name for p in out.iterdir()) == [f"lr-sweep-{i}.yaml" for i in range(4)]
    assert not server.state.requests


def test_a_dry_run_s_stdout_is_only_the_document(outputs: Path) -> None:
    for fmt, parse in (("json", json.loads), ("yaml", yaml.safe_load)):
        r = run(outputs, "create", str(HERE / "lr_sweep.yaml"), "--dry-run", "-o", fmt)
        assert r.exit_code == 0, r.output
        doc = parse(r.stdout)
        # The JobSets and nothing else, as one Kubernetes List: the shape `submit workload
        # create --dry-run -o json|yaml` prints for several objects (issue 42).
        assert (doc["apiVersion"], doc["kind"], len(doc["items"])) == ("v1", "List", 4), fmt
        assert r.stderr.startswith("TRIAL ")


def test_bad_input_exits_2_and_sends_nothing(outputs: Path, server: FakeApiServer,
                                             tmp_path: Path) -> None:
    r = run(outputs, "create", str(HERE / "lr_sweep.yaml"), "--max-trials", "3")
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == (
        f"Error: Invalid value for 'FILE': {HERE / 'lr_sweep.yaml'}: the sweep expands to 4 "
        "trials, more than --max-trials 3; raise --max-trials if that is intended")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: e\nworkload: {accelerator: v5litepod-16, image: python:3.12}\n"
                   "sweep:\n  num-slices: [1, 3]\n")
    r = run(outputs, "create", str(bad))
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == (
        f"Error: Invalid value for 'FILE': {bad}:4: trial 1 (num-slices=3): --num-slices: 3 is "
        "more than the 2 v5litepod-16 slices pool v5litepod-16 has")
    assert not server.state.requests


def test_a_refused_trial_leaves_nothing(outputs: Path, server: FakeApiServer) -> None:
    from fake_apiserver import Fault

    # record get, 4 trial gets, record apply, then trial 0 (get, apply) and trial 1's get
    server.state.faults = []
    r = run(outputs, "create", str(HERE / "lr_sweep.yaml"))
    assert r.exit_code == 0
    assert run(outputs, "delete", "lr-sweep").exit_code == 0
    server.state.requests.clear()

    original = server.state.faults
    original.extend([Fault(status=0)] * 8 + [Fault(status=422, message="denied",
                                                     reason="Invalid")])
    r = run(outputs, "create", str(HERE / "lr_sweep.yaml"))
    assert r.exit_code == 1
    assert r.output.startswith("Error: experiment lr-sweep not created (trial lr-sweep-1): ")
    assert not server.state.jobsets and not server.state.configmaps


# -- --after and release -----------------------------------------------------------------

def test_after_holds_until_the_other_succeeded(outputs: Path, server: FakeApiServer) -> None:
    def wl(*args: str) -> Result:
        return CliRunner().invoke(main, ["workload", "--outputs", str(outputs), *args])

    base = ["create", "--accelerator", "v5litepod-16", "--image", "python:3.12"]
    assert wl(*base, "--workload", "prep").exit_code == 0
    r = wl(*base, "--workload", "train", "--after", "prep")
    assert r.exit_code == 0, r.output
    assert r.output == ("workload train created held in namespace training (queue main); "
                        "`submit workload release train` hands it to Kueue\n")
    js = server.state.jobsets[(NS, "train")]
    assert js["spec"]["suspend"] is True
    assert js["metadata"]["annotations"]["accelstack.dev/after"] == "prep"
    assert "kueue.x-k8s.io/queue-name" not in js["metadata"]["labels"]
    schema.validate(js)

    r = wl("release", "train")
    assert (r.exit_code, r.output) == (1, "Error: workload prep is Pending, not Completed: "
                                          "workload train stays held (pass --wait to wait "
                                          "for it)\n")
    _finish(server, "prep", "Failed")
    r = wl("release", "train")
    assert (r.exit_code, r.output) == (3, "workload prep failed: workload train stays held\n")
    _finish(server, "prep", "Completed")
    r = wl("release", "train", "--wait", "--interval", "0.01")
    assert (r.exit_code, r.output) == (0, "workload train released to queue main\n")
    js = server.state.jobsets[(NS, "train")]
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "main"
    assert "accelstack.dev/held-queue" not in js["metadata"]["annotations"]
    patch = [q for q in server.state.requests if q.method == "PATCH"][-1]
    assert patch.headers.get("Content-Type") == "application/merge-patch+json"
    r = wl("release", "train")
    assert r.exit_code == 1 and "is not held" in r.output


def test_experiment_commands_take_n_for_the_namespace() -> None:
    from click.testing import CliRunner

    from submit.cli.app import main

    for command in ("list", "describe", "wait", "delete"):
        out = CliRunner().invoke(main, ["experiment", command, "--help"]).output
        assert "-n, --namespace" in out, command


def test_stack_options_after_the_experiment_command(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fakes import stacks
    from submit.cli.app import main

    outputs = stacks.write_outputs(tmp_path / "o.json", "multi")
    sweep = tmp_path / "s.yaml"
    sweep.write_text("name: s\nworkload: {accelerator: l4-1, image: python:3.12, "
                     "command: 'true'}\nsweep:\n  env.LR: [1, 2]\n")
    r = CliRunner().invoke(main, ["experiment", "create", str(sweep), "--outputs",
                                  str(outputs), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert r.output.count("kind: JobSet") == 2
