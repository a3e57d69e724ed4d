"""Every command docs/review.md gives for review and CI (from the policy pack to the schema
checks) is run here, as written, so the page cannot drift. A command this test does not
know fails it; `pulumi` runs as a fake that records its argv (tests/test_workflow.py
pins the exact arguments of the workflow's script)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import schema
from conftest import ROOT

PAGE = ROOT / "docs" / "review.md"
FIRST = "The same rule functions run in real previews"
sys.path.insert(0, str(ROOT / "tools"))
import reference_crds as rc  # noqa: E402


def _commands() -> list[str]:
    text = PAGE.read_text()
    section = text[text.index(FIRST):]
    out = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command:
                out.append(command)
    # Commands given inline in the prose, run by the workflow's jobs.
    out += re.findall(r"`(STACK=\S+ \.github/scripts/pulumi-stack\.sh \w+)`", section)
    return out


FAKE_PULUMI = """#!/bin/sh
printf '%s\\n' "$*" >> "$CALLS"
"""


def _fake_pulumi(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "pulumi").write_text(FAKE_PULUMI)
    (bin_dir / "pulumi").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}",
            "CALLS": str(tmp_path / "calls.txt"), "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")}


def _run_pulumi(command: str, tmp_path: Path) -> None:
    env = _fake_pulumi(tmp_path)
    res = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    argv = shlex.split((tmp_path / "calls.txt").read_text().splitlines()[0])
    pack = ROOT / argv[argv.index("--policy-pack") + 1]
    assert (pack / "PulumiPolicy.yaml").is_file() and (pack / "__main__.py").is_file()
    assert argv[0] in ("preview", "up")


def _run_tool(command: str, tmp_path: Path) -> None:
    res = subprocess.run(shlex.split(command), cwd=ROOT, env=_fake_pulumi(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def _release(docs: list[dict[str, Any]], path: Path) -> str:
    path.write_text(yaml.dump_all(docs, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    return path.as_uri()


def _reference_crds(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = shlex.split(command)
    assert argv[:2] == ["python", "tools/reference_crds.py"]
    schema.require_reference()
    args = [a.replace("../shared/reference", str(schema.REFERENCE)) for a in argv[2:]]
    if args[0] == "fetch":
        # The release URLs, served from files: the same download path (urllib), no network.
        docs = [d for p in sorted(Path(schema.CRD_DIR).glob("*.yaml"))
                for d in rc.crds(p.read_text())]
        monkeypatch.setattr(rc, "RELEASES", {
            "jobset": _release([d for d in docs if d["spec"]["group"].startswith("jobset")],
                               tmp_path / "jobset.yaml"),
            "kueue": _release([d for d in docs if d["spec"]["group"].startswith("kueue")],
                              tmp_path / "kueue.yaml")})
        args[args.index("--dest") + 1] = str(tmp_path / "crds")
    assert rc.main(args) == 0
    if args[0] == "fetch":
        assert rc.main(["verify", str(tmp_path / "crds")]) == 0


def test_the_readme_lists_the_review_commands() -> None:
    commands = _commands()
    assert "pulumi preview --policy-pack infra/policy/pack" in commands
    assert "actionlint" in commands and "zizmor --offline .github" in commands
    assert any(c.startswith("python tools/reference_crds.py fetch") for c in commands)


@pytest.mark.parametrize("command", _commands())
def test_readme_command(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if command.startswith(("pulumi ", "STACK=")):
        _run_pulumi(command, tmp_path)
    elif command.split()[0] in ("actionlint", "zizmor"):
        _run_tool(command, tmp_path)
    elif command.startswith("python tools/reference_crds.py"):
        _reference_crds(command, tmp_path, monkeypatch)
    else:
        pytest.fail(f"docs/review.md command not exercised by a test: {command}")
