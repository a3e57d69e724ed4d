"""Lists at scale (issue 42): `submit workload list` and `experiment describe` over more
JobSets than one page, end to end against the fake API server: every list is asked for in
pages of 500 with the last page's continue token (submit/cluster/paging.py, as kubectl
reads), each page's rows are printed as it comes, an expired continue token (kube-apiserver's
410 Expired) starts the list again without a row printed twice, and the JobSets' Kueue
workloads are found across pages. The time and memory this saves are bench/lists.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_apiserver import Fault, FakeApiServer
from fakes import many, stacks
from submit_cli import run, run_experiment

NS = "training"
JOBSETS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
WORKLOADS = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads"
N = 1201  # three pages: 500, 500, 201

pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "v5e-spot.json", "v5e-spot", server.kubeconfig())


def _names(prefix: str, n: int = N) -> list[str]:
    return [f"{prefix}-{i}" for i in range(n)]


def _pages_asked(server: FakeApiServer, path: str) -> list[tuple[str, bool]]:
    return [(r.query.get("limit", [""])[0], "continue" in r.query)
            for r in server.state.requests if r.path == path]


def test_workload_list_reads_in_pages_and_prints_every_row(outputs: Path,
                                                           server: FakeApiServer) -> None:
    names = _names("w")
    server.state.jobsets = many.jobsets(NS, names)
    server.state.workloads[NS] = many.workloads(NS, names)
    result = run(outputs, "list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["NAME", "ACCELERATOR"] and len(lines) == N + 1
    rows = {ln.split()[0]: ln.split() for ln in lines[1:]}
    assert sorted(rows) == sorted(names)
    # Each JobSet found its Kueue workload, wherever its page was (every third admitted).
    assert rows["w-1200"][4] == "Admitted" and rows["w-1199"][4] == "Pending"
    assert _pages_asked(server, WORKLOADS) == [("500", False), ("500", True), ("500", True)]
    assert _pages_asked(server, JOBSETS) == [("500", False), ("500", True), ("500", True)]


def test_rows_are_printed_page_by_page(outputs: Path, server: FakeApiServer) -> None:
    # The third page of JobSets fails: the first two pages' rows are already out.
    names = _names("w")
    server.state.jobsets = many.jobsets(NS, names)
    server.state.faults.append(Fault(status=403, reason="Forbidden", message="no more",
                                     only=f"GET {JOBSETS}", skip=2))
    result = run(outputs, "list")
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 1 + 1000
    assert "forbidden (no more)" in result.stderr


def test_an_expired_continue_token_starts_the_list_again_without_repeats(
        outputs: Path, server: FakeApiServer) -> None:
    # The JobSets' second page answers 410 Expired after the first page's rows are out:
    # the list starts again from the first page, and no row is printed twice.
    names = _names("w")
    server.state.jobsets = many.jobsets(NS, names)
    server.state.expire_continue = 1
    result = run(outputs, "list")
    assert result.exit_code == 0, result.output
    printed = [ln.split()[0] for ln in result.stdout.splitlines()[1:]]
    assert len(printed) == N and sorted(printed) == sorted(names)
    assert [r.status for r in server.state.requests if r.path == JOBSETS] == [
        200, 410, 200, 200, 200]
    assert _pages_asked(server, JOBSETS) == [("500", False), ("500", True), ("500", False),
                                             ("500", True), ("500", True)]


def test_experiment_describe_reads_its_trials_in_pages(outputs: Path,
                                                       server: FakeApiServer) -> None:
    names = _names("sweep")
    server.state.configmaps[(NS, "sweep-experiment")] = many.record(NS, "sweep", names)
    server.state.jobsets = many.jobsets(NS, names[:-1], experiment="sweep")  # one deleted
    server.state.workloads[NS] = many.workloads(NS, names)
    result = run_experiment(outputs, "describe", "sweep")
    assert result.exit_code == 0, result.output
    assert f"Trials:       {N} (" in result.stdout
    rows = [ln.split() for ln in result.stdout.splitlines()
            if ln.startswith("sweep-") and not ln.endswith(":")]  # not the links' lines
    assert [r[0] for r in rows] == names  # the record's order
    assert rows[-1][1:3] == ["Deleted", "-"] and rows[0][1:3] == ["Pending", "Admitted"]
    assert _pages_asked(server, JOBSETS) == [("500", False), ("500", True), ("500", True)]
