"""A corpus of bad command lines: every one is a one-line error, exit 2, and nothing sent.

Each case runs the real `submit` command line with the stack read through the fake
`pulumi` (tests/fakes/pulumi_cli.py, its kubeconfig pointing at the fake API server) and
asserts:
- exit code 2 (docs/submitting.md's "bad option or argument"), nothing on stdout;
- stderr is Click's usage header and exactly one error line, naming the option or argument
  and the value (or, where the value may be a secret, its position: the env-file line, the
  --env item), matched exactly;
- no traceback anywhere;
- nothing reached the API server, and `pulumi` ran only when the check needs the stack's
  outputs (``STACK`` cases); every other check comes before it.
The stack-config side of the corpus is tests/test_bad_config_corpus.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fake_apiserver import FakeApiServer
from fakes import stacks
from fakes.pulumi_cli import FakePulumi, install
from infra.contract.outputs import CONTRACT_VERSION
from submit.cli.app import main
from submit.render.spec import MAX_CONFIG_BYTES

STACK = True  # the check needs the stack's outputs: `pulumi` runs once, the cluster never
CREATE = ["create", "--workload", "w1", "--accelerator", "v5litepod-16", "--image",
          "python:3.12"]
DNS = ("is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter "
       "and ending with a letter or digit)")
NS_RULE = ("is not a namespace name (a DNS-1123 label): lowercase letters, digits and '-', "
           "starting and ending with a letter or digit, at most 63 characters")
ENV_RULE = "(letters, digits, '_', '-' and '.', not starting with a digit)"
HIDDEN = "the line is not shown: env files hold secrets"
DURATION = "a number of seconds, or Go/kubectl syntax such as 90s, 30m, 12h or 1h30m"


@dataclass(frozen=True)
class Case:
    id: str
    argv: list[str]  # after `submit workload --stack dev`; {tmp} is the test's directory
    param: str  # the option or argument the message names
    message: str  # after "Invalid value for 'PARAM': "; {tmp} as above
    needs_stack: bool = False
    group: list[str] | None = None  # replaces `workload --stack dev`


def _create(*extra: str) -> list[str]:
    return [*CREATE, *extra]


CASES = [
    # -- create: names and the accelerator -------------------------------------------------
    Case("workload-uppercase", _create("--workload", "Train"), "--workload", f"'Train' {DNS}"),
    Case("workload-underscore", _create("--workload", "my_job"), "--workload", f"'my_job' {DNS}"),
    Case("workload-too-long", _create("--workload", "a" * 64), "--workload",
         f"'{'a' * 64}' is 64 characters; a workload name has at most 47 (fewer with many "
         "slices or nodes) so that every pod name stays within 63 characters"),
    Case("accelerator-unknown", _create("--accelerator", "v5litepod-17"), "--accelerator",
         "'v5litepod-17' is not a TPU v5e slice; did you mean v5litepod-16 or v5litepod-32?"),
    Case("accelerator-not-in-stack", _create("--accelerator", "v5p-8"), "--accelerator",
         "'v5p-8' (v5p-8) is not a slice type of stack 'v5e-spot'; it has: v5litepod-16",
         STACK),
    Case("pool-unknown", _create("--pool", "nope"), "--pool",
         "'nope' is not a v5litepod-16 pool of stack 'v5e-spot'; its v5litepod-16 pools: "
         "v5litepod-16", STACK),
    # -- create: Pathways ----------------------------------------------------------------
    Case("headless-without-pathways", _create("--headless"), "--headless",
         "applies to Pathways workloads only; add --pathways"),
    Case("elastic-without-pathways", _create("--elastic-slices", "1"), "--elastic-slices",
         "applies to Pathways workloads only; add --pathways"),
    Case("elastic-slices-zero", _create("--pathways", "--elastic-slices", "0"),
         "--elastic-slices", "0 is below 1"),
    Case("headless-with-command", _create("--pathways", "--headless", "--command", "python3 a.py"),
         "--command", "a --headless Pathways workload runs no user container (connect a "
         "client through the port-forward instead); drop --command or --headless"),
    Case("pathways-cpu", _create("--pathways", "--cpu", "8"), "--cpu",
         "is not used with --pathways: the head pod's user container gets what the head node "
         "leaves after the Pathways servers, and workers get their whole TPU host"),
    Case("pathways-no-head-pool", _create("--pathways"), "--pathways",
         "stack 'v5e-spot' has no Pathways head pool; set pathways.enabled: true and "
         "pathways.scratch in its config and run `pulumi up`", STACK),
    # -- create: counts ------------------------------------------------------------------
    Case("num-slices-zero", _create("--num-slices", "0"), "--num-slices", "0 is below 1"),
    Case("num-slices-negative", _create("--num-slices", "-3"), "--num-slices",
         "-3 is below 1"),
    Case("num-slices-int32", _create("--num-slices", "3000000000"), "--num-slices",
         "3000000000 is above 2147483647"),
    Case("num-slices-more-than-the-pool", _create("--num-slices", "3"), "--num-slices",
         "3 is more than the 2 v5litepod-16 slices pool v5litepod-16 has", STACK),
    Case("num-nodes-zero", _create("--num-nodes", "0"), "--num-nodes", "0 is below 1"),
    Case("num-nodes-on-tpu", _create("--num-nodes", "2"), "--num-nodes",
         "applies to GPU and CPU pools; v5litepod-16 is a TPU slice: use --num-slices", STACK),
    Case("num-slices-not-a-number", _create("--num-slices", "two"), "--num-slices",
         "'two' is not a valid integer."),
    Case("max-restarts-negative", _create("--max-restarts", "-1"), "--max-restarts",
         "-1 is below 0"),
    Case("ttl-negative", _create("--ttl", "-60"), "--ttl",
         "'-60' is not a duration: give a number of seconds, or Go/kubectl syntax such as 90s, "
         "30m, 12h or 1h30m (or 7d), or 'none' to keep the finished workload"),
    Case("ttl-int32", _create("--ttl", "9999999999"), "--ttl",
         "'9999999999' is more than 2147483647 seconds"),
    Case("grace-negative", _create("--termination-grace-period", "-1"),
         "--termination-grace-period", "-1 is below 0"),
    Case("exit-code-zero", _create("--restart-on-exit-codes", "0"), "--restart-on-exit-codes",
         "'0' is not an exit code from 1 to 255 or a range such as 127-255 (give a "
         "comma-separated list such as 42,127-255, or 'any')"),
    Case("exit-code-256", _create("--restart-on-exit-codes", "42,256"),
         "--restart-on-exit-codes",
         "'256' is not an exit code from 1 to 255 or a range such as 127-255 (give a "
         "comma-separated list such as 42,127-255, or 'any')"),
    # -- create: quantities, image, command, namespaces and queues ------------------------
    Case("cpu-zero", _create("--cpu", "0"), "--cpu",
         "'0' is zero; give a positive CPU quantity such as 30 or 3500m"),
    Case("cpu-words", _create("--cpu", "2 cores"), "--cpu",
         "'2 cores' is not a CPU quantity such as 30 or 3500m"),
    Case("memory-zero", _create("--memory", "0Gi"), "--memory",
         "'0Gi' is zero; give a positive quantity such as 100Gi"),
    Case("memory-gb", _create("--memory", "100GB"), "--memory",
         "'100GB' is not a quantity such as 100Gi"),
    Case("shm-size-negative", _create("--shm-size", "-1Gi"), "--shm-size",
         "'-1Gi' is not a quantity such as 16Gi"),
    Case("image-uppercase", _create("--image", "Python:3.12"), "--image",
         "'Python:3.12' is not a container image reference ([registry/]repository[:tag]"
         "[@sha256:digest], lowercase repository)"),
    Case("command-blank", _create("--command", "   "), "--command", "is empty"),
    Case("namespace-not-a-label", _create("--namespace", "Team_A"), "--namespace",
         f"'Team_A' {NS_RULE}"),
    Case("namespace-without-queue", _create("--namespace", "default"), "--namespace",
         "'default' has no LocalQueue in stack 'v5e-spot'; namespaces with queues: training",
         STACK),
    Case("queue-unknown", _create("--queue", "fast"), "--queue",
         "'fast' is not a LocalQueue of stack 'v5e-spot' in namespace 'training'; its queues "
         "there: main", STACK),
    Case("priority-unknown", _create("--priority", "urgent"), "--priority",
         "'urgent' is not a priority class of the stack; allowed: very-low, low, medium, high, "
         "very-high, or 'none'", STACK),
    Case("output-format", _create("--dry-run", "-o", "xml"), "-o' / '--output",
         "'xml' is not one of 'yaml', 'json'."),
    # -- create: --env and --secret-env -----------------------------------------------------
    Case("env-without-equals", _create("--env", "hunter2"), "--env",
         "value 1 is not KEY=VALUE (it has no '='; the value is not shown)"),
    Case("env-bad-name", _create("--env", "1X=1"), "--env",
         f"'1X' is not a valid environment variable name {ENV_RULE}"),
    Case("secret-env-no-key", _create("--secret-env", "TOKEN=hf-token"), "--secret-env",
         "'TOKEN=hf-token' is not NAME=SECRET/KEY"),
    Case("secret-env-bad-secret", _create("--secret-env", "TOKEN=HF_Token/key"), "--secret-env",
         "'HF_Token' is not a Secret name (a DNS-1123 subdomain)"),
    # -- create: --env-file (messages name the file and line, never a value) ---------------
    Case("env-file-binary", _create("--env-file", "{tmp}/binary.env"), "--env-file",
         "{tmp}/binary.env is not a text file (it holds NUL bytes)"),
    Case("env-file-latin1", _create("--env-file", "{tmp}/latin1.env"), "--env-file",
         "{tmp}/latin1.env:2: not UTF-8 text"),
    Case("env-file-no-equals", _create("--env-file", "{tmp}/no-equals.env"), "--env-file",
         f"{{tmp}}/no-equals.env:3: not KEY=VALUE ({HIDDEN})"),
    Case("env-file-yaml-style", _create("--env-file", "{tmp}/yaml.env"), "--env-file",
         "{tmp}/yaml.env:2: HF_TOKEN is written `HF_TOKEN: ...` (YAML style); write "
         "HF_TOKEN=VALUE (the value is not shown)"),
    Case("env-file-yaml-style-with-equals", _create("--env-file", "{tmp}/yaml-eq.env"),
         "--env-file", "{tmp}/yaml-eq.env:1: API_KEY is written `API_KEY: ...` (YAML style); "
         "write API_KEY=VALUE (the value is not shown)"),
    Case("env-file-yaml-style-empty", _create("--env-file", "{tmp}/yaml-empty.env"),
         "--env-file", "{tmp}/yaml-empty.env:3: SEED is written `SEED: ...` (YAML style); "
         "write SEED=VALUE (the value is not shown)"),
    Case("env-file-bare-name", _create("--env-file", "{tmp}/bare.env"), "--env-file",
         f"{{tmp}}/bare.env:2: not KEY=VALUE (write NAME= for an empty value; {HIDDEN})"),
    Case("env-file-unclosed-quote", _create("--env-file", "{tmp}/quote.env"), "--env-file",
         "{tmp}/quote.env:2: the value of API_KEY cannot be parsed (an unclosed quote, or "
         "text after the closing quote; the value is not shown)"),
    Case("env-file-bad-name", _create("--env-file", "{tmp}/name.env"), "--env-file",
         f"{{tmp}}/name.env:1: '2FA' is not a valid environment variable name {ENV_RULE}"),
    Case("env-file-duplicate", _create("--env-file", "{tmp}/dup.env"), "--env-file",
         "{tmp}/dup.env:4: LR is set again (first on line 1); keep one"),
    Case("env-file-missing", _create("--env-file", "{tmp}/nope.env"), "--env-file",
         "cannot read {tmp}/nope.env: No such file or directory"),
    Case("env-file-directory", _create("--env-file", "{tmp}"), "--env-file",
         "File '{tmp}' is a directory."),
    # -- create: --config-file and --export -------------------------------------------------
    Case("config-file-missing", _create("--config-file", "{tmp}/nope.yaml"), "--config-file",
         "cannot read {tmp}/nope.yaml: No such file or directory"),
    Case("config-file-binary", _create("--config-file", "{tmp}/model.bin"), "--config-file",
         "{tmp}/model.bin is not UTF-8 text"),
    Case("config-file-nul", _create("--config-file", "{tmp}/nul.txt"), "--config-file",
         "{tmp}/nul.txt is not a text file (it holds NUL bytes)"),
    Case("config-file-too-large", _create("--config-file", "{tmp}/big.txt"), "--config-file",
         f"{{tmp}}/big.txt is {MAX_CONFIG_BYTES + 1} bytes; a ConfigMap holds at most 1 MiB"),
    Case("export-under-a-file", _create("--export", "{tmp}/model.bin/dir/w1.yaml"), "--export",
         "{tmp}/model.bin/dir/w1.yaml: {tmp}/model.bin is a file, not a directory"),
    # -- apply FILE ---------------------------------------------------------------------------
    Case("apply-missing", ["apply", "{tmp}/nope.yaml"], "FILE",
         "File '{tmp}/nope.yaml' does not exist."),
    Case("apply-binary", ["apply", "{tmp}/model.bin"], "FILE",
         "{tmp}/model.bin is not YAML or JSON: it is not UTF-8 text"),
    Case("apply-not-yaml", ["apply", "{tmp}/broken.yaml"], "FILE",
         "{tmp}/broken.yaml:2: not YAML or JSON: expected ',' or ']', but got '<stream end>'"),
    Case("apply-a-deployment", ["apply", "{tmp}/deployment.yaml"], "FILE",
         "{tmp}/deployment.yaml must hold one JobSet (and optionally its ConfigMap), not "
         "['Deployment']"),
    Case("apply-wrong-api-version", ["apply", "{tmp}/v1alpha1.yaml"], "FILE",
         "{tmp}/v1alpha1.yaml: the JobSet's apiVersion 'jobset.x-k8s.io/v1alpha1' is not "
         "'jobset.x-k8s.io/v1alpha2'"),
    Case("apply-bad-name", ["apply", "{tmp}/badname.yaml"], "FILE",
         f"{{tmp}}/badname.yaml: metadata of the JobSet: 'W1' {DNS}"),
    # -- list, describe, logs, wait, delete ---------------------------------------------------
    Case("list-namespace", ["list", "--namespace", "Not.A.Label"], "--namespace",
         f"'Not.A.Label' {NS_RULE}"),
    Case("describe-name", ["describe", "W1"], "NAME", f"'W1' {DNS}"),
    Case("describe-long-name", ["describe", "d" * 64], "NAME",
         f"'{'d' * 64}' is 64 characters; a workload name has at most 63"),
    Case("logs-slice-negative", ["logs", "w1", "--slice", "-1"], "--slice",
         "-1 is below 0 (indices count from 0)"),
    Case("logs-worker-negative", ["logs", "w1", "--worker", "-2"], "--worker",
         "-2 is below 0 (indices count from 0)"),
    Case("logs-tail-zero", ["logs", "w1", "--tail", "0"], "--tail", "0 is below 1"),
    Case("logs-slice-beyond-the-stack", ["logs", "w1", "--slice", "2"], "--slice",
         "2 is not within 0 to 1: the largest workload this stack can run has 2 slices", STACK),
    Case("logs-worker-beyond-the-stack", ["logs", "w1", "--worker", "4"], "--worker",
         "4 is not within 0 to 3: the largest workload this stack can run has 4 workers per "
         "slice", STACK),
    Case("wait-timeout-negative", ["wait", "w1", "--timeout", "-5"], "--timeout",
         f"'-5' is not a duration: give {DURATION}"),
    Case("wait-timeout-unit", ["wait", "w1", "--timeout", "2 hours"], "--timeout",
         f"'2 hours' is not a duration: give {DURATION}"),
    Case("wait-timeout-unit-first", ["wait", "w1", "--timeout", "h1"], "--timeout",
         f"'h1' is not a duration: give {DURATION}"),
    Case("wait-interval-zero", ["wait", "w1", "--interval", "0"], "--interval",
         "0 is not a number of seconds above 0"),
    Case("wait-interval-nan", ["wait", "w1", "--interval", "nan"], "--interval",
         f"'nan' is not a duration: give {DURATION}"),
    Case("wait-interval-zero-units", ["wait", "w1", "--interval", "0m0s"], "--interval",
         "0 is not a number of seconds above 0"),
    Case("wait-name", ["wait", "w1.x"], "NAME", f"'w1.x' {DNS}"),
    Case("delete-name", ["delete", "w1", "W2"], "NAMES", f"'W2' {DNS}"),
    Case("delete-namespace", ["delete", "w1", "--namespace", "-x"], "--namespace",
         f"'-x' {NS_RULE}"),
    # -- where the outputs come from ------------------------------------------------------------
    Case("stack-name", ["list"], "--stack", "'my stack' is not a stack name (letters, digits, "
         "'-', '_' and '.', optionally as ORG/STACK or ORG/PROJECT/STACK)",
         group=["workload", "--stack", "my stack"]),
    Case("project-dir-missing", ["list"], "--project-dir", "'{tmp}/nope' is not a directory",
         group=["workload", "--stack", "dev", "--project-dir", "{tmp}/nope"]),
    Case("outputs-missing", ["list"], "--outputs",
         "no outputs file {tmp}/nope.json; write one offline with `accelstack-preview STACK "
         "--quiet --outputs {tmp}/nope.json`, or from a deployed stack with `pulumi stack "
         "output --json --show-secrets > {tmp}/nope.json`",
         group=["workload", "--outputs", "{tmp}/nope.json"]),
    Case("outputs-empty", ["list"], "--outputs", "{tmp}/empty.json: not an accelstack "
         "stack's outputs: no `accelstack` output holding a contractVersion (its keys: none); "
         "write it with `accelstack-preview STACK --outputs FILE` or `pulumi stack output "
         "--json --show-secrets`", group=["workload", "--outputs", "{tmp}/empty.json"]),
    Case("outputs-binary", ["list"], "--outputs", "{tmp}/model.bin is not a text file (not "
         "UTF-8); give the JSON of `pulumi stack output --json --show-secrets`",
         group=["workload", "--outputs", "{tmp}/model.bin"]),
    Case("outputs-not-json", ["list"], "--outputs",
         "{tmp}/broken.yaml: not JSON (Expecting value: line 1 column 1 (char 0))",
         group=["workload", "--outputs", "{tmp}/broken.yaml"]),
    Case("outputs-old-contract", ["list"], "--outputs",
         "{tmp}/old.json: stack outputs: contract version 1 is not supported; this version of "
         f"accelstack reads version {CONTRACT_VERSION} (run `pulumi up` with the same "
         "accelstack version, or upgrade the submitter)",
         group=["workload", "--outputs", "{tmp}/old.json"]),
    Case("outputs-kubeconfig-object", ["list"], "--outputs",
         "{tmp}/kubeconfig-object.json: outputs.kubeconfig: not a string (its content is not "
         "shown: it holds credentials)",
         group=["workload", "--outputs", "{tmp}/kubeconfig-object.json"]),
    Case("namespace-after-command", ["list", "-n", "Team_A"], "--namespace",
         f"'Team_A' {NS_RULE}"),
    Case("namespace-before-command", ["list"], "--namespace", f"'Team_A' {NS_RULE}",
         group=["workload", "--stack", "dev", "-n", "Team_A"]),
    Case("stack-name-after-command", ["list", "--stack", "my stack"], "--stack",
         "'my stack' is not a stack name (letters, digits, '-', '_' and '.', optionally as "
         "ORG/STACK or ORG/PROJECT/STACK)", group=["workload"]),
    Case("outputs-after-command-missing", ["list", "--outputs", "{tmp}/nope.json"],
         "--outputs", "no outputs file {tmp}/nope.json; write one offline with "
         "`accelstack-preview STACK --quiet --outputs {tmp}/nope.json`, or from a deployed "
         "stack with `pulumi stack output --json --show-secrets > {tmp}/nope.json`",
         group=["workload"]),
    # -- cluster credentials ------------------------------------------------------------------
    Case("credentials-kubeconfig-not-yaml", ["--kubeconfig", "{tmp}/broken.yaml"],
         "--kubeconfig", "{tmp}/broken.yaml is not YAML (line 2, column 1); its content is "
         "not shown: it holds credentials", STACK,
         group=["cluster", "credentials", "--stack", "dev"]),
    Case("credentials-kubeconfig-not-a-mapping", ["--kubeconfig", "{tmp}/list.yaml"],
         "--kubeconfig", "{tmp}/list.yaml is not a kubeconfig (not a mapping)", STACK,
         group=["cluster", "credentials", "--stack", "dev"]),
    Case("credentials-kubeconfig-binary", ["--kubeconfig", "{tmp}/model.bin"],
         "--kubeconfig", "cannot read {tmp}/model.bin: 'utf-8' codec can't decode byte 0x89 "
         "in position 0: invalid start byte",
         group=["cluster", "credentials", "--stack", "dev"]),
    # -- accelerators ------------------------------------------------------------------------
    Case("accelerators-unknown", ["v5p-12"], "NAME",
         "'v5p-12' is not a TPU v5p slice; did you mean v5p-8 or v5p-16?",
         group=["accelerators"]),
    Case("accelerators-family", ["--family", "v9"], "--family",
         "'v9' is not one of 'v4', 'v5e', 'v5p', 'v6e', 'tpu7x', 'tpu7', 'g2', 'a2', "
         "'a3-high', 'a3-mega', 'a3-ultra', 'a4', 'a4x', 'cpu'.", group=["accelerators"]),
]

# -- experiments, job groups and --after (submit.experiment, submit.experiment.group) -----------------
EXPERIMENT = ["experiment", "--stack", "dev"]
CASES += [
    Case("experiment-empty-axis", ["create", "{tmp}/exp-empty.yaml"], "FILE",
         "{tmp}/exp-empty.yaml:4: sweep.env.LR: the axis is empty; give at least one value",
         group=EXPERIMENT),
    Case("experiment-unknown-key", ["create", "{tmp}/exp-unknown.yaml"], "FILE",
         "{tmp}/exp-unknown.yaml:4: workload.gpu: unknown option; did you mean cpu? (allowed: "
         "accelerator, "
         "image, command, pool, num-slices, num-nodes, env, env-file, secret-env, priority, "
         "max-restarts, restart-on-exit-codes, ttl, termination-grace-period, config-file, "
         "shm-size, cpu, memory, namespace, queue, mount-service-account-token, "
         "add-capability, mount, pathways, headless, elastic-slices, fleet-worker, "
         "fleet-region, local-checkpoint-dir, stack-traces, xla-dump, debug-logs, tensorboard, image-pull-secret, "
         "pathways-server-image, pathways-proxy-image, pathways-colocated-python, "
         "pathways-colocated-python-image, pathways-server-arg, pathways-proxy-arg, "
         "pathways-worker-arg, parallel-containers, ml-diagnostics, goodput)", group=EXPERIMENT),
    Case("experiment-trial-over-the-pool", ["create", "{tmp}/exp-slices.yaml"], "FILE",
         "{tmp}/exp-slices.yaml:4: trial 1 (num-slices=3): --num-slices: 3 is more than the 2 "
         "v5litepod-16 slices pool v5litepod-16 has", STACK, group=EXPERIMENT),
    Case("experiment-max-trials", ["create", "{tmp}/exp-slices.yaml", "--max-trials", "1"],
         "FILE", "{tmp}/exp-slices.yaml: the sweep expands to 2 trials, more than "
         "--max-trials 1; raise --max-trials if that is intended", group=EXPERIMENT),
    Case("experiment-max-running-zero", ["create", "{tmp}/exp-slices.yaml", "--max-running",
                                         "0"], "--max-running", "0 is below 1",
         group=EXPERIMENT),
    Case("group-dependency-cycle", ["create-group", "{tmp}/group-cycle.yaml"], "FILE",
         "{tmp}/group-cycle.yaml:4: roles.a.depends-on: dependency cycle (a -> b -> a)"),
    Case("after-not-a-name", _create("--after", "Prep"), "--after", f"'Prep' {DNS}"),
]


def _files(tmp: Path) -> None:
    """The bad files the cases name."""
    (tmp / "binary.env").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00TOKEN=s3cr3t")
    (tmp / "latin1.env").write_bytes(b"A=1\nNAME=caf\xe9\n")
    (tmp / "yaml.env").write_text("LR=0.1\nHF_TOKEN: hf_s3cr3tValue\n")
    (tmp / "yaml-eq.env").write_text("export API_KEY: abc=s3cr3t\n")
    (tmp / "yaml-empty.env").write_text("LR=0.1\n\nSEED:\n")
    (tmp / "no-equals.env").write_text("# settings\n\nghp_s3cr3tT0kenPastedAlone junk\n")
    (tmp / "bare.env").write_text("A=1\nghp_s3cr3tT0kenPastedAlone\n")
    (tmp / "quote.env").write_text("A=1\nAPI_KEY=\"s3cr3t-unclosed\nB=2\n")
    (tmp / "name.env").write_text("2FA=s3cr3t\n")
    (tmp / "dup.env").write_text("LR=0.1\n# again\n\nLR=s3cr3t\n")
    (tmp / "model.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    (tmp / "empty.json").write_text("{}\n")
    (tmp / "nul.txt").write_bytes(b"lr: 0.1\x00\n")
    (tmp / "big.txt").write_bytes(b"x" * (MAX_CONFIG_BYTES + 1))
    (tmp / "broken.yaml").write_text("kind: [JobSet\n")
    (tmp / "list.yaml").write_text("- a\n- b\n")
    (tmp / "deployment.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\n"
                                         "metadata: {name: x, namespace: training}\n")
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha1", "kind": "JobSet",
              "metadata": {"name": "w1", "namespace": "training",
                           "labels": {"kueue.x-k8s.io/queue-name": "main"}}}
    (tmp / "v1alpha1.yaml").write_text(yaml.safe_dump(jobset))
    jobset = {**jobset, "apiVersion": "jobset.x-k8s.io/v1alpha2",
              "metadata": {**jobset["metadata"], "name": "W1"}}
    (tmp / "badname.yaml").write_text(yaml.safe_dump(jobset))
    old = stacks.outputs("v5e-spot")
    old["accelstack"]["contractVersion"] = 1
    (tmp / "old.json").write_text(json.dumps(old))
    obj = stacks.outputs("v5e-spot")
    obj["accelstack"]["kubeconfig"] = {"users": [{"name": "u", "user": {"token": "s3cr3t"}}]}
    (tmp / "kubeconfig-object.json").write_text(json.dumps(obj))
    base = "name: e\nworkload:\n  accelerator: v5litepod-16\n  image: python:3.12\n"
    (tmp / "exp-empty.yaml").write_text("name: e\nworkload: {accelerator: v5litepod-16, "
                                        "image: python:3.12}\nsweep:\n  env.LR: []\n")
    (tmp / "exp-unknown.yaml").write_text(base.replace("  image", "  gpu: 2\n  image"))
    (tmp / "exp-slices.yaml").write_text("name: e\nworkload: {accelerator: v5litepod-16, "
                                         "image: python:3.12}\nsweep:\n  num-slices: [1, 3]\n")
    (tmp / "group-cycle.yaml").write_text(
        "name: g\nworkload: {accelerator: l4-1, image: python:3.12}\nroles:\n"
        "  a: {depends-on: b}\n  b: {depends-on: a}\n")


@pytest.fixture
def pulumi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           server: FakeApiServer) -> FakePulumi:
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    fake = install(tmp_path, monkeypatch)
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["kubeconfig"] = server.kubeconfig()
    fake.stack("dev", data)
    return fake


def test_the_corpus_is_large_and_its_ids_unique() -> None:
    assert len(CASES) >= 45
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_command_line(case: Case, tmp_path: Path, pulumi: FakePulumi,
                          server: FakeApiServer) -> None:
    _files(tmp_path)

    def fill(arg: str) -> str:
        return arg.replace("{tmp}", str(tmp_path))

    group = [fill(a) for a in case.group or ["workload", "--stack", "dev"]]
    result = CliRunner().invoke(main, [*group, *map(fill, case.argv)])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output + result.stderr
    assert (result.exit_code, result.stdout) == (2, ""), result.stderr
    header, try_help, blank, error, *rest = result.stderr.split("\n")
    assert re.fullmatch(r"Usage: main .*", header) and try_help.startswith("Try 'main ")
    assert (blank, rest) == ("", [""]), result.stderr  # exactly one error line
    assert error == f"Error: Invalid value for '{case.param}': {fill(case.message)}"
    assert server.state.requests == []
    assert len(pulumi.calls) == (1 if case.needs_stack else 0)


@pytest.mark.parametrize("argv", [CREATE, ["list"], ["logs", "w1", "--slice", "-1"],
                                  ["apply", "FILE"]])
def test_no_stack_is_a_usage_error(argv: list[str], tmp_path: Path, pulumi: FakePulumi,
                                   server: FakeApiServer) -> None:
    manifest = tmp_path / "w1.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "jobset.x-k8s.io/v1alpha2",
                                        "kind": "JobSet", "metadata": {
                                            "name": "w1", "namespace": "training",
                                            "labels": {"kueue.x-k8s.io/queue-name": "main"}}}))
    result = CliRunner().invoke(main, ["workload",
                                       *[str(manifest) if a == "FILE" else a for a in argv]])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2
    last = result.stderr.rstrip("\n").split("\n")[-1]
    if argv[0] == "logs":  # an option that is wrong whatever the stack fails first
        assert last == "Error: Invalid value for '--slice': -1 is below 0 (indices count from 0)"
    else:
        assert last == ("Error: no stack given: pass --stack NAME (or set ACCELSTACK_STACK) or "
                        "--outputs FILE (or set ACCELSTACK_OUTPUTS)")
    assert server.state.requests == [] and pulumi.calls == []
