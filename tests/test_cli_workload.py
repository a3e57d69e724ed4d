"""Contract tests for `submit workload ...`: exact output and exit codes, and what reached
the cluster, through a fake API server over real HTTP.

Every validation error must exit 2 and send nothing: those commands run without --dry-run,
so a check that let a bad value through would show up as a request to the server.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from fake_apiserver import Fault, FakeApiServer, Request
from fakes import stacks
from infra.contract.outputs import load
from submit.cli.app import main
from submit.render.jobset import render
from submit.render.build import build_spec
from submit.render.spec import MAX_CONFIG_BYTES
from submit_cli import run

NS = "training"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
PAGE = {"limit": ["500"]}  # every list is read in pages (submit/cluster/paging.py)
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"
APPLY_QUERY = {"fieldManager": ["accelstack-submit"]}
JOBSET_APPLY_QUERY = {"fieldManager": ["accelstack-submit"], "fieldValidation": ["Strict"]}
SUBMITTED = "workload {} submitted to namespace training (queue main)\n"
CREATE = ["create", "--workload", "w1", "--accelerator", "v5litepod-16", "--image",
          "python:3.12"]


# -- fixtures and helpers -----------------------------------------------------------------



pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    """The v5e-spot stack (one pool: two v5litepod-16 spot slices), its cluster the fake."""
    return stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", server.kubeconfig())


@pytest.fixture
def multi(tmp_path: Path, server: FakeApiServer) -> Path:
    """Two v5litepod-16 pools (v5e-spot: 2 spot slices, v5e-flex: 1 flex-start) and l4 (2)."""
    return stacks.write_outputs(tmp_path / "multi.json", "multi", server.kubeconfig())


def usage(command: str, option: str, message: str, args: str = "[OPTIONS]") -> str:
    return (f"Usage: main workload {command} {args}\n"
            f"Try 'main workload {command} --help' for help.\n\n"
            f"Error: Invalid value for '{option}': {message}\n")


def header(req: Request, name: str) -> str | None:
    return {k.lower(): v for k, v in req.headers.items()}.get(name.lower())


def calls(server: FakeApiServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.state.requests]


def without_uid(obj: dict[str, Any]) -> dict[str, Any]:
    """The fake adds metadata.uid to what it stores (and to the body it recorded)."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "uid"}
    return {**obj, "metadata": meta}


def expected_objects(stack: str = "v5e-spot", **options: Any) -> list[dict[str, Any]]:
    opts: dict[str, Any] = {"workload": "w1", "accelerator": "v5litepod-16",
                            "image": "python:3.12", **options}
    return render(build_spec(load(stacks.outputs(stack)), **opts))


def stamp(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def jobset(name: str, *, uid: str | None = None, conditions: list[Any] | None = None,
           active: int = 0, restarts: int = 0, replicas: int = 2, created: str | None = None,
           managed: bool = True) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": "main", "accelstack.dev/accelerator": "v5litepod-16",
              "accelstack.dev/slice-pool": "v5litepod-16"}
    if managed:
        labels["app.kubernetes.io/managed-by"] = "accelstack"
    meta: dict[str, Any] = {"name": name, "namespace": NS, "uid": uid or f"uid-{name}",
                            "labels": labels}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta,
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": replicas}]},
            "status": {"conditions": conditions or [], "restarts": restarts,
                       "replicatedJobsStatus": [{"name": "slice", "active": active}]}}


def kueue_workload(owner: str, *conditions: tuple[str, str, str, str]) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": f"jobset-{owner}-1a2b3", "namespace": NS, "ownerReferences": [
                {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": owner,
                 "uid": f"uid-{owner}"}]},
            "status": {"conditions": [{"type": t, "status": s, "reason": r, "message": m}
                                      for t, s, r, m in conditions]}}


def pod(name: str, jobset_name: str, slice_: int, worker: int, created: str,
        phase: str = "Running", node: str = "gke-node") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "creationTimestamp": created,
                         "labels": {"jobset.sigs.k8s.io/jobset-name": jobset_name,
                                    "jobset.sigs.k8s.io/job-index": str(slice_),
                                    "batch.kubernetes.io/job-completion-index": str(worker)}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "python:3.12"}]},
            "status": {"phase": phase}}


