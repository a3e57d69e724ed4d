"""Writing what `--export` asks for: one place that checks, before anything is rendered or
sent, that the folder a path goes into is there (a typo in a path is refused, not made into
a new folder: issue 42; the docs' examples write under exports/, which the project ships),
and turns a file system refusal (a read-only place, a file where a directory should be)
into the option's one-line error, exit 2, instead of a traceback. An --export DIR (a folder
of files) is made itself, its parent must be there."""

from __future__ import annotations

from pathlib import Path

import click


def _refused(path: str, e: OSError) -> click.BadParameter:
    return click.BadParameter(f"cannot write {path}: {e.strerror or e.__class__.__name__}",
                              param_hint="'--export'")


def problem(path: str | Path, directory: bool = False, make_parents: bool = False) -> str | None:
    """Why ``path`` cannot be an --export file (or ``directory``), as far as can be told
    before anything is written: a file where it should be a directory, or a folder it goes
    into that is not there (unless the caller makes it: ``make_parents``, as `submit run
    --logs DIR` does)."""
    p = Path(path)
    if directory and p.exists() and not p.is_dir():
        return f"{path}: not a directory"
    folder = p.parent
    for parent in p.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{path}: {parent} is a file, not a directory"
            break
    if not make_parents and not folder.is_dir():
        return f"{path}: no such folder {folder} (make it first, or write elsewhere)"
    return None


def write(path: str | Path, text: str) -> None:
    """Write ``text`` to the --export file ``path``, into a folder that is there."""
    why = problem(path)
    if why is not None:
        raise click.BadParameter(why, param_hint="'--export'")
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise _refused(str(path), e) from None


def make_dir(path: str | Path) -> None:
    """Make the --export directory ``path`` (its parent is there: ``problem``)."""
    try:
        Path(path).mkdir(exist_ok=True)
    except OSError as e:
        raise _refused(str(path), e) from None
