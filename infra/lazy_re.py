"""Regular expressions compiled on first use.

A module-level ``re.compile`` runs when the module is imported, whether or not the command
uses the pattern: for the seventeen patterns on the way of `submit workload create --dry-run`
that was about a millisecond of a start-up that issue 26 budgets to 1.3x a bare
``import click, yaml`` (bench/cold_dry_run.py). ``later(...)`` keeps the pattern text and
compiles it (through ``re``'s own cache) the first time it matches.
"""

from __future__ import annotations

import re
import sys
from typing import Callable, Iterator


class LazyPattern:
    """The part of ``re.Pattern`` the project uses, compiled the first time it is used."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize
              ) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize
                  ) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize
               ) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string)

    def findall(self, string: str) -> list[str]:
        return self.compiled.findall(string)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
            ) -> str:
        return self.compiled.sub(repl, string, count)

    def __repr__(self) -> str:
        return f"later({self.pattern!r})"


def later(pattern: str, flags: int = 0) -> LazyPattern:
    """``re.compile(pattern, flags)``, done the first time the pattern is used."""
    return LazyPattern(pattern, flags)