def cond(type_: str, status: str = "True", reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


# -- validation: exit 2, nothing sent -----------------------------------------------------

MSG_DNS = ("is not a DNS-1035 label (lowercase letters, digits and '-', starting with a "
           "letter and ending with a letter or digit)")
MSG_IMAGE = ("is not a container image reference ([registry/]repository[:tag]"
             "[@sha256:digest], lowercase repository)")
MSG_EXIT = ("is not an exit code from 1 to 255 or a range such as 127-255 (give a "
            "comma-separated list such as 42,127-255, or 'any')")
MSG_ENV_NAME = ("is not a valid environment variable name (letters, digits, '_', '-' and '.', "
                "not starting with a digit)")
A47, A48 = "a" * 47, "a" * 48

# (stack, options replacing or adding to the defaults, option named, message)
INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    # --workload: a DNS-1035 label, short enough for every pod hostname
    ("v5e-spot", {"--workload": "Train"}, "--workload", f"'Train' {MSG_DNS}"),
    ("v5e-spot", {"--workload": "1train"}, "--workload", f"'1train' {MSG_DNS}"),
    ("v5e-spot", {"--workload": "train-"}, "--workload", f"'train-' {MSG_DNS}"),
    ("v5e-spot", {"--workload": "my_job"}, "--workload", f"'my_job' {MSG_DNS}"),
    ("v5e-spot", {"--workload": "my.job"}, "--workload", f"'my.job' {MSG_DNS}"),
    ("v5e-spot", {"--workload": "train\n"}, "--workload", f"'train\\n' {MSG_DNS}"),
    # JobSet's webhook counts the pod name: <name>-slice-<j>-<p> plus the "-abcde" suffix
    ("v5e-spot", {"--workload": A48}, "--workload",
     f"'{A48}' is 48 characters; a workload name has at most 47 (fewer with many slices or "
     "nodes) so that every pod name stays within 63 characters"),
    ("multi", {"--workload": "c" * 47, "--pool": "v5e-flex", "--num-slices": "11"},
     "--workload", f"'{'c' * 47}' is 47 characters; with 11 x 4 pods the name may have at "
     "most 46 so that every pod name stays within 63 characters"),
    ("multi", {"--accelerator": "l4-1", "--num-nodes": "2", "--workload": "b" * 47},
     "--workload", f"'{'b' * 47}' is 47 characters; with 1 x 2 pods the name may have at most "
     "46 so that every pod name stays within 63 characters"),
    # --accelerator: known to the catalog and a slice type of the stack
    ("v5e-spot", {"--accelerator": "v5litepod-17"}, "--accelerator",
     "'v5litepod-17' is not a TPU v5e slice; did you mean v5litepod-16 or v5litepod-32?"),
    ("v5e-spot", {"--accelerator": "h100"}, "--accelerator",
     "'h100' is not a known accelerator; did you mean h100-80gb-8?"),
    ("v5e-spot", {"--accelerator": "v5p-4x4x4"}, "--accelerator",
     "'v5p-4x4x4' (v5p-128) is not a slice type of stack 'v5e-spot'; it has: v5litepod-16"),
    ("multi", {"--accelerator": "h100-mega-80gb-8"}, "--accelerator",
     "'h100-mega-80gb-8' (h100-mega-80gb-8) is not a slice type of stack 'multi'; it has: "
     "l4-1, v5litepod-16"),
    # --pool: needed when ambiguous, must name a pool of that accelerator
    ("multi", {}, "--pool", "stack 'multi' has several v5litepod-16 pools; choose one of: "
     "v5e-spot (spot), v5e-flex (flex-start)"),
    ("multi", {"--pool": "v5e"}, "--pool", "'v5e' is not a v5litepod-16 pool of stack 'multi'; "
     "its v5litepod-16 pools: v5e-spot, v5e-flex"),
    ("multi", {"--pool": "l4"}, "--pool", "'l4' is not a v5litepod-16 pool of stack 'multi'; "
     "its v5litepod-16 pools: v5e-spot, v5e-flex"),
    ("v5e-spot", {"--pool": "v5e-flex"}, "--pool", "'v5e-flex' is not a v5litepod-16 pool of "
     "stack 'v5e-spot'; its v5litepod-16 pools: v5litepod-16"),
    # slices and nodes
    ("v5e-spot", {"--num-slices": "3"}, "--num-slices",
     "3 is more than the 2 v5litepod-16 slices pool v5litepod-16 has"),
    ("multi", {"--pool": "v5e-spot", "--num-slices": "3"}, "--num-slices",
     "3 is more than the 2 v5litepod-16 slices pool v5e-spot has"),
    ("v5e-spot", {"--num-slices": "-1"}, "--num-slices", "-1 is below 1"),
    ("v5e-spot", {"--num-nodes": "2"}, "--num-nodes",
     "applies to GPU and CPU pools; v5litepod-16 is a TPU slice: use --num-slices"),
    ("multi", {"--accelerator": "l4-1", "--num-slices": "1"}, "--num-slices",
     "applies to TPU slices; l4-1 is a GPU pool: use --num-nodes"),
    ("multi", {"--accelerator": "l4-1", "--num-nodes": "3"}, "--num-nodes",
     "3 is more than the 2 nodes pool l4 can hold"),
    ("multi", {"--accelerator": "l4-1", "--num-nodes": "-2"}, "--num-nodes", "-2 is below 1"),
    # --image, --command
    ("v5e-spot", {"--image": "Python:3.12"}, "--image", f"'Python:3.12' {MSG_IMAGE}"),
    ("v5e-spot", {"--image": "python 3.12"}, "--image", f"'python 3.12' {MSG_IMAGE}"),
    ("v5e-spot", {"--image": ""}, "--image", f"'' {MSG_IMAGE}"),
    ("v5e-spot", {"--command": ""}, "--command", "is empty"),
    ("v5e-spot", {"--command": "  \t "}, "--command", "is empty"),
    # --env, --secret-env
    # an item without '=' may be a value given without its name: it is never echoed
    ("v5e-spot", {"--env": ["A=1", "NOVALUE"]}, "--env",
     "value 2 is not KEY=VALUE (it has no '='; the value is not shown)"),
    ("v5e-spot", {"--env": ["=1"]}, "--env", "value 1 is not KEY=VALUE (nothing before '=')"),
    ("v5e-spot", {"--env": ["1X=1"]}, "--env", f"'1X' {MSG_ENV_NAME}"),
    ("v5e-spot", {"--env": ["MY VAR=1"]}, "--env", f"'MY VAR' {MSG_ENV_NAME}"),
    ("v5e-spot", {"--secret-env": ["TOKEN"]}, "--secret-env", "'TOKEN' is not NAME=SECRET/KEY"),
    ("v5e-spot", {"--secret-env": ["TOKEN=hf-token"]}, "--secret-env",
     "'TOKEN=hf-token' is not NAME=SECRET/KEY"),
    ("v5e-spot", {"--secret-env": ["TOKEN=hf-token/"]}, "--secret-env",
     "'TOKEN=hf-token/' is not NAME=SECRET/KEY"),
    ("v5e-spot", {"--secret-env": ["9TOKEN=hf-token/key"]}, "--secret-env",
     "'9TOKEN' is not a valid environment variable name"),
    ("v5e-spot", {"--secret-env": ["TOKEN=HF_Token/key"]}, "--secret-env",
     "'HF_Token' is not a Secret name (a DNS-1123 subdomain)"),
    ("v5e-spot", {"--secret-env": ["TOKEN=hf-token/my key"]}, "--secret-env",
     "'my key' is not a Secret key (letters, digits, '-', '_' and '.')"),
    # --restart-on-exit-codes
    ("v5e-spot", {"--restart-on-exit-codes": "0"}, "--restart-on-exit-codes", f"'0' {MSG_EXIT}"),
    ("v5e-spot", {"--restart-on-exit-codes": "42,256"}, "--restart-on-exit-codes",
     f"'256' {MSG_EXIT}"),
    ("v5e-spot", {"--restart-on-exit-codes": "42,oom"}, "--restart-on-exit-codes",
     f"'oom' {MSG_EXIT}"),
    ("v5e-spot", {"--restart-on-exit-codes": "42,"}, "--restart-on-exit-codes",
     f"'' {MSG_EXIT}"),
    ("v5e-spot", {"--restart-on-exit-codes": "-1"}, "--restart-on-exit-codes",
     f"'-1' {MSG_EXIT}"),
    # --priority, counts, --shm-size
    ("v5e-spot", {"--priority": "urgent"}, "--priority", "'urgent' is not a priority class of "
     "the stack; allowed: very-low, low, medium, high, very-high, or 'none'"),
    ("v5e-spot", {"--max-restarts": "-1"}, "--max-restarts", "-1 is below 0"),
    ("v5e-spot", {"--ttl": "-60"}, "--ttl", "'-60' is not a duration: give a number of "
     "seconds, or Go/kubectl syntax such as 90s, 30m, 12h or 1h30m (or 7d), or 'none' to "
     "keep the finished workload"),
    ("v5e-spot", {"--ttl": "12x"}, "--ttl", "'12x' is not a duration: give a number of "
     "seconds, or Go/kubectl syntax such as 90s, 30m, 12h or 1h30m (or 7d), or 'none' to "
     "keep the finished workload"),
    ("v5e-spot", {"--restart-on-exit-codes": "200-150"}, "--restart-on-exit-codes",
     f"'200-150' {MSG_EXIT}"),
    ("v5e-spot", {"--termination-grace-period": "-1"}, "--termination-grace-period",
     "-1 is below 0"),
    ("v5e-spot", {"--shm-size": "16GB"}, "--shm-size", "'16GB' is not a quantity such as 16Gi"),
    ("v5e-spot", {"--shm-size": "-1Gi"}, "--shm-size", "'-1Gi' is not a quantity such as 16Gi"),
    ("v5e-spot", {"--shm-size": "lots"}, "--shm-size", "'lots' is not a quantity such as 16Gi"),
    ("v5e-spot", {"--cpu": "2 cores"}, "--cpu", "'2 cores' is not a CPU quantity such as 30 or 3500m"),
    ("v5e-spot", {"--cpu": "1.5m"}, "--cpu", "'1.5m' is not a CPU quantity such as 30 or 3500m"),
    ("v5e-spot", {"--memory": "100GB"}, "--memory", "'100GB' is not a quantity such as 100Gi"),
    # above what a pod on the machine can have (infra/catalog/pod_resources.py), checked offline
    ("v5e-spot", {"--cpu": "200"}, "--cpu", "'200' is more than a pod on ct5lp-hightpu-4t can "
     "have: at most 100400m (node allocatable less 10% for DaemonSets)"),
    ("v5e-spot", {"--memory": "200Gi"}, "--memory", "'200Gi' is more than a pod on "
     "ct5lp-hightpu-4t can have: at most 155136Mi (node allocatable less 10% for DaemonSets)"),
    # --namespace without a LocalQueue of the stack; --queue not a LocalQueue there
    ("v5e-spot", {"--namespace": "default"}, "--namespace",
     "'default' has no LocalQueue in stack 'v5e-spot'; namespaces with queues: training"),
    ("v5e-spot", {"--queue": "fast"}, "--queue", "'fast' is not a LocalQueue of stack "
     "'v5e-spot' in namespace 'training'; its queues there: main"),
    ("v5e-spot", {"--namespace": "team-a", "--queue": "main"}, "--queue", "'main' is not a "
     "LocalQueue of stack 'v5e-spot' in namespace 'team-a'; its queues there: none"),
]


def _args(options: dict[str, Any]) -> list[str]:
    merged: dict[str, Any] = {"--workload": "w1", "--accelerator": "v5litepod-16",
                              "--image": "python:3.12", **options}
    out = ["create"]
    for key, value in merged.items():
        for v in value if isinstance(value, list) else [value]:
            out += [key, v]
    return out


@pytest.mark.parametrize("stack, options, option, message", INVALID,
                         ids=[f"{o}-{i}" for i, (_, _, o, _) in enumerate(INVALID)])
def test_invalid_option_exits_2_and_sends_nothing(
        stack: str, options: dict[str, Any], option: str, message: str, outputs: Path,
        multi: Path, server: FakeApiServer) -> None:
    result = run(outputs if stack == "v5e-spot" else multi, *_args(options))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == usage("create", option, message)
    assert server.state.requests == []


