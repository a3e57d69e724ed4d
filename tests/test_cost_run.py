"""What a `submit run` costs: its $/hour and bound before anything is made, --max-cost
refusing a run whose bound is higher (or cannot be known), and what it cost at the end.
The run itself is the one of tests/test_ephemeral_run.py: the fake `pulumi` and the fake
API server."""

from __future__ import annotations

from pathlib import Path

from typing import Any

import pytest

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


def _figures(stack: str, tbl: prices.Table) -> Any:
    """The preview's figures for a shipped stack (infra/preview/costs.py), as
    `accelstack-preview` prints them: the one figure `submit run` prices a run by."""
    from infra.preview import costs, harness

    path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    return costs.figures(path, harness.evaluate_file(path), tbl)


def test_the_bound_by_hand() -> None:
    cost = run_cost.for_run(_figures("v5e-spot", _table(0.5)), 24 * 3600, 6 * 3600)
    assert cost.per_hour == pytest.approx(PER_HOUR)
    assert cost.bound == pytest.approx(6 * PER_HOUR)
    assert cost.lines() == [
        f"cost: ${PER_HOUR:,.2f}/hour; at most ${6 * PER_HOUR:,.2f} in 6 h (its expiry, "
        "--expires-in 6h)",
        "cost: the stack's expiry, --expires-in 6h, comes before --timeout 24h: `submit "
        "reap` takes the stack down then, even while the work runs"]
    assert cost.refusal(200) is None
    assert cost.refusal(100) == (
        f"--max-cost 100: the run may cost up to ${6 * PER_HOUR:,.2f} (${PER_HOUR:,.2f}/hour "
        "for 6 h, its expiry, --expires-in 6h), more than $100.00; lower --timeout or "
        "--expires-in, or use smaller or fewer slices")
    assert cost.spent(5400) == (f"cost: about ${1.5 * PER_HOUR:,.2f} for 1h30m from `up` to "
                                f"the end of the teardown (${PER_HOUR:,.2f}/hour)")


def test_the_bound_is_the_shorter_of_timeout_and_expiry() -> None:
    fig = _figures("v5e-spot", _table(0.5))
    short = run_cost.for_run(fig, 2 * 3600, 6 * 3600)
    assert short.bound == pytest.approx(2 * PER_HOUR)
    assert short.lines()[0].endswith("in 2 h (--timeout 2h)")
    assert short.lines()[1] == ("cost: --timeout 2h ends the run (then the teardown) before "
                                "its expiry, --expires-in 6h")
    same = run_cost.for_run(fig, 3600, 3600)
    assert same.bound == pytest.approx(PER_HOUR) and len(same.lines()) == 1


def test_a_zero_bound_for_a_stack_that_costs_money_is_refused() -> None:
    cost = run_cost.for_run(_figures("v5e-spot", _table(0.5)), 24 * 3600, 1)
    assert cost.refusal(None) == (
        f"the run's limit, its expiry, --expires-in 1s, prices a stack of "
        f"${PER_HOUR:,.2f}/hour at $0.00: give a --timeout or --expires-in long enough to "
        "bring the stack up and run the work")


def test_an_unpriced_part_leaves_the_run_unbounded_never_free() -> None:
    cost = run_cost.for_run(_figures("v5e-spot", _table(None)), 2 * 3600, 6 * 3600)
    assert cost.bound is None
    assert cost.lines()[0].startswith("cost: at least $0.91/hour + unknown (1 part unpriced: "
                                      "pool v5litepod-16); at least $1.82 + unknown: no bound")
    assert cost.refusal(10_000) is not None
    assert "the run's cost cannot be bounded" in str(cost.refusal(10_000))


def test_a_pools_run_prices_its_own_slices_as_the_preview_does() -> None:
    # One figure everywhere: v5e-extra's pools are priced in its host's region, as the
    # preview prices them (accelstack-preview v5e-extra: $15.36/hour with the shipped
    # table); `submit run` used to call them unknown.
    fig = _figures("v5e-extra", prices.shipped())
    assert [line.part for line in fig.lines] == ["pool extra"]
    assert fig.unknown == () or not fig.unknown
    assert fig.total_text() == "$15.36/hour"


def test_a_pools_run_dry_run_prints_the_preview_s_figure(tmp_path: Path) -> None:
    import shutil

    from click.testing import CliRunner

    from submit.cli.app import main

    proj = project(tmp_path)
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-extra.yaml", proj / "stacks")
    result = CliRunner().invoke(main, [
        "run", "v5e-extra", "--project-dir", str(proj), "--name", "burst", "--dry-run",
        "--workload", "burst", "--accelerator", "v5litepod-16", "--image", "python:3.12"])
    assert result.exit_code == 0, result.output
    figure = _figures("v5e-extra", prices.shipped()).total_text()
    assert figure == "$15.36/hour"
    assert f"cost: {figure}; at most $92.16 in 6 h (its expiry, --expires-in 6h)" in \
        result.stdout.splitlines()


def test_max_cost_refuses_before_anything_is_made(fake: FakeAutoPulumi, tmp_path: Path,
                                                   priced: None) -> None:
    proj = project(tmp_path)
    code, err = run_cli(*run_argv(proj, "--timeout", "10h", "--expires-in", "12h",
                                  "--max-cost", "100"))
    assert code == 2, err
    # One line, not Click's usage block.
    assert err == (f"Error: --max-cost 100: the run may cost up to ${10 * PER_HOUR:,.2f} "
                   f"(${PER_HOUR:,.2f}/hour for 10 h, --timeout 10h), more than $100.00; "
                   "lower --timeout or --expires-in, or use smaller or fewer slices\n")
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
                                 f"${2 * PER_HOUR:,.2f} in 2 h (its expiry, --expires-in 2h)")
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
