"""What a `submit run` costs: its $/hour and bound before anything is made, --max-cost
refusing a run whose bound is higher (or cannot be known), and what it cost at the end.
The run itself is the one of tests/test_ephemeral_run.py: the fake `pulumi` and the fake
API server."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from ephemeral_env import finish, installed, project, run_argv, run_cli
from fake_apiserver import FakeApiServer
from fakes.pulumi_auto import FakeAutoPulumi
from infra.cost import run as run_cost, table as prices

SRC = "https://example.test/pricing"


def _table(tpu_spot: float | None) -> prices.Table:
    entries = [("gke/cluster-fee", "cluster-hour", "*", 0.10),
               ("vm/e2-standard-8", "vm-hour", "us-west4", 0.27)]
    data = [{"item": i, "unit": u, "region": r, "mode": "*" if u == "cluster-hour" else
             "on-demand", "usd": usd, "source": SRC, "date": "2026-11-01"}
            for i, u, r, usd in entries]
    if tpu_spot is not None:
        data.append({"item": "tpu/v5e", "unit": "chip-hour", "region": "us-west4",
                     "mode": "spot", "usd": tpu_spot, "source": SRC, "date": "2026-11-01"})
    return prices.parse({"asOf": "2026-11-01", "prices": data}, "test")


# v5e-spot: two v5litepod-16 slices on Spot (32 chips), three e2-standard-8 system nodes
# at most, and the fee: 32 x $0.5 + 3 x $0.27 + $0.10 = $16.91 an hour.
PER_HOUR = 32 * 0.5 + 3 * 0.27 + 0.10


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         server: FakeApiServer) -> FakeAutoPulumi:
    return installed(tmp_path, monkeypatch, server)


@pytest.fixture
def priced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prices, "shipped", lambda: _table(0.5))


def test_the_estimate_by_hand() -> None:
    raw = yaml.safe_load((ROOT / "stacks" / "Pulumi.v5e-spot.yaml").read_text())["config"]
    cost = run_cost.estimate(raw, 6, "its TTL", _table(0.5))
    assert cost.per_hour == pytest.approx(PER_HOUR)
    assert cost.bound == pytest.approx(6 * PER_HOUR)
    assert cost.lines() == [f"cost: ${PER_HOUR:,.2f}/hour; at most ${6 * PER_HOUR:,.2f} in "
                            "6 h (its TTL)"]
    assert cost.refusal(200) is None
    assert cost.refusal(100) == (
        f"100: the run may cost up to ${6 * PER_HOUR:,.2f} (${PER_HOUR:,.2f}/hour for 6 h, "
        "its TTL), more than $100.00; lower --max-hours or --expires-in, or use smaller or "
        "fewer slices")
    assert cost.spent(5400) == (f"cost: about ${1.5 * PER_HOUR:,.2f} for 1h30m from `up` to "
                                f"the end of the teardown (${PER_HOUR:,.2f}/hour)")


def test_an_unpriced_part_leaves_the_run_unbounded_never_free() -> None:
    raw = yaml.safe_load((ROOT / "stacks" / "Pulumi.v5e-spot.yaml").read_text())["config"]
    cost = run_cost.estimate(raw, 2, "--max-hours", _table(None))
    assert cost.bound is None
    assert cost.lines()[0].startswith("cost: at least $0.91/hour + unknown (1 part unpriced: "
                                      "pool v5litepod-16); at least $1.82 + unknown: no bound")
    assert cost.refusal(10_000) is not None
    assert "the run's cost cannot be bounded" in str(cost.refusal(10_000))


def test_a_pools_run_prices_its_own_slices_only() -> None:
    raw = yaml.safe_load((ROOT / "stacks" / "Pulumi.v5e-extra.yaml").read_text())["config"]
    every_region = prices.parse({"asOf": "2026-11-01", "prices": [
        {"item": "tpu/v5e", "unit": "chip-hour", "region": "*", "mode": "spot", "usd": 0.5,
         "source": SRC, "date": "2026-11-01"}]}, "test")
    cost = run_cost.estimate(raw, 1, "--max-hours", every_region)
    assert [line.part for line in cost.figures.lines] == ["pool extra"]
    assert cost.per_hour == pytest.approx(32 * 0.5)


def test_max_cost_refuses_before_anything_is_made(fake: FakeAutoPulumi, tmp_path: Path,
                                                   priced: None) -> None:
    proj = project(tmp_path)
    code, err = run_cli(*run_argv(proj, "--max-hours", "10", "--max-cost", "100"))
    assert code == 2, err
    assert (f"Invalid value for '--max-cost': 100: the run may cost up to "
            f"${10 * PER_HOUR:,.2f} (${PER_HOUR:,.2f}/hour for 10 h, --max-hours)") in err
    assert fake.calls == []


def test_an_unpriced_run_is_refused_under_max_cost(fake: FakeAutoPulumi, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prices, "shipped", lambda: _table(None))
    code, err = run_cli(*run_argv(project(tmp_path), "--max-cost", "1000000"))
    assert code == 2, err
    assert "the run's cost cannot be bounded" in err
    assert fake.calls == []


def test_a_run_prints_its_bound_first_and_its_cost_last(
        fake: FakeAutoPulumi, tmp_path: Path, server: FakeApiServer, priced: None) -> None:
    finish(server, "Completed")
    code, err = run_cli(*run_argv(project(tmp_path), "--expires-in", "2h", "--max-cost", "50"))
    assert code == 0, err
    lines = err.splitlines()
    bound = next(i for i, ln in enumerate(lines) if "cost: $" in ln)
    assert lines[bound].endswith(f"run train: cost: ${PER_HOUR:,.2f}/hour; at most "
                                 f"${2 * PER_HOUR:,.2f} in 2 h (its TTL, --expires-in 2h)")
    assert bound < next(i for i, ln in enumerate(lines) if "created" in ln)
    assert lines[-2].startswith("run train: cost: about $")
    assert lines[-2].endswith(f"from `up` to the end of the teardown (${PER_HOUR:,.2f}/hour)")
    assert lines[-1] == "run train: exit 0 (the work succeeded)"


def test_a_kept_run_says_what_it_keeps_costing(
        fake: FakeAutoPulumi, tmp_path: Path, server: FakeApiServer, priced: None) -> None:
    finish(server, "Completed")
    proj = project(tmp_path)
    code, err = run_cli(*run_argv(proj, "--keep"))
    assert code == 0, err
    assert f"run train: cost: it stays up at ${PER_HOUR:,.2f}/hour\n" in err
    assert "cost: about" not in err
    assert run_cli("reap", "--project-dir", str(proj), "train")[0] == 0