def test_name_at_the_pod_name_budget_is_accepted(outputs: Path) -> None:
    result = run(outputs, *_args({"--workload": A47}), "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout)["metadata"]["name"] == A47


def test_more_slices_than_the_pool_has_may_queue_on_flex_start(multi: Path) -> None:
    result = run(multi, *_args({"--pool": "v5e-flex", "--num-slices": "3"}), "--dry-run")
    assert result.exit_code == 0, result.stderr
    js = yaml.safe_load(result.stdout)
    assert js["spec"]["replicatedJobs"][0]["replicas"] == 3
    assert js["metadata"]["labels"]["accelstack.dev/slice-pool"] == "v5e-flex"


def test_a_team_namespace_and_its_queue(tmp_path: Path) -> None:
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["localQueues"].append(
        {"name": "team-a-queue", "namespace": "team-a", "clusterQueue": "team-a"})
    path = tmp_path / "teams.json"
    path.write_text(json.dumps(data))
    result = run(path, *_args({"--namespace": "team-a"}), "--dry-run")
    assert result.exit_code == 0, result.stderr
    meta = yaml.safe_load(result.stdout)["metadata"]
    assert (meta["namespace"], meta["labels"]["kueue.x-k8s.io/queue-name"]) == \
        ("team-a", "team-a-queue")
    explicit = run(path, *_args({"--namespace": "team-a", "--queue": "team-a-queue"}),
                   "--dry-run")
    assert explicit.stdout == result.stdout


@pytest.mark.parametrize("options, option", [
    ({"--num-slices": "0"}, "--num-slices"),
    ({"--accelerator": "l4-1", "--num-nodes": "0"}, "--num-nodes"),
])
def test_zero_slices_or_nodes_is_refused(options: dict[str, str], option: str, multi: Path,
                                         outputs: Path, server: FakeApiServer) -> None:
    result = run(multi if "l4-1" in options.values() else outputs, *_args(options))
    assert result.stderr == usage("create", option, "0 is below 1")
    assert result.exit_code == 2
    assert server.state.requests == []


# -- --env-file and --config-file ---------------------------------------------------------

def test_env_file_syntax_error_names_file_and_line(tmp_path: Path, outputs: Path,
                                                   server: FakeApiServer) -> None:
    env = tmp_path / "train.env"
    env.write_text("# training settings\n\nexport LR=0.1\nBATCH 32\n")
    result = run(outputs, *CREATE, "--env-file", str(env))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--env-file", f"{env}:4: not KEY=VALUE (the line "
                                  "is not shown: env files hold secrets)")
    assert server.state.requests == []


def test_env_file_bad_variable_name(tmp_path: Path, outputs: Path,
                                    server: FakeApiServer) -> None:
    env = tmp_path / "train.env"
    env.write_text("A=1\n  export 2B=2  \n")
    result = run(outputs, *CREATE, "--env-file", str(env))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--env-file", f"{env}:2: '2B' is not a valid "
                                  "environment variable name (letters, digits, '_', '-' and "
                                  "'.', not starting with a digit)")
    assert server.state.requests == []


def test_env_file_missing(tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    missing = tmp_path / "nope.env"
    result = run(outputs, *CREATE, "--env-file", str(missing))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--env-file",
                                  f"cannot read {missing}: No such file or directory")
    assert server.state.requests == []


def test_env_file_then_env_later_wins(tmp_path: Path, outputs: Path) -> None:
    env = tmp_path / "train.env"
    env.write_text("# comment\nexport LR=0.1\nNAME='run 1'\nEMPTY=\nQUOTED=\"a b\"\n")
    result = run(outputs, *CREATE, "--env-file", str(env), "--env", "LR=0.2",
                 "--secret-env", "HF_TOKEN=hf-token/token", "--dry-run")
    assert result.exit_code == 0, result.stderr
    container = yaml.safe_load(result.stdout)["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]["containers"][0]
    user_env = [e for e in container["env"]
                if e["name"] not in ("JOBSET_NAME", "REPLICATED_JOB_NAME",
                                     "JAX_COORDINATOR_ADDRESS", "JAX_COORDINATOR_PORT")]
    assert user_env == [
        {"name": "LR", "value": "0.2"},
        {"name": "NAME", "value": "run 1"},
        {"name": "EMPTY", "value": ""},
        {"name": "QUOTED", "value": "a b"},
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token",
                                                            "key": "token"}}},
    ]


def test_config_file_missing(tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    missing = tmp_path / "train.yaml"
    result = run(outputs, *CREATE, "--config-file", str(missing))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--config-file",
                                  f"cannot read {missing}: No such file or directory")
    assert server.state.requests == []


def test_config_file_is_a_directory(tmp_path: Path, outputs: Path,
                                    server: FakeApiServer) -> None:
    result = run(outputs, *CREATE, "--config-file", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--config-file", f"File '{tmp_path}' is a directory.")
    assert server.state.requests == []


def test_config_file_too_large(tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    big = tmp_path / "weights.txt"
    big.write_bytes(b"x" * (MAX_CONFIG_BYTES + 1))
    result = run(outputs, *CREATE, "--config-file", str(big))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--config-file", f"{big} is 1044481 bytes; a "
                                  "ConfigMap holds at most 1 MiB")
    assert server.state.requests == []


def test_config_file_at_the_size_limit_is_accepted(tmp_path: Path, outputs: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * MAX_CONFIG_BYTES)
    result = run(outputs, *CREATE, "--config-file", str(big), "--dry-run", "-o", "json")
    assert result.exit_code == 0, result.stderr
    cm, _ = json.loads(result.stdout)["items"]
    assert len(cm["data"]["big.txt"]) == MAX_CONFIG_BYTES


def test_config_file_not_utf8(tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    result = run(outputs, *CREATE, "--config-file", str(binary))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--config-file", f"{binary} is not UTF-8 text")
    assert server.state.requests == []


def test_config_file_name_not_a_configmap_key(tmp_path: Path, outputs: Path,
                                              server: FakeApiServer) -> None:
    cfg = tmp_path / "my config.yaml"
    cfg.write_text("lr: 0.1\n")
    result = run(outputs, *CREATE, "--config-file", str(cfg))
    assert result.exit_code == 2
    assert result.stderr == usage("create", "--config-file", "'my config.yaml' is not a valid "
                                  "ConfigMap key (letters, digits, '-', '_' and '.')")
    assert server.state.requests == []


# -- --dry-run, --export and apply ----------------------------------------------------------

def test_dry_run_yaml_equals_render(tmp_path: Path, outputs: Path,
                                    server: FakeApiServer) -> None:
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\nsteps: 1000\n")
    result = run(outputs, *CREATE, "--num-slices", "2", "--command", "python train.py",
                 "--env", "LR=0.1", "--priority", "high", "--max-restarts", "3",
                 "--restart-on-exit-codes", "42,43", "--ttl", "3600",
                 "--termination-grace-period", "30", "--config-file", str(cfg),
                 "--shm-size", "16Gi", "--dry-run")
    assert (result.exit_code, result.stderr) == (0, "")
    assert yaml.safe_load(result.stdout)["items"] == expected_objects(
        num_slices=2, command="python train.py", env=("LR=0.1",), priority="high",
        max_restarts=3, restart_on_exit_codes="42,43", ttl=3600, termination_grace_period=30,
        config_file=str(cfg), shm_size="16Gi")
    assert result.stdout.startswith("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n"
                                    "  kind: ConfigMap\n")
    assert "\n- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n" in result.stdout
    assert server.state.requests == []


def test_dry_run_json_one_object(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, *CREATE, "--dry-run", "-o", "json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == expected_objects()[0]
    assert server.state.requests == []


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_several_objects_are_one_kubernetes_list(tmp_path: Path, outputs: Path,
                                                 fmt: str) -> None:
    """Several objects print as a `List` (as `kubectl get -o` does) in both formats; one
    object prints as itself."""
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\n")
    result = run(outputs, *CREATE, "--config-file", str(cfg), "--dry-run", "-o", fmt)
    assert result.exit_code == 0
    assert yaml.safe_load(result.stdout) == {"apiVersion": "v1", "kind": "List",
                                             "items": expected_objects(config_file=str(cfg))}
    single = run(outputs, *CREATE, "--dry-run", "-o", fmt)
    assert yaml.safe_load(single.stdout) == expected_objects()[0]


def test_dry_run_needs_no_cluster(tmp_path: Path, server: FakeApiServer) -> None:
    # An offline preview's outputs mask the kubeconfig; rendering must not need it.
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["kubeconfig"] = "[secret]"
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(data))
    result = run(path, *CREATE, "--dry-run")
    assert result.exit_code == 0
    assert list(yaml.safe_load_all(result.stdout)) == expected_objects()


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_then_apply(fmt: str, tmp_path: Path, outputs: Path,
                           server: FakeApiServer) -> None:
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\n")
    export = tmp_path / f"w1.{fmt}"
    created = run(outputs, *CREATE, "--config-file", str(cfg), "--export", str(export),
                  "--dry-run", "-o", fmt)
    assert created.exit_code == 0
    assert server.state.requests == []
    objs = expected_objects(config_file=str(cfg))
    text = export.read_text()
    assert (json.loads(text) if fmt == "json" else yaml.safe_load(text))["items"] == objs

    applied = run(outputs, "apply", str(export))
    assert (applied.exit_code, applied.stdout) == (0, "")
    assert applied.stderr.startswith(SUBMITTED.format("w1"))
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config"),
                             ("PATCH", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config")]
    assert without_uid(server.state.jobsets[(NS, "w1")]) == objs[1]


def test_export_writes_the_file_and_applies_nothing(tmp_path: Path, outputs: Path,
                                                    server: FakeApiServer) -> None:
    export = tmp_path / "w1.yaml"
    result = run(outputs, *CREATE, "--export", str(export))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == (f"wrote {export}; apply it with `submit workload apply "
                             f"{export}`\n")
    assert list(yaml.safe_load_all(export.read_text())) == expected_objects()
    assert server.state.requests == []


def _bad_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ("", "must hold one JobSet (and optionally its ConfigMap), not []"),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
     "must hold one JobSet (and optionally its ConfigMap), not ['Deployment']"),
    ("kind: JobSet\n---\nkind: JobSet\n",
     "must hold one JobSet (and optionally its ConfigMap), not ['JobSet', 'JobSet']"),
    ("kind: ConfigMap\n", "must hold one JobSet (and optionally its ConfigMap), not "
     "['ConfigMap']"),
    ("- kind: JobSet\n- kind: Secret\n",
     "must hold one JobSet (and optionally its ConfigMap), not [None]"),
    ('[{"kind": "JobSet"}, {"kind": "Secret"}]',
     "must hold one JobSet (and optionally its ConfigMap), not ['JobSet', 'Secret']"),
    ("just text\n", "must hold one JobSet (and optionally its ConfigMap), not [None]"),
])
def test_apply_of_a_bad_file_exits_2(text: str, message: str, tmp_path: Path, outputs: Path,
                                     server: FakeApiServer) -> None:
    path = _bad_file(tmp_path, text)
    result = run(outputs, "apply", str(path))
    assert result.exit_code == 2
    assert result.stderr == usage("apply", "FILE", f"{path} {message}", "[OPTIONS] FILE")
    assert server.state.requests == []


