"""What a stack costs (infra/cost): the price table, the figures per part, the preview's
summary and snapshot diff in $/hour, and the budget rule. Unknown prices are never zero."""

from __future__ import annotations

import copy
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from conftest import MINIMAL, ROOT
from infra.config.stack import ConfigError, parse
from infra.cost import price, table as prices
from infra.policy import rules as policy
from infra.preview import cli as preview
from infra.preview import harness

SRC = "https://example.test/pricing"  # a stand-in source for the tests' own tables


def _table(*entries: tuple[str, str, str, str, float], as_of: str = "2026-11-01",
           max_age: int = 90) -> prices.Table:
    return prices.parse({"asOf": as_of, "maxAgeDays": max_age, "prices": [
        {"item": i, "unit": u, "region": r, "mode": m, "usd": usd, "source": SRC,
         "date": as_of} for i, u, r, m, usd in entries]}, "test")


FEE = ("gke/cluster-fee", "cluster-hour", "*", "*", 0.10)


# ----------------------------------------------------------------------------------
# The table


def test_the_shipped_table_loads_and_cites_every_price() -> None:
    t = prices.shipped()
    assert t.prices
    for p in t.prices:
        # A page's URL, or the Catalog SKUs `accelstack-prices refresh` writes.
        assert p.usd > 0 and p.date
        assert p.source.startswith(("https://", "cloudbilling services/")), p.source
    fee = t.find(prices.CLUSTER_FEE, "us-east5", "on-demand")
    assert fee is not None and fee.usd == 0.10
    assert fee.source == "https://cloud.google.com/kubernetes-engine/pricing"


@pytest.mark.parametrize("usd", [0, 0.0, -1, "1.2", True])
def test_a_zero_or_bad_price_is_refused(usd: Any) -> None:
    with pytest.raises(prices.TableError, match=r"test: prices\[0\]\.usd: .* is not a "
                                                 r"positive number"):
        prices.parse({"asOf": "2026-11-01", "prices": [
            {"item": "tpu/v5e", "unit": "chip-hour", "region": "*", "mode": "spot",
             "usd": usd, "source": SRC, "date": "2026-11-01"}]}, "test")


def test_a_region_s_own_price_comes_before_the_one_for_all_regions() -> None:
    t = _table(("tpu/v5e", "chip-hour", "*", "spot", 1.0),
               ("tpu/v5e", "chip-hour", "us-west4", "spot", 2.0))
    assert t.find("tpu/v5e", "us-west4", "spot").usd == 2.0  # type: ignore[union-attr]
    assert t.find("tpu/v5e", "us-east5", "spot").usd == 1.0  # type: ignore[union-attr]
    assert t.find("tpu/v5e", "us-east5", "on-demand") is None


def test_an_old_table_warns_with_its_date() -> None:
    t = _table(as_of="2026-01-01", max_age=30)
    assert t.age_warning(date(2026, 1, 31)) is None
    warning = t.age_warning(date(2026, 2, 1))
    assert warning is not None
    assert warning.startswith("the price table is 31 days old (as of 2026-01-01, older than "
                              "30 days)")


# ----------------------------------------------------------------------------------
# Figures, checked by hand


def _cfg(**changes: Any) -> Any:
    raw = copy.deepcopy(MINIMAL)
    raw.update(changes)
    return parse(raw)


def test_a_stack_by_hand() -> None:
    # One v5litepod-16 slice (16 chips) on demand, a system pool of e2-standard-4 (at most
    # 3 nodes per zone, in 2 zones), and the fee.
    cfg = _cfg(systemPool={"machineType": "e2-standard-4", "minNodes": 1, "maxNodes": 3},
               zones=["us-central1-a", "us-central1-b"])
    t = _table(("tpu/v5e", "chip-hour", "us-central1", "on-demand", 1.2),
               ("vm/e2-standard-4", "vm-hour", "us-central1", "on-demand", 0.13), FEE)
    fig = price.price_stack(cfg, t)
    by_part = {line.part: line for line in fig.lines}
    pool = by_part["pool v5litepod-16"]
    assert pool.per_hour == pytest.approx(16 * 1.2)
    assert pool.size == "1 x v5litepod-16: 4 VMs, 16 chips"
    assert pool.basis == f"16 x $1.2/chip-hour (tpu/v5e, {SRC} (2026-11-01))"
    # The system pool at its maximum: 3 nodes in each of 2 zones.
    assert by_part["system pool"].per_hour == pytest.approx(6 * 0.13)
    assert by_part["cluster fee"].per_hour == pytest.approx(0.10)
    assert fig.known_total == pytest.approx(19.2 + 0.78 + 0.10)
    assert fig.unknown == ()
    assert fig.total_text() == "$20.08/hour"
    assert fig.to_dict()["perHour"] == {"total": 20.08, "complete": True, "unknownParts": []}


