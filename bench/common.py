"""Shared set-up for the benchmarks: an outputs file made offline from an example stack."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def outputs_file(stack: str = "v5e-spot") -> Path:
    """Write the offline preview's outputs of ``stack`` to a temporary file."""
    from infra import harness

    ev = harness.evaluate_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    path = Path(tempfile.mkdtemp(prefix="accelstack-bench-")) / f"{stack}.json"
    path.write_text(json.dumps(harness.plain_outputs(ev, reveal=True)))
    return path
