"""The snapshots of `accelstack-preview` (snapshots/STACK.yaml): a stack's desired state as
committed, written by --update-snapshots, and the field-by-field difference that --diff and
--check-snapshots show. Kept apart from cli.py, which parses the command line and prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

SNAPSHOTS_DIR = Path("snapshots")


def dump(doc: dict[str, Any]) -> str:
    return str(yaml.safe_dump(doc, sort_keys=True, width=100))


def snapshot_path(stack: str, root: Path = Path(".")) -> Path:
    return root / SNAPSHOTS_DIR / f"{stack}.yaml"


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Resources added, removed and changed (field by field), and changed outputs."""
    def index(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {f"{r['type']} {r['name']}": r for r in doc.get("resources", [])}

    before, after = index(old), index(new)
    lines: list[str] = []
    for key in sorted(after.keys() - before.keys()):
        lines.append(f"+ {key}")
        for field, value in sorted(_flatten({"inputs": after[key].get("inputs")}).items()):
            lines.append(f"    {field}: {json.dumps(value)}")
    for key in sorted(before.keys() - after.keys()):
        lines.append(f"- {key}")
    for key in sorted(before.keys() & after.keys()):
        a = _flatten({"inputs": before[key].get("inputs"), "parent": before[key].get("parent")})
        b = _flatten({"inputs": after[key].get("inputs"), "parent": after[key].get("parent")})
        changes = [(f, a.get(f), b.get(f)) for f in sorted(a.keys() | b.keys())
                   if a.get(f, _MISSING) != b.get(f, _MISSING)]
        if changes:
            lines.append(f"~ {key}")
            for field, x, y in changes:
                lines.append(f"    {field}: {_show(x, field in a)} -> {_show(y, field in b)}")
    oa, ob = _flatten(old.get("outputs") or {}), _flatten(new.get("outputs") or {})
    out_changes = [f for f in sorted(oa.keys() | ob.keys()) if oa.get(f, _MISSING) !=
                   ob.get(f, _MISSING)]
    if out_changes:
        lines.append("~ outputs")
        for f in out_changes:
            lines.append(f"    {f}: {_show(oa.get(f), f in oa)} -> {_show(ob.get(f), f in ob)}")
    from infra.preview import costs

    lines += costs.diff(old.get("cost"), new.get("cost"))
    # A finding or waiver that comes or goes is part of the review (docs/review.md).
    fa, fb = _findings(old), _findings(new)
    if fa != fb:
        lines.append("~ policy")
        lines += [f"    - {f}" for f in sorted(fa - fb)] + [f"    + {f}" for f in sorted(fb - fa)]
    return lines


def _findings(doc: dict[str, Any]) -> set[str]:
    """The policy findings of a preview, one line each, its waiver's reason included."""
    out = set()
    for f in (doc.get("policy") or {}).get("findings") or []:
        waived = f" (waived: {f['waived']})" if f.get("waived") else ""
        out.add(f"{f.get('rule')} {f.get('resource')}: {f.get('message')}{waived}")
    return out


_MISSING = object()


def _show(value: Any, present: bool) -> str:
    return json.dumps(value) if present else "(absent)"


def write(doc: dict[str, Any], root: Path) -> Path:
    """Rewrite the stack's snapshot, whole even when Ctrl-C comes meanwhile."""
    from infra.preview.interrupt import writing

    snap = snapshot_path(doc["stack"], root)
    snap.parent.mkdir(parents=True, exist_ok=True)
    with writing():
        snap.write_text(dump(doc))
    return snap


def compare(doc: dict[str, Any], root: Path) -> tuple[Path, list[str] | None]:
    """The stack's snapshot and what differs from it (None: there is no snapshot)."""
    snap = snapshot_path(doc["stack"], root)
    if not snap.is_file():
        return snap, None
    return snap, diff(yaml.safe_load(snap.read_text()), doc)