def test_an_unknown_price_is_never_zero() -> None:
    fig = price.price_stack(_cfg(), _table(FEE))
    pool = next(line for line in fig.lines if line.part.startswith("pool"))
    assert pool.per_hour is None
    assert pool.basis == "unknown: no tpu/v5e on-demand price in us-central1 in the table"
    assert fig.known_total == pytest.approx(0.10)
    assert fig.total_text() == ("at least $0.10/hour + unknown (2 parts unpriced: pool "
                                "v5litepod-16, system pool)")
    data = fig.to_dict()
    assert data["perHour"]["complete"] is False
    assert data["lines"][0]["perHour"] is None
    assert "unknown/hour  pool v5litepod-16" in "\n".join(price.summary_lines(fig))
    assert price.total_text(0.0, ["pool a"]) == "unknown (1 part unpriced: pool a)"


def test_a_reservation_is_priced_as_committed_use_never_free() -> None:
    cfg = _cfg(slices=[{"accelerator": "v5litepod-16", "count": 1,
                        "capacity": {"mode": "reservation", "reservation": "r"}}])
    on_demand = _table(("tpu/v5e", "chip-hour", "*", "on-demand", 1.2), FEE)
    line = price.price_stack(cfg, on_demand).lines[0]
    assert line.label == "reservation, priced as committed use (on-demand rate)"
    assert line.per_hour == pytest.approx(19.2)
    committed = _table(("tpu/v5e", "chip-hour", "*", "on-demand", 1.2),
                       ("tpu/v5e", "chip-hour", "*", "committed-1y", 0.84), FEE)
    line = price.price_stack(cfg, committed).lines[0]
    assert line.label == "reservation, priced as committed use (committed-1y rate)"
    assert line.per_hour == pytest.approx(16 * 0.84)
    assert price.price_stack(cfg, _table(FEE)).lines[0].per_hour is None


def test_queued_provisioning_is_priced_at_flex_start_rates() -> None:
    cfg = _cfg(slices=[{"accelerator": "v5litepod-16", "count": 1,
                        "capacity": {"mode": "queued"}}])
    t = _table(("tpu/v5e", "chip-hour", "*", "flex-start", 0.9),
               ("tpu/v5e", "chip-hour", "*", "on-demand", 1.2))
    line = price.price_stack(cfg, t).lines[0]
    assert line.label == "queued provisioning, at flex-start rates"
    assert line.per_hour == pytest.approx(16 * 0.9)


def test_gpu_and_cpu_pools_are_priced_per_whole_vm() -> None:
    cfg = _cfg(slices=[{"accelerator": "n2-standard-8-1", "count": 3}])
    t = _table(("vm/n2-standard-8", "vm-hour", "us-central1", "on-demand", 0.39))
    line = price.price_stack(cfg, t).lines[0]
    assert line.size == "3 x n2-standard-8-1: 3 x n2-standard-8"
    assert line.per_hour == pytest.approx(3 * 0.39)


def test_a_slice_class_is_a_range_and_stays_out_of_the_total() -> None:
    ev = harness.evaluate_file(ROOT / "stacks" / "Pulumi.v6e-burst.yaml")
    t = _table(("tpu/v6e", "chip-hour", "*", "on-demand", 2.7),
               ("tpu/v6e", "chip-hour", "*", "committed-1y", 1.89),
               ("tpu/v6e", "chip-hour", "*", "spot", 1.0), FEE)
    fig = price.price_stack(ev.config, t)
    burst = next(c for c in fig.classes if c.name == "burst")
    # v6e-16 (16 chips) at the cheapest (spot), v6e-64 (64 chips) at the dearest (on-demand).
    assert burst.slice_low == pytest.approx(16.0) and burst.slice_high == pytest.approx(172.8)
    # At its limits: 256 chips (8 slices of up to 64 chips, at most 256 chips).
    assert burst.full_chips == 256
    assert burst.full_low == pytest.approx(256.0) and burst.full_high == pytest.approx(691.2)
    assert burst.unknown == ()
    short = next(c for c in fig.classes if c.name == "short")
    assert short.unknown == ("v6e-8-1vm flex-start",)  # the table has no flex-start price
    assert short.slice_low == pytest.approx(8.0)
    # Classes cost nothing while idle: the total is the reserved pool and the fee only.
    assert {line.part for line in fig.lines} == {"pool interactive", "system pool",
                                                 "cluster fee"}


