"""The `accelstack-adopt` commands of docs/adopt.md run here, as written and in page order,
from a directory holding the files they name, against a fake GKE API on loopback
(tests/fake_gke_api.py) that holds the cluster the page adopts. The `accelstack-preview`
and `submit` commands of the page run in the doc-test (tests/test_readme_commands.py)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from fake_gke_api import FakeGkeApi
from infra.adopt.cli.command import adopt
from infra.adopt.gke import api

DOC = ROOT / "docs" / "adopt.md"
DESCRIPTION = ROOT / "stacks" / "descriptions" / "xpk-v5e.json"
# The exit code each command of the page ends with: the first is refused (exit 3).
EXPECTED = [3, 0, 0]


def doc_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
    text = "\n".join(blocks).replace("\\\n", " ")
    return [" ".join(ln.split()) for ln in text.splitlines()
            if ln.strip() and ln.split()[0] == "accelstack-adopt"]


def test_the_docs_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands = doc_commands()
    assert len(commands) == len(EXPECTED)
    shutil.copy(ROOT / "tests/installed/xpk-v5e-deployments.json", tmp_path / "deployments.json")
    monkeypatch.chdir(tmp_path)
    with FakeGkeApi() as gke:
        gke.clusters["projects/my-ml-project/locations/us-west4/clusters/xpk-v5e"] = \
            json.loads(DESCRIPTION.read_text())
        monkeypatch.setenv(api.ENDPOINT_ENV, gke.endpoint)
        monkeypatch.setenv(api.TOKEN_ENV, "doc-token")
        outputs = []
        for command, code in zip(commands, EXPECTED):
            result = CliRunner().invoke(adopt, shlex.split(command)[1:])
            assert result.exit_code == code, (command, result.output)
            outputs.append(result.output)
        assert len(gke.requests) == 1  # only the first reads the API; then --answer
    assert "cluster: datapathProvider: live 'LEGACY_DATAPATH'" in outputs[0]
    assert "Kueue v0.12.2 runs on the cluster" in outputs[2]
    # The shipped stack is what the page's adoption writes, plus its policy waivers.
    written = (tmp_path / "stacks" / "Pulumi.my-xpk.yaml").read_text()
    shipped = (ROOT / "stacks" / "Pulumi.xpk-v5e.yaml").read_text()
    assert shipped.startswith(written)
    assert shipped[len(written):].lstrip().startswith("# Added by hand after the adoption")
