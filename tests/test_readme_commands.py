"""Every command in the README's fenced `sh` blocks is run by a test, so the README cannot
drift from the code. This module finds them all and fails on one it does not know.

- `submit ...` and `accelstack-preview ...` commands run here, as written, in README order
  per section, from a directory holding the README's files (``examples/``, a preview's
  outputs file): the stacks come from the example stacks' offline preview outputs through
  a fake `pulumi` (tests/fakes/pulumi_cli.py), and their cluster is the fake API server
  (tests/fake_apiserver.py), given the pods, logs and states the commands read.
- Sections with a test of their own are checked against that test's own list of commands
  (review and CI: tests/test_readme_review.py; running locally: tests/test_local_cli.py;
  shell completion: tests/test_completion.py).
- The rest is listed in ``NOT_HERE`` with the reason it cannot run inside the suite.
"""

from __future__ import annotations

import copy
import re
import shlex
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from fakes.pulumi_cli import install

README = ROOT / "README.md"
STACKS = [p.name[len("Pulumi."):-len(".yaml")] for p in sorted((ROOT / "stacks").glob(
    "Pulumi.*.yaml"))]

NOT_HERE = {
    # Set-up: they build the environment the tests run in.
    "bash tools/setup": "set-up (CI's .ci/run runs it on a clean checkout)",
    "python3 -m venv .venv-checkov && .venv-checkov/bin/pip install -r "
    "tests/checkov-requirements.txt": "set-up of the security scan's environment (part of "
                                      "tools/setup)",
    ".venv/bin/python -m pytest": "the test suite itself",
    ".venv/bin/python -m pytest tests/test_security_scan.py": "a module of this suite",
    "submit workload --stack v5e-spot create --workload exp-1 --accelerator v5litepod-16 "
    "--script-dir . --base-image python:3.12 --command 'python3 train.py'":
        "pulls python:3.12 from Docker Hub and pushes to the stack's Artifact Registry; the "
        "same path runs against a local OCI registry in tests/test_cli_bundle.py",
    ".venv/bin/python bench/cold_dry_run.py": "a timing benchmark (speed targets live in "
                                              "bench/, never in timed tests)",
    ".venv/bin/python bench/sweep.py": "a timing benchmark",
}


def readme_commands() -> list[tuple[str, str]]:
    """(section, command) for every command of every ```sh block, continuation lines
    joined, comments dropped, in README order."""
    out = []
    section = ""
    text = README.read_text()
    for m in re.finditer(r"^## ([^\n]+)$|^```sh\n(.*?)^```", text, re.M | re.S):
        if m.group(1):
            section = m.group(1).strip()
            continue
        for line in m.group(2).replace("\\\n", " ").splitlines():
            command = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
            if command:
                out.append((section, " ".join(command.split())))
    return out


def _canonical(command: str) -> str:
    try:
        return shlex.join(shlex.split(command))
    except ValueError:
        return command


def _elsewhere() -> dict[str, str]:
    """Commands run by a section's own test, from that test's own list."""
    import test_completion
    import test_experiment_readme
    import test_local_cli
    import test_readme_review

    found = {_canonical(c): "tests/test_readme_review.py"
             for c in test_readme_review._commands()}
    found.update({shlex.join(c): "tests/test_local_cli.py::test_readme_example_runs"
                  for c in test_local_cli._readme_commands()})
    found.update({_canonical(c): "tests/test_completion.py::test_the_readme_enables_it"
                  for c in test_completion.README_LINES})
    found.update({shlex.join(c): "tests/test_experiment_readme.py::test_readme_section_runs"
                  for c in test_experiment_readme._commands()})
    return found


def _runs_here(command: str) -> bool:
    return command.split()[0] in ("submit", "accelstack-preview")


def test_every_readme_command_is_covered() -> None:
    elsewhere = _elsewhere()
    not_here = {_canonical(c) for c in NOT_HERE}
    uncovered = [c for _, c in readme_commands()
                 if not _runs_here(c) and _canonical(c) not in elsewhere
                 and _canonical(c) not in not_here]
    assert uncovered == [], "README commands no test runs: add them to a test"
    # And nothing listed here is stale.
    listed = {_canonical(c) for _, c in readme_commands()}
    assert not_here - listed == set()


# -- running them ---------------------------------------------------------------------------

def _sections() -> list[str]:
    elsewhere = _elsewhere()
    seen: list[str] = []
    for section, command in readme_commands():
        if _runs_here(command) and _canonical(command) not in elsewhere \
                and _canonical(command) not in {_canonical(c) for c in NOT_HERE} \
                and section not in seen:
            seen.append(section)
    return seen


