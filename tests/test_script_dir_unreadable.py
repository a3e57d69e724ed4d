"""`--script-dir` with a directory inside it that cannot be read: the same one-line
`--script-dir` error as an unreadable file, never a traceback (issue 26).

Permission bits do not stop root (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so as root the
command runs under util-linux's `setpriv` with those two capabilities dropped from its
bounding set (setpriv(1)); as any other user the bits alone do it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import stacks

ROOT = Path(__file__).resolve().parent.parent


def _unprivileged(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root needs util-linux's setpriv to drop the capabilities "
                    "that bypass file permissions")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all",
            *argv]


@pytest.mark.parametrize("mode", [0o000, 0o444], ids=["no-access", "not-searchable"])
def test_an_unreadable_directory_is_one_line(tmp_path: Path, mode: int) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    code = tmp_path / "trainer"
    (code / "data").mkdir(parents=True)
    (code / "train.py").write_text("print('hi')\n")
    (code / "data" / "shard-0").write_text("x\n")
    (code / "data").chmod(mode)
    argv = [sys.executable, "-c", "from submit.cli import main; main()", "workload",
            "--outputs", str(outputs), "create", "--workload", "w1", "--accelerator",
            "v5litepod-16", "--script-dir", str(code), "--base-image",
            "127.0.0.1:9/base/python:3.11", "--image-repository", "127.0.0.1:9/w", "--dry-run"]
    try:
        r = subprocess.run(_unprivileged(argv), capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        (code / "data").chmod(0o755)
    what = code / "data" if mode == 0o000 else code / "data" / "shard-0"
    assert (r.returncode, r.stderr.splitlines()[-1], r.stdout) == (
        2, f"Error: Invalid value for '--script-dir': cannot read {what}: Permission denied", "")
    assert "Traceback" not in r.stderr
