"""The review workflow: linted by actionlint and zizmor, hardened, and its stack script.

The linters run here as in the workflow's offline job, so a regression (an unpinned action,
a template injection, a checkout that keeps its credentials) fails the suite, not just CI.
A crafted bad workflow proves the linters do fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "infra.yml"
STACK_WORKFLOW = ROOT / ".github" / "workflows" / "stack.yml"
WORKFLOWS = (WORKFLOW, STACK_WORKFLOW)
CLI_VERSION_FILE = ROOT / ".pulumi-version"
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
STACK_SCRIPT = ROOT / ".github" / "scripts" / "pulumi-stack.sh"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"uses: (\S+) # v\d+\.\d+\.\d+$")


def _tool(name: str) -> str:
    """A linter from the dev extras, beside this interpreter; fail (never skip) if absent."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.is_file() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed: `pip install -e '.[dev]'` installs it")
    return found


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def _workflow(path: Path = WORKFLOW) -> dict[Any, Any]:
    doc: dict[Any, Any] = yaml.safe_load(path.read_text())
    return doc


def _jobs() -> dict[str, dict[str, Any]]:
    """Every job of both workflows; the called workflow's as ``stack.<job>``."""
    out = dict(_workflow()["jobs"])
    out.update({f"stack.{k}": v for k, v in _workflow(STACK_WORKFLOW)["jobs"].items()})
    return out


def _steps() -> list[tuple[str, dict[str, Any]]]:
    return [(job, step) for job, spec in _jobs().items() for step in spec.get("steps", [])]


# ----------------------------------------------------------------------------------
# Linters


def test_actionlint_passes() -> None:
    res = _run([_tool("actionlint"), "-no-color"], ROOT)
    assert res.returncode == 0, res.stdout + res.stderr


def test_zizmor_passes_with_no_findings() -> None:
    # --offline here: the online audits (impostor commits, known-vulnerable actions) need a
    # GitHub token and run in the workflow's lint step.
    res = _run([_tool("zizmor"), "--offline", "--format", "plain", ".github"], ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No findings" in res.stdout + res.stderr


BAD_WORKFLOW = """\
on: pull_request_target
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo "${{ github.event.pull_request.title }}"
"""


def test_the_linters_catch_a_bad_workflow(tmp_path: Path) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "bad.yml").write_text(BAD_WORKFLOW)
    res = _run([_tool("zizmor"), "--offline", "--format", "plain", ".github"], tmp_path)
    assert res.returncode != 0
    for audit in ("unpinned-uses", "template-injection", "artipacked", "dangerous-triggers"):
        assert audit in res.stdout, res.stdout
    res = _run([_tool("actionlint"), "-no-color", "-shellcheck=", str(wf / "bad.yml")], tmp_path)
    assert res.returncode != 0
    assert "github.event.pull_request.title" in res.stdout


# ----------------------------------------------------------------------------------
# Hardening, read from the workflow itself


def test_every_action_is_pinned_to_a_commit_with_its_version() -> None:
    uses = [step["uses"] for _, step in _steps() if "uses" in step]
    assert uses
    for ref in uses:
        assert SHA_PIN.match(ref), f"{ref}: pin a full commit SHA"
    lines = [ln.strip() for path in WORKFLOWS for ln in path.read_text().splitlines()
             if "uses:" in ln and "uses: ./" not in ln and not ln.strip().startswith("#")]
    for line in lines:
        assert VERSION_COMMENT.search(line.removeprefix("- ")), f"{line}: add '# vX.Y.Z'"


