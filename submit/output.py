"""Printing results: aligned tables for people, JSON or YAML for programs."""

from __future__ import annotations

import json
from typing import Any, Sequence

import click
import yaml

FORMATS = ("table", "json", "yaml")


def emit(data: Any, fmt: str, columns: Sequence[tuple[str, str]] | None = None) -> None:
    """Print ``data`` (a list of dicts) in ``fmt``; ``columns`` are (header, key) for tables."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    elif fmt == "yaml":
        click.echo(yaml.safe_dump(data, sort_keys=False), nl=False)
    else:
        assert columns is not None
        click.echo(table(data, columns), nl=False)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    cells = [[h for h, _ in columns]] + [[_cell(r.get(k)) for _, k in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines) + "\n"