@pytest.mark.parametrize("text, where", [
    ("kind: [JobSet\n", ":2: not YAML or JSON: expected ',' or ']', but got '<stream end>'"),
    ("{", ":1: not YAML or JSON: Expecting property name enclosed in double quotes"),
])
def test_apply_of_a_file_that_is_not_yaml(text: str, where: str, tmp_path: Path,
                                          outputs: Path, server: FakeApiServer) -> None:
    # FILE:LINE, as create-group and experiment create say it of their files (issue 42).
    path = _bad_file(tmp_path, text)
    result = run(outputs, "apply", str(path))
    assert result.exit_code == 2
    assert result.stderr == usage("apply", "FILE", f"{path}{where}", "[OPTIONS] FILE")
    assert server.state.requests == []


def test_apply_and_create_group_give_a_position_alike(tmp_path: Path, outputs: Path) -> None:
    path = _bad_file(tmp_path, "name: g\nroles: [a\n")
    said = [run(outputs, command, str(path)).stderr.splitlines()[-1]
            for command in ("apply", "create-group")]
    assert [line.split(": not YAML")[0] for line in said] == [
        f"Error: Invalid value for 'FILE': {path}:3"] * 2, said


def test_apply_of_a_missing_file(tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "apply", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2
    assert result.stderr == usage("apply", "FILE", f"File '{tmp_path / 'nope.yaml'}' does not "
                                  "exist.", "[OPTIONS] FILE")
    assert server.state.requests == []


def test_apply_of_a_jobset_without_namespace_exits_2(tmp_path: Path, outputs: Path,
                                                     server: FakeApiServer) -> None:
    # Regression: this used to crash with KeyError('namespace').
    path = _bad_file(tmp_path, "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
                               "metadata:\n  name: w1\n")
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "apply",
                                       str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2
    assert (f"Invalid value for 'FILE': {path}: the JobSet has no metadata.namespace, "
            "metadata.labels.kueue.x-k8s.io/queue-name; apply files written by `submit "
            "workload create --export`") in " ".join(result.stderr.split())
    assert server.state.requests == []


def test_apply_of_a_jobset_without_labels_exits_2(tmp_path: Path, outputs: Path,
                                                  server: FakeApiServer) -> None:
    path = _bad_file(tmp_path, "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
                               "metadata:\n  name: w1\n  namespace: training\n")
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "apply",
                                       str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2
    assert server.state.requests == []


# -- where the outputs come from ------------------------------------------------------------

NO_STACK = ("Error: no stack given: pass --stack NAME (or set ACCELSTACK_STACK) or --outputs "
            "FILE (or set ACCELSTACK_OUTPUTS)\n")


def usage_error(command: str, message: str) -> str:
    args = {"apply": "[OPTIONS] FILE", "describe": "[OPTIONS] NAME", "logs": "[OPTIONS] NAME",
            "wait": "[OPTIONS] NAME", "delete": "[OPTIONS] [NAMES]..."}.get(command, "[OPTIONS]")
    return (f"Usage: main workload {command} {args}\n"
            f"Try 'main workload {command} --help' for help.\n\n{message}")


@pytest.mark.parametrize("args", [CREATE, ["list"], ["describe", "w1"], ["delete", "w1"],
                                  ["wait", "w1"], ["logs", "w1"], ["apply", "FILE"]])
def test_no_stack_and_no_outputs(args: list[str], tmp_path: Path) -> None:
    manifest = tmp_path / "w1.yaml"
    manifest.write_text(yaml.safe_dump_all(expected_objects()))
    result = run(None, *[str(manifest) if a == "FILE" else a for a in args])
    # docs/submitting.md promises exit 2 for a bad or missing option.
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", usage_error(args[0], NO_STACK))


def test_outputs_from_the_environment(outputs: Path, server: FakeApiServer,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELSTACK_OUTPUTS", str(outputs))
    result = run(None, *CREATE)
    assert result.exit_code == 0 and result.stderr.startswith(SUBMITTED.format("w1"))
    assert (NS, "w1") in server.state.jobsets


def test_unreadable_outputs_file(tmp_path: Path) -> None:
    result = run(tmp_path / "nope.json", "list")
    assert result.exit_code == 2
    nope = tmp_path / "nope.json"
    assert result.stderr == usage_error("list", "Error: Invalid value for '--outputs': no "
                                        f"outputs file {nope}; write one offline with "
                                        f"`accelstack-preview STACK --quiet --outputs {nope}`, "
                                        "or from a deployed stack with `pulumi stack output "
                                        f"--json --show-secrets > {nope}`\n")


def test_outputs_of_a_preview_cannot_reach_a_cluster(tmp_path: Path) -> None:
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["kubeconfig"] = "[secret]"
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(data))
    result = run(path, "list")
    assert result.exit_code == 1
    assert result.stderr == ("Error: the stack's outputs hold no usable kubeconfig (an offline "
                             "preview has none: run `pulumi up` first, then read the stack's "
                             "outputs)\n")


def test_missing_auth_plugin(tmp_path: Path, server: FakeApiServer,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = stacks.write_outputs(tmp_path / "out.json", "v5e-spot",
                                server.kubeconfig(exec_command="gke-gcloud-auth-plugin"))
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run(path, *CREATE)
    assert result.exit_code == 1
    assert result.stderr == ("Error: gke-gcloud-auth-plugin is not on PATH; the kubeconfig needs "
                             "it to authenticate (gcloud components install "
                             "gke-gcloud-auth-plugin)\n")
    assert server.state.requests == []


def test_wrong_token(tmp_path: Path, server: FakeApiServer) -> None:
    path = stacks.write_outputs(tmp_path / "out.json", "v5e-spot", server.kubeconfig("stale"))
    result = run(path, *CREATE)
    assert result.exit_code == 1
    assert result.stderr == ("Error: get JobSet training/w1: not authenticated (Unauthorized); "
                             "run `gcloud auth login` and check the stack's kubeconfig\n")
    assert calls(server) == [("GET", f"{JOBSETS}/w1")]


# -- create against the cluster -------------------------------------------------------------

def test_create_applies_exactly_the_jobset(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, *CREATE, "--command", "python train.py")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.startswith(SUBMITTED.format("w1"))
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("PATCH", f"{JOBSETS}/w1")]
    patch = server.state.requests[1]
    assert patch.query == JOBSET_APPLY_QUERY
    assert header(patch, "Content-Type") == "application/apply-patch+yaml"
    [js] = expected_objects(command="python train.py")
    assert without_uid(patch.body) == js
    assert server.state.configmaps == {}


def test_create_with_config_file_applies_the_config_map_then_owns_it(
        tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\n")
    result = run(outputs, *CREATE, "--config-file", str(cfg))
    assert result.exit_code == 0 and result.stderr.startswith(SUBMITTED.format("w1"))
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config"),
                             ("PATCH", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config")]
    cm, js = expected_objects(config_file=str(cfg))
    first, jobset_patch, second = server.state.requests[1:]
    for req in (first, jobset_patch, second):
        assert header(req, "Content-Type") == "application/apply-patch+yaml"
    assert first.query == second.query == APPLY_QUERY
    assert jobset_patch.query == JOBSET_APPLY_QUERY
    assert first.body == cm
    assert without_uid(jobset_patch.body) == js
    owned = json.loads(json.dumps(cm))
    owned["metadata"]["ownerReferences"] = [{
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "w1",
        "uid": "uid-w1", "blockOwnerDeletion": False}]
    assert second.body == owned
    assert without_uid(server.state.configmaps[(NS, "w1-config")]) == owned


def test_create_existing_workload_exits_1_and_applies_nothing(
        outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1")
    result = run(outputs, *CREATE)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("Error: workload w1 already exists in namespace training; delete it "
                             "with `submit workload delete w1`, or pass --replace to delete and "
                             "recreate it\n")
    assert calls(server) == [("GET", f"{JOBSETS}/w1")]


def test_create_replace_deletes_then_applies(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1", uid="old-uid")
    result = run(outputs, *CREATE, "--replace")
    assert result.exit_code == 0 and SUBMITTED.format("w1") in result.stderr
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("DELETE", f"{JOBSETS}/w1"),
                             ("GET", f"{JOBSETS}/w1"), ("PATCH", f"{JOBSETS}/w1")]
    assert server.state.requests[1].query == {"propagationPolicy": ["Foreground"]}
    assert without_uid(server.state.jobsets[(NS, "w1")]) == expected_objects()[0]


def test_create_rejected_by_a_webhook(outputs: Path, server: FakeApiServer) -> None:
    from fake_apiserver import Fault
    msg = ('admission webhook "vjobset.kb.io" denied the request: spec.replicatedJobs[0].name: '
           'Invalid value')
    server.state.faults += [Fault(0), Fault(422, msg, reason="Invalid")]  # the GET passes
    result = run(outputs, *CREATE)
    assert result.exit_code == 1
    assert result.stderr == f"Error: apply JobSet training/w1: rejected by the cluster: {msg}\n"


# -- list, describe, logs -------------------------------------------------------------------

def _preload_list(server: FakeApiServer) -> None:
    st = server.state
    st.jobsets[(NS, "train-a")] = jobset(
        "train-a", active=2, restarts=2, created=stamp(150),
        conditions=[cond("Suspended", "False", "ResumeJobs")])
    st.jobsets[(NS, "train-b")] = jobset(
        "train-b", created=stamp(150), replicas=1,
        conditions=[cond("Suspended", "True", "SuspendedJobs")])
    st.jobsets[(NS, "train-c")] = jobset("train-c", replicas=1,
                                         conditions=[cond("Completed")])
    st.jobsets[(NS, "other")] = jobset("other", managed=False)
    st.jobsets[("elsewhere", "train-d")] = jobset("train-d")
    st.workloads[NS] = [
        kueue_workload("train-a", ("QuotaReserved", "True", "QuotaReserved", ""),
                       ("Admitted", "True", "Admitted", "")),
        kueue_workload("train-b", ("QuotaReserved", "False", "Pending",
                                   "couldn't assign flavors")),
    ]


def test_list_table(outputs: Path, server: FakeApiServer) -> None:
    _preload_list(server)
    result = run(outputs, "list")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "NAME     ACCELERATOR   SLICES  SOURCE  ADMISSION  STATE      RESTARTS  AGE\n"
        "train-a  v5litepod-16  2       spot    Admitted   Running    2         2m\n"
        "train-b  v5litepod-16  1       spot    Pending    Suspended  0         2m\n"
        "train-c  v5litepod-16  1       spot    NotQueued  Completed  0         -\n"
    )
    # The Kueue workloads first (an index by owner), then the JobSets, a page at a time.
    [wls, lst] = server.state.requests
    assert (lst.path, lst.query) == (JOBSETS, {"labelSelector": [
        "app.kubernetes.io/managed-by=accelstack"], **PAGE})
    assert (wls.path, wls.query) == (f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads",
                                     PAGE)


def test_list_json(outputs: Path, server: FakeApiServer) -> None:
    _preload_list(server)
    result = run(outputs, "list", "-o", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [
        {"name": "train-a", "accelerator": "v5litepod-16", "slices": 2, "admission": "Admitted",
         "state": "Running", "restarts": 2, "age": "2m", "source": "spot"},
        {"name": "train-b", "accelerator": "v5litepod-16", "slices": 1, "admission": "Pending",
         "state": "Suspended", "restarts": 0, "age": "2m", "source": "spot"},
        {"name": "train-c", "accelerator": "v5litepod-16", "slices": 1,
         "admission": "NotQueued", "state": "Completed", "restarts": 0, "age": None,
         "source": "spot"},
    ]
    yaml_result = run(outputs, "list", "-o", "yaml", "--namespace", "elsewhere")
    assert yaml.safe_load(yaml_result.stdout)[0]["name"] == "train-d"


def test_list_empty(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "list")
    assert (result.exit_code, result.stdout) == (
        0, "NAME  ACCELERATOR  SLICES  SOURCE  ADMISSION  STATE  RESTARTS  AGE\n")


def test_describe(outputs: Path, server: FakeApiServer) -> None:
    _describe_state(server)
    _test_describe_text(outputs, server)


def _describe_state(server: FakeApiServer) -> None:
    st = server.state
    st.jobsets[(NS, "w1")] = jobset("w1", active=1, conditions=[
        cond("Suspended", "False", "ResumeJobs", "jobset is resumed")])
    st.jobsets[(NS, "w1")]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    st.workloads[NS] = [kueue_workload(
        "w1", ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue "
               "cluster-queue"), ("Admitted", "True", "Admitted", "The workload is admitted"))]
    pending = pod("w1-slice-1-0-zz", "w1", 1, 0, stamp(60), phase="Pending", node="")
    pending["status"]["conditions"] = [cond("PodScheduled", "False", "Unschedulable",
                                            "0/6 nodes are available")]
    st.pods[NS] = [pod("w1-slice-0-1-aa", "w1", 0, 1, stamp(60), node="gke-v5e-0-b"),
                   pod("w1-slice-0-0-aa", "w1", 0, 0, stamp(60), node="gke-v5e-0-a"),
                   pending, pod("w2-slice-0-0-aa", "w2", 0, 0, stamp(60))]
    st.events[NS] = [
        {"metadata": {"name": "jobset-w1-1a2b3.1", "namespace": NS},
         "type": "Normal", "reason": "Admitted", "lastTimestamp": stamp(1800),
         "message": "Admitted by ClusterQueue cluster-queue",
         "involvedObject": {"kind": "Workload", "name": "jobset-w1-1a2b3"}},
        {"metadata": {"name": "w1.1", "namespace": NS},
         "type": "Normal", "reason": "SuccessfulCreate", "lastTimestamp": stamp(3600),
         "message": "Created job w1-slice-0",
         "involvedObject": {"kind": "JobSet", "name": "w1"}},
        {"metadata": {"name": "w2.1", "namespace": NS},
         "type": "Normal", "reason": "SuccessfulCreate", "lastTimestamp": stamp(60),
         "message": "Created job w2-slice-0",
         "involvedObject": {"kind": "JobSet", "name": "w2"}},
    ]


# The Cloud Console links of w1 on the v5e-spot example stack (docs/diagnostics.md).
LOGS_LINK = (
    "https://console.cloud.google.com/logs/query;query=resource.type%3D%22k8s_container%22"
    "%0Aresource.labels.project_id%3D%22my-ml-project%22%0Aresource.labels.location%3D%22"
    "us-west4%22%0Aresource.labels.cluster_name%3D%22v5e-spot%22%0Aresource.labels."
    "namespace_name%3D%22training%22%0Aresource.labels.pod_name%3D~%22%5Ew1-%5Ba-z0-9-%5D"
    "%2B%24%22?project=my-ml-project")
WORKLOAD_LINK = ("https://console.cloud.google.com/kubernetes/service/us-west4/v5e-spot/"
                 "training/w1/details?project=my-ml-project")
# The stack's dashboard narrowed to the workload (docs/observability.md).
DASHBOARD_LINK = ("https://console.cloud.google.com/monitoring/dashboards/builder/observability-"
                  "dashboard;filters=type:rlabel,key:namespace_name,val:training%2B"
                  "type:mlabel,key:top_level_controller_name,val:w1?project=my-ml-project")


def _test_describe_text(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "describe", "w1")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "Name:         w1\n"
        "Namespace:    training\n"
        "Accelerator:  v5litepod-16 (pool v5litepod-16)\n"
        "Queue:        main\n"
        "Priority:     high\n"
        "State:        Running (restarts 0)\n"
        "Admission:    Admitted\n"
        "Kueue conditions:\n"
        "  QuotaReserved=True QuotaReserved: Quota reserved in ClusterQueue cluster-queue\n"
        "  Admitted=True Admitted: The workload is admitted\n"
        "Pods:\n"
        "  slice 0 worker 0: w1-slice-0-0-aa Running on gke-v5e-0-a\n"
        "  slice 0 worker 1: w1-slice-0-1-aa Running on gke-v5e-0-b\n"
        "  slice 1 worker 0: w1-slice-1-0-zz Pending on - (Unschedulable: 0/6 nodes are "
        "available)\n"
        "Events:\n"
        "    60m Normal SuccessfulCreate JobSet: Created job w1-slice-0\n"
        "    30m Normal Admitted Workload: Admitted by ClusterQueue cluster-queue\n"
        "Links:\n"
        f"  logs:      {LOGS_LINK}\n"
        f"  workload:  {WORKLOAD_LINK}\n"
        f"  dashboard: {DASHBOARD_LINK}\n"
        "Admission checks:\n"
        "  none\n"
        "Queue position: not known: Kueue's visibility API did not answer (not served, or "
        "your account may not get localqueues/pendingworkloads)\n"
        "Pod scheduling events:\n"
        "  none\n"
        "Verdict: admitted: pods are starting or running\n"
    )
    assert [(r.path, r.query) for r in server.state.requests][:6] == [
        (f"{JOBSETS}/w1", {}),
        (f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads", PAGE),
        (f"/api/v1/namespaces/{NS}/pods", {"labelSelector": [
            "jobset.sigs.k8s.io/jobset-name=w1"], **PAGE}),
        (f"/api/v1/namespaces/{NS}/events", {"fieldSelector": [
            "involvedObject.kind=JobSet,involvedObject.name=w1"], **PAGE}),
        (f"/api/v1/namespaces/{NS}/events", {"fieldSelector": [
            "involvedObject.kind=Workload,involvedObject.name=jobset-w1-1a2b3"], **PAGE}),
        ("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/training/localqueues/main/"
         "pendingworkloads", {}),
    ]


def test_describe_as_data(outputs: Path, server: FakeApiServer) -> None:
    # The documented shape (submit/state/describe_data.py), pinned: fields are only added.
    _describe_state(server)
    events = server.state.events[NS]
    result = run(outputs, "describe", "w1", "-o", "json")
    assert (result.exit_code, result.stderr) == (0, "")
    data = json.loads(result.stdout)
    assert data == {
        "name": "w1", "namespace": "training", "accelerator": "v5litepod-16",
        "pool": "v5litepod-16", "queue": "main", "priority": "high", "state": "Running",
        "restarts": 0, "admission": "Admitted",
        "kueueConditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
             "message": "Quota reserved in ClusterQueue cluster-queue"},
            {"type": "Admitted", "status": "True", "reason": "Admitted",
             "message": "The workload is admitted"}],
        "jobsetConditions": [],
        "pods": [
            {"slice": 0, "worker": 0, "name": "w1-slice-0-0-aa", "phase": "Running",
             "node": "gke-v5e-0-a", "unschedulable": None},
            {"slice": 0, "worker": 1, "name": "w1-slice-0-1-aa", "phase": "Running",
             "node": "gke-v5e-0-b", "unschedulable": None},
            {"slice": 1, "worker": 0, "name": "w1-slice-1-0-zz", "phase": "Pending",
             "node": "", "unschedulable": "Unschedulable: 0/6 nodes are available"}],
        "events": [
            {"time": _iso(events[1]["lastTimestamp"]), "type": "Normal", "reason": "SuccessfulCreate",
             "kind": "JobSet", "message": "Created job w1-slice-0"},
            {"time": _iso(events[0]["lastTimestamp"]), "type": "Normal", "reason": "Admitted",
             "kind": "Workload",
             "message": "Admitted by ClusterQueue cluster-queue"}],
        "admissionChecks": [], "queuePosition": None, "queuePositionKnown": False,
        "schedulingEvents": [], "verdict": "admitted: pods are starting or running",
        "diagnostics": {"stackTraces": None, "xlaDump": None, "debugLogs": False,
                        "tensorboard": None},
        "links": {"logs": LOGS_LINK, "workload": WORKLOAD_LINK, "stores": [],
                  "dashboard": DASHBOARD_LINK}}
    as_yaml = run(outputs, "describe", "w1", "-o", "yaml")
    assert yaml.safe_load(as_yaml.stdout) == data


def _iso(stamp_: str) -> str:
    """A timestamp as the Kubernetes client hands it back (RFC 3339, offset +00:00)."""
    import datetime as dt

    return dt.datetime.fromisoformat(stamp_.replace("Z", "+00:00")).isoformat()


def test_describe_missing(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "describe", "nope")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: workload nope not found in namespace training\n"


def _preload_logs(server: FakeApiServer) -> None:
    st = server.state
    st.pods[NS] = [
        pod("w1-slice-0-0-aa", "w1", 0, 0, "2026-01-01T00:00:00Z"),
        pod("w1-slice-1-0-new", "w1", 1, 0, "2026-01-01T00:05:00Z"),
        pod("w1-slice-1-0-old", "w1", 1, 0, "2026-01-01T00:01:00Z", phase="Failed"),
        pod("w1-slice-1-1-aa", "w1", 1, 1, "2026-01-01T00:05:00Z"),
    ]
    st.logs[(NS, "w1-slice-0-0-aa")] = ["slice 0 worker 0 up"]
    st.logs[(NS, "w1-slice-1-0-new")] = ["step 1 loss=2.31", "step 2 loss=2.05"]
    st.logs[(NS, "w1-slice-1-0-old")] = ["before the restart"]
    st.logs[(NS, "w1-slice-1-1-aa")] = ["slice 1 worker 1 up"]


def test_logs_default_slice_0_worker_0(outputs: Path, server: FakeApiServer) -> None:
    _preload_logs(server)
    result = run(outputs, "logs", "w1")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "slice 0 worker 0 up\n", "")


