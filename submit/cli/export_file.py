"""Writing what `--export` asks for: one place that turns a file system refusal (a read-only
place, a missing directory, a file where a directory should be) into the option's one-line
error, exit 2, instead of a traceback."""

from __future__ import annotations

from pathlib import Path

import click


def _refused(path: str, e: OSError) -> click.BadParameter:
    return click.BadParameter(f"cannot write {path}: {e.strerror or e.__class__.__name__}",
                              param_hint="'--export'")


def write(path: str | Path, text: str) -> None:
    """Write ``text`` to the --export file ``path``."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise _refused(str(path), e) from None


def make_dir(path: str | Path) -> None:
    """Make the --export directory ``path`` (its parent must exist)."""
    try:
        Path(path).mkdir(exist_ok=True)
    except OSError as e:
        raise _refused(str(path), e) from None
