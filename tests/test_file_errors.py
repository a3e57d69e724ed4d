"""Sweep and group files: an error names the line of the bad key or value, and suggests the
nearest key or value, as stack-file errors do (issue 26)."""

from __future__ import annotations

from typing import Any

import pytest

from fakes import stacks
from infra.contract.outputs import load as load_outputs
from submit.experiment import expand as ex
from submit.experiment import trials
from submit.experiment import group as gr

SWEEP = """\
name: lr
workload:
  accelerator: v5litepod-16
  image: python:3.12
  command: python train.py
  priority: {priority}
sweep:
  env.LR: ["1e-4", "3e-4"]
  {sweep_key}: {sweep_value}
"""
ALLOWED = "very-low, low, medium, high, very-high, or 'none'"


def _outputs() -> Any:
    return load_outputs(stacks.outputs("v5e-spot")["accelstack"])


def _sweep_error(**fields: str) -> str:
    values = {"priority": "high", "sweep_key": "env.SEED", "sweep_value": "[1, 2]", **fields}
    with pytest.raises(ex.ExperimentError) as e:
        exp = ex.load("s.yaml", SWEEP.format(**values))
        trials.plan(exp, _outputs())
    return e.value.message


def test_a_bad_base_value_is_reported_at_its_line_with_the_nearest_value() -> None:
    assert _sweep_error(priority="hihg") == (
        "s.yaml:6: trial 0 (env.LR=1e-4, env.SEED=1): --priority: 'hihg' is not a priority "
        f"class of the stack; did you mean high? (allowed: {ALLOWED})")


def test_a_bad_swept_value_is_reported_at_its_own_line() -> None:
    assert _sweep_error(sweep_key="priority", sweep_value="\n    - high\n    - hihg") == (
        "s.yaml:11: trial 1 (env.LR=1e-4, priority=hihg): --priority: 'hihg' is not a "
        f"priority class of the stack; did you mean high? (allowed: {ALLOWED})")


@pytest.mark.parametrize("key,line,message", [
    ("comand", 6, "workload.comand: unknown option; did you mean command?"),
])
def test_an_unknown_base_key_gets_the_nearest(key: str, line: int, message: str) -> None:
    text = SWEEP.format(priority="high", sweep_key="env.SEED", sweep_value="[1]").replace(
        "  priority: high", f"  {key}: x")
    with pytest.raises(ex.ExperimentError) as e:
        ex.load("s.yaml", text)
    assert e.value.message.startswith(f"s.yaml:{line}: {message} (allowed: accelerator, ")


@pytest.mark.parametrize("key,hint", [("zpi", "zip"), ("envv.SEED", "env.SEED"),
                                      ("num-slice", "num-slices")])
def test_an_unknown_sweep_key_gets_the_nearest(key: str, hint: str) -> None:
    value = "{args: [a]}" if key == "zpi" else "[1]"
    with pytest.raises(ex.ExperimentError) as e:
        ex.load("s.yaml", SWEEP.format(priority="high", sweep_key=key, sweep_value=value))
    assert e.value.message.startswith(
        f"s.yaml:9: sweep.{key}: unknown sweep key; did you mean {hint}? (give env.NAME, ")


def test_an_unknown_top_key_gets_the_nearest() -> None:
    with pytest.raises(ex.ExperimentError) as e:
        ex.load("s.yaml", "name: lr\nworklaod: {}\n")
    assert e.value.message == ("s.yaml:2: worklaod: unknown key; did you mean workload? "
                               "(allowed: name, description, workload, sweep)")


GROUP = """\
name: te
workload:
  image: python:3.12
  priority: {priority}
roles:
  trainer:
    accelerator: v5litepod-16
    count: {count}
    command: python train.py
  evaluator: {{accelerator: v5litepod-16, {evaluator}: python eval.py}}
"""


def _group_error(priority: str = "high", count: str = "1", evaluator: str = "command") -> str:
    with pytest.raises(gr.GroupError) as e:
        gr.render_group(gr.load("g.yaml", GROUP.format(priority=priority, count=count,
                                                       evaluator=evaluator)), _outputs())
    return e.value.message


def test_a_group_reports_a_shared_value_at_its_line() -> None:
    assert _group_error(priority="hihg") == (
        "g.yaml:4: roles.trainer: --priority: 'hihg' is not a priority class of the stack; "
        f"did you mean high? (allowed: {ALLOWED})")


def test_a_group_reports_a_count_at_its_line() -> None:
    assert _group_error(count="9") == (
        "g.yaml:8: roles.trainer: --num-slices: 9 is more than the 2 v5litepod-16 slices pool "
        "v5litepod-16 has")


def test_a_group_suggests_the_nearest_role_option() -> None:
    assert _group_error(evaluator="comand").startswith(
        "g.yaml:10: roles.evaluator.comand: unknown option; did you mean command? (allowed: ")
