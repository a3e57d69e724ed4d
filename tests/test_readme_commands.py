"""Every command in the fenced `sh` blocks of README.md and of every page of docs/ is run
by a test, so the docs cannot drift from the code. This module finds them all
(tests/doc_pages.py) and fails on one it does not know, so a page that gains a command
fails here until a test runs it.

- `submit ...` and `accelstack-preview ...` commands (also spelt `.venv/bin/submit ...`)
  run here, as written, in page order per section, from a directory holding the docs'
  files (``examples/``, and ``STACK.outputs.json`` for every shipped stack, as an offline
  preview writes it): with `--stack` the shipped stacks' offline preview outputs come
  through a fake `pulumi` (tests/fakes/pulumi_cli.py), and their cluster is the fake API
  server (tests/fake_apiserver.py), given the pods, logs and states the commands read.
- Sections with a test of their own are checked against that test's own list of commands
  (review and CI: tests/test_readme_review.py; running locally: tests/test_local_cli.py;
  shell completion: tests/test_completion.py; experiments: tests/test_experiment_readme.py;
  the static site: tests/test_docs_site.py).
- The rest is listed in ``NOT_HERE`` with the reason it cannot run inside the suite.
"""

from __future__ import annotations

import copy
import fnmatch
import re
import shlex
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner

import doc_pages
from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from fakes.pulumi_cli import install

STACKS = [p.name[len("Pulumi."):-len(".yaml")] for p in sorted((ROOT / "stacks").glob(
    "Pulumi.*.yaml"))]

NOT_HERE = {
    # Set-up: they build the environment the tests run in.
    "bash tools/setup": "set-up (CI's .ci/run runs it on a clean checkout)",
    "python3 -m venv .venv-checkov && .venv-checkov/bin/pip install -r "
    "tests/checkov-requirements.txt": "set-up of the security scan's environment (part of "
                                      "tools/setup)",
    ".venv/bin/python -m pytest -n auto --dist loadfile": "the test suite itself",
    ".venv/bin/python -m pytest tests/test_security_scan.py": "a module of this suite",
    "submit workload --stack a3mega create --workload exp-1 --accelerator h100-mega-80gb-8 "
    "--script-dir . --base-image python:3.12 --command 'python3 train.py'":
        "pulls python:3.12 from Docker Hub and pushes to the stack's Artifact Registry; the "
        "same path runs against a local OCI registry in tests/test_cli_bundle.py",
    ".venv/bin/python bench/cold_dry_run.py": "a timing benchmark (speed targets live in "
                                              "bench/, never in timed tests)",
    ".venv/bin/python bench/sweep.py": "a timing benchmark",
    ".venv/bin/python bench/classes.py": "a timing benchmark",
    ".venv/bin/python bench/sweep_dry_run.py": "a timing benchmark",
    "accelstack-prices refresh --write": "reads the live Cloud Billing Catalog API; "
                                         "tests/test_cost_refresh.py runs the same command "
                                         "on recorded SKU responses (--skus)",
    ".venv/bin/python bench/fleet_view.py": "a timing benchmark",
    ".venv/bin/python bench/lists.py": "a timing and memory benchmark",
}


# Commands whose page says they exit non-zero, with that exit code.
EXITS = {
    # docs/fleets.md: offline, no cluster of the fleet can be read (EXIT_UNREACHABLE).
    "submit fleet --outputs fleet.outputs.json view": 1,
}


def readme_commands() -> list[tuple[str, str]]:
    """(page and section, command) for every command of every ```sh block of every page."""
    return [(f"{page}: {section}", command) for page, section, command in doc_pages.commands()]


def _canonical(command: str) -> str:
    try:
        return shlex.join(shlex.split(command))
    except ValueError:
        return command


def _elsewhere() -> dict[str, str]:
    """Commands run by a section's own test, from that test's own list."""
    import test_adopt_docs
    import test_completion
    import test_docs_site
    import test_ephemeral_docs
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
    found.update({_canonical(c): "tests/test_docs_site.py::test_the_site_builds_strict"
                  for c in test_docs_site.COMMANDS})
    found.update({_canonical(c): "tests/test_ephemeral_docs.py::test_the_docs_commands_run"
                  for c in test_ephemeral_docs.doc_commands()})
    found.update({_canonical(c): "tests/test_adopt_docs.py::test_the_docs_commands_run"
                  for c in test_adopt_docs.doc_commands()})
    return found


VENV_BIN = ".venv/bin/"


def _tool(command: str) -> str:
    first = command.split()[0]
    return first[len(VENV_BIN):] if first.startswith(VENV_BIN) else first


def _runs_here(command: str) -> bool:
    return _tool(command) in ("submit", "accelstack-preview")


def test_every_readme_command_is_covered() -> None:
    elsewhere = _elsewhere()
    not_here = {_canonical(c) for c in NOT_HERE}
    uncovered = [(where, c) for where, c in readme_commands()
                 if not _runs_here(c) and _canonical(c) not in elsewhere
                 and _canonical(c) not in not_here]
    assert uncovered == [], "commands in the docs that no test runs: add them to a test"
    # And nothing listed here is stale.
    listed = {_canonical(c) for _, c in readme_commands()}
    assert not_here - listed == set()


