"""Printing results: aligned tables for people, JSON or YAML for programs."""

from __future__ import annotations

import json
from typing import Any, Sequence

import click
import yaml

FORMATS = ("table", "json", "yaml")
# libyaml's emitter where PyYAML was built with it: the same YAML, several times faster
# (tests/test_cli_output.py compares the two on the golden workloads).
DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def as_document(objs: list[dict[str, Any]]) -> dict[str, Any]:
    """One object as itself; several as a Kubernetes ``List`` (what `kubectl get -o yaml`
    prints for several objects, and what `kubectl apply -f` reads), whatever the format."""
    if len(objs) == 1:
        return objs[0]
    return {"apiVersion": "v1", "kind": "List", "items": objs}


def dump_objects(objs: list[dict[str, Any]], fmt: str) -> str:
    """Rendered objects as JSON or YAML text, ending in a newline."""
    doc = as_document(objs)
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    return str(yaml.dump(doc, Dumper=DUMPER, sort_keys=False))


def unwrap(docs: list[Any]) -> list[Any]:
    """The objects of documents read back: a ``List``'s items, or the documents."""
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == "List" \
            and isinstance(docs[0].get("items"), list):
        return list(docs[0]["items"])
    return docs


def emit(data: Any, fmt: str, columns: Sequence[tuple[str, str]] | None = None) -> None:
    """Print ``data`` (a list of dicts) in ``fmt``; ``columns`` are (header, key) for tables."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    elif fmt == "yaml":
        click.echo(yaml.dump(data, Dumper=DUMPER, sort_keys=False), nl=False)
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
