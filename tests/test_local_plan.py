"""The local plan: golden files of the processes, argv and env a workload becomes, and the
rules behind them (kubelet expansion, JobSet metadata, ports, mounts, failure policy).

``tests/golden_local/<case>/input.yaml`` names either a stack from ``stack_fixtures`` and
``build_spec`` arguments (``args``, as in tests/golden) or an exported file (``from``), plus
``scale_down``, ``restart_attempt``, ``mounts`` and ``local_env``. ``expected.yaml`` is
``Plan.to_dict()``; regenerate with ``pytest tests/test_local_plan.py --update-golden``.
Free ports are handed out from 20000 up, the run directory is /run/local and the working
directory /src, so the files do not depend on the machine.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

import stack_fixtures
from submit.local import plan as lp
from submit.local import policy as pol
from submit.render import render
from submit.spec import build_spec

GOLDEN = Path(__file__).resolve().parent / "golden_local"
CASES = sorted(p for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())


def objects_for(case: Path) -> tuple[list[Any], dict[str, Any]]:
    data = yaml.safe_load((case / "input.yaml").read_text())
    shape = lp.parse_shape(data["scale_down"]) if data.get("scale_down") else None
    if "from" in data:
        objs = [d for d in yaml.safe_load_all((case / data["from"]).read_text()) if d]
        if shape:
            objs = [lp.scale_down(o, *shape) if o["kind"] == "JobSet" else o for o in objs]
        return objs, data
    args = dict(data["args"])
    for key in ("env_file", "config_file"):
        if key in args:
            args[key] = str(case / args[key])
    spec = build_spec(stack_fixtures.outputs(data["stack"]), **args)
    if shape:
        spec = dataclasses.replace(spec, replicas=shape[0], parallelism=shape[1])
    return render(spec), data


def plan_for(case: Path) -> lp.Plan:
    objs, data = objects_for(case)
    opts = lp.Options(run_dir="/run/local", cwd="/src",
                      mounts=tuple((data.get("mounts") or {}).items()),
                      local_env=tuple((data.get("local_env") or {}).items()))
    ports = itertools.count(20000)
    return lp.build(objs, opts, int(data.get("restart_attempt", 0)), lambda: next(ports))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_plan(case: Path, update_golden: bool) -> None:
    actual = yaml.safe_dump(plan_for(case).to_dict(), sort_keys=False)
    expected = case / "expected.yaml"
    if update_golden:
        expected.write_text(actual)
    elif not expected.is_file():
        pytest.fail(f"{expected} is missing; run pytest --update-golden and review it")
    assert actual == expected.read_text()


def test_there_are_golden_plans() -> None:
    assert {"tpu-multislice", "gpu-g2", "from-jobset", "a3mega-sidecar"} <= {
        c.name for c in CASES}