def test_every_page_is_read() -> None:
    """The pages the doc-test reads are README.md and every docs/*.md, and a page's
    commands are in ```sh blocks (another shell fence would hide them from this test)."""
    assert [doc_pages.name(p) for p in doc_pages.pages()] == ["README.md"] + sorted(
        f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))
    assert len(doc_pages.pages()) > 10
    hidden = [(doc_pages.name(p), fence) for p in doc_pages.pages()
              for fence in re.findall(r"^```(\S+)", p.read_text(), re.M)
              if fence in doc_pages.SHELL_FENCES]
    assert hidden == [], "use ```sh for commands, so the doc-test runs them"
    # Every page has commands or says it has none on purpose: a count, so a command that
    # vanishes from a page without its test noticing shows here.
    assert {where.split(":")[0] for where, _ in readme_commands()} >= {
        "README.md", "docs/accelerators.md", "docs/benchmarks.md", "docs/experiments.md",
        "docs/local-runs.md", "docs/pathways.md", "docs/review.md", "docs/security.md",
        "docs/shipping-code.md", "docs/storage.md", "docs/submitting.md"}


def test_the_outputs_files_the_docs_write_are_ignored_by_git() -> None:
    """An outputs file holds the stack's kubeconfig when it comes from a real stack: every
    file the docs write with --outputs (or read, as a user wrote it) is git-ignored."""
    patterns = [line.strip().lstrip("/") for line in (ROOT / ".gitignore").read_text()
                .splitlines() if line.strip() and not line.startswith("#")]
    files = set()
    for _, command in readme_commands():
        argv = shlex.split(command)
        files.update(argv[i + 1] for i, a in enumerate(argv) if a == "--outputs")
    for page in doc_pages.pages():
        files.update(re.findall(r'outputs_file="([^"]+)"', page.read_text()))
    assert files, "the docs name no outputs file"
    unignored = sorted(f for f in files
                       if not any(fnmatch.fnmatch(Path(f).name, p) for p in patterns))
    assert unignored == [], "outputs files the docs write that .gitignore does not ignore"


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


def _written_before(section: str) -> list[tuple[str, str]]:
    """(stack, file) for each `accelstack-preview STACK --outputs FILE` of the section's page
    in the sections before it."""
    page = section.split(": ", 1)[0]
    out = []
    for where, command in readme_commands():
        if where == section:
            break
        argv = shlex.split(command)
        if where.split(": ", 1)[0] == page and _tool(command) == "accelstack-preview" \
                and "--outputs" in argv[:-1]:
            out.append((argv[1], argv[argv.index("--outputs") + 1]))
    return out


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
    if argv[:2] in (["cluster", "hold"], ["cluster", "resume"]) and not st.clusterqueues:
        # The pool's ResourceFlavor and a ClusterQueue with quota in it, as the stack makes
        # them (tests/test_maintenance_cli.py).
        from test_maintenance_cli import _queue_objects

        stack = argv[argv.index("--stack") + 1]
        from infra.contract.outputs import load

        _queue_objects(server, load(stacks.outputs(stack)).pool(argv[2]))


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
        fake.stack(name, stacks.point_at(stacks.outputs(name), server.kubeconfig()))
    work = tmp_path / "work"
    work.mkdir()
    # The project as a user has it: the README's files, the stacks and their snapshots
    # (copied: `--update-snapshots` writes there).
    for item in ("Pulumi.yaml", "examples", "exports", "stacks", "snapshots"):
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, work / item)
        else:
            shutil.copy(src, work / item)
    # The outputs files the page wrote in its earlier sections (`accelstack-preview STACK
    # --outputs FILE`), their cluster the fake API server; a file the page never wrote is
    # missing, as it is for a reader (tests/test_doc_offline_routes.py).
    for name, file in _written_before(section):
        stacks.write_outputs(work / file, name, server.kubeconfig())
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
    # A command another test runs (an experiment's, against its own fakes) is left to it;
    # the page's previews run here too, since the commands after them read their files.
    elsewhere = _elsewhere()
    commands = [c for s, c in readme_commands() if s == section and _runs_here(c)
                and _canonical(c) not in {_canonical(x) for x in NOT_HERE}
                and (_tool(c) == "accelstack-preview" or _canonical(c) not in elsewhere)]
    assert commands
    for command in commands:
        _, *argv = shlex.split(command)
        _cluster_state(server, argv)
        entry: Callable[..., Any] = preview.main if _tool(command) == "accelstack-preview" \
            else main
        result = runner.invoke(entry, argv)  # type: ignore[arg-type]
        assert result.exit_code == EXITS.get(_canonical(command), 0), (command, result.output)
        _check(command, argv, result.stdout, server, work)


def _check(command: str, argv: list[str], stdout: str, server: FakeApiServer,
           work: Path) -> None:
    """What each kind of command must have done, beyond exiting 0."""
    if "--dry-run" in argv and "run-local" in argv:
        assert "processes:" in stdout, command  # the plan of local processes
    elif "--dry-run" in argv:
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
    if argv[:2] in (["cluster", "hold"], ["cluster", "resume"]):
        policy = next(q for q in server.state.clusterqueues
                      if q["metadata"]["name"] == "cluster-queue")["spec"].get("stopPolicy")
        assert policy == ("Hold" if argv[1] == "hold" else None), command
    if "delete" in argv:
        assert server.state.jobsets == {}, command
    if argv[:2] == ["cluster", "credentials"]:
        kubeconfig = yaml.safe_load((work.parent / "kubeconfig").read_text())
        # The stack's kubeconfig here points at the fake server (context "test").
        assert kubeconfig["current-context"] == "test", command
        assert kubeconfig["clusters"][0]["cluster"]["server"] == server.url, command
    if argv[:1] == ["accelerators"] and ("--stack" in argv or "--outputs" in argv):
        assert "POOL" in stdout.splitlines()[0], command
    if "tpu7x-dynamic" in argv:  # docs/dynamic-slicing.md: the shapes and their annotation
        if argv[:1] == ["accelerators"]:
            assert "DYNAMIC SLICE" in stdout.splitlines()[0], command
        if "--dry-run" in argv:
            assert "cloud.google.com/gke-tpu-slice-topology: 4x8x8" in stdout, command
            assert "cloud.google.com/gke-tpu-topology" not in stdout, command
