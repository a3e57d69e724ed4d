"""ML Diagnostics on a stack (``accelstack:mlDiagnostics: true``): the documented install
(cert-manager, then Google's injection webhook and connection operator), the roles each
workload namespace's jobs get, the contract's optional field, and ``--ml-diagnostics``."""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

import schema
from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.config import stack as config
from infra.config.errors import ConfigError
from infra.config.stack_file import load as load_stack_file
from infra.contract import outputs as contract
from infra.preview import harness
from submit_cli import run

STACK_FILE = ROOT / "stacks" / "Pulumi.v6e-training.yaml"
RELEASE = "kubernetes:helm.sh/v3:Release"
CHARTS = "oci://us-docker.pkg.dev/ai-on-gke/mldiagnostics-webhook-and-operator-helm"


def _raw(on: Any = None) -> dict[str, Any]:
    raw = copy.deepcopy(load_stack_file(STACK_FILE).raw)
    if on is not None:
        raw["mlDiagnostics"] = on
    return raw


@lru_cache(maxsize=1)
def _evaluation() -> harness.Evaluation:
    return harness.evaluate(_raw(True), "v6e-mld")


def test_the_key_is_true_or_false() -> None:
    assert config.parse(_raw(True)).ml_diagnostics is True
    assert config.parse(_raw(False)).ml_diagnostics is False
    assert config.parse(_raw()).ml_diagnostics is False
    with pytest.raises(ConfigError) as info:
        config.parse(_raw("yes"))
    assert info.value.problems == ["mlDiagnostics: 'yes' is not true or false"]


def test_cert_manager_then_the_webhook_and_operator_are_installed() -> None:
    ev = _evaluation()
    releases = {r.name: r for r in ev.of_type(RELEASE)}
    cert = releases["cert-manager"]
    assert cert.inputs["chart"] == "cert-manager"
    assert cert.inputs["repositoryOpts"] == {"repo": "https://charts.jetstack.io"}
    assert cert.inputs["version"] == "v1.13.0"
    assert cert.inputs["namespace"] == "cert-manager"
    assert cert.inputs["values"] == {"installCRDs": True,
                                     "global": {"leaderElection": {"namespace": "cert-manager"}}}
    for name, version in (("mldiagnostics-injection-webhook", "0.23.0"),
                          ("mldiagnostics-connection-operator", "0.21.0")):
        release = releases[name]
        assert release.inputs["chart"] == f"{CHARTS}/{name}"
        assert release.inputs["version"] == version
        assert release.inputs["namespace"] == "gke-mldiagnostics"
        assert cert.urn in release.dependencies  # cert-manager first
    plain = harness.evaluate(_raw(), "plain")
    assert not {"cert-manager", "mldiagnostics-injection-webhook"} & {
        r.name for r in plain.of_type(RELEASE)}


def test_each_workload_namespace_gets_the_roles() -> None:
    ev = _evaluation()
    namespaces = [ev.config.queues.namespace] + [t.namespace for t in ev.config.queues.teams]
    grants = [r.inputs for r in ev.of_type("gcp:projects/iAMMember:IAMMember")
              if r.name.startswith("mldiagnostics-")]
    ksa = ev.config.storage.service_account
    expected = [{"project": "my-ml-project", "role": role,
                 "member": "principal://iam.googleapis.com/projects/123456789012/locations/"
                           f"global/workloadIdentityPools/my-ml-project.svc.id.goog/subject/ns/"
                           f"{ns}/sa/{ksa}"}
                for ns in namespaces
                for role in ("roles/hypercomputecluster.editor", "roles/logging.logWriter",
                             "roles/storage.objectUser")]
    def key(g: dict[str, Any]) -> str:
        return f"{g['member']} {g['role']}"
    assert sorted(grants, key=key) == sorted(expected, key=key)


