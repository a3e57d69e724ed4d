"""What a change destroys (issue 43): the ForceNew data held to its source, every shipped
stack's ForceNew field reported as a replacement, the guard, and the offline preview's block."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from infra.config.replace import Allowance
from infra.preview import cli as preview
from infra.replacements import forcenew, guard, summary
from infra.replacements.forcenew import CLUSTER, NODE_POOL

SNAPSHOTS = ROOT / "snapshots"
REFERENCE = (ROOT.parent / "shared" / "reference" / "upstream"
             / "terraform-provider-google-beta-container-forcenew")


def test_data_is_what_the_reference_extraction_gives() -> None:
    if not REFERENCE.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{REFERENCE} is missing")
        pytest.skip("no shared reference beside the checkout")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "forcenew_data.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_data_format() -> None:
    data = json.loads(forcenew.DATA_FILE.read_text())
    assert re.fullmatch(r"[0-9a-f]{40}", data["source"]["commit"])
    assert data["source"]["repo"] == "hashicorp/terraform-provider-google-beta"
    at = re.compile(r"(resource_container_node_pool|resource_container_cluster|node_config)"
                    r"\.go:\d+")
    camel = re.compile(r"[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*")
    assert set(data["resources"]) == {NODE_POOL, CLUSTER}
    for res in data["resources"].values():
        for row in res["forceNew"]:
            assert camel.fullmatch(row["path"]), row
            assert at.fullmatch(row["at"]) and at.fullmatch(row["forceNewAt"]), row
            assert row["kind"] in ("field", "block")
    assert "nodeConfig.reservationAffinity" in forcenew.forcenew_paths(NODE_POOL)
    assert "nodeConfig.spot" in forcenew.forcenew_paths(NODE_POOL)
    assert "placementPolicy.tpuTopology" not in forcenew.forcenew_paths(NODE_POOL)


def test_topology_alone_is_never_harmless() -> None:
    old = {"placementPolicy": {"type": "COMPACT", "tpuTopology": "4x4"}, "nodeCount": 4}
    new = {"placementPolicy": {"type": "COMPACT", "tpuTopology": "4x8"}, "nodeCount": 4}
    change = forcenew.classify(old, new, NODE_POOL)
    assert change.op == "unapplied" and change.destroys
    assert "resource_container_node_pool.go:400" in change.reasons[0].text()


def test_blocks_replace_when_added_or_removed_only() -> None:
    old = {"nodeConfig": {"machineType": "a", "reservationAffinity": None}}
    new = {"nodeConfig": {"machineType": "b"}}
    assert forcenew.classify(old, new, NODE_POOL).op == "update"  # machineType: in place
    new = {"nodeConfig": {"machineType": "a", "reservationAffinity": {
        "consumeReservationType": "ANY_RESERVATION"}}}
    change = forcenew.classify(old, new, NODE_POOL)
    assert change.op == "replace"
    assert {r.rule.path for r in change.reasons} >= {"nodeConfig.reservationAffinity"}
    assert forcenew.classify(None, new, NODE_POOL).op == "create"
    assert forcenew.classify(old, None, NODE_POOL).op == "delete"


@functools.lru_cache(maxsize=1)
def _cluster_docs() -> tuple[tuple[str, dict[str, Any]], ...]:
    out = []
    for path in sorted(SNAPSHOTS.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if any(r["type"] == NODE_POOL for r in doc["resources"]):
            out.append((path.stem, doc))
    return tuple(out)


def _set(inputs: dict[str, Any], path: str) -> bool:
    """Change the value at a schema path in place; whether there was one to change."""
    value: Any = inputs
    parts = path.split(".")
    for part in parts[:-1]:
        while isinstance(value, list):
            if not value:
                return False
            value = value[0]
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    while isinstance(value, list):
        if not value:
            return False
        value = value[0]
    if not isinstance(value, dict) or value.get(parts[-1]) is None:
        return False
    old = value[parts[-1]]
    value[parts[-1]] = (not old if isinstance(old, bool) else old + 1
                        if isinstance(old, (int, float)) else
                        [*old, "changed"] if isinstance(old, list) else
                        {**old, "changed": "x"} if isinstance(old, dict) else f"{old}-changed")
    return True


def _cases() -> list[Any]:
    """Every (shipped stack, accelerator pool, ForceNew field leaf our program sets)."""
    out = []
    for stack, doc in _cluster_docs():
        for r in doc["resources"]:
            if r["type"] != NODE_POOL or summary.facts(r["name"], r["inputs"]) is None:
                continue
            for rule in forcenew.rules(NODE_POOL):
                if rule.kind != "field":
                    continue
                probe = copy.deepcopy(r["inputs"])
                if _set(probe, rule.path):
                    out.append(pytest.param(stack, r["name"], rule.path,
                                            id=f"{stack}-{r['name']}-{rule.path}"))
    return out


@pytest.mark.parametrize(("stack", "pool", "path"), _cases())
def test_a_forcenew_change_of_a_shipped_pool_is_a_refused_replacement(
        stack: str, pool: str, path: str) -> None:
    old = copy.deepcopy(dict(_cluster_docs())[stack])
    new = copy.deepcopy(old)
    res = next(r for r in new["resources"] if r["type"] == NODE_POOL and r["name"] == pool)
    assert _set(res["inputs"], path)
    found = summary.from_documents(old, new)
    (change,) = [c for c in found.changes if c.name == pool]
    assert change.change.op == "replace", (path, change)
    assert change.pool is not None and change.pool.chips > 0
    (line,) = guard.refusals(found, ())
    assert f"accelerator pool {pool} " in line and path.split(".")[-1] in line
    assert guard.refusals(found, (Allowance(pool, "the reason is written"),)) == []
    assert guard.refusals(found, (Allowance(change.pool.slice_pool, "whole slice pool"),)) == []


def test_cases_cover_every_shipped_accelerator_stack() -> None:
    stacks = {c.values[0] for c in _cases()}
    assert {"v5e-spot", "v5p-reserved", "a3mega", "v6e-training"} <= stacks


def test_headline_matches_the_issue() -> None:
    old = copy.deepcopy(dict(_cluster_docs())["v5p-reserved"])
    new = copy.deepcopy(old)
    for r in new["resources"]:
        if r["type"] == NODE_POOL and r["name"].startswith("v5p-128"):
            r["inputs"]["nodeConfig"]["spot"] = True
    found = summary.from_documents(old, new)
    pools = [c for c in found.destroyed_pools]
    n = sum(c.pool.slices for c in pools if c.pool)
    assert summary.headline(found).startswith(
        f"v5p-reserved: replaces {n} TPU slice{'s' if n > 1 else ''} (v5p-128, 64 chips each)")
    assert "$268.80/hour" in summary.headline(found) or n != 1


# ----------------------------------------------------------------------------------
# The command


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copytree(SNAPSHOTS, tmp_path / "snapshots")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_preview_diff_calls_a_capacity_change_a_refused_replacement(project: Path) -> None:
    stack = project / "stacks" / "Pulumi.v5e-spot.yaml"
    stack.write_text(stack.read_text().replace("        mode: spot", "        mode: flex-start"))
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--diff",
                                               "--replacements", "r.json"])
    assert result.exit_code == 3, result.output
    lines = result.stdout.splitlines()
    assert lines[1].startswith("v5e-spot: replaces 2 TPU slices (v5litepod-16, 16 chips each) "
                               "[8 hosts, 32 chips, $15.36/hour]: workloads there not looked up")
    assert any(x.strip().startswith("initialNodeCount forces a new resource (ForceNew) "
                                    "(resource_container_node_pool.go:483)") for x in lines)
    assert ("v5e-spot: refused: the change replaces accelerator pool v5litepod-16-0 "
            "(1 x v5litepod-16): initialNodeCount forces a new resource (ForceNew) "
            "(resource_container_node_pool.go:483)") in result.stderr, result.stderr
    data = json.loads((project / "r.json").read_text())
    (s,) = data["stacks"]
    pools = [c["pool"]["name"] for c in s["changes"] if c.get("pool")]
    assert pools == ["v5litepod-16-0", "v5litepod-16-1"]
    assert s["workloads"] == summary.NOT_LOOKED
    # Allowed with a reason in the stack file: shown, not refused.
    stack.write_text(stack.read_text() + "  accelstack:allowReplace:\n"
                     "    - pool: v5litepod-16\n      reason: moving the slices to flex-start\n")
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--diff"])
    assert result.exit_code == 0, result.output
    assert ("v5e-spot: allowed: replace of accelerator pool v5litepod-16-0: moving the slices "
            "to flex-start") in result.stdout


def test_allowance_errors_name_the_file_and_line(project: Path) -> None:
    stack = project / "stacks" / "Pulumi.v5e-spot.yaml"
    stack.write_text(stack.read_text() + "  accelstack:allowReplace:\n"
                     "    - pool: v5litepod-16\n      reason: short\n")
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--diff"])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert re.fullmatch(r"stacks/Pulumi\.v5e-spot\.yaml:\d+: allowReplace\[0\]\.reason: an "
                        r"allowance needs a written reason .*", line), line


def test_the_allow_flag_needs_a_reason(project: Path) -> None:
    result = CliRunner().invoke(preview.main, ["v5e-spot", "--diff", "--allow", "x"])
    assert result.exit_code == 2
    assert "'x': expected POOL=REASON" in result.output


@pytest.mark.parametrize(("stack", "old", "new", "op", "pool", "field"), [
    # reservation affinity: another reservation (nodeConfig.reservationAffinity.values)
    ("v5p-reserved", "reservation: v5p-128-reservation", "reservation: v5p-128-other",
     "replaces", "v5p-128-0", "nodeConfig.reservationAffinity.values"),
    # topology (and machine shape): another v5e slice shape names other node pools
    ("v5e-spot", "accelerator: v5litepod-16", "accelerator: v5litepod-32", "deletes",
     "v5litepod-16-0", "the node pool is deleted"),
], ids=["v5p-reserved-reservation", "v5e-spot-topology"])
def test_a_stack_change_that_recreates_a_slice_is_refused(
        project: Path, stack: str, old: str, new: str, op: str, pool: str, field: str) -> None:
    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))
    result = CliRunner().invoke(preview.main, [stack, "--diff"])
    assert result.exit_code == 3, result.output
    assert result.stdout.splitlines()[1].startswith(f"{stack}: {op} ")
    assert any(line.startswith(f"{stack}: refused: the change {op} accelerator pool {pool} ")
               and field in line for line in result.stderr.splitlines()), result.stderr
