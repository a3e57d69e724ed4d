"""Outputs contracts for submitter tests, evaluated under the mock engine once per session.

``contract(name)`` is the JSON value of the ``accelstack`` stack output (secrets revealed),
as `pulumi stack output --json --show-secrets` prints it; ``write_outputs`` saves one for
``--outputs FILE``, optionally pointing its kubeconfig at a FakeApiServer.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from infra.preview import harness

ROOT = Path(__file__).resolve().parents[2]

# One stack with every shape build_spec distinguishes: two pools of one TPU slice type
# (spot, and flex-start which may queue more slices than it has), and a GPU pool.
MULTI_RAW: dict[str, Any] = {
    "project": "test-project",
    "region": "us-central1",
    "zones": ["us-central1-a"],
    "clusterName": "multi",
    "slices": [
        {"name": "v5e-spot", "accelerator": "v5litepod-16", "count": 2, "capacity": "spot"},
        {"name": "v5e-flex", "accelerator": "v5litepod-16", "count": 1,
         "capacity": "flex-start"},
        {"name": "l4", "accelerator": "l4-1", "count": 2},
    ],
    "queues": {"namespace": "training", "localQueue": "main"},
}


@functools.lru_cache(maxsize=None)
def _evaluated(name: str) -> str:
    if name == "multi":
        ev = harness.evaluate(MULTI_RAW, "multi")
    else:
        ev = harness.evaluate_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    return json.dumps(harness.plain_outputs(ev, reveal=True))


def outputs(name: str) -> dict[str, Any]:
    """All stack outputs (``{"accelstack": {...}}``) of an example stack or ``multi``."""
    return copy.deepcopy(json.loads(_evaluated(name)))


def point_at(data: dict[str, Any], kubeconfig: str) -> dict[str, Any]:
    """Outputs whose every cluster is reached with ``kubeconfig``: the stack's, or a
    fleet's manager and workers (docs/fleets.md)."""
    if "accelstackFleet" in data:
        fleet = data["accelstackFleet"]
        fleet["manager"]["kubeconfig"] = kubeconfig
        for worker in fleet["workers"]:
            worker["outputs"]["kubeconfig"] = kubeconfig
    else:
        data["accelstack"]["kubeconfig"] = kubeconfig
    return data


def write_outputs(path: Path, name: str, kubeconfig: str | None = None) -> Path:
    data = outputs(name)
    if kubeconfig is not None:
        point_at(data, kubeconfig)
    path.write_text(json.dumps(data, indent=2))
    return path