def test_every_checkout_drops_its_credentials() -> None:
    checkouts = [s for _, s in _steps() if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert len(checkouts) >= 5
    for step in checkouts:
        assert step["with"]["persist-credentials"] is False


def test_permissions_are_least_per_job_with_a_reason() -> None:
    for path in WORKFLOWS:
        assert _workflow(path)["permissions"] == {}
    for name, job in _jobs().items():
        perms = job["permissions"]
        assert perms.get("contents") == "read", name
        assert set(perms) <= {"contents", "id-token"}, f"{name}: {perms}"
    # Every permission line says why.
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if re.match(r"\s+(contents|id-token): (read|write)", line):
                assert "#" in line, line


def test_secrets_live_in_environments_and_forks_get_none() -> None:
    jobs = _jobs()
    assert "environment" not in jobs["offline"]
    assert "secrets." not in json.dumps(jobs["offline"])
    assert jobs["preview"]["environment"] == "preview"
    assert "head.repo.full_name == github.repository" in jobs["preview"]["if"]
    assert jobs["stack.plan"]["environment"] == "preview"
    assert jobs["stack.deploy"]["environment"].split()[0] == "production"
    assert "secrets" not in jobs["release"]  # no secrets: inherit; the environments hold them
    for name in ("preview", "stack.plan", "stack.deploy"):
        assert "secrets.PULUMI_ACCESS_TOKEN" in json.dumps(jobs[name])


# Was: `deploy` needed the whole `plan` matrix, so one stack's failed plan held back every
# other stack's deploy. Each stack now runs plan -> deploy in a called workflow of its own.
def test_each_stack_deploys_after_its_own_plan() -> None:
    jobs = _jobs()
    assert not {"plan", "deploy"} & set(_workflow()["jobs"])
    release = jobs["release"]
    assert release["uses"] == "./.github/workflows/stack.yml"
    assert release["with"] == {"stack": "${{ matrix.stack }}"}
    assert release["strategy"]["fail-fast"] is False
    assert release["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.offline.outputs.stacks) }}"
    assert release["needs"] == "offline"
    assert _workflow(STACK_WORKFLOW)[True]["workflow_call"]["inputs"]["stack"]["required"] is True
    assert jobs["stack.deploy"]["needs"] == "plan"
    assert "needs" not in jobs["stack.plan"]
    for name in ("stack.plan", "stack.deploy"):
        assert "${{ inputs.stack }}" in json.dumps(jobs[name])


# Was: pulumi/actions ran without a pinned CLI version ("^3": whatever is newest), so plan
# and deploy could run different CLIs. One pin, .pulumi-version, read by every install
# (pulumi/actions v7.0.0 action.yml input pulumi-version-file; src/config.ts reads and trims
# it). Drift test: an exact version inside the range pyproject.toml allows the SDK.
def test_the_pulumi_cli_is_pinned_once() -> None:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    installs = [s for _, s in _steps() if str(s.get("uses", "")).startswith("pulumi/actions@")]
    assert len(installs) == 4  # preview, plan, deploy, reap
    for step in installs:
        assert step["with"] == {"pulumi-version-file": ".pulumi-version"}
    version = CLI_VERSION_FILE.read_text().strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    [sdk] = re.findall(r'^\s*"pulumi([<>=!~][^"]*)",', (ROOT / "pyproject.toml").read_text(),
                       re.MULTILINE)
    assert Version(version) in SpecifierSet(sdk), (version, sdk)


def test_the_offline_job_runs_schema_tests_for_real_and_lints() -> None:
    runs = "\n".join(s.get("run", "") for job, s in _steps() if job == "offline")
    assert "tools/reference_crds.py fetch --dest ../shared/reference/crds" in runs
    assert ".venv/bin/actionlint" in runs and ".venv/bin/zizmor" in runs
    tests = [s for job, s in _steps() if job == "offline" and s.get("name") == "Tests"]
    assert tests[0]["env"]["CI"] == "true"
    assert "accelstack-preview --diff" in runs and "GITHUB_STEP_SUMMARY" in runs


def test_the_deploy_applies_the_saved_plan() -> None:
    jobs = _workflow(STACK_WORKFLOW)["jobs"]
    plan_runs = [s.get("run", "") for s in jobs["plan"]["steps"]]
    assert ".github/scripts/pulumi-stack.sh plan" in plan_runs
    upload = [s for s in jobs["plan"]["steps"] if "upload-artifact" in s.get("uses", "")][0]
    assert upload["with"]["path"] == "plan.json"
    download = [s for s in jobs["deploy"]["steps"] if "download-artifact" in s.get("uses", "")]
    assert download[0]["with"]["name"] == upload["with"]["name"] == "plan-${{ inputs.stack }}"
    assert ".github/scripts/pulumi-stack.sh up" in [s.get("run", "") for s in
                                                     jobs["deploy"]["steps"]]


def test_dependabot_updates_actions_and_pip() -> None:
    doc = yaml.safe_load(DEPENDABOT.read_text())
    assert doc["version"] == 2
    assert {u["package-ecosystem"] for u in doc["updates"]} == {"github-actions", "pip"}


# ----------------------------------------------------------------------------------
# The stack script, against a fake `pulumi` that records its argv

FAKE_PULUMI = """#!/bin/sh
printf '%s\\n' "$*" >> "$CALLS"
env | grep -E '^PULUMI_(BACKEND_URL|ACCESS_TOKEN|CONFIG_PASSPHRASE)=' | sort >> "$CALLS"
echo "Previewing update (fake)"
echo "  + gcp:container/cluster:Cluster cluster create"
exit "${FAKE_RC:-0}"
"""


def _script(tmp_path: Path, cmd: str, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                            list[str], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "pulumi"
    fake.write_text(FAKE_PULUMI)
    fake.chmod(0o755)
    calls, summary = tmp_path / "calls.txt", tmp_path / "summary.md"
    full = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls),
            "GITHUB_STEP_SUMMARY": str(summary), **env}
    res = subprocess.run(["bash", str(STACK_SCRIPT), cmd], cwd=tmp_path, env=full,
                         capture_output=True, text=True, timeout=30)
    return res, calls.read_text().splitlines() if calls.exists() else [], (
        summary.read_text() if summary.exists() else "")


def test_plan_saves_an_update_plan_for_a_pulumi_cloud_stack(tmp_path: Path) -> None:
    res, calls, summary = _script(tmp_path, "plan", STACK="v5p-reserved", PULUMI_ORG="acme",
                                  PULUMI_BACKEND_URL="", PULUMI_ACCESS_TOKEN="pul-x")
    assert res.returncode == 0, res.stderr
    assert calls[0] == ("preview --stack acme/v5p-reserved --non-interactive --color never "
                        "--refresh --diff --policy-pack infra/policy/pack --save-plan plan.json")
    # An empty variable is unset, not passed as an empty backend URL.
    assert calls[1:] == ["PULUMI_ACCESS_TOKEN=pul-x"]
    assert summary.startswith("## pulumi plan: acme/v5p-reserved (exit 0)\n```diff\n")
    assert "+ gcp:container/cluster:Cluster cluster create" in summary


def test_up_is_constrained_to_the_plan_on_a_self_managed_backend(tmp_path: Path) -> None:
    res, calls, _ = _script(tmp_path, "up", STACK="a3mega", PULUMI_BACKEND_URL="gs://state",
                            PULUMI_CONFIG_PASSPHRASE="pw")
    assert res.returncode == 0, res.stderr
    assert calls[0] == ("up --stack a3mega --non-interactive --color never --refresh --diff "
                        "--policy-pack infra/policy/pack --yes --plan plan.json")


def test_a_failed_preview_still_reaches_the_summary_and_fails(tmp_path: Path) -> None:
    res, _, summary = _script(tmp_path, "preview", STACK="a3mega", FAKE_RC="255")
    assert res.returncode == 255
    assert "(exit 255)" in summary


def test_an_unknown_command_is_refused(tmp_path: Path) -> None:
    res, calls, _ = _script(tmp_path, "destroy", STACK="a3mega")
    assert res.returncode == 2 and calls == []
    assert "unknown command 'destroy'" in res.stderr


# ----------------------------------------------------------------------------------
# The Workload Identity provider's attribute condition (docs/fresh-project.md)

DOC = ROOT / "docs" / "fresh-project.md"
REPO = "OWNER/REPO"


def _condition() -> str:
    [block] = re.findall(r"```cel\n(.*?)\n```", DOC.read_text(), re.DOTALL)
    return block.strip()


def _allows(condition: str, repository: str, sub: str) -> bool:
    """The documented condition, evaluated for one token: the conjunction of an equality on
    assertion.repository and a list membership of assertion.sub (the only forms it uses)."""
    m = re.fullmatch(r"assertion\.repository == '([^']+)' && assertion\.sub in \[([^\]]*)\]",
                     condition)
    assert m, f"the documented condition changed shape: {condition}"
    subjects = re.findall(r"'([^']+)'", m.group(2))
    return repository == m.group(1) and sub in subjects


# Was: the README said only "an attribute condition on assertion.repository"; jobs in a
# GitHub environment present the subject repo:OWNER/REPO:environment:NAME
# (https://docs.github.com/en/actions/reference/security/oidc), which a branch-based
# condition refuses.
def test_the_documented_condition_admits_every_environment_job_and_nothing_else() -> None:
    condition = _condition()
    cloud_jobs = {name: job for name, job in _jobs().items()
                  if job.get("permissions", {}).get("id-token") == "write"
                  and "uses" not in job}
    assert set(cloud_jobs) == {"preview", "stack.plan", "stack.deploy", "reap"}
    for name, job in cloud_jobs.items():
        env = str(job["environment"]).split()[0]
        assert _allows(condition, REPO, f"repo:{REPO}:environment:{env}"), name
    assert not _allows(condition, REPO, f"repo:{REPO}:ref:refs/heads/main")
    assert not _allows(condition, REPO, f"repo:{REPO}:pull_request")
    assert not _allows(condition, "someone/fork", f"repo:{REPO}:environment:production")
    assert not _allows(condition, REPO, f"repo:{REPO}:environment:staging")


def test_the_reaper_runs_on_a_schedule_and_only_then() -> None:
    wf = _workflow()
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["schedule"] == [{"cron": "23 * * * *"}]
    jobs = wf["jobs"]
    assert jobs["reap"]["if"] == "github.event_name == 'schedule'"
    assert jobs["reap"]["environment"].split()[0] == "reaper"
    runs = [st.get("run", "") for st in jobs["reap"]["steps"]]
    assert any(r.rstrip().endswith(".venv/bin/submit reap") for r in runs)
    # Nothing else runs on the schedule: the other jobs are for pull requests and pushes.
    assert jobs["offline"]["if"] == "github.event_name != 'schedule'"
    for name in ("preview", "release"):
        assert "github.event_name ==" in jobs[name]["if"], name

