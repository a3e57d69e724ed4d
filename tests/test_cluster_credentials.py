"""`submit cluster credentials`: the stack's context merged into a kubeconfig (a temporary
KUBECONFIG), the user's other contexts kept, the file private, bad files one error."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from fakes import stacks
from submit.cli.app import main


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    return stacks.write_outputs(tmp_path / "v5e.json", "v5e-spot")


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["cluster", "credentials", *args], env=env)


OTHER = {"apiVersion": "v1", "kind": "Config", "current-context": "kind-dev",
         "preferences": {"colors": True},
         "clusters": [{"name": "kind-dev", "cluster": {"server": "https://127.0.0.1:6443"}}],
         "users": [{"name": "kind-dev", "user": {"token": "t0ken-of-kind"}}],
         "contexts": [{"name": "kind-dev", "context": {"cluster": "kind-dev",
                                                       "user": "kind-dev"}}]}


def test_merges_without_breaking_other_contexts(tmp_path: Path, outputs: Path) -> None:
    kc = tmp_path / "kube" / "config"
    kc.parent.mkdir()
    kc.write_text(yaml.safe_dump(OTHER))
    result = run("--outputs", str(outputs), env={"KUBECONFIG": f"{kc}:{tmp_path}/other"})
    assert result.exit_code == 0, result.output
    ctx = "accelstack-v5e-spot"
    assert result.stdout == (f"wrote context {ctx} to {kc}; it is the current context "
                             f"(kubectl --context {ctx})\n")
    doc = yaml.safe_load(kc.read_text())
    assert doc["current-context"] == ctx
    assert doc["preferences"] == {"colors": True}
    assert [c["name"] for c in doc["contexts"]] == ["kind-dev", ctx]
    assert doc["users"][0] == OTHER["users"][0]
    user = doc["users"][1]["user"]["exec"]
    assert user["command"] == "gke-gcloud-auth-plugin"
    assert user["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert stat.S_IMODE(kc.stat().st_mode) == 0o600
    # Again: replaced, not duplicated; --no-switch keeps the user's context.
    doc["current-context"] = "kind-dev"
    kc.write_text(yaml.safe_dump(doc))
    assert run("--outputs", str(outputs), "--kubeconfig", str(kc), "--no-switch").exit_code == 0
    again = yaml.safe_load(kc.read_text())
    assert [c["name"] for c in again["contexts"]] == ["kind-dev", ctx]
    assert again["current-context"] == "kind-dev"


def test_creates_a_missing_file(tmp_path: Path, outputs: Path) -> None:
    kc = tmp_path / "new" / "config"
    assert run("--outputs", str(outputs), "--kubeconfig", str(kc)).exit_code == 0
    assert yaml.safe_load(kc.read_text())["current-context"] == "accelstack-v5e-spot"


def test_a_broken_kubeconfig_is_one_error_without_its_content(tmp_path: Path,
                                                              outputs: Path) -> None:
    kc = tmp_path / "config"
    kc.write_text("users: [token: s3cr3t\n")
    result = run("--outputs", str(outputs), "--kubeconfig", str(kc))
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--kubeconfig': {kc} is not YAML (line 2, column 1); its "
        "content is not shown: it holds credentials")
    assert "s3cr3t" not in result.output
    assert kc.read_text() == "users: [token: s3cr3t\n"  # nothing half-written
