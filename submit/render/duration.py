"""Durations as people type them for kubectl and Go programs: ``90s``, ``30m``, ``1h30m``,
``1.5h``; a bare number is seconds. One grammar for every option that takes a time
(``--ttl``, ``wait --timeout``, ``--interval``, ``run --expires-in``), loaded only by those
given one.

Go's ``time.ParseDuration`` accepts a sequence of decimal numbers, each with a unit
(ns, us, ms, s, m, h), with an optional sign (https://pkg.go.dev/time#ParseDuration);
kubectl's ``--timeout`` flags are parsed by it. We also accept ``d`` (days), which the
``--ttl`` option has always taken, and refuse negative values.
"""

from __future__ import annotations

import math
import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0, "d": 86400.0}
_TERM = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h|d)")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
HELP = "a number of seconds, or Go/kubectl syntax such as 90s, 30m, 12h or 1h30m"


class DurationError(ValueError):
    """The text is not a duration; ``str(e)`` says what is allowed."""


def parse(text: str) -> float:
    """Seconds in ``text`` (``90``, ``90s``, ``1h30m``, ``1.5h``)."""
    value = text.strip().lower()
    if _NUMBER.fullmatch(value):
        seconds = float(value)
    else:
        pos, seconds = 0, 0.0
        for m in _TERM.finditer(value):
            if m.start() != pos:
                break
            seconds += float(m.group(1)) * _UNITS[m.group(2)]
            pos = m.end()
        if pos != len(value) or not value:
            raise DurationError(f"{text!r} is not a duration: give {HELP}")
    if not math.isfinite(seconds):
        raise DurationError(f"{text!r} is not a finite duration")
    return seconds
