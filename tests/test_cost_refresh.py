"""`accelstack-prices refresh` against recorded SKU responses, never the live API: read from
a file (``--skus``), and served on loopback as the Catalog API serves them
(tests/billing/catalog_server.py), to the command's real client (requests, google-auth).

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
from typing import Iterator

import pytest
import yaml

from billing.catalog_server import CatalogServer
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


# -- the real client, against a Catalog API served on loopback --------------------------


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CatalogServer]:
    """The recorded SKUs served as the Catalog API serves them, and Application Default
    Credentials that get their token from it: a service-account file (a key made here)
    whose token_uri is the server's."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    server = CatalogServer(_skus()).start()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    account = tmp_path / "adc.json"
    account.write_text(json.dumps({
        "type": "service_account", "project_id": "my-ml-project", "private_key_id": "k1",
        "private_key": pem, "client_email": "prices@my-ml-project.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": f"{server.url}/token"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(account))
    yield server
    server.stop()


def test_the_refresh_reads_the_catalog_api_in_pages(
        catalog: CatalogServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "prices.yaml"
    shutil.copy(prices.TABLE_FILE, table)
    code = refresh.main(["refresh", "--stacks", str(ROOT / "stacks"), "--table", str(table),
                         "--endpoint", catalog.url, "--write"])
    assert code == 0, capsys.readouterr().err
    # The same table as from the recording itself: every SKU page was read.
    from_file = tmp_path / "from-file.yaml"
    shutil.copy(prices.TABLE_FILE, from_file)
    assert refresh.main(["refresh", "--stacks", str(ROOT / "stacks"), "--skus", str(SKUS),
                         "--table", str(from_file), "--write"]) == 0
    assert table.read_text() == from_file.read_text()
    gets = [(path, q) for method, path, q in catalog.requests if method == "GET"]
    services = [q for path, q in gets if path == "/v1/services"]
    skus = [q for path, q in gets if path.endswith("/skus")]
    assert [q.get("pageToken") for q in services] == [None, ["2"]]
    pages = -(-len(_skus()) // 2)
    assert [q.get("pageToken") for q in skus] == [None] + [[str(2 * i)] for i in
                                                           range(1, pages)]
    assert all(q["currencyCode"] == ["USD"] and q["pageSize"] == ["5000"] for q in skus)
    # One token, from the service account's grant, for the read-only billing scope.
    [grant] = catalog.grants
    assert grant["scope"] == "https://www.googleapis.com/auth/cloud-billing.readonly"
    assert grant["iss"] == "prices@my-ml-project.iam.gserviceaccount.com"


def test_an_api_error_is_one_line_and_exit_1(catalog: CatalogServer,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    catalog.accepted = "another-token"  # the token ADC got is refused: 401
    code = refresh.main(["refresh", "--table", str(prices.TABLE_FILE),
                         "--endpoint", catalog.url])
    assert code == 1
    err = capsys.readouterr().err
    assert err == (f"accelstack-prices: the Cloud Billing Catalog API: GET {catalog.url}"
                   "/v1/services: 401 UNAUTHENTICATED: Request had invalid authentication "
                   "credentials. Expected OAuth 2 access token.\n")


def test_no_credentials_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    code = refresh.main(["refresh", "--table", str(prices.TABLE_FILE),
                         "--endpoint", "http://127.0.0.1:9"])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("accelstack-prices: the Cloud Billing Catalog API: no Application "
                          "Default Credentials (") and err.count("\n") == 1