def test_logs_pick_the_newest_pod_of_the_slice_and_worker(outputs: Path,
                                                          server: FakeApiServer) -> None:
    _preload_logs(server)
    result = run(outputs, "logs", "w1", "--slice", "1", "--tail", "50")
    assert (result.exit_code, result.stdout) == (0, "step 1 loss=2.31\nstep 2 loss=2.05\n")
    pods, log = server.state.requests
    assert pods.query == {"labelSelector": ["jobset.sigs.k8s.io/jobset-name=w1"], **PAGE}
    assert log.path == f"/api/v1/namespaces/{NS}/pods/w1-slice-1-0-new/log"
    assert log.query == {"container": ["main"], "follow": ["false"], "tailLines": ["50"]}

    worker = run(outputs, "logs", "w1", "--slice", "1", "--worker", "1", "--follow")
    assert (worker.exit_code, worker.stdout) == (0, "slice 1 worker 1 up\n")
    assert server.state.requests[-1].query["follow"] == ["true"]


def _shaped(name: str, slices: int, workers: int) -> dict[str, Any]:
    js = jobset(name, replicas=slices)
    js["spec"]["replicatedJobs"][0]["template"] = {"spec": {"parallelism": workers}}
    return js


def test_logs_no_such_pod(outputs: Path, server: FakeApiServer) -> None:
    _preload_logs(server)
    server.state.jobsets[(NS, "w1")] = _shaped("w1", 2, 4)
    result = run(outputs, "logs", "w1", "--slice", "1", "--worker", "2")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("Error: no pod for slice 1, worker 2 of workload w1 in training "
                             "(4 pods exist; it may still be queued: see `submit workload "
                             "describe w1`)\n")


