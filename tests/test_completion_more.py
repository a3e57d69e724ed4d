"""Shell completion a newcomer reaches for (issue 34): `--pool` offers the pools of the
`--accelerator` already typed, not every pool; `submit run <TAB>` offers the stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from fakes import stacks
from submit_cli import complete


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch, no_stack_env: None) -> None:
    monkeypatch.chdir(ROOT)


def test_pools_of_the_accelerator_typed(tmp_path: Path) -> None:
    out = stacks.write_outputs(tmp_path / "o.json", "multi")
    base = ["workload", "--outputs", str(out), "create"]
    assert complete([*base, "--accelerator", "l4-1", "--pool"], "") == ["l4"]
    # any accepted name of the accelerator (v5e-16 is v5litepod-16)
    assert complete([*base, "--accelerator", "v5e-16", "--pool"], "") == ["v5e-flex",
                                                                          "v5e-spot"]
    assert complete([*base, "--pool"], "") == ["l4", "v5e-flex", "v5e-spot"]


def test_run_completes_the_stacks() -> None:
    expected = sorted(p.name[len("Pulumi."):-len(".yaml")]
                      for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    assert complete(["run"], "") == expected
    assert complete(["run"], "v5e-s") == ["v5e-spot"]
