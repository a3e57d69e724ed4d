"""Progress for commands that wait (`wait`, `create --replace`): on a terminal, one line
rewritten in place with a spinner and the time waited; otherwise (a pipe, a CI log) plain
lines, one per change, never control characters."""

from __future__ import annotations

import itertools
import sys
import time
from typing import TextIO

import click

_FRAMES = "|/-\\"


class Progress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self._frames = itertools.cycle(_FRAMES)
        self._start = time.monotonic()
        self._shown = False

    def line(self, text: str) -> None:
        """A line that stays (a change of state)."""
        self._clear()
        click.echo(text, file=self.stream)

    def tick(self, text: str) -> None:
        """On a terminal, the spinner line: ``text`` and the time waited so far."""
        if not self.tty:
            return
        waited = int(time.monotonic() - self._start)
        click.echo(f"\r\033[K{next(self._frames)} {text} ({waited // 60}m{waited % 60:02d}s)",
                   file=self.stream, nl=False)
        self._shown = True

    def done(self) -> None:
        self._clear()

    def _clear(self) -> None:
        if self._shown:
            click.echo("\r\033[K", file=self.stream, nl=False)
            self._shown = False

    def sleep(self, seconds: float, text: str) -> None:
        """Sleep, turning the spinner on a terminal."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            self.tick(text)
            time.sleep(min(left, 0.2) if self.tty else left)