def test_a_pools_stack_pays_no_fee_and_a_fleet_prices_nothing() -> None:
    extra = preview.desired_state(ROOT / "stacks" / "Pulumi.v5e-extra.yaml")["cost"]
    assert extra["kind"] == "pools"
    assert [line["part"] for line in extra["lines"]] == ["pool extra"]
    fleet = preview.desired_state(ROOT / "stacks" / "Pulumi.fleet.yaml")["cost"]
    assert fleet["kind"] == "fleet" and fleet["perHour"] is None


# ----------------------------------------------------------------------------------
# The preview


def test_the_shipped_stacks_cost_what_the_table_says() -> None:
    doc = preview.desired_state(ROOT / "stacks" / "Pulumi.v6e-training.yaml")
    v6e = prices.shipped().find("tpu/v6e", "us-east5", "on-demand")
    assert v6e is not None
    lines = {line["part"]: line for line in doc["cost"]["lines"]}
    # Four v6e-256 slices: 1,024 chips.
    assert lines["pool v6e-256"]["perHour"] == pytest.approx(1024 * v6e.usd)
    assert lines["cluster fee"]["perHour"] == pytest.approx(0.10)
    assert lines["Pathways head pool pathways-head"]["size"] == \
        "2 x n2-standard-64-1: 2 x n2-standard-64"
    result = CliRunner().invoke(preview.main, ["--summary", str(
        ROOT / "stacks" / "Pulumi.v6e-training.yaml")])
    assert result.exit_code == 0, result.output
    assert f"${1024 * v6e.usd:,.2f}/hour  pool v6e-256: 4 x v6e-256: 256 VMs, 1024 chips" \
        in result.output


