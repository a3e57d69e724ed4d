"""`accelstack-prices refresh` against recorded SKU responses, never the live API.

tests/billing/compute-skus.json is a ListSkus response in the shape the Cloud Billing
Catalog API documents (https://cloud.google.com/billing/v1/how-tos/catalog-api: skus[] with
skuId, description, category.usageType, serviceRegions, pricingInfo[].effectiveTime and
pricingExpression.tieredRates[].unitPrice {currencyCode, units, nanos}). Its SKU ids and
prices are made up for the test: they are not Google's and never reach the shipped table.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from infra.cost import refresh, table as prices

SKUS = ROOT / "tests" / "billing" / "compute-skus.json"


def _skus() -> list[dict]:  # type: ignore[type-arg]
    return list(json.loads(SKUS.read_text())["skus"])


def test_a_vm_price_is_its_cores_and_memory_at_their_skus() -> None:
    want = [refresh.Wanted("e2-standard-8", "us-east5", "on-demand"),
            refresh.Wanted("n2-standard-8", "us-central1", "on-demand")]
    entries, missing = refresh.pricing(_skus(), want)
    assert missing == []
    e2, n2 = entries
    # 8 vCPUs x $0.02 + 32 GiB x $0.003 = $0.256; 8 x $0.03 + 32 x $0.004 = $0.368
    assert e2["usd"] == pytest.approx(0.256)
    assert e2["source"] == ("cloudbilling services/6F81-5844-456A/skus/"
                            "AAAA-0001-0001+AAAA-0001-0002")
    assert e2["date"] == "2026-11-01T07:00:00Z"
    assert (e2["item"], e2["region"], e2["mode"], e2["unit"]) == \
        ("vm/e2-standard-8", "us-east5", "on-demand", "vm-hour")
    assert n2["usd"] == pytest.approx(0.368)
    assert n2["date"] == "2026-10-15T07:00:00Z"  # the later of the two SKUs' prices


def test_what_the_skus_do_not_give_stays_unknown() -> None:
    want = [refresh.Wanted("n2-standard-8", "us-east5", "on-demand"),  # N2 not sold there
            refresh.Wanted("e2-standard-8", "us-east5", "spot")]  # no Spot RAM SKU
    entries, missing = refresh.pricing(_skus(), want)
    assert entries == []
    assert missing == [
        "vm/n2-standard-8 on-demand in us-east5: no N2 core and RAM SKUs sold there in the "
        "response",
        "vm/e2-standard-8 spot in us-east5: no E2 core and RAM SKUs sold there in the response"]


def test_the_shipped_stacks_want_their_system_and_head_pools() -> None:
    want = refresh.wanted(ROOT / "stacks")
    assert refresh.Wanted("n2-standard-64", "us-east5", "on-demand") in want  # Pathways head
    assert refresh.Wanted("e2-standard-8", "us-west4", "on-demand") in want  # v5e-spot system
    assert all(w.machine_type.split("-")[0] in ("e2", "n2") for w in want)


def test_the_refresh_lands_as_a_diff_of_the_table(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "prices.yaml"
    shutil.copy(prices.TABLE_FILE, table)
    before = prices.load(table)
    code = refresh.main(["refresh", "--stacks", str(ROOT / "stacks"), "--skus", str(SKUS),
                         "--table", str(table), "--write"])
    assert code == 0
    err = capsys.readouterr().err
    assert "not priced: vm/n2-standard-64 on-demand in us-east5" in err
    after = prices.load(table)
    # The VMs it could price now cite their SKUs (replacing what the table had for them),
    # and everything else it had is kept (the fee, the TPU figures, the VMs it missed).
    refreshed = {(p.item, p.region, p.mode) for p in after.prices
                 if p.source.startswith("cloudbilling ")}
    kept = {p for p in before.prices if (p.item, p.region, p.mode) not in refreshed}
    assert kept <= set(after.prices)
    assert len(after.prices) == len(kept) + len(refreshed)
    assert {(item, region) for item, region, _ in refreshed} == {
        ("vm/e2-standard-16", "us-east5"), ("vm/e2-standard-4", "us-central1"),
        ("vm/e2-standard-8", "us-central1"), ("vm/e2-standard-8", "us-east4"),
        ("vm/e2-standard-8", "us-east5"), ("vm/e2-standard-8", "us-west4"),
        ("vm/n2-standard-8", "us-central1")}
    text = table.read_text()
    assert text.startswith("# The price table accelstack prices stacks with")
    assert yaml.safe_load(text)["asOf"] == date.today().isoformat()
    found = after.find("vm/e2-standard-8", "us-west4", "on-demand")
    assert found is not None and found.usd == pytest.approx(0.256)


def test_a_bad_recording_is_one_line(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "skus.json"
    bad.write_text("not json")
    with pytest.raises(SystemExit) as e:
        refresh.main(["refresh", "--skus", str(bad), "--table", str(prices.TABLE_FILE)])
    assert e.value.code == 2
    assert capsys.readouterr().err == f"accelstack-prices: --skus {bad}: not a ListSkus " \
        "response (JSONDecodeError)\n"


def test_a_missing_recording_says_so_with_exit_2(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "skus.json"
    with pytest.raises(SystemExit) as e:
        refresh.main(["refresh", "--skus", str(missing), "--table", str(prices.TABLE_FILE)])
    assert e.value.code == 2
    assert capsys.readouterr().err == f"accelstack-prices: --skus {missing}: cannot read " \
        "it: No such file or directory\n"
