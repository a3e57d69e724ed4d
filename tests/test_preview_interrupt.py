"""Ctrl-C during `accelstack-preview` has one outcome whenever it comes (issue 34): the
process stops, exits 130 and prints no traceback, no "Aborted!", no "Exception ignored".
Sent while modules load, while the first stacks are evaluated, and later."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

PREVIEW = str(Path(sys.executable).with_name("accelstack-preview"))


@pytest.mark.parametrize("after", [0.3, 1.0, 2.0])
def test_ctrl_c_stops_with_130_and_no_traceback(after: float) -> None:
    # Every stack: several seconds even on an idle machine, longer than the signal's delay
    # (a signal during the interpreter's own shutdown would meet Python's default handler).
    proc = subprocess.Popen([PREVIEW, "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    assert proc.poll() is None, "the preview ended before the signal"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err == "accelstack-preview: interrupted (Ctrl-C); stopped\n"
    assert out == ""
