"""Flags of xpk that people type from habit, and the option of ours that does the same job.

Click's own suggestion goes by spelling, so xpk's ``--tpu-type`` got ``--output``; a user
coming from xpk is told the option that means the same thing instead. The xpk flags are
those of ``xpk workload create`` (AI-Hypercomputer/xpk, ``src/xpk/parser/workload.py``:
``--tpu-type``/``--device-type`` "v5litepod-16, h100-80gb-8, ...", ``--docker-image``,
``--base-docker-image``, ``--cluster``); our catalog takes xpk's accelerator names as they
are (docs/accelerators.md).
"""

from __future__ import annotations

XPK_FLAGS = {
    "--tpu-type": "--accelerator (xpk's names, such as v5litepod-16, are accepted as they are)",
    "--device-type": "--accelerator (xpk's names, such as h100-80gb-8, are accepted as they are)",
    "--docker-image": "--image",
    "--base-docker-image": "--base-image (with --script-dir)",
    "--cluster": "--stack STACK (a stack names its cluster) or --outputs FILE, given before "
                 "the command or after it",
}


def hint(option: str) -> str | None:
    """The error for xpk's ``option`` (``--tpu-type=v5e-16`` included), or None."""
    name = option.split("=", 1)[0]
    ours = XPK_FLAGS.get(name)
    return f"No such option '{name}': that is xpk's flag; here it is {ours}." if ours else None
