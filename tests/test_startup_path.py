"""What `submit workload create --dry-run` loads: only what the command uses.

The start-up budget (bench/cold_dry_run.py, docs/benchmarks.md) is mostly import time, so a
module that a TPU dry-run does not need must not be imported on its way; each entry below
names the command that does need it. Timings stay in the benchmark; this test checks the
set of modules, which does not depend on the machine's load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import stacks
from submit.cluster import stack_outputs

# module -> who needs it
NOT_ON_THE_PATH = {
    "infra.contract.fleet": "fleet outputs (docs/fleets.md)",
    "submit.render.fleet": "fleet outputs",
    "submit.render.pathways": "--pathways",
    "submit.render.pathways_options": "--pathways and its flags",
    "submit.state.status": "commands that read a cluster's state",
    "submit.render.duration": "options given a duration (--ttl, --timeout)",
    "submit.cluster.kube": "commands that reach a cluster",
    "difflib": "a mistyped name's suggestion",
    "encodings.utf_8_sig": "nothing: stack_outputs drops a BOM itself",
    "pulumi": "the infra program only",
    "submit.image_pins": "the Python API's real submit",
    "submit.bundle.registry": "resolving a tag (a submit, --export, --resolve-image)",
    "submit.bundle.resolve": "resolving a tag",
    "requests": "a registry or a cluster",
    "socket": "a registry or a cluster",
    "submit.render.mounts": "--mount",
    "submit.render.gpu_net": "GPU pools",
    "submit.render.dranet": "pools that run DRANET",
    "infra.catalog.gpudirect_release": "GPU machines",
    "dataclasses": "nothing: records (infra/record.py) define without it",
}

_PROBE = """
import contextlib, io, json, sys
sys.argv = ["submit", "workload", "--outputs", {outputs!r}, "create", "--workload", "w",
            "--accelerator", "v5litepod-16", "--num-slices", "2", "--image",
            "us-docker.pkg.dev/p/r/maxtext:1", "--command", "python3 train.py", "--env", "A=1",
            "--dry-run"]  # as a user types it: a tag, no --no-resolve-image (issue 34)
from submit.cli import main
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit as e:
    assert not e.code, e.code
assert "kind: JobSet" in out.getvalue()
import gc
from submit.cli import GC_THRESHOLD
assert gc.get_threshold()[0] == GC_THRESHOLD  # set before anything heavy is imported
assert gc.get_freeze_count() > 1000  # frozen at the end: shutdown skips them
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(outputs: Path) -> set[str]:
    """The modules the dry-run loaded beyond those the interpreter loads to start (CPython
    3.13's site.py decodes .pth files as utf-8-sig, so that codec is there before any of
    ours: Lib/site.py addpackage)."""
    done = subprocess.run([sys.executable, "-c", _PROBE.format(outputs=str(outputs))],
                          capture_output=True, text=True, check=True)
    bare = subprocess.run([sys.executable, "-c", "import json, sys; "
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1])) - set(json.loads(bare.stdout))


def test_a_tpu_dry_run_loads_only_what_it_uses(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", "")
    loaded = _loaded(outputs)
    assert "submit.render.jobset" in loaded  # the probe did render
    assert {m: why for m, why in NOT_ON_THE_PATH.items() if m in loaded} == {}


def test_an_outputs_file_with_a_byte_order_mark_still_loads(tmp_path: Path) -> None:
    plain = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", "")
    marked = tmp_path / "bom.json"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert stack_outputs.from_file(str(marked)) == stack_outputs.from_file(str(plain))


@pytest.mark.parametrize("key", ["accelstackFleet", "fleetContractVersion"])
def test_fleet_outputs_are_still_told_apart(key: str) -> None:
    from infra.contract import fleet

    data = {key: {}}
    assert stack_outputs._fleet_keys(data) and fleet.is_fleet(data)
    assert fleet.FLEET_OUTPUT_NAME == "accelstackFleet"