def test_cluster_director_editor_is_the_hypercomputecluster_role() -> None:
    # Google's IAM roles reference lists Cluster Director Editor as
    # roles/hypercomputecluster.editor; no roles/clusterdirector.* role exists
    # (https://cloud.google.com/iam/docs/roles-permissions/hypercomputecluster).
    roles = {r.inputs["role"] for r in _evaluation().of_type("gcp:projects/iAMMember:IAMMember")
             if r.name.startswith("mldiagnostics-")}
    assert "roles/hypercomputecluster.editor" in roles
    assert not [r for r in roles if r.startswith("roles/clusterdirector.")]


def test_the_cluster_director_api_is_enabled_only_with_ml_diagnostics() -> None:
    # The SDK README's first step; the service name is Google's client libraries'.
    def enabled(ev: harness.Evaluation) -> set[str]:
        return {harness._plain(r.inputs)["service"]
                for r in ev.of_type("gcp:projects/service:Service")}
    assert "hypercomputecluster.googleapis.com" in enabled(_evaluation())
    assert "hypercomputecluster.googleapis.com" not in enabled(
        harness.evaluate(_raw(False), "v6e-plain"))


def test_contract_carries_the_flag_and_loads_without_it() -> None:
    data = harness.plain_outputs(_evaluation(), reveal=True)
    assert data["accelstack"]["mlDiagnostics"] is True
    loaded = contract.load(copy.deepcopy(data))
    assert loaded.ml_diagnostics is True
    assert loaded.to_dict()["mlDiagnostics"] is True
    data["accelstack"].pop("mlDiagnostics")
    assert contract.load(copy.deepcopy(data)).ml_diagnostics is False
    assert "mlDiagnostics" not in contract.load(copy.deepcopy(data)).to_dict()
    data["accelstack"]["mlDiagnostics"] = "yes"
    with pytest.raises(contract.ContractError, match=r"mlDiagnostics: 'yes' is not bool"):
        contract.load(data)


# ----------------------------------------------------------------------------------
# --ml-diagnostics


CREATE = ["create", "--workload", "w1", "--accelerator", "v6e-256", "--image", "python:3.12",
          "--command", "python3 train.py"]
LABEL = "managed-mldiagnostics-gke"


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    data = stacks.point_at(harness.plain_outputs(_evaluation(), reveal=True),
                           server.kubeconfig())
    path = tmp_path / "v6e-mld.json"
    path.write_text(json.dumps(data))
    return path


def _jobset(outputs: Path, *args: str) -> dict[str, Any]:
    result = run(outputs, *CREATE, "--dry-run", "-o", "json", *args)
    assert result.exit_code == 0, result.stderr
    js: dict[str, Any] = json.loads(result.stdout)
    schema.validate(js)
    return js


def test_the_option_labels_the_jobset(outputs: Path) -> None:
    js = _jobset(outputs, "--ml-diagnostics")
    assert js["metadata"]["labels"][LABEL] == "true"
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]  # the others stay
    assert LABEL not in _jobset(outputs)["metadata"]["labels"]


def test_refused_on_a_stack_without_the_webhook(tmp_path: Path, server: FakeApiServer) -> None:
    plain = stacks.write_outputs(tmp_path / "plain.json", "v6e-training", server.kubeconfig())
    result = run(plain, *CREATE, "--dry-run", "--ml-diagnostics")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--ml-diagnostics': the stack does not install ML Diagnostics' injection "
        "webhook; set accelstack:mlDiagnostics: true in its stack file and run `pulumi up` "
        "(docs/diagnostics.md)")
    assert "Traceback" not in result.output


def test_describe_says_where_the_runs_are(outputs: Path, server: FakeApiServer) -> None:
    assert run(outputs, *CREATE, "--ml-diagnostics").exit_code == 0
    data = json.loads(run(outputs, "describe", "w1", "-o", "json").stdout)
    assert data["diagnostics"]["mlDiagnostics"]["label"] == f"{LABEL}=true"
    assert "GKE > AI/ML > Diagnostics" in data["diagnostics"]["mlDiagnostics"]["where"]
    text = run(outputs, "describe", "w1").stdout
    assert (f"  ML Diagnostics: labeled {LABEL}=true; the Cloud Console's GKE > AI/ML > "
            "Diagnostics tab") in text
