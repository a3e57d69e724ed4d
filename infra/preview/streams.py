"""Where `accelstack-preview` writes: stdout and stderr that a reader may leave early, and a
progress line on a terminal.

A reader that goes away (`accelstack-preview ... 2>&1 | head -1`) is not an error
(docs/review.md): the stream it read is pointed at /dev/null, so that nothing more is
printed and the run carries on to its own exit code (an --outputs file is still written).
Python ignores SIGPIPE and raises BrokenPipeError instead
(https://docs.python.org/3/library/signal.html#note-on-sigpipe); Click, left to itself,
turns that into exit 1. The progress line is for a person at a terminal: it is written to
stderr only when stderr is a terminal, never into a pipe or a file.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import IO

import click


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """click.echo, except that a reader gone away ends the printing, not the run."""
    try:
        click.echo(text, err=err, nl=nl)
    except OSError as e:
        if not isinstance(e, BrokenPipeError) and e.errno != errno.EPIPE:
            raise
        reader_gone(sys.stderr if err else sys.stdout)


def reader_gone(stream: IO[str]) -> None:
    """The reader of ``stream`` left: point it at /dev/null so that later writes, and the
    interpreter's last flush, succeed and say nothing."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return  # not a file (a test runner's buffer): nothing to point elsewhere
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class Progress:
    """One line on stderr, rewritten in place, while the stacks are evaluated; only when
    stderr is a terminal. ``done`` clears it, so the output after it starts on a clean
    line."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.shown = self.stream.isatty()
        except (OSError, ValueError):
            self.shown = False
        self._width = 0

    def step(self, done: int, total: int, name: str) -> None:
        self._write(f"accelstack-preview: evaluating {name} ({done + 1}/{total})")

    def done(self) -> None:
        if self._width:
            self._write("")
            self._width = 0

    def _write(self, line: str) -> None:
        if not self.shown:
            return
        try:
            self.stream.write("\r" + line.ljust(self._width) + ("\r" if not line else ""))
            self.stream.flush()
        except OSError:
            self.shown = False
            return
        self._width = max(self._width, len(line))
