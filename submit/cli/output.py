"""Printing results: aligned tables for people, JSON or YAML for programs."""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

import click
import yaml

FORMATS = ("table", "json", "yaml")
_STR, _INT, _BOOL, _NULL = ("tag:yaml.org,2002:" + t for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_BASE: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BASE):  # type: ignore[misc]
    """yaml.safe_dump's YAML for manifests, several times faster (a 1,000-trial sweep is 4 s
    with SafeDumper, 1 s with libyaml's CSafeDumper, 0.3 s with this; bench/sweep_dry_run.py).

    libyaml's emitter where PyYAML was built with it; and the Python half made cheap: nodes
    for JSON-like data are built directly (what SafeRepresenter builds, without its alias
    bookkeeping: rendered objects share no containers that an anchor should mark), and the
    tag resolution of each scalar, a regular-expression match that PyYAML repeats for every
    key of every object, is remembered per value. tests/test_cli_output.py holds the output
    equal to CSafeDumper's for any JSON-like data, and to SafeDumper's for the golden
    manifests, but for one style: a string of several lines is a block scalar (``|``)."""

    _resolved: dict[str, str] = {}  # a plain scalar's text -> the tag YAML reads it as

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
        if not implicit[0]:  # the serializer's second question: a quoted scalar is a str
            return _STR
        tag = self._resolved.get(value)
        if tag is None:
            tag = self._resolved[value] = super().resolve(kind, value, implicit)
            if len(self._resolved) > 100_000:  # values are data: keep the memory bounded
                self._resolved.clear()
        return tag

    def descend_resolver(self, *args: Any) -> None:  # SafeDumper has no path resolvers
        pass

    def ascend_resolver(self) -> None:
        pass

    def represent_data(self, data: Any) -> yaml.Node:
        node = _node(data)
        return node if node is not None else super().represent_data(data)


def _node(data: Any, scalar: Any = yaml.ScalarNode, mapping: Any = yaml.MappingNode,
          sequence: Any = yaml.SequenceNode) -> Any:
    """The node SafeRepresenter builds for JSON-like ``data`` (None for anything else:
    floats, dates, subclasses), as one plain function: this runs for every key and value."""
    t = type(data)
    if t is str:
        # A text of several lines (a --config-file, a script) as a block scalar, as written
        # in a file, rather than a quoted string of \n escapes; where YAML allows no block
        # (trailing spaces, a key) the emitter falls back to a quoted scalar by itself.
        return scalar(_STR, data, style="|" if "\n" in data else None)
    if t is dict:
        items = []
        for k, v in data.items():
            kn, vn = _node(k), _node(v)
            if kn is None or vn is None:
                return None
            items.append((kn, vn))
        return mapping(_MAP, items, flow_style=False)
    if t is list:
        values = []
        for v in data:
            vn = _node(v)
            if vn is None:
                return None
            values.append(vn)
        return sequence(_SEQ, values, flow_style=flow_list(data))
    if t is bool:
        return scalar(_BOOL, "true" if data else "false")
    if t is int:
        return scalar(_INT, str(data))
    if data is None:
        return scalar(_NULL, "null")
    return None


# A list of more integers than this is written on a few lines, [42, 127, 128, ...], rather
# than one line each: podFailurePolicy's exit codes (42 and 127-255 by default) would
# otherwise be 130 lines of a render; Kubernetes has no range operator for them (In/NotIn
# with a list of values: k8s.io/api batch/v1 PodFailurePolicyOnExitCodesRequirement).
FLOW_INTS_OVER = 8


def flow_list(data: list[Any]) -> bool:
    """Whether a list is written in flow style: long, and integers only."""
    return len(data) > FLOW_INTS_OVER and all(type(v) is int for v in data)


DUMPER: Any = _Dumper


def yaml_text(data: Any) -> str:
    """One document, as ``yaml.safe_dump(data, sort_keys=False)`` writes it."""
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False))


def yaml_documents(docs: list[Any]) -> str:
    """Several documents separated by ``---``, as ``yaml.safe_dump_all`` writes them."""
    return str(yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False))


def as_document(objs: list[dict[str, Any]]) -> dict[str, Any]:
    """One object as itself; several as a Kubernetes ``List`` (what `kubectl get -o yaml`
    prints for several objects, and what `kubectl apply -f` reads), whatever the format."""
    if len(objs) == 1:
        return objs[0]
    return {"apiVersion": "v1", "kind": "List", "items": objs}


# What the dumper writes before a List's items (the rest is the items, as a block sequence).
_LIST_HEAD = "apiVersion: v1\nkind: List\nitems:\n"


def dump_objects(objs: list[dict[str, Any]], fmt: str) -> str:
    """Rendered objects as JSON or YAML text, ending in a newline."""
    doc = as_document(objs)
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    if len(objs) < 2:
        return yaml_text(doc)
    # Several: the List's items written one at a time, each by the dumper as a sequence of
    # one. The text is the whole List's (tests/test_cli_output.py holds it so), but only one
    # object's nodes are alive at once: built for all 1,000 JobSets of a sweep, the cyclic
    # collector walks every node made so far, again and again (3x slower; issue 42).
    return _LIST_HEAD + "".join(yaml_text([o]) for o in objs)


def unwrap(docs: list[Any]) -> list[Any]:
    """The objects of documents read back: a ``List``'s items, or the documents."""
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == "List" \
            and isinstance(docs[0].get("items"), list):
        return list(docs[0]["items"])
    return docs


def not_a_manifest(path: str, e: Exception) -> str:
    """A manifest that does not parse, as `create-group` and `experiment` say it of their
    files: ``FILE:LINE: not YAML or JSON: problem`` (a position and the parser's words,
    never the file's text: its env values may be secrets)."""
    mark = getattr(e, "problem_mark", None)
    line = mark.line + 1 if mark is not None else getattr(e, "lineno", None)
    problem = getattr(e, "problem", None) or getattr(e, "msg", None) or e.__class__.__name__
    return f"{path}{f':{line}' if line else ''}: not YAML or JSON: {problem}"


def emit(data: Any, fmt: str, columns: Sequence[tuple[str, str]] | None = None) -> None:
    """Print ``data`` (a list of dicts) in ``fmt``; ``columns`` are (header, key) for tables."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    elif fmt == "yaml":
        click.echo(yaml_text(data), nl=False)
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


def emit_pages(pages: Iterable[list[dict[str, Any]]], fmt: str,
               columns: Sequence[tuple[str, str]]) -> int:
    """Print rows that come a page at a time (submit/cli/listing.py): a table prints each
    page as it comes, as `kubectl get` prints each chunk, its columns as wide as the widest
    cell so far (a later, wider page widens them from there on); JSON and YAML are one
    document, printed at the end. The number of rows printed."""
    if fmt != "table":
        rows = [r for page in pages for r in page]
        emit(rows, fmt, columns)
        return len(rows)
    widths = [len(h) for h, _ in columns]
    count = 0
    for page in pages:
        cells = [[_cell(r.get(k)) for _, k in columns] for r in page]
        widths = [max([widths[i]] + [len(c[i]) for c in cells]) for i in range(len(columns))]
        lines = [] if count else ["  ".join(h.ljust(w) for (h, _), w in zip(columns, widths))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
        click.echo("".join(line.rstrip() + "\n" for line in lines), nl=False)
        count += len(page)
    if not count:
        click.echo("  ".join(h for h, _ in columns))
    return count
