"""A fake `pulumi` executable: put first on PATH, it answers `pulumi stack output` from files.

It behaves like the real CLI for what the submitter runs: it prints the stack's canned
outputs, or fails as `pulumi` does for a stack it does not know (``error: no stack named
'NAME' found`` on stderr, exit 255). Every call's argv, working directory and the
PULUMI_SKIP_UPDATE_CHECK it saw are appended to ``calls.jsonl`` for the test to check.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = r'''
import json, os, sys
from pathlib import Path

home = Path(__file__).resolve().parent.parent
args = sys.argv[1:]
with open(home / "calls.jsonl", "a") as log:
    log.write(json.dumps({"argv": args, "cwd": os.getcwd(),
                          "skipUpdateCheck": os.environ.get("PULUMI_SKIP_UPDATE_CHECK")}) + "\n")
if args[:2] != ["stack", "output"]:
    sys.stderr.write("error: unknown command %r for the fake pulumi\n" % " ".join(args))
    sys.exit(2)
stack = args[args.index("--stack") + 1] if "--stack" in args else None
fail = home / "stacks" / f"{stack}.fail"
out = home / "stacks" / f"{stack}.out"
if fail.exists():
    sys.stderr.write(fail.read_text())
    sys.exit(255)
if not out.exists():
    sys.stderr.write(f"error: no stack named '{stack}' found\n")
    sys.exit(255)
sys.stdout.write(out.read_text())
'''


class FakePulumi:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.bin = home / "bin"
        (home / "stacks").mkdir(parents=True)
        self.bin.mkdir()
        exe = self.bin / "pulumi"
        exe.write_text(f"#!{sys.executable}\n{SCRIPT}")
        exe.chmod(0o755)

    def stack(self, name: str, stdout: str | dict[str, Any]) -> None:
        """What `pulumi stack output --json` prints for stack ``name``."""
        text = stdout if isinstance(stdout, str) else json.dumps(stdout, indent=2) + "\n"
        (self.home / "stacks" / f"{name}.out").write_text(text)

    def failing(self, name: str, stderr: str) -> None:
        (self.home / "stacks" / f"{name}.fail").write_text(stderr)

    @property
    def calls(self) -> list[dict[str, Any]]:
        log = self.home / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePulumi:
    """A fake pulumi first on PATH (the rest of PATH kept, so the real one is shadowed)."""
    fake = FakePulumi(tmp_path / "fake-pulumi")
    monkeypatch.setenv("PATH", f"{fake.bin}:{os.environ.get('PATH', '')}")
    return fake
