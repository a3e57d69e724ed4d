"""The Pulumi seam: where the submitter gets a stack's outputs contract.

Either ``pulumi stack output --json --show-secrets --stack NAME`` (the only place the
``pulumi`` CLI is run) or a JSON file holding that output (or the ``outputs`` part of an
offline preview). Every failure becomes an OutputsError with a message a user can act on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from infra.contract import ContractError, StackOutputs, load

PULUMI_TIMEOUT = 120


class OutputsError(Exception):
    """The outputs could not be read; the message says why and what to do."""


def _parse(text: str, source: str) -> StackOutputs:
    try:
        data: Any = json.loads(text)
    except ValueError as e:
        raise OutputsError(f"{source}: not JSON ({e})") from None
    try:
        return load(data)
    except ContractError as e:
        raise OutputsError(f"{source}: {e}") from None


def from_file(path: str) -> StackOutputs:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise OutputsError(f"cannot read outputs file {path}: {e.strerror}") from None
    return _parse(text, path)


def from_pulumi(stack: str, project_dir: str = ".") -> StackOutputs:
    exe = shutil.which("pulumi")
    if exe is None:
        raise OutputsError(
            "the pulumi CLI is not on PATH; install it (https://www.pulumi.com/docs/install/) "
            "or pass --outputs FILE with the output of `pulumi stack output --json "
            "--show-secrets`")
    cmd = [exe, "stack", "output", "--json", "--show-secrets", "--non-interactive",
           "--stack", stack, "--cwd", project_dir]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PULUMI_TIMEOUT,
                              env={**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "true"})
    except subprocess.TimeoutExpired:
        raise OutputsError(f"`pulumi stack output` for stack {stack!r} did not answer within "
                           f"{PULUMI_TIMEOUT}s (is the state backend reachable?)") from None
    if proc.returncode != 0:
        err = (proc.stderr or proc.stdout).strip().splitlines()
        detail = err[-1] if err else f"exit code {proc.returncode}"
        if "no stack named" in detail.lower() or "not found" in detail.lower():
            raise OutputsError(f"stack {stack!r} not found: {detail} (list stacks with "
                               "`pulumi stack ls`)")
        raise OutputsError(f"`pulumi stack output` failed for stack {stack!r}: {detail}")
    return _parse(proc.stdout, f"stack {stack!r}")


def read(stack: str | None, outputs_file: str | None, project_dir: str = ".") -> StackOutputs:
    if outputs_file:
        return from_file(outputs_file)
    if stack:
        return from_pulumi(stack, project_dir)
    raise OutputsError("no stack given: pass --stack NAME (or set ACCELSTACK_STACK) or "
                       "--outputs FILE (or set ACCELSTACK_OUTPUTS)")