def test_logs_of_a_missing_workload(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "logs", "w1")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: workload w1 not found in namespace training\n"
    assert calls(server) == [("GET", f"/api/v1/namespaces/{NS}/pods"), ("GET", f"{JOBSETS}/w1")]


@pytest.mark.parametrize("args, option, message", [
    # v5e-spot: 2 slices of 4 VMs; the stack bounds every workload before the cluster is asked
    (["--slice", "2"], "--slice", "2 is not within 0 to 1: the largest workload this stack "
     "can run has 2 slices"),
    (["--worker", "4"], "--worker", "4 is not within 0 to 3: the largest workload this stack "
     "can run has 4 workers per slice"),
    (["--slice", "-1"], "--slice", "-1 is below 0 (indices count from 0)"),
    (["--worker", "-1"], "--worker", "-1 is below 0 (indices count from 0)"),
    (["--tail", "0"], "--tail", "0 is below 1"),
])
def test_logs_indices_beyond_the_stack_exit_2_before_the_cluster(
        args: list[str], option: str, message: str, outputs: Path,
        server: FakeApiServer) -> None:
    _preload_logs(server)
    result = run(outputs, "logs", "w1", *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == usage("logs", option, message, "[OPTIONS] NAME")
    assert server.state.requests == []


def test_logs_index_beyond_the_workload_exits_2(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = _shaped("w1", 1, 4)
    result = run(outputs, "logs", "w1", "--slice", "1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == usage("logs", "--slice", "1 is not within 0 to 0: workload w1 has "
                                  "1 slice", "[OPTIONS] NAME")
    assert [r.method for r in server.state.requests] == ["GET", "GET"]


def test_logs_of_a_pod_gone_meanwhile(outputs: Path, server: FakeApiServer) -> None:
    _preload_logs(server)
    del server.state.logs[(NS, "w1-slice-0-0-aa")]
    result = run(outputs, "logs", "w1")
    assert result.exit_code == 1
    assert result.stderr == ('Error: logs of training/w1-slice-0-0-aa: not found (pods '
                             '"w1-slice-0-0-aa" not found)\n')


def test_logs_follow_of_a_pod_gone_meanwhile(outputs: Path, server: FakeApiServer) -> None:
    _preload_logs(server)
    del server.state.logs[(NS, "w1-slice-0-0-aa")]
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "logs", "w1",
                                       "--follow"])
    assert result.exit_code == 1
    assert result.stderr == ('Error: logs of training/w1-slice-0-0-aa: not found (pods '
                             '"w1-slice-0-0-aa" not found)\n')


# -- wait -----------------------------------------------------------------------------------

PROGRESS = re.compile(r"^\d\d:\d\d:\d\d w1: admission=(\w+) state=(\w+) restarts=(\d+)$")


