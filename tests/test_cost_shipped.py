"""The shipped stacks' costs, checked by hand: each part's $/hour in the committed snapshot
is the count a reader takes from the stack file times the price a reader finds in
infra/cost/prices.yaml (the entry of that item, region and mode), nothing more.

The counts below are written out from stacks/*.yaml and the accelerator's shape (chips per
slice for a TPU, VMs for a GPU or CPU pool); the prices are read from the table file as
plain YAML, without the pricing code's lookup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from infra.cost import table as prices
from infra.preview import cli as preview

TABLE = ROOT / "infra" / "cost" / "prices.yaml"
FEE = ("gke/cluster-fee", "*", "*")

# stack -> [(part, units, (item, region, mode)) or (part, units, None) when unpriced]
HAND: dict[str, list[tuple[str, int, tuple[str, str, str] | None]]] = {
    "a3mega": [
        # 2 a3-megagpu-8g VMs from a reservation: no A3 Mega price is in the table.
        ("pool h100-mega-80gb-8", 2, None),
        ("system pool", 3, ("vm/e2-standard-8", "us-east4", "on-demand")),  # maxNodes default 3
        ("cluster fee", 1, FEE),
    ],
    "a4x": [
        ("pool gb200-4", 18, None),  # 18 a4x-highgpu-4g VMs: no A4X price in the table
        ("system pool", 3, ("vm/e2-standard-8", "us-central1", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "tpu7x-dynamic": [
        ("pool ironwood", 8 * 64, None),  # 8 sub-blocks of 64 chips: no TPU7x price in the table
        ("system pool", 4, ("vm/n2-standard-8", "us-central1", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "fleet-east": [
        ("pool v6e-16", 2 * 16, ("tpu/v6e", "us-east5", "spot")),
        ("system pool", 3, ("vm/e2-standard-8", "us-east5", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "fleet-manager": [
        ("pool n2-standard-8-1", 1, ("vm/n2-standard-8", "us-central1", "on-demand")),
        ("system pool", 3, ("vm/e2-standard-4", "us-central1", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    # Adopted from xpk: its two Spot slices, the stack's own system pool, the fee; xpk's
    # default-pool is kept as it is, not declared, so not priced (docs/limits.md).
    "xpk-v5e": [
        ("pool xpk-v5e-np", 2 * 16, ("tpu/v5e", "us-west4", "spot")),
        ("system pool", 3, ("vm/e2-standard-8", "us-west4", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    # An in-cluster stack: nothing of its own that GCP bills (the pools are another team's).
    "xpk-layer": [],
    # A pools stack: its own slices on v5e-spot's cluster (us-west4), no fee.
    "v5e-extra": [("pool extra", 2 * 16, ("tpu/v5e", "us-west4", "spot"))],
    "v5e-spot": [
        ("pool v5litepod-16", 2 * 16, ("tpu/v5e", "us-west4", "spot")),
        ("system pool", 3, ("vm/e2-standard-8", "us-west4", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "v5p-reserved": [
        # v5p-128 is 128 TensorCores, 64 chips. A reservation is priced as committed use;
        # the table has no v5p committed figure, so at the on-demand rate.
        ("pool v5p-128", 64, ("tpu/v5p", "us-east5", "on-demand")),
        ("system pool", 4, ("vm/n2-standard-8", "us-east5", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "v6e-burst": [
        # A reservation: no v6e committed figure is sourced (docs/cost.md), so at the
        # region's on-demand rate.
        ("pool interactive", 16, ("tpu/v6e", "us-east5", "on-demand")),
        ("system pool", 4, ("vm/e2-standard-8", "us-east5", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "v6e-mtc": [
        ("pool v6e-spot", 2 * 64, ("tpu/v6e", "us-east5", "spot")),
        ("system pool", 4, ("vm/e2-standard-16", "us-east5", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
    "v6e-training": [
        ("pool v6e-256", 4 * 256, ("tpu/v6e", "us-east5", "on-demand")),
        ("Pathways head pool pathways-head", 2, ("vm/n2-standard-64", "us-east5", "on-demand")),
        ("system pool", 6, ("vm/e2-standard-16", "us-east5", "on-demand")),
        ("cluster fee", 1, FEE),
    ],
}


def _table_usd(item: str, region: str, mode: str) -> float:
    """The one entry of the table file with exactly this item, region and mode."""
    found = [p["usd"] for p in yaml.safe_load(TABLE.read_text())["prices"]
             if (p["item"], p["region"], p["mode"]) == (item, region, mode)]
    assert len(found) == 1, f"{item} {region} {mode}: {len(found)} entries in {TABLE}"
    return float(found[0])


def _snapshot_cost(stack: str) -> dict[str, Any]:
    cost: dict[str, Any] = yaml.safe_load(
        (ROOT / "snapshots" / f"{stack}.yaml").read_text())["cost"]
    return cost


def test_every_shipped_cluster_or_pools_stack_is_checked() -> None:
    stacks = {p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")}
    assert stacks - set(HAND) == {"fleet"}  # a fleet stack prices nothing of its own
    assert _snapshot_cost("fleet")["perHour"] is None


@pytest.mark.parametrize("stack", sorted(HAND))
def test_a_shipped_stack_costs_what_a_hand_computation_from_the_table_gives(stack: str) -> None:
    cost = _snapshot_cost(stack)
    lines = {line["part"]: line for line in cost["lines"]}
    assert set(lines) == {part for part, _, _ in HAND[stack]}
    total = 0.0
    unpriced = []
    for part, units, key in HAND[stack]:
        if key is None:
            assert lines[part]["perHour"] is None, part
            unpriced.append(part)
            continue
        by_hand = units * _table_usd(*key)
        assert lines[part]["perHour"] == pytest.approx(by_hand, abs=1e-4), part
        total += by_hand
    assert cost["perHour"]["total"] == pytest.approx(total, abs=1e-3)
    assert cost["perHour"]["unknownParts"] == unpriced
    assert cost["perHour"]["complete"] is (not unpriced)


def test_no_v6e_committed_figure_from_a_news_report() -> None:
    # Issue 42: the 1- and 3-year v6e figures were a news article's "starting at" quote;
    # without Google's own figure or a Catalog SKU they are unknown, never zero.
    table = prices.load()
    for mode in ("committed-1y", "committed-3y"):
        assert table.find("tpu/v6e", "us-east5", mode) is None
    assert not [p for p in table.prices if "neowin" in p.source and "committed" in p.mode]


@pytest.mark.parametrize("stack", ["v5p-reserved", "v6e-training"])
def test_the_snapshot_is_what_the_preview_prints_now(stack: str) -> None:
    path = Path(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    assert preview.desired_state(path)["cost"] == _snapshot_cost(stack)


def test_v6e_burst_s_slice_classes_by_hand() -> None:
    """A class's range: each shape in each capacity mode, per slice and at its limits."""
    classes = {c["class"]: c for c in _snapshot_cost("v6e-burst")["sliceClasses"]}
    committed = _table_usd("tpu/v6e", "us-east5", "on-demand")  # the reservation
    spot = _table_usd("tpu/v6e", "us-east5", "spot")
    on_demand = _table_usd("tpu/v6e", "us-east5", "on-demand")
    low, high = min(committed, spot, on_demand), max(committed, spot, on_demand)
    burst = classes["burst"]  # shapes v6e-16 and v6e-64; at most 256 chips and 8 slices
    assert burst["perSlice"] == pytest.approx({"low": 16 * low, "high": 64 * high})
    assert burst["atLimits"] == pytest.approx({"chips": 256, "low": 256 * low,
                                               "high": 256 * high})
    assert burst["unknown"] == []
    short = classes["short"]  # v6e-8-1vm (8 chips), flex-start then Spot, at most 4 slices
    assert short["perSlice"] == pytest.approx({"low": 8 * spot, "high": 8 * spot})
    assert short["atLimits"] == pytest.approx({"chips": 32, "low": 32 * spot,
                                               "high": 32 * spot})
    assert short["unknown"] == ["v6e-8-1vm flex-start"]  # no flex-start price is known