def _pod(name: str, jobset: str, slice_: int, worker: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "training",
                         "creationTimestamp": "2026-11-23T10:00:00Z",
                         "labels": {"jobset.sigs.k8s.io/jobset-name": jobset,
                                    "jobset.sigs.k8s.io/job-index": str(slice_),
                                    "batch.kubernetes.io/job-completion-index": str(worker)}},
            "spec": {"nodeName": "gke-node", "containers": [{"name": "main", "image": "x"}]},
            "status": {"phase": "Running"}}


def _cluster_state(server: FakeApiServer, argv: list[str]) -> None:
    """What the cluster shows a command the README runs after `apply`."""
    st = server.state
    for (ns, name), js in st.jobsets.items():
        if "logs" in argv:
            pods = [_pod(f"{name}-slice-{s}-{w}", name, s, w) for s in (0, 1) for w in (0, 1)]
            st.pods[ns] = pods
            for p in pods:
                st.logs[(ns, p["metadata"]["name"])] = ["step 1 loss 2.31", "step 2 loss 2.12"]
        if "wait" in argv:
            js["status"] = {"conditions": [{"type": "Completed", "status": "True",
                                            "reason": "AllJobsCompleted", "message": ""}]}


@pytest.mark.parametrize("section", _sections())
def test_readme_section_runs(section: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             server: FakeApiServer) -> None:
    from infra.preview import cli as preview
    from submit.cli.app import main

    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))  # never the user's
    fake = install(tmp_path, monkeypatch)
    for name in STACKS:
        data = stacks.outputs(name)
        data["accelstack"]["kubeconfig"] = server.kubeconfig()
        fake.stack(name, data)
    work = tmp_path / "work"
    work.mkdir()
    # The project as a user has it: the README's files, the stacks and their snapshots
    # (copied: `--update-snapshots` writes there).
    for item in ("Pulumi.yaml", "examples", "stacks", "snapshots"):
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, work / item)
        else:
            shutil.copy(src, work / item)
    stacks.write_outputs(work / "v5e-spot.json", "v5e-spot", server.kubeconfig())
    monkeypatch.chdir(work)
    # Each stack's desired state once per run (the same file gives the same state).
    real = preview.desired_state
    cache: dict[tuple[str, str], Any] = {}

    def desired_state(path: Path) -> dict[str, Any]:
        key = (Path(path).name, Path(path).read_text())
        if key not in cache:
            cache[key] = real(path)
        return copy.deepcopy(cache[key])  # type: ignore[no-any-return]
    monkeypatch.setattr(preview, "desired_state", desired_state)
    runner = CliRunner()
    commands = [c for s, c in readme_commands() if s == section and _runs_here(c)
                and _canonical(c) not in {_canonical(x) for x in NOT_HERE}]
    assert commands
    for command in commands:
        tool, *argv = shlex.split(command)
        _cluster_state(server, argv)
        entry: Callable[..., Any] = preview.main if tool == "accelstack-preview" else main
        result = runner.invoke(entry, argv)  # type: ignore[arg-type]
        assert result.exit_code == 0, (command, result.output)
        _check(command, argv, result.stdout, server, work)


def _check(command: str, argv: list[str], stdout: str, server: FakeApiServer,
           work: Path) -> None:
    """What each kind of command must have done, beyond exiting 0."""
    if "--dry-run" in argv:
        doc = yaml.safe_load(stdout)
        kinds = [o["kind"] for o in doc["items"]] if doc["kind"] == "List" else [doc["kind"]]
        assert "JobSet" in kinds, command
    if "--export" in argv:
        assert (work / argv[argv.index("--export") + 1]).is_file(), command
        assert not any(r.method == "PATCH" for r in server.state.requests), command
    if "apply" in argv:
        assert any(r.method == "PATCH" and "/jobsets/" in r.path
                   for r in server.state.requests), command
    if "logs" in argv:
        assert stdout == "step 1 loss 2.31\nstep 2 loss 2.12\n", command
    if "delete" in argv:
        assert server.state.jobsets == {}, command
    if argv[:2] == ["cluster", "credentials"]:
        kubeconfig = yaml.safe_load((work.parent / "kubeconfig").read_text())
        # The stack's kubeconfig here points at the fake server (context "test").
        assert kubeconfig["current-context"] == "test", command
        assert kubeconfig["clusters"][0]["cluster"]["server"] == server.url, command
    if argv[:1] == ["accelerators"] and ("--stack" in argv or "--outputs" in argv):
        assert "POOL" in stdout.splitlines()[0], command
