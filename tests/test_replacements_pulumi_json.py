"""The replacement summary from the real CLI's `pulumi preview --json`: recorded documents
(tests/data/pulumi_preview/, written to pulumi's PreviewDigest/PreviewStep format, sdk/pkg/
display/json.go@6804a1e) covering replace, create-replacement, delete-replaced, update,
delete and create; the same summary as the offline preview gives for the same change."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from infra.replacements import summary
from infra.replacements.__main__ import run, show
from infra.replacements.pulumi_json import PreviewJsonError, from_preview

DATA = Path(__file__).parent / "data" / "pulumi_preview"


def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return doc


def test_recorded_documents_have_the_digest_format() -> None:
    ops = set()
    for path in DATA.glob("*.json"):
        doc = json.loads(path.read_text())
        assert set(doc) <= {"config", "steps", "diagnostics", "duration", "changeSummary",
                            "maybeCorrupt"}
        for step in doc["steps"]:
            assert set(step) <= {"op", "urn", "provider", "oldState", "newState",
                                 "diffReasons", "replaceReasons", "detailedDiff"}
            assert "detailedDiff" in step  # no omitempty on it
            ops.add(step["op"])
    assert {"replace", "create-replacement", "delete-replaced", "update", "delete",
            "create", "same"} <= ops


def _offline(change: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    old = yaml.safe_load((ROOT / "snapshots" / "v5e-spot.yaml").read_text())
    new = copy.deepcopy(old)
    change(new)
    return old, new


def _pool(doc: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in doc["resources"] if r["name"] == name and
                                 r["type"] == "gcp:container/nodePool:NodePool")
    return found


def _same(a: summary.Summary, b: summary.Summary) -> None:
    da, db = a.to_dict(), b.to_dict()
    da.pop("source"), db.pop("source")
    assert da == db


def test_a_replacement_reads_the_same_both_ways() -> None:
    cli = from_preview(_load("replace"), "v5e-spot")

    def change(doc: dict[str, Any]) -> None:
        _pool(doc, "v5litepod-16-0")["inputs"]["nodeConfig"]["reservationAffinity"] = {
            "consumeReservationType": "ANY_RESERVATION"}
        _pool(doc, "system")["inputs"]["autoscaling"]["maxNodeCount"] = 4
    _same(cli, summary.from_documents(*_offline(change)))
    assert cli.counts() == {"replace": 1, "update": 1}
    assert summary.headline(cli).startswith(
        "v5e-spot: replaces 1 TPU slice (v5litepod-16, 16 chips each) [4 hosts, 16 chips, "
        "$7.68/hour]")


def test_a_topology_only_update_is_not_harmless() -> None:
    cli = from_preview(_load("update-topology"), "v5e-spot")
    (c,) = cli.changes
    assert c.change.op == "unapplied" and c.pool is not None

    def change(doc: dict[str, Any]) -> None:
        _pool(doc, "v5litepod-16-0")["inputs"]["placementPolicy"]["tpuTopology"] = "2x8"
    _same(cli, summary.from_documents(*_offline(change)))


def test_delete_and_create() -> None:
    cli = from_preview(_load("delete-create"), "v5e-spot")
    assert {(c.name, c.change.op) for c in cli.changes} == {("v5litepod-16-1", "delete"),
                                                              ("v5litepod-16-2", "create")}
    assert [c.name for c in cli.destroyed_pools] == ["v5litepod-16-1"]


def test_the_command_refuses_unless_allowed(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    preview = str(DATA / "replace.json")
    assert run(["pulumi-json", preview, "--stack", "v5e-spot"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("v5e-spot: refused: the change replaces accelerator pool "
                          "v5litepod-16-0 (1 x v5litepod-16): nodeConfig.reservationAffinity."
                          "consumeReservationType forces a new resource (ForceNew) "
                          "(node_config.go:")
    stack = tmp_path / "Pulumi.v5e-spot.yaml"
    stack.write_text((ROOT / "stacks" / "Pulumi.v5e-spot.yaml").read_text()
                     + "  accelstack:allowReplace:\n    - pool: v5litepod-16-0\n"
                       "      reason: reservations arrive on Monday\n")
    out = tmp_path / "r.json"
    assert run(["pulumi-json", preview, "--stack", "v5e-spot", "--stack-file", str(stack),
                "--out", str(out)]) == 0
    assert "v5e-spot: allowed: replace of accelerator pool v5litepod-16-0: reservations " \
           "arrive on Monday" in capsys.readouterr().out
    md = show(json.loads(out.read_text()))
    assert md[2].startswith("- **v5e-spot: replaces 1 TPU slice (v5litepod-16, 16 chips "
                            "each) [4 hosts, 16 chips, $7.68/hour]**: workloads there not "
                            "looked up")


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text('{"steps": [{"op": "teleport", "urn": "urn:pulumi:s::p::t::n"}]}')
    with pytest.raises(PreviewJsonError):
        from_preview(json.loads(bad.read_text()), "s")
    done = subprocess.run([sys.executable, "-m", "infra.replacements", "pulumi-json", str(bad),
                           "--stack", "s"], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"python -m infra.replacements: {bad}: urn:pulumi:s::p::t::n: unknown step op(s) "
        "teleport"]


FAKE_PULUMI = """#!/bin/sh
printf '%s\\n' "$*" >> "$CALLS"
cat "$PREVIEW_JSON"
"""
FAKE_SUBMIT = """#!/bin/sh
printf 'submit %s\\n' "$*" >> "$CALLS"
echo "could not look (fake)" >&2
exit 1
"""


def test_the_workflow_script_leads_the_summary_and_refuses(tmp_path: Path) -> None:
    """`.github/scripts/pulumi-stack.sh replacements`, the PR preview job's first step."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("pulumi", FAKE_PULUMI), ("submit", FAKE_SUBMIT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    work = tmp_path / "w"
    (work / "stacks").mkdir(parents=True)
    (work / "stacks" / "Pulumi.v5e-spot.yaml").write_text(
        (ROOT / "stacks" / "Pulumi.v5e-spot.yaml").read_text())
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CALLS": str(tmp_path / "calls"),
           "PREVIEW_JSON": str(DATA / "replace.json"), "STACK": "v5e-spot",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "PYTHON": sys.executable,
           "SUBMIT": str(bin_dir / "submit"), "PYTHONPATH": str(ROOT)}
    res = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "pulumi-stack.sh"),
                          "replacements"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert res.returncode == 3, res.stderr
    assert "refused: the change replaces accelerator pool v5litepod-16-0" in res.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == ["preview --stack v5e-spot --non-interactive --refresh --json",
                     "submit cluster at-risk --stack v5e-spot --replacements "
                     "destroys-v5e-spot.json"]
    summary_md = (tmp_path / "summary.md").read_text().splitlines()
    assert summary_md[0] == "## What this change destroys"
    assert summary_md[2].startswith("- **v5e-spot: replaces 1 TPU slice (v5litepod-16, 16 "
                                    "chips each)")
