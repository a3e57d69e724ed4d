"""Shared fixtures: the example stacks and a minimal valid raw stack config."""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest
import yaml

from fake_apiserver import FakeApiServer, State

if TYPE_CHECKING:
    from infra.preview.harness import Evaluation

ROOT = Path(__file__).resolve().parent.parent
STACKS_DIR = ROOT / "stacks"
# Cluster stacks; fleet stacks (an `accelstack:fleet` section, docs/fleets.md) declare no
# cluster and are tested on their own (tests/test_fleet_program.py).
FLEET_FILES = sorted(p for p in STACKS_DIR.glob("Pulumi.*.yaml")
                     if "accelstack:fleet:" in p.read_text())
# Pools stacks (an `accelstack:onCluster` section) declare no cluster either: pools on
# another stack's cluster (tests/test_pools_program.py).
POOLS_FILES = sorted(p for p in STACKS_DIR.glob("Pulumi.*.yaml")
                     if "accelstack:onCluster:" in p.read_text())
# In-cluster stacks (an `accelstack:inCluster` section) declare only the in-cluster layer
# of a cluster they reference (tests/test_in_cluster.py, docs/adopt.md).
IN_CLUSTER_FILES = sorted(p for p in STACKS_DIR.glob("Pulumi.*.yaml")
                          if "accelstack:inCluster:" in p.read_text())
# Adopted cluster stacks (an `accelstack:adopt` section) declare a cluster another tool
# made, as it is (its network, service account, capacity settings): tested against the
# cluster they were adopted from (tests/test_adopt.py), not against the rules of a cluster
# the stack makes.
ADOPTED_FILES = sorted(p for p in STACKS_DIR.glob("Pulumi.*.yaml")
                       if "accelstack:adopt:" in p.read_text())
STACK_FILES = sorted(p for p in STACKS_DIR.glob("Pulumi.*.yaml")
                     if p not in FLEET_FILES and p not in POOLS_FILES
                     and p not in IN_CLUSTER_FILES and p not in ADOPTED_FILES)
REFERENCE = ROOT.parent / "shared" / "reference"

# Previews warn when the shipped price table is older than its set age (docs/cost.md);
# the suite reads the calendar as of the table's date, so that no output it compares
# changes when the table ages (tests/test_cost.py tests the warning with dates of its own).
os.environ.setdefault("ACCELSTACK_TODAY", yaml.safe_load(
    (ROOT / "infra" / "cost" / "prices.yaml").read_text())["asOf"])



def evaluate_shipped(path: Path) -> Evaluation:
    """``harness.evaluate_file`` of a shipped stack file (``stacks/``), run once per process
    (each xdist worker) and handed out as a deep copy, so a test may change what it gets.
    Many modules assert on the same stacks; evaluating one is a fraction of a second, a
    few milliseconds to copy. Tests of the evaluation itself call the harness directly."""
    path = Path(path).resolve()
    assert path.parent == STACKS_DIR, f"{path}: not a shipped stack file"
    return copy.deepcopy(_evaluated_once(path))


@functools.lru_cache(maxsize=None)
def _evaluated_once(path: Path) -> Evaluation:
    from infra.preview import harness  # loads Pulumi: not at conftest import

    return harness.evaluate_file(path)


MINIMAL: dict[str, Any] = {
    "project": "test-project",
    "region": "us-central1",
    "zones": ["us-central1-a"],
    "clusterName": "test",
    "slices": [{"accelerator": "v5litepod-16", "count": 1}],
}


@pytest.fixture(autouse=True)
def _tags_stay_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's workloads name public images by tag (python:3.12 ...): submit them as
    given, so that no test reaches Docker Hub or Artifact Registry. tests/test_image_resolve.py
    turns resolution back on against a registry on loopback."""
    monkeypatch.setenv("ACCELSTACK_RESOLVE_IMAGE", "0")


@pytest.fixture
def no_stack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No stack, outputs file or project directory from the caller's environment: a test
    names the ones it means (use with `pytestmark = pytest.mark.usefixtures(...)`)."""
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def raw() -> dict[str, Any]:
    """A fresh copy of a minimal valid config (keys without the accelstack: prefix)."""
    return copy.deepcopy(MINIMAL)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected files of golden tests from the current output "
                          "(review the diff like code)")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="module")
def _live_server() -> Iterator[FakeApiServer]:
    srv = FakeApiServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def server(_live_server: FakeApiServer) -> FakeApiServer:
    """One server per module (stopping one takes half a second); fresh state per test."""
    _live_server.state = State()
    return _live_server
