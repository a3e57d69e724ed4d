"""The file `accelstack-preview --outputs FILE` writes: the stack's outputs contract for
`submit ... --outputs FILE` (harness.offline_outputs: every kubeconfig masked, a preview has
none to give). Written whole even when Ctrl-C comes while it is written (interrupt.writing).
Kept apart from cli.py, which prints and checks desired states."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def write(outputs: dict[str, Any], outputs_file: str) -> None:
    from infra.preview.interrupt import writing

    text = json.dumps(outputs, indent=2, sort_keys=True) + "\n"
    try:
        with writing():
            Path(outputs_file).write_text(text)
    except OSError as e:
        raise click.BadParameter(f"cannot write {outputs_file}: {e.strerror}",
                                 param_hint="'--outputs'") from None
    from infra.preview.streams import echo

    echo(f"wrote {outputs_file} (the stack's outputs; keep it out of git)", err=True)