def test_json_output_carries_the_figures() -> None:
    result = CliRunner().invoke(preview.main, ["-o", "json", str(
        ROOT / "stacks" / "Pulumi.v6e-burst.yaml")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["cost"] == preview.desired_state(
        ROOT / "stacks" / "Pulumi.v6e-burst.yaml")["cost"]
    assert doc["cost"]["sliceClasses"][0]["class"] == "burst"


def test_the_snapshot_diff_shows_a_count_change_in_dollars(tmp_path: Path) -> None:
    src = (ROOT / "stacks" / "Pulumi.v6e-training.yaml").read_text()
    before = tmp_path / "Pulumi.v6e-training.yaml"
    before.write_text(src)
    old = preview.desired_state(before)
    before.write_text(src.replace("      count: 4", "      count: 2"))
    lines = preview.diff(old, preview.desired_state(before))
    v6e = prices.shipped().find("tpu/v6e", "us-east5", "on-demand")
    assert v6e is not None
    a, b = 1024 * v6e.usd, 512 * v6e.usd
    assert "~ cost ($/hour while the stack stands)" in lines
    assert (f"    ~ pool v6e-256: ${a:,.2f} -> ${b:,.2f} (-${a - b:,.2f}) (4 x v6e-256: "
            "256 VMs, 1024 chips; on-demand -> 2 x v6e-256: 128 VMs, 512 chips; on-demand)"
            ) in lines
    # The rest of the stack, by hand from the table: 2 Pathways head VMs, 6 system VMs, the fee.
    head = prices.shipped().find("vm/n2-standard-64", "us-east5", "on-demand")
    system = prices.shipped().find("vm/e2-standard-16", "us-east5", "on-demand")
    assert head is not None and system is not None
    rest = 2 * head.usd + 6 * system.usd + 0.10
    total = next(line for line in lines if line.startswith("    total: "))
    assert total == f"    total: ${a + rest:,.2f}/hour -> ${b + rest:,.2f}/hour"
    assert preview.diff(old, old) == []


def test_an_old_price_table_warns_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _table(FEE, as_of="2020-01-01")
    monkeypatch.setattr(prices, "shipped", lambda: old)
    result = CliRunner().invoke(preview.main, ["--summary", str(
        ROOT / "stacks" / "Pulumi.fleet.yaml")])
    assert result.exit_code == 0, result.output
    assert "warning: the price table is" in result.stderr
    assert "(as of 2020-01-01, older than 90 days)" in result.stderr


# ----------------------------------------------------------------------------------
# The budget rule


def _budget_findings(budget: float | None) -> list[policy.Finding]:
    raw = copy.deepcopy(MINIMAL)
    raw["region"], raw["zones"] = "us-east5", ["us-east5-b"]
    raw["slices"] = [{"accelerator": "v6e-16", "count": 2}]
    if budget is not None:
        raw["policy"] = {"budgetPerHour": budget}
    ev = harness.evaluate(raw, "budget")
    items = [policy.Item(r.type, r.name, harness._plain(r.inputs)) for r in ev.resources]
    return [f for f in policy.check(ev.config, items) if f.rule == "budget"]


def test_the_budget_rule_refuses_a_stack_over_budget_with_the_figure() -> None:
    v6e = prices.shipped().find("tpu/v6e", "us-east5", "on-demand")
    system = prices.shipped().find("vm/e2-standard-8", "us-east5", "on-demand")
    assert v6e is not None and system is not None
    # Two v6e-16 slices (32 chips), the default system pool (3 e2-standard-8 in its one
    # zone) and the fee.
    known = 32 * v6e.usd + 3 * system.usd + 0.10
    found = _budget_findings(50)
    assert [f.message for f in found] == [
        f"the stack costs ${known:,.2f}/hour while it stands, over its budget of $50.00/hour"]
    assert found[0].resource == "gcp:container/cluster:Cluster test"
    assert _budget_findings(None) == []


def test_the_budget_rule_cannot_pass_unpriced_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    # A table that prices the fee only: the slices and the system pool are unknown.
    monkeypatch.setattr(prices, "shipped", lambda: _table(FEE))
    found = _budget_findings(100_000)
    assert len(found) == 1
    assert "within its budget of $100,000.00/hour cannot be shown while parts are unpriced" \
        in found[0].message


def test_a_budget_must_be_positive() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["policy"] = {"budgetPerHour": 0}
    with pytest.raises(ConfigError) as e:
        parse(raw)
    assert "policy.budgetPerHour: 0 is not a positive number of US dollars per hour" in \
        str(e.value)


def test_the_preview_policy_run_refuses_an_over_budget_change(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(ROOT / "stacks", project / "stacks")
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    stack = project / "stacks" / "Pulumi.v6e-training.yaml"
    doc = yaml.safe_load(stack.read_text())
    doc["config"]["accelstack:policy"] = {"budgetPerHour": 1000}
    stack.write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(preview.main, ["--policy", "--quiet", "--project-dir",
                                               str(project), "v6e-training"])
    assert result.exit_code == preview.EXIT_POLICY, result.output
    figures = preview.desired_state(ROOT / "stacks" / "Pulumi.v6e-training.yaml")["cost"]
    assert figures["perHour"]["complete"]
    assert "v6e-training: [budget] gcp:container/cluster:Cluster trillium: the stack costs " \
        f"${figures['perHour']['total']:,.2f}/hour while it stands" in result.output
    assert "over its budget of $1,000.00/hour" in result.output


def test_the_budget_rule_under_crossguard(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same rule as the CrossGuard pack runs it, the stack's config from the environment
    # the Pulumi CLI gives the pack (tests/test_policy_pack.py has the helpers).
    from test_policy_pack import _args, _set_config, _stack_config, _violations

    path = ROOT / "stacks" / "Pulumi.v6e-training.yaml"
    config = _stack_config(path)
    config["accelstack:policy"] = {"budgetPerHour": 1000}
    _set_config(monkeypatch, config, "v6e-training")
    found = _violations(_args(harness.evaluate_file(path)))
    assert list(found) == ["budget"]
    [(message, urn)] = found["budget"]
    total = preview.desired_state(path)["cost"]["perHour"]["total"]
    assert message.startswith("gcp:container/cluster:Cluster trillium: the stack costs "
                              f"${total:,.2f}/hour while it stands")
    assert "over its budget of $1,000.00/hour; fix: " in message
    assert urn == "urn:pulumi:test::accelstack::gcp:container/cluster:Cluster::trillium"


def test_an_old_table_warns_on_the_day_accelstack_today_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    as_of = prices.shipped().as_of
    monkeypatch.setenv("ACCELSTACK_TODAY", as_of.isoformat())
    quiet = CliRunner().invoke(preview.main, ["--quiet", str(
        ROOT / "stacks" / "Pulumi.v5e-spot.yaml")])
    assert quiet.exit_code == 0 and "price table" not in quiet.stderr
    monkeypatch.setenv("ACCELSTACK_TODAY", date(as_of.year + 1, as_of.month, 1).isoformat())
    old = CliRunner().invoke(preview.main, ["--quiet", str(
        ROOT / "stacks" / "Pulumi.v5e-spot.yaml")])
    assert old.exit_code == 0
    assert f"warning: the price table is {(date(as_of.year + 1, as_of.month, 1) - as_of).days}" \
        f" days old (as of {as_of.isoformat()}" in old.stderr
