"""--image-pull-secret: rendered on every pod (never empty), refused with a bad name before
`pulumi` runs, and checked against the namespace's Secrets on the fake API server (its 404
and 403 answers are the real API server's, cited there) before anything is applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schema
import stack_fixtures
from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.render.build import build_spec
from submit.render.jobset import render
from submit_cli import run

NS = "training"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"
CREATE = ["create", "--workload", "w1", "--accelerator", "v5litepod-16", "--image",
          "registry.example.com/team/trainer:1.4.0", "--command", "python3 train.py"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch, no_stack_env: None) -> None:
    monkeypatch.setenv("ACCELSTACK_RESOLVE_IMAGE", "0")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v5e.json", "v5e-spot", server.kubeconfig())


def _secret(name: str, kind: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Secret", "type": kind,
            "metadata": {"name": name, "namespace": NS},
            "data": {".dockerconfigjson": "eyJhdXRocyI6e319"}}


def refused(message: str) -> str:
    return ("Usage: main workload create [OPTIONS]\n"
            "Try 'main workload create --help' for help.\n\n"
            f"Error: Invalid value for '--image-pull-secret': {message}\n")


def test_rendered_on_every_pod_of_a_pathways_workload_too() -> None:
    outputs = stack_fixtures.outputs("v6e-pathways")
    accel = next(p.accelerator for p in outputs.slice_pools if p.kind == "tpu")
    spec = build_spec(outputs, workload="pw", accelerator=accel, image="python:3.12",
                      command="python3 t.py", pathways=True, image_pull_secret=["creds"])
    js = render(spec)[-1]
    schema.validate(js)
    pods = [rj["template"]["spec"]["template"]["spec"] for rj in js["spec"]["replicatedJobs"]]
    assert len(pods) == 2
    assert all(p["imagePullSecrets"] == [{"name": "creds"}] for p in pods)


@pytest.mark.parametrize("name", ["Creds", "creds_1", "-creds", ""])
def test_a_bad_name_is_refused_before_anything(outputs: Path, server: FakeApiServer,
                                               name: str) -> None:
    result = run(outputs, *CREATE, "--image-pull-secret", name, "--dry-run")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == refused(
        f"{name!r} is not a Secret name (a DNS-1123 subdomain): lowercase letters, digits, "
        "'-' and '.', starting and ending with a letter or digit, at most 253 characters")
    assert server.state.requests == []


def test_dry_run_needs_no_cluster_and_renders_it(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, *CREATE, "--image-pull-secret", "creds", "--image-pull-secret",
                 "creds", "--dry-run", "-o", "json")
    assert result.exit_code == 0, result.stderr
    pod = json.loads(result.stdout)["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "creds"}]  # once
    assert server.state.requests == []


def test_a_missing_secret_is_refused_and_nothing_is_applied(outputs: Path,
                                                           server: FakeApiServer) -> None:
    result = run(outputs, *CREATE, "--image-pull-secret", "creds")
    assert result.exit_code == 2
    assert result.stderr == refused(
        f"'creds' is not a Secret in namespace '{NS}'; create it with `kubectl create secret "
        f"docker-registry creds -n {NS} ...`")
    assert [(r.method, r.path) for r in server.state.requests] == [("GET", f"{SECRETS}/creds")]
    assert server.state.jobsets == {}


def test_a_secret_without_registry_credentials_is_refused(outputs: Path,
                                                         server: FakeApiServer) -> None:
    server.state.secrets[(NS, "creds")] = _secret("creds", "Opaque")
    result = run(outputs, *CREATE, "--image-pull-secret", "creds")
    assert result.exit_code == 2
    assert result.stderr == refused(
        f"Secret 'creds' in namespace '{NS}' is of type Opaque, which holds no registry "
        "credentials; allowed: kubernetes.io/dockerconfigjson, kubernetes.io/dockercfg")
    assert server.state.jobsets == {}
    assert "eyJhdXRocyI6e319" not in result.output


def test_a_registry_secret_is_used(outputs: Path, server: FakeApiServer) -> None:
    server.state.secrets[(NS, "creds")] = _secret("creds", "kubernetes.io/dockerconfigjson")
    result = run(outputs, *CREATE, "--image-pull-secret", "creds")
    assert result.exit_code == 0, result.stderr
    js = server.state.jobsets[(NS, "w1")]
    assert js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "imagePullSecrets"] == [{"name": "creds"}]
    assert "eyJhdXRocyI6e319" not in result.output


def test_without_the_right_to_read_secrets_it_is_submitted_unchecked(
        outputs: Path, server: FakeApiServer) -> None:
    server.state.forbidden.add("secrets")
    result = run(outputs, *CREATE, "--image-pull-secret", "creds")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith(
        f"note: --image-pull-secret creds: not checked, your account may not get Secrets in "
        f"namespace {NS}\n")
    assert (NS, "w1") in server.state.jobsets
