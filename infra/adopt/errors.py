"""The adoption's errors: one line each, naming the resource and what to do."""

from __future__ import annotations


class AdoptError(Exception):
    """The cluster cannot be adopted as it is (the message says why and what to do)."""


class AdoptRefused(AdoptError):
    """Fields our config cannot express differ from the live cluster; ``lines`` names each
    with its live value."""

    def __init__(self, message: str, lines: list[str]) -> None:
        super().__init__(message)
        self.lines = lines
