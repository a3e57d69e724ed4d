"""A fake `pulumi` for the Automation API: tests/fakes/pulumi_engine.py installed as bin/pulumi.

The engine script plays the CLI's side of everything `submit run` and `submit reap` do
(stack select/init/ls/rm, tags, config set-all, up, destroy, outputs, history, cancel,
version) and writes engine events as the CLI does. A test sets the program (what `up`
creates and the outputs it leaves) and faults, then reads the stacks, the "cloud" (what
exists) and every call's argv.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

ENGINE = Path(__file__).with_name("pulumi_engine.py")


class FakeAutoPulumi:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.bin = home / "bin"
        self.bin.mkdir(parents=True)
        (home / "stacks").mkdir()
        exe = self.bin / "pulumi"
        exe.write_text(f"#!{sys.executable}\n" + ENGINE.read_text())
        exe.chmod(0o755)
        self.program([], {})

    def program(self, resources: Sequence[tuple[str, ...]], outputs: dict[str, Any],
                secret: tuple[str, ...] = ("accelstack",),
                made: dict[str, tuple[dict[str, Any], str]] | None = None) -> None:
        """What `up` creates (type, name), in order, and the outputs it leaves; a
        (type, name, STACK) entry is a StackReference that reads STACK. ``made`` gives a
        resource (by name) its inputs and the provider ID the cloud gives it."""
        given = made or {}
        (self.home / "program.json").write_text(json.dumps({
            "resources": [{"type": r[0], "name": r[1], **({"read": r[2]} if len(r) > 2 else {}),
                           **({"inputs": given[r[1]][0], "id": given[r[1]][1]}
                              if r[1] in given else {})}
                          for r in resources],
            "outputs": outputs, "secretOutputs": list(secret)}))

    def faults(self, **faults: Any) -> None:
        """upFailAt=K (the K-th resource of `up`, 0 being the stack itself),
        upFailMessage, destroyFails=N (the first N destroys fail at their first resource),
        destroyFailMessage, hangAt=K (`up` waits at resource K: kill or signal it there),
        stepSeconds, version, tagsUnsupported, backend ("diy", the default, or "service":
        what `stack ls` prints and how a lock refuses), lsFails / tagLsFails / initFails
        (the message `stack ls`, `stack tag ls` or `stack init` fails with)."""
        (self.home / "faults.json").write_text(json.dumps(faults))

    def standing(self, name: str, resources: list[tuple[str, str]],
                 outputs: dict[str, Any]) -> list[str]:
        """A stack deployed before the test (not ephemeral): its resources exist in the
        cloud. Returns their URNs."""
        urns = [f"urn:pulumi:{name}::accelstack::{t}::{n}" for t, n in resources]
        (self.home / "stacks" / f"{name}.json").write_text(json.dumps({
            "config": {}, "tags": {}, "resources": urns, "outputs": outputs, "history": [],
            "lock": None, "pending": []}))
        cloud = self.home / "cloud.json"
        live = json.loads(cloud.read_text()) if cloud.exists() else []
        cloud.write_text(json.dumps(sorted(set(live) | set(urns))))
        return urns

    def stack(self, name: str) -> dict[str, Any] | None:
        path = self.home / "stacks" / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    @property
    def stacks(self) -> list[str]:
        return sorted(p.stem for p in (self.home / "stacks").glob("*.json"))

    @property
    def cloud(self) -> list[str]:
        path = self.home / "cloud.json"
        return json.loads(path.read_text()) if path.exists() else []

    @property
    def calls(self) -> list[dict[str, Any]]:
        log = self.home / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def commands(self) -> list[list[str]]:
        """Each call's argv without the flags every call carries."""
        return [[a for a in c["argv"] if a != "--non-interactive"] for c in self.calls
                if c["argv"] != ["version"]]


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAutoPulumi:
    fake = FakeAutoPulumi(tmp_path / "fake-pulumi")
    monkeypatch.setenv("PATH", f"{fake.bin}:{os.environ.get('PATH', '')}")
    return fake
