"""`accelstack-adopt` and the GKE API seam (infra/adopt/gke/api.py), against a fake GKE API
on loopback (tests/fake_gke_api.py): what reached the API, the file written, exit codes
and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from fake_gke_api import FakeGkeApi
from infra.adopt.cli.command import adopt
from infra.adopt.gke import api

ANSWER = ROOT / "tests" / "gke_answers" / "xpk-v5e.json"
XPK = "projects/my-ml-project/locations/us-west4/clusters/xpk-v5e"


@pytest.fixture
def gke(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGkeApi]:
    with FakeGkeApi() as fake:
        fake.clusters[XPK] = json.loads(ANSWER.read_text())
        monkeypatch.setenv(api.ENDPOINT_ENV, fake.endpoint)
        monkeypatch.setenv(api.TOKEN_ENV, "test-token")
        yield fake


def run(*args: str) -> Any:
    return CliRunner().invoke(adopt, list(args), catch_exceptions=False)


def test_reader_gets_the_cluster_with_a_bearer_token(gke: FakeGkeApi) -> None:
    data = api.get_cluster("my-ml-project", "us-west4", "xpk-v5e")
    assert data["name"] == "xpk-v5e" and len(data["nodePools"]) == 3
    assert gke.requests == [(f"/v1beta1/{XPK}", "Bearer test-token")]


def test_reader_403_is_one_line_naming_the_permission(gke: FakeGkeApi) -> None:
    gke.forbidden.add(XPK)
    with pytest.raises(api.GkeApiError) as e:
        api.get_cluster("my-ml-project", "us-west4", "xpk-v5e")
    assert str(e.value) == (
        f'{XPK}: permission denied (403: Required "container.clusters.get" permission(s) for '
        f'"{XPK}".); the account needs container.clusters.get, e.g. '
        "roles/container.clusterViewer on project my-ml-project")


def test_reader_404_says_how_to_find_the_cluster(gke: FakeGkeApi) -> None:
    with pytest.raises(api.GkeApiError, match="no such cluster .*gcloud container clusters "
                       "list"):
        api.get_cluster("my-ml-project", "us-west4", "other")


def test_reader_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeGkeApi() as fake:
        endpoint = fake.endpoint
    monkeypatch.setenv(api.TOKEN_ENV, "t")
    with pytest.raises(api.GkeApiError, match="the GKE API did not answer"):
        api.get_cluster("my-ml-project", "us-west4", "xpk-v5e", endpoint=endpoint, timeout=2)


def test_adopt_writes_the_stack_file_from_the_api(gke: FakeGkeApi, tmp_path: Path) -> None:
    result = run("my-ml-project/us-west4/xpk-v5e", "--stack", "xpk", "--stacks-dir",
                 str(tmp_path), "--keep-unexpressed", "--record", str(tmp_path / "a.json"))
    assert result.exit_code == 0, result.output
    written = yaml.safe_load((tmp_path / "Pulumi.xpk.yaml").read_text())["config"]
    assert written["accelstack:adopt"]["cluster"] == XPK
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads(ANSWER.read_text())
    assert f"wrote {tmp_path}/Pulumi.xpk.yaml" in result.output


def test_adopt_refusal_exits_3_naming_each_field(gke: FakeGkeApi, tmp_path: Path) -> None:
    result = CliRunner().invoke(adopt, ["my-ml-project/us-west4/xpk-v5e", "--stack", "xpk",
                                        "--stacks-dir", str(tmp_path)])
    assert result.exit_code == 3
    assert "cluster: datapathProvider: live 'LEGACY_DATAPATH'" in result.output
    assert not (tmp_path / "Pulumi.xpk.yaml").exists()  # nothing half-written


def test_adopt_forbidden_exits_1_in_one_line(gke: FakeGkeApi, tmp_path: Path) -> None:
    gke.forbidden.add(XPK)
    result = run("my-ml-project/us-west4/xpk-v5e", "--stack", "xpk", "--stacks-dir",
                 str(tmp_path))
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {XPK}: permission denied (403")
    assert len(result.output.strip().splitlines()) == 1


def test_adopt_offline_from_an_answer_contacts_nothing(gke: FakeGkeApi, tmp_path: Path) -> None:
    result = run("my-ml-project/us-west4/xpk-v5e", "--stack", "xpk", "--stacks-dir",
                 str(tmp_path), "--keep-unexpressed", "--answer", str(ANSWER))
    assert result.exit_code == 0, result.output
    assert gke.requests == []


@pytest.mark.parametrize("args,message", [
    (["xpk-v5e", "--stack", "x"], "Invalid value for TARGET: 'xpk-v5e' is not "
     "PROJECT/LOCATION/CLUSTER such as my-project/us-central2/my-cluster"),
    (["my-ml-project/us-west4/xpk-v5e", "--stack", "a/b"], "Invalid value for --stack: "
     "'a/b' is not a stack name"),
])
def test_adopt_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(adopt, [*args, "--stacks-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert message in result.output


def test_adopt_will_not_overwrite_a_stack(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.xpk.yaml").write_text("config: {}\n")
    result = CliRunner().invoke(adopt, ["my-ml-project/us-west4/xpk-v5e", "--stack", "xpk",
                                        "--stacks-dir", str(tmp_path), "--answer", str(ANSWER)])
    assert result.exit_code == 2
    assert "exists; pass --force to overwrite it" in result.output
    assert (tmp_path / "Pulumi.xpk.yaml").read_text() == "config: {}\n"


def test_adopt_bad_answer_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "a.json"
    bad.write_text('{"name": "x",\n oops}')
    result = CliRunner().invoke(adopt, ["my-ml-project/us-west4/x", "--stack", "x",
                                        "--stacks-dir", str(tmp_path), "--answer", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:2: not JSON" in result.output