def _progress(stderr: str) -> list[tuple[str, ...]]:
    lines = stderr.splitlines()
    matches = [PROGRESS.match(line) for line in lines]
    assert all(matches), lines
    return [m.groups() for m in matches if m]


def test_wait_completed_exits_0(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1", conditions=[cond("Completed")])
    server.state.workloads[NS] = [kueue_workload("w1", ("Finished", "True", "JobFinished", ""))]
    result = run(outputs, "wait", "w1", "--interval", "0.05", "--timeout", "5")
    assert (result.exit_code, result.stdout) == (0, "workload w1 succeeded\n")
    assert _progress(result.stderr) == [("Finished", "Completed", "0")]


def test_wait_follows_changes_until_completed(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1", active=2)
    server.state.workloads[NS] = [kueue_workload("w1", ("Admitted", "True", "Admitted", ""))]

    def finish() -> None:
        done = jobset("w1", conditions=[cond("Completed")], restarts=1)
        server.state.jobsets[(NS, "w1")] = done

    timer = threading.Timer(0.3, finish)
    timer.start()
    try:
        result = run(outputs, "wait", "w1", "--interval", "0.05", "--timeout", "5")
    finally:
        timer.cancel()
    assert (result.exit_code, result.stdout) == (0, "workload w1 succeeded\n")
    assert _progress(result.stderr) == [("Admitted", "Running", "0"),
                                        ("Admitted", "Completed", "1")]
    # Not polled: one list, then a watch from its resourceVersion carries the change.
    kueue = ("GET", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads")
    assert calls(server) == [("GET", JOBSETS), kueue, ("GET", JOBSETS), kueue]
    listing, watching = server.state.requests[0].query, server.state.requests[2].query
    assert listing["fieldSelector"] == watching["fieldSelector"] == ["metadata.name=w1"]
    assert "watch" not in listing and watching["watch"] == ["true"]
    assert watching["resourceVersion"] == ["1"] and watching["timeoutSeconds"] == ["1"]


def _finish_at_second_watch(server: FakeApiServer, name: str = "w1") -> threading.Thread:
    """Completes NAME once the second watch has started (the first one expired)."""
    def run() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if sum(r.query.get("watch") == ["true"] for r in list(server.state.requests)) >= 2:
                time.sleep(0.1)
                server.state.jobsets[(NS, name)] = jobset(name, conditions=[cond("Completed")])
                return
            time.sleep(0.01)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_wait_lists_again_when_the_watch_expires(outputs: Path, server: FakeApiServer) -> None:
    """410 Gone (the resourceVersion is too old), as an event or as the answer: list again
    and watch from the new version."""
    from fake_apiserver import Fault

    server.state.jobsets[(NS, "w1")] = jobset("w1", active=2)
    server.state.expire = 1  # the first watch answers with an ERROR event, code 410
    _finish_at_second_watch(server)
    result = run(outputs, "wait", "w1", "--interval", "30s", "--timeout", "8")
    assert (result.exit_code, result.stdout) == (0, "workload w1 succeeded\n")
    jobsets = [r.query for r in server.state.requests if r.path == JOBSETS]
    assert [(q.get("watch"), q.get("resourceVersion")) for q in jobsets] == [
        (None, None), (["true"], ["1"]), (None, None), (["true"], ["2"])]
    assert jobsets[1]["timeoutSeconds"] == ["8"]  # --interval, within the --timeout
    assert _progress(result.stderr) == [("NotQueued", "Running", "0"),
                                        ("NotQueued", "Completed", "0")]

    server.state.requests.clear()
    # Another workload: the first run's last watch streams on (until its timeout) and would
    # bump the revision if w1 changed under it.
    server.state.jobsets[(NS, "w2")] = jobset("w2", active=2)
    # the first watch's answer is a 410 Status itself
    server.state.faults += [Fault(0), Fault(0), Fault(410, "too old resource version",
                                                       reason="Expired")]
    _finish_at_second_watch(server, "w2")
    result = run(outputs, "wait", "w2", "--interval", "30s", "--timeout", "8")
    assert (result.exit_code, result.stdout) == (0, "workload w2 succeeded\n")
    jobsets = [r.query for r in server.state.requests if r.path == JOBSETS]
    assert [(q.get("watch"), q.get("resourceVersion")) for q in jobsets] == [
        (None, None), (["true"], ["4"]), (None, None), (["true"], ["5"])]


def test_wait_failed_exits_3(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1", restarts=3, conditions=[
        cond("Failed", "True", "FailedJobs", "jobset failed due to job w1-slice-0 failing")])
    result = run(outputs, "wait", "w1", "--interval", "0.05", "--timeout", "5")
    assert result.exit_code == 3
    assert result.stdout == ("workload w1 failed: FailedJobs: jobset failed due to job "
                             "w1-slice-0 failing\n")
    assert _progress(result.stderr) == [("NotQueued", "Failed", "3")]


def test_wait_timeout_exits_4(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1", active=2)
    start = time.monotonic()
    result = run(outputs, "wait", "w1", "--interval", "0.05", "--timeout", "1")
    assert 1.0 <= time.monotonic() - start < 3.0
    assert (result.exit_code, result.stdout) == (4, "workload w1 still Running after 1s\n")
    assert _progress(result.stderr) == [("NotQueued", "Running", "0")]
    # One list, then a watch bounded by the time left (whole seconds, at least 1).
    assert [r.query.get("timeoutSeconds") for r in server.state.requests
            if r.path == JOBSETS] == [None, ["1"]]


def test_wait_for_a_missing_workload(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "wait", "nope", "--interval", "0.05", "--timeout", "1")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: workload nope not found in namespace training\n"


# -- delete ---------------------------------------------------------------------------------

def test_delete_one(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "w1")] = jobset("w1")
    server.state.jobsets[(NS, "w2")] = jobset("w2")
    result = run(outputs, "delete", "w1")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "deleted workload w1\n", "")
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("DELETE", f"{JOBSETS}/w1")]
    assert server.state.requests[1].query == {"propagationPolicy": ["Foreground"]}
    assert list(server.state.jobsets) == [(NS, "w2")]


def test_delete_several_one_missing(outputs: Path, server: FakeApiServer) -> None:
    server.state.jobsets[(NS, "a")] = jobset("a")
    server.state.jobsets[(NS, "b")] = jobset("b")
    result = run(outputs, "delete", "a", "nope", "b")
    assert result.exit_code == 1
    assert result.stdout == "deleted workload a\ndeleted workload b\n"
    assert result.stderr == "Error: not found in namespace training: nope\n"
    assert server.state.jobsets == {}
    assert [m for m, _ in calls(server)] == ["GET", "DELETE", "GET", "GET", "DELETE"]


def test_delete_all_confirmed(outputs: Path, server: FakeApiServer) -> None:
    _preload_list(server)
    result = run(outputs, "delete", "--all", input="y\n")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == ("delete 3 workloads in training (train-a, train-b, train-c)? "
                             "[y/N]: y\n"
                             "deleted workload train-a\ndeleted workload train-b\n"
                             "deleted workload train-c\n")
    assert sorted(server.state.jobsets) == [("elsewhere", "train-d"), (NS, "other")]


def test_delete_all_declined(outputs: Path, server: FakeApiServer) -> None:
    _preload_list(server)
    result = run(outputs, "delete", "--all", input="n\n")
    assert result.exit_code == 1
    assert result.stdout == ("delete 3 workloads in training (train-a, train-b, train-c)? "
                             "[y/N]: n\n")
    assert result.stderr == "Aborted!\n"
    assert len(server.state.jobsets) == 5
    assert calls(server) == [("GET", JOBSETS)]


def test_delete_all_yes(outputs: Path, server: FakeApiServer) -> None:
    _preload_list(server)
    result = run(outputs, "delete", "--all", "--yes")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == ("deleted workload train-a\ndeleted workload train-b\n"
                             "deleted workload train-c\n")
    assert [m for m, _ in calls(server)].count("DELETE") == 3


def test_delete_all_when_there_are_none(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, "delete", "--all", "-y")
    assert (result.exit_code, result.stdout) == (0, "no workloads in namespace training\n")


@pytest.mark.parametrize("args", [[], ["w1", "--all"]])
def test_delete_needs_names_or_all(args: list[str], outputs: Path,
                                   server: FakeApiServer) -> None:
    result = run(outputs, "delete", *args)
    assert result.exit_code == 2
    assert result.stderr == ("Usage: main workload delete [OPTIONS] [NAMES]...\n"
                             "Try 'main workload delete --help' for help.\n\n"
                             "Error: name one or more workloads, or pass --all\n")
    assert server.state.requests == []


