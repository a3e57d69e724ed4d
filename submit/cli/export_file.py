"""Writing what `--export` asks for: one place that makes the directories a path needs (so an
example can write under a git-ignored folder such as exports/) and turns a file system
refusal (a read-only place, a file where a directory should be) into the option's one-line
error, exit 2, instead of a traceback."""

from __future__ import annotations

from pathlib import Path

import click


def _refused(path: str, e: OSError) -> click.BadParameter:
    return click.BadParameter(f"cannot write {path}: {e.strerror or e.__class__.__name__}",
                              param_hint="'--export'")


def problem(path: str | Path, directory: bool = False) -> str | None:
    """Why ``path`` cannot be an --export file (or ``directory``), as far as can be told
    before anything is written: a file where it or one of its directories should be."""
    p = Path(path)
    if directory and p.exists() and not p.is_dir():
        return f"{path}: not a directory"
    for parent in p.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else f"{path}: {parent} is a file, not a directory"
    return None


def write(path: str | Path, text: str) -> None:
    """Write ``text`` to the --export file ``path``, making its directories."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise _refused(str(path), e) from None


def make_dir(path: str | Path) -> None:
    """Make the --export directory ``path`` and its parents."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _refused(str(path), e) from None
