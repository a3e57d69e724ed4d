"""`accelstack-preview` on fleet and pools stacks whose refusals depend on the stacks they
reference: each refusal is one line naming FILE:LINE, exit 2, no traceback; a misspelt
stack gets the nearest name, a fleet or pools stack where a cluster stack belongs is named
as such."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from infra.preview import cli as preview

STACKS = ("fleet", "fleet-manager", "fleet-east", "v5e-spot", "v5e-extra")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    for name in STACKS:
        shutil.copy(ROOT / "stacks" / f"Pulumi.{name}.yaml", root / "stacks")
    monkeypatch.chdir(root)
    return root


def _edit(root: Path, stack: str, old: str, new: str) -> None:
    path = root / "stacks" / f"Pulumi.{stack}.yaml"
    text = path.read_text()
    assert old in text, (stack, old)
    path.write_text(text.replace(old, new, 1))


def _refused(stack: str) -> list[str]:
    result = CliRunner().invoke(preview.main, [stack, "--summary"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.exception is None or \
        isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    for line in lines:
        assert re.match(r"^stacks/Pulumi\.[-a-z0-9]+\.yaml:\d+: ", line), line
    return lines


def _line(root: Path, stack: str, text: str) -> int:
    lines = (root / "stacks" / f"Pulumi.{stack}.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_the_shipped_fleet_previews(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["fleet", "--summary"])
    assert result.exit_code == 0, result.output


def test_a_misspelt_worker_gets_the_nearest_stack(project: Path) -> None:
    _edit(project, "fleet", "my-org/accelstack/v5e-spot", "my-org/accelstack/v5e-spto")
    n = _line(project, "fleet", "v5e-spto")
    assert _refused("fleet") == [
        f"stacks/Pulumi.fleet.yaml:{n}: fleet.workers[0].stack: 'my-org/accelstack/v5e-spto': "
        "no stack 'v5e-spto' in stacks; did you mean v5e-spot?"]


def test_a_fleet_or_pools_stack_as_a_worker_is_named_so(project: Path) -> None:
    _edit(project, "fleet", "my-org/accelstack/v5e-spot", "my-org/accelstack/v5e-extra")
    _edit(project, "fleet", "my-org/accelstack/fleet-manager", "fleet")
    assert _refused("fleet") == [
        f"stacks/Pulumi.fleet.yaml:{_line(project, 'fleet', 'stack: fleet')}: "
        "fleet.manager.stack: 'fleet' is this fleet stack itself (a cycle)"]
    _edit(project, "fleet", "stack: fleet\n", "stack: my-org/accelstack/fleet-manager\n")
    assert _refused("fleet") == [
        f"stacks/Pulumi.fleet.yaml:{_line(project, 'fleet', 'v5e-extra')}: "
        "fleet.workers[0].stack: 'my-org/accelstack/v5e-extra' is a pools stack (on the "
        "cluster of 'my-org/accelstack/v5e-spot'), not a cluster stack; name the cluster "
        "stack"]


@pytest.mark.parametrize("host,message", [
    ("fleet", "'fleet' is a fleet, not a cluster stack"),
    ("v5e-extra", "'v5e-extra' is a pools stack (on the cluster of "
                  "'my-org/accelstack/v5e-spot'), not a cluster stack; name the cluster stack"),
    ("v5e-spto", "'v5e-spto': no stack 'v5e-spto' in stacks; did you mean v5e-spot?"),
])
def test_a_pools_stack_on_what_is_not_a_cluster_stack(project: Path, host: str,
                                                      message: str) -> None:
    if host == "v5e-extra":  # a second pools stack on the first
        shutil.copy(project / "stacks" / "Pulumi.v5e-extra.yaml",
                    project / "stacks" / "Pulumi.v5e-more.yaml")
        _edit(project, "v5e-more", "my-org/accelstack/v5e-spot", host)
        stack = "v5e-more"
    else:
        _edit(project, "v5e-extra", "my-org/accelstack/v5e-spot", host)
        stack = "v5e-extra"
    n = _line(project, stack, "    stack: ")
    assert _refused(stack) == [f"stacks/Pulumi.{stack}.yaml:{n}: onCluster.stack: {message}"]


def test_refusals_read_from_the_referenced_contracts_are_one_line_each(
        project: Path) -> None:
    # version mismatch, a private worker without k8s tokens, a missing namespace
    _edit(project, "fleet-east", "kueueVersion: v0.19.2", "kueueVersion: v0.18.0")
    _edit(project, "fleet-east", "  accelstack:dnsEndpoint:\n    k8sTokens: true\n",
          "  accelstack:dnsEndpoint: true\n")
    _edit(project, "fleet", "namespaces: [training]", "namespaces: [training, evals]")
    lines = _refused("fleet")
    east = _line(project, "fleet", "name: east")
    assert f"stacks/Pulumi.fleet.yaml:{east}: fleet.workers[1]: worker east " \
           "(my-org/accelstack/fleet-east) runs Kueue v0.18.0, the manager v0.19.2; set the " \
           "same addons.kueueVersion in both stacks" in lines
    assert any(line.startswith(f"stacks/Pulumi.fleet.yaml:{east}: fleet.workers[1]: worker "
                               "east has privateEndpoint on") for line in lines)
    assert any("namespace 'evals' is missing on worker west" in line for line in lines)


def test_a_closed_ip_endpoint_and_a_manager_by_short_name(project: Path) -> None:
    _edit(project, "v5e-spot", "cidr: 203.0.113.0/24", "cidr: 198.51.100.0/24")
    _edit(project, "fleet", "stack: my-org/accelstack/fleet-manager", "stack: fleet-manager")
    west = _line(project, "fleet", "name: west")
    assert any(line.startswith(f"stacks/Pulumi.fleet.yaml:{west}: fleet.workers[0]: worker "
                               "west's masterAuthorizedNetworks do not let the manager in")
               for line in _refused("fleet"))


def test_nothing_but_the_refusal_reaches_stderr(project: Path) -> None:
    # asyncio would log every output that held the refusal ("Future exception was never
    # retrieved", with a traceback) as the process ends.
    _edit(project, "fleet-east", "kueueVersion: v0.19.2", "kueueVersion: v0.18.0")
    r = subprocess.run([sys.executable, "-c", "from infra.preview import main; main()",
                        "fleet", "--summary"], capture_output=True, text=True, cwd=project,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    east = _line(project, "fleet", "name: east")
    assert (r.returncode, r.stderr) == (2, (
        f"stacks/Pulumi.fleet.yaml:{east}: fleet.workers[1]: worker east "
        "(my-org/accelstack/fleet-east) runs Kueue v0.18.0, the manager v0.19.2; set the "
        "same addons.kueueVersion in both stacks\n"))


def test_a_worker_of_two_fleets_is_refused(project: Path) -> None:
    # A second fleet, on another manager, with the west worker spelt otherwise.
    other = (project / "stacks" / "Pulumi.fleet.yaml").read_text().replace(
        "name: research", "name: other").replace(
        "my-org/accelstack/v5e-spot", "v5e-spot").replace(
        "      - name: east\n        stack: my-org/accelstack/fleet-east\n", "")
    (project / "stacks" / "Pulumi.fleet-two.yaml").write_text(other)
    west = _line(project, "fleet", "name: west") + 1
    assert _refused("fleet") == [
        f"stacks/Pulumi.fleet.yaml:{west}: fleet.workers[0].stack: "
        "'my-org/accelstack/v5e-spot' is also a worker of the fleet stack 'fleet-two' "
        "(Pulumi.fleet-two.yaml); a worker is in one fleet"]