def test_a_failing_credential_plugin_is_one_error(tmp_path: Path, server: FakeApiServer) -> None:
    plugin = tmp_path / "auth-plugin"
    plugin.write_text("#!/bin/sh\necho 'ERROR: (gcloud.auth) You do not currently have an "
                      "active account selected.' >&2\necho 'Please run: gcloud auth login' >&2\n"
                      "exit 1\n")
    plugin.chmod(0o755)
    path = stacks.write_outputs(tmp_path / "out.json", "v5e-spot",
                                server.kubeconfig(exec_command=str(plugin)))
    result = run(path, "list")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: the kubeconfig's credential plugin failed (exec: process returned 1. ERROR: "
        "(gcloud.auth) You do not currently have an active account selected. Please run: "
        "gcloud auth login); run `gcloud auth login` (and check the plugin with "
        "`gke-gcloud-auth-plugin --version`)\n")
    assert server.state.requests == []


def test_the_readme_env_file_error(tmp_path: Path, outputs: Path, server: FakeApiServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (Path(__file__).resolve().parent.parent / "docs" / "submitting.md").read_text()
    shown = next(line for line in readme.splitlines()
                 if line.startswith("Error: Invalid value for '--env-file': run.env:4:"))
    monkeypatch.chdir(tmp_path)
    Path("run.env").write_text("LR=0.1\n# the token\n\nHF_TOKEN=\"hf_abcdefgh\n")
    result = run(outputs, *CREATE, "--env-file", "run.env")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == shown
    assert "hf_abcdefgh" not in result.stderr and server.state.requests == []


def test_env_file_follows_the_dotenv_convention(tmp_path: Path, outputs: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    env = tmp_path / "run.env"
    env.write_text("\ufeff# comment\n\n"
                   "export A=1  # an inline comment\n"
                   "B='single ${HOME} \\n'\n"
                   'C="double\\tescaped\\n"\n'
                   'D="two\nlines"\n'
                   "E=${HOME}\n"
                   "F=\n"
                   "G=a=b\r\n")
    result = run(outputs, *CREATE, "--env-file", str(env), "--dry-run")
    assert result.exit_code == 0, result.stderr
    container = yaml.safe_load(result.stdout)["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]["containers"][0]
    user_env = {e["name"]: e["value"] for e in container["env"]
                if e["name"] in ("A", "B", "C", "D", "E", "F", "G")}
    assert user_env == {"A": "1", "B": "single ${HOME} \\n", "C": "double\tescaped\n",
                        "D": "two\nlines", "E": "${HOME}", "F": "", "G": "a=b"}


def test_a_refused_jobset_leaves_no_config_map(tmp_path: Path, outputs: Path,
                                               server: FakeApiServer) -> None:
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\n")
    server.state.faults = [Fault(status=0), Fault(status=0), Fault(
        status=403, message="admission webhook \"vjobset.kb.io\" denied the request: no",
        reason="Forbidden")]
    result = run(outputs, *CREATE, "--config-file", str(cfg))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ('Error: apply JobSet training/w1: rejected by the cluster: '
                             'admission webhook "vjobset.kb.io" denied the request: no\n')
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config"),
                             ("PATCH", f"{JOBSETS}/w1"), ("DELETE", f"{CONFIGMAPS}/w1-config")]
    assert server.state.configmaps == {} and server.state.jobsets == {}


def test_a_config_map_that_cannot_get_its_owner_takes_the_jobset_back(
        tmp_path: Path, outputs: Path, server: FakeApiServer) -> None:
    """The JobSet was created, but its ConfigMap could not be made its own: the submit
    deletes both rather than leave a ConfigMap nothing would ever collect."""
    cfg = tmp_path / "train.yaml"
    cfg.write_text("lr: 0.1\n")
    server.state.faults = [Fault(status=403, message="no", reason="Forbidden",
                                 only=f"PATCH {CONFIGMAPS}/w1-config", skip=1)]
    result = run(outputs, *CREATE, "--config-file", str(cfg))
    assert result.exit_code == 1, result.output
    assert calls(server) == [("GET", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config"),
                             ("PATCH", f"{JOBSETS}/w1"), ("PATCH", f"{CONFIGMAPS}/w1-config"),
                             ("DELETE", f"{JOBSETS}/w1"), ("DELETE", f"{CONFIGMAPS}/w1-config")]
    assert server.state.configmaps == {} and server.state.jobsets == {}


# -- defaults ------------------------------------------------------------------------------

def test_help_states_every_default() -> None:
    out = CliRunner().invoke(main, ["workload", "create", "--help"], terminal_width=200).output
    # each option's help: from its line to the next option's
    helps = {m.group(1): " ".join(m.group(2).split()) for m in re.finditer(
        r"^\s+(--[a-z-]+)(.*?)(?=^\s+-)", out, re.M | re.S)}
    for option, default in (("--priority", "[default: medium]"), ("--ttl", "[default: 12h]"),
                            ("--termination-grace-period", "[default: 30]"),
                            ("--restart-on-exit-codes", "[default: 42,127-255]"),
                            ("--max-restarts", "[default: 3]")):
        assert default in helps[option], option


def _pod_and_body(result: Result) -> tuple[dict[str, Any], dict[str, Any]]:
    assert result.exit_code == 0, result.output
    js = yaml.safe_load(result.stdout)
    job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    return job, js


def test_no_flags_get_the_defaults(outputs: Path) -> None:
    job, js = _pod_and_body(run(outputs, *CREATE, "--dry-run"))
    assert js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "medium"
    assert js["spec"]["ttlSecondsAfterFinished"] == 43200
    assert js["spec"]["failurePolicy"]["maxRestarts"] == 3
    assert js["spec"]["failurePolicy"]["rules"][0]["action"] == "FailJobSet"
    assert job["podFailurePolicy"]["rules"][1]["onExitCodes"]["values"] == [
        42, *range(127, 256)]
    pod = job["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 30
    assert pod["automountServiceAccountToken"] is False
    assert pod["containers"][0]["securityContext"] == {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_every_default_can_be_turned_off(outputs: Path) -> None:
    job, js = _pod_and_body(run(
        outputs, *CREATE, "--priority", "none", "--ttl", "none", "--restart-on-exit-codes",
        "any", "--max-restarts", "0", "--termination-grace-period", "0",
        "--mount-service-account-token", "--add-capability", "cap_setuid",
        "--add-capability", "SETGID", "--dry-run"))
    assert "kueue.x-k8s.io/priority-class" not in js["metadata"]["labels"]
    assert "ttlSecondsAfterFinished" not in js["spec"]
    assert js["spec"]["failurePolicy"] == {"maxRestarts": 0}
    assert "podFailurePolicy" not in job
    pod = job["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 0
    assert pod["automountServiceAccountToken"] is True
    assert pod["containers"][0]["securityContext"]["capabilities"] == {
        "drop": ["ALL"], "add": ["SETUID", "SETGID"]}


@pytest.mark.parametrize("ttl, seconds", [("90", 90), ("30m", 1800), ("12h", 43200),
                                          ("7d", 604800), ("0", 0), ("1h30m", 5400),
                                          ("1.5h", 5400), ("2d12h", 216000)])
def test_ttl_takes_durations(outputs: Path, ttl: str, seconds: int) -> None:
    _, js = _pod_and_body(run(outputs, *CREATE, "--ttl", ttl, "--dry-run"))
    assert js["spec"]["ttlSecondsAfterFinished"] == seconds


@pytest.mark.parametrize("cap, message", [
    ("SYS_ADMIN", "'SYS_ADMIN' is not allowed: it gives the container the node"),
    ("net admin", "'net admin' is not a Linux capability; did you mean NET_ADMIN?"),
])
def test_add_capability_refused(outputs: Path, server: FakeApiServer, cap: str,
                                message: str) -> None:
    result = run(outputs, *CREATE, "--add-capability", cap)
    assert result.exit_code == 2
    assert "'--add-capability'" in result.stderr and message in result.stderr
    assert server.state.requests == []


def test_after_create_the_next_steps(outputs: Path, server: FakeApiServer) -> None:
    """The workload, its queue, the commands to watch it, and xpk's two console links."""
    result = run(outputs, *CREATE)
    assert (result.exit_code, result.stdout) == (0, "")
    base = f"submit workload --outputs {outputs}"
    c = load(json.loads(outputs.read_text())).cluster
    assert result.stderr.splitlines() == [
        "workload w1 submitted to namespace training (queue main)",
        "watch it:",
        f"  {base} describe w1      # admission, pods, events",
        f"  {base} wait w1",
        f"  {base} logs w1 -f",
        f"console: https://console.cloud.google.com/kubernetes/service/{c.location}/{c.name}/"
        f"training/w1/details?project={c.project}",
        "logs:    https://console.cloud.google.com/logs/query;query=resource.type%3D%22"
        f"k8s_container%22%0Aresource.labels.project_id%3D%22{c.project}%22%0Aresource.labels."
        f"location%3D%22{c.location}%22%0Aresource.labels.cluster_name%3D%22{c.name}%22%0A"
        "resource.labels.namespace_name%3D%22training%22%0Aresource.labels.pod_name%3A%22"
        "w1-slice-%22%20severity%3E%3DDEFAULT;storageScope=project;duration=P1D"
        f"?project={c.project}"]
