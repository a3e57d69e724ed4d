"""Upgrades and maintenance as stack keys (infra/config/maintenance.py): every refusal is one
FILE:LINE line with exit 2 and nothing declared; what passes reaches the cluster's
maintenancePolicy and the node pools' management and upgradeSettings as pulumi-gcp's own
inputs (tests/provider_types.py), and the outputs contract carries it to the submitter."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import provider_types as pt
from infra import program
from infra.contract import maintenance as m
from infra.contract.outputs import load
from infra.preview import cli as preview
from infra.preview import harness

BASE = [
    "config:",                                   # 1
    "  accelstack:project: my-ml-project",       # 2
    "  accelstack:region: us-central1",          # 3
    "  accelstack:zones: [us-central1-a]",       # 4
    "  accelstack:clusterName: test",            # 5
    "  accelstack:slices:",                      # 6
    "    - accelerator: v5litepod-16",           # 7
    "      count: 1",                            # 8
]
WINDOW = ["  accelstack:maintenanceWindow:",      # 9
          "    start: '2026-01-03T01:00:00Z'",    # 10
          "    end: '2026-01-03T09:00:00Z'",      # 11
          "    recurrence: FREQ=WEEKLY;BYDAY=SA,SU"]  # 12


def exclusion(name: str = "campaign", start: str = "2026-12-01T00:00:00Z",
              end: str = "2026-12-20T00:00:00Z", scope: str | None = None) -> list[str]:
    out = [f"    - name: {name}", f"      start: '{start}'", f"      end: '{end}'"]
    return out + ([f"      scope: {scope}"] if scope else [])


EXCLUSIONS = ["  accelstack:maintenanceExclusions:"]  # 13


def text(*lines: str, sub: dict[int, str] | None = None) -> str:
    base = [(sub or {}).get(i + 1, line) for i, line in enumerate(BASE)]
    return "\n".join(base + list(lines)) + "\n"


CASES = [
    ("window-too-lean", text(*WINDOW, sub={}).replace("BYDAY=SA,SU", "BYDAY=SU"), 9,
     ["maintenanceWindow: opens 32 hours", "GKE needs at least 48 hours"]),
    ("window-offset", text(*WINDOW).replace("01:00:00Z", "01:00:00+02:00"), 10,
     ["maintenanceWindow.start:", "is not an RFC 3339 time in UTC"]),
    ("window-monthly", text(*WINDOW).replace("FREQ=WEEKLY;BYDAY=SA,SU", "FREQ=MONTHLY"), 12,
     ["maintenanceWindow.recurrence: 'FREQ=MONTHLY'", "is not checked offline"]),
    ("window-backwards", text(*WINDOW).replace("T09:00", "T00:00"), 11,
     ["maintenanceWindow.end:", "is not after start"]),
    ("no-upgrades-too-long", text(*WINDOW, *EXCLUSIONS, *exclusion(end="2027-01-15T00:00:00Z")),
     16, ["maintenanceExclusions[0].end: a NO_UPGRADES exclusion lasts at most 30 days",
          "this one lasts 45 days"]),
    ("bad-scope", text(*WINDOW, *EXCLUSIONS, *exclusion(scope="NO_PATCHES")), 17,
     ["maintenanceExclusions[0].scope: 'NO_PATCHES' is not an exclusion scope; allowed: "
      "NO_UPGRADES, NO_MINOR_UPGRADES, NO_MINOR_OR_NODE_UPGRADES"]),
    ("scope-needs-channel", text("  accelstack:gkeVersion: 1.33.5-gke.1080000", *WINDOW[:],
                                 *EXCLUSIONS, *exclusion(scope="NO_MINOR_UPGRADES")), 18,
     ["maintenanceExclusions[0].scope: NO_MINOR_UPGRADES needs a release channel"]),
    ("exclusion-without-window", text(*EXCLUSIONS, *exclusion()), 9,
     ["maintenanceExclusions: needs a maintenanceWindow"]),
    ("too-many-exclusions", text(*WINDOW, *EXCLUSIONS, *[
        line for i in range(21) for line in exclusion(name=f"x{i}")]), 13,
     ["maintenanceExclusions: lists 21 exclusions; GKE keeps at most 20"]),
    ("duplicate-exclusion", text(*WINDOW, *EXCLUSIONS, *exclusion(), *exclusion()), 17,
     ["maintenanceExclusions[1].name: 'campaign' is used twice"]),
    ("auto-upgrade-off-on-channel", text("      upgrade: {autoUpgrade: false}"), 9,
     ["slices[0].upgrade.autoUpgrade: false is not allowed on release channel REGULAR"]),
    ("strategy-on-flex-start", text("      capacity: flex-start",
                                    "      upgrade: {strategy: BLUE_GREEN}"), 10,
     ["slices[0].upgrade.strategy: flex-start nodes are upgraded by GKE's short-lived "
      "strategy"]),
    ("blue-green-multi-host", text("      upgrade: {strategy: BLUE_GREEN}"), 9,
     ["slices[0].upgrade.strategy: a multi-host TPU slice is one unit"]),
    ("surge-multi-host", text("      upgrade: {maxSurge: 1}"), 9,
     ["slices[0].upgrade.maxSurge: a multi-host TPU slice is one unit"]),
    ("nothing-moves", text("      upgrade: {maxUnavailable: 0}"), 9,
     ["slices[0].upgrade: maxSurge 0 and maxUnavailable 0: neither may be negative"]),
    ("unknown-upgrade-key", text("      upgrade: {surge: 1}"), 9,
     ["slices[0].upgrade.surge: unknown key; did you mean maxSurge?"]),
]


@pytest.fixture
def no_build(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    monkeypatch.setattr(program, "build", lambda *a, **k: calls.append(a) or {})
    return calls


@pytest.mark.parametrize("body,line,fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_maintenance_key_is_one_line_naming_file_and_line(
        tmp_path: Path, no_build: list[Any], body: str, line: int, fragments: list[str]) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(body)
    result = CliRunner().invoke(preview.main, [str(path), "--outputs", str(tmp_path / "o.json")])
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{path}:{line}: "), first
    for fragment in fragments:
        assert fragment in first, (fragment, first)
    assert "Traceback" not in result.output and not no_build


def _raw(**extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"project": "my-ml-project", "region": "us-central1",
                           "zones": ["us-central1-a"], "clusterName": "test",
                           "slices": [{"accelerator": "v5litepod-4", "name": "single"},
                                      {"accelerator": "v5litepod-16", "name": "multi"}]}
    raw.update(copy.deepcopy(extra))
    return raw


def _inputs(ev: harness.Evaluation, type_token: str, name: str | None = None) -> dict[str, Any]:
    found = [r for r in ev.resources if r.type == type_token
             and (name is None or r.inputs.get("name") == name)]
    assert found, (type_token, name)
    return dict(found[0].inputs)


NODE_POOL, CLUSTER = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster"


def test_blue_green_settings_are_pulumi_gcp_inputs() -> None:
    raw = _raw()
    raw["slices"][0]["upgrade"] = {"strategy": "BLUE_GREEN", "blueGreen": {
        "batchNodeCount": 1, "batchSoakDuration": "10m", "nodePoolSoakDuration": "1h"}}
    ev = harness.evaluate(raw)
    inputs = _inputs(ev, NODE_POOL, "single")
    assert inputs["upgradeSettings"] == {"strategy": "BLUE_GREEN", "blueGreenSettings": {
        "nodePoolSoakDuration": "3600s",
        "standardRolloutPolicy": {"batchNodeCount": 1, "batchSoakDuration": "600s"}}}
    assert pt.check_resource(NODE_POOL, inputs) == []


def test_surge_counts_and_auto_upgrade_off_without_a_channel() -> None:
    raw = _raw(gkeVersion="1.33.5-gke.1080000")
    raw["slices"][0]["upgrade"] = {"maxSurge": 2, "maxUnavailable": 0, "autoUpgrade": False}
    inputs = _inputs(harness.evaluate(raw), NODE_POOL, "single")
    assert inputs["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 2,
                                         "maxUnavailable": 0}
    assert inputs["management"] == {"autoRepair": True, "autoUpgrade": False}
    assert pt.check_resource(NODE_POOL, inputs) == []


def test_window_and_exclusions_reach_the_cluster_and_the_contract() -> None:
    raw = _raw(maintenanceWindow={"start": "2026-01-03T01:00:00Z",
                                  "end": "2026-01-03T09:00:00Z",
                                  "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"},
               maintenanceExclusions=[{"name": "campaign", "start": "2026-12-01T00:00:00Z",
                                       "end": "2027-01-15T00:00:00Z",
                                       "scope": "NO_MINOR_OR_NODE_UPGRADES"}])
    ev = harness.evaluate(raw)
    cluster = _inputs(ev, CLUSTER)
    assert cluster["maintenancePolicy"]["maintenanceExclusions"] == [{
        "exclusionName": "campaign", "startTime": "2026-12-01T00:00:00Z",
        "endTime": "2027-01-15T00:00:00Z",
        "exclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES"}}]
    assert pt.check_resource(CLUSTER, cluster) == []
    data = {**ev.outputs["accelstack"], "kubeconfig": "stand-in"}  # a secret offline
    outputs = load(data)
    assert outputs.maintenance is not None
    assert outputs.maintenance.exclusions[0].scope == "NO_MINOR_OR_NODE_UPGRADES"
    assert load(outputs.to_dict()).maintenance == outputs.maintenance
    doc = {"stack": "t", "resources": [], "policy": {"findings": []}, "outputs": ev.outputs}
    assert preview.summary(doc)[-1] == (
        "maintenance exclusion campaign: no node upgrades (control-plane patches only) from "
        "2026-12-01T00:00:00Z until 2027-01-15T00:00:00Z")


def test_a_contract_without_maintenance_still_loads() -> None:
    from stack_fixtures import outputs

    data = outputs("v5e-spot").to_dict()
    data.pop("maintenance", None)
    assert load(data).maintenance is None


UTC = timezone.utc
SAT_SUN = m.Window("2026-01-03T01:00:00Z", "2026-01-03T09:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU")


def test_availability_counts_only_stretches_of_four_hours() -> None:
    four = timedelta(hours=4)
    assert m.least_availability(SAT_SUN, 32, four) == timedelta(hours=64)
    daily_3h = m.Window("2026-01-03T01:00:00Z", "2026-01-03T04:00:00Z", "FREQ=DAILY")
    assert m.least_availability(daily_3h, 32, four) == timedelta(0)
    daily_4h = m.Window("2026-01-03T01:00:00Z", "2026-01-03T05:00:00Z", "FREQ=DAILY")
    assert m.least_availability(daily_4h, 32, four) == timedelta(hours=4 * 32)


def test_next_window_skips_what_an_exclusion_covers() -> None:
    info = m.MaintenanceInfo(SAT_SUN, (m.Exclusion("c", "2026-03-01T00:00:00Z",
                                                   "2026-03-16T00:00:00Z", "NO_UPGRADES"),))
    now = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday inside the exclusion
    assert m.next_window(info, now, now + timedelta(days=30)) == (
        datetime(2026, 3, 21, 1, tzinfo=UTC), datetime(2026, 3, 21, 9, tzinfo=UTC))
    patches = m.MaintenanceInfo(SAT_SUN, (m.Exclusion("c", "2026-03-01T00:00:00Z",
                                                      "2026-03-16T00:00:00Z",
                                                      "NO_MINOR_UPGRADES"),))
    assert m.next_window(patches, now, now + timedelta(days=30))[0] == datetime(
        2026, 3, 7, 1, tzinfo=UTC)


def test_a_bad_maintenance_field_in_the_contract_names_its_path() -> None:
    from infra.contract.outputs import ContractError

    bad = {"window": None, "exclusions": [{"name": "x", "start": "2026-12-01T00:00:00Z",
                                           "end": "2026-12-02T00:00:00Z", "scope": "NEVER"}]}
    with pytest.raises(ContractError, match=r"^outputs\.maintenance\.exclusions\[0\]\.scope: "
                                            r"'NEVER' is not one of NO_UPGRADES"):
        m.load(bad, "outputs.maintenance", ContractError)
    with pytest.raises(ContractError, match=r"window\.start: 'soon' is not an RFC 3339 time"):
        m.load({"window": {"start": "soon", "end": "2026-12-02T00:00:00Z",
                           "recurrence": "FREQ=DAILY"}}, "outputs.maintenance", ContractError)
