"""Config errors that name the key path, the bad value and what is allowed.

Kept free of pulumi so the parser can be used (and tested) without the SDK; the Pulumi
entry point turns a ConfigError into a ``pulumi.RunError`` so users see no traceback.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable


class ConfigError(ValueError):
    """One or more problems in a stack's config; ``problems`` holds each message."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def show(value: Any) -> str:
    """A value as it appears in a message: strings quoted, the rest as YAML would write it."""
    if isinstance(value, str):
        return repr(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


def did_you_mean(word: str, allowed: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(allowed), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def one_of(allowed: Iterable[str]) -> str:
    return ", ".join(allowed)
