"""The ForceNew fields of GKE node pools and clusters, as data (forcenew.json), and the
classification of one resource's change: created, updated in place, replaced, deleted, or
"unapplied" (a field the provider neither replaces on nor sends: the plan reads as an
in-place update that never reaches GKE, so the change needs a replacement to take effect).

The rule is the Terraform plugin SDK's, as the bridge runs it: a changed leaf replaces the
resource when its schema says ForceNew; a ForceNew block replaces it when the block is added
or removed; CustomizeDiff may force a replacement on its own terms (``conditional``). Paths
are pulumi-gcp's camelCase input names, list indices dropped.

Public API (issue 44 reuses it): ``forcenew_paths(resource_type)``, ``classify(old, new,
resource_type) -> Change``, ``source()``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from infra.record import record

DATA_FILE = Path(__file__).with_name("forcenew.json")
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
OPS = ("create", "update", "replace", "delete", "unapplied", "same")


@record
class Rule:
    """One path whose change replaces the resource (or is never applied)."""

    path: str  # pulumi-gcp camelCase, e.g. "nodeConfig.reservationAffinity"
    tf: str  # the Terraform schema path
    kind: str  # "field", "block" (replaces when added or removed), "conditional", "unapplied"
    at: str  # FILE:LINE at the source commit
    why: str = ""


@record
class Reason:
    """Why a change is what it is: the path that changed and the rule it met."""

    path: str  # the changed input, as it appears in the inputs (indices kept)
    rule: Rule

    def text(self) -> str:
        what = {"field": "forces a new resource (ForceNew)",
                "block": "added or removed, forces a new resource (ForceNew block)",
                "conditional": f"may force a new resource ({self.rule.why})",
                "unapplied": f"is never applied in place: {self.rule.why}"}[self.rule.kind]
        return f"{self.path} {what} ({self.rule.at})"


@record
class Change:
    """One resource's change."""

    op: str  # one of OPS
    reasons: tuple[Reason, ...] = ()  # for "replace" and "unapplied"
    changed: tuple[str, ...] = ()  # every changed input path

    @property
    def destroys(self) -> bool:
        """Whether carrying the change out destroys the resource (or would have to)."""
        return self.op in ("replace", "delete", "unapplied")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DATA_FILE.read_text())
    return loaded


def source() -> dict[str, Any]:
    """Where the data comes from: repository, commit, files, and what bridges it."""
    return dict(_data()["source"])


def resource_types() -> tuple[str, ...]:
    return tuple(sorted(_data()["resources"]))


@lru_cache(maxsize=None)
def rules(resource_type: str) -> tuple[Rule, ...]:
    """Every rule of ``resource_type``; () for a type the data does not cover."""
    res = _data()["resources"].get(resource_type)
    if res is None:
        return ()
    out = [Rule(r["path"], r["tf"], r["kind"], r["forceNewAt"]) for r in res["forceNew"]]
    out += [Rule(r["path"], r["tf"], "conditional", r["at"], r["how"])
            for r in res["conditional"] if r["path"]]
    out += [Rule(r["path"], r["tf"], "unapplied", r["at"], r["why"]) for r in res["unapplied"]]
    return tuple(out)


def forcenew_rows(resource_type: str) -> tuple[dict[str, Any], ...]:
    """The ForceNew rows of ``resource_type`` as the data keeps them (path, kind, type,
    computed, diffSuppress, FILE:LINE); () for a type the data does not cover."""
    res = _data()["resources"].get(resource_type) or {}
    return tuple(dict(r) for r in res.get("forceNew", ()))


def forcenew_paths(resource_type: str) -> tuple[str, ...]:
    """The camelCase input paths whose change replaces a resource of ``resource_type``
    (ForceNew fields and blocks), sorted."""
    return tuple(sorted(r.path for r in rules(resource_type) if r.kind in ("field", "block")))


def unknown_paths(resource_type: str) -> tuple[str, ...]:
    """Inputs of the installed SDK that the source commit does not have: never judged."""
    res = _data()["resources"].get(resource_type) or {}
    return tuple(res.get("unknown", ()))


_ABSENT = object()


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of nested inputs by path (``a.b[0].c``); an empty dict or list is a leaf."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def schema_path(path: str) -> str:
    """``nodeConfig.guestAccelerators[0].type`` -> ``nodeConfig.guestAccelerators.type``."""
    import re

    return re.sub(r"\[\d+\]", "", path)


def _at(inputs: Mapping[str, Any] | None, path: str) -> Any:
    """The value at a schema path (first list element at each list), or _ABSENT."""
    value: Any = inputs
    for part in path.split("."):
        while isinstance(value, list):
            value = value[0] if value else _ABSENT
        if not isinstance(value, dict) or part not in value:
            return _ABSENT
        value = value[part]
    return value


def _empty(value: Any) -> bool:
    return value is _ABSENT or value is None or value == [] or value == {}


def classify(old_inputs: Mapping[str, Any] | None, new_inputs: Mapping[str, Any] | None,
             resource_type: str) -> Change:
    """What changing ``old_inputs`` into ``new_inputs`` does to a resource of
    ``resource_type`` (None: the resource is not there on that side)."""
    if old_inputs is None and new_inputs is None:
        return Change("same")
    if old_inputs is None:
        return Change("create")
    if new_inputs is None:
        return Change("delete")
    a, b = flatten(dict(old_inputs)), flatten(dict(new_inputs))
    changed = tuple(p for p in sorted(a.keys() | b.keys())
                    if a.get(p, _ABSENT) != b.get(p, _ABSENT))
    if not changed:
        return Change("same")
    replace: list[Reason] = []
    unapplied: list[Reason] = []
    for rule in rules(resource_type):
        hits = [p for p in changed if _under(schema_path(p), rule.path)]
        if not hits:
            continue
        if rule.kind == "block":
            # Replaces when the block comes or goes, not when a field inside it changes
            # (those have their own ForceNew).
            if _empty(_at(old_inputs, rule.path)) != _empty(_at(new_inputs, rule.path)):
                replace.append(Reason(rule.path, rule))
        elif rule.kind == "field":
            replace.append(Reason(hits[0], rule))
        elif rule.kind == "conditional":
            if "isBeenEnabled" in rule.why:
                # customdiff.ForceNewIfChange(key, isBeenEnabled): only turning it off.
                if _at(old_inputs, rule.path) is True and _at(new_inputs, rule.path) is not True:
                    replace.append(Reason(hits[0], rule))
            else:
                replace.append(Reason(hits[0], rule))  # judged as a replacement: never harmless
        else:
            unapplied.append(Reason(hits[0], rule))
    if replace:
        return Change("replace", tuple(replace), changed)
    if unapplied:
        return Change("unapplied", tuple(unapplied), changed)
    return Change("update", (), changed)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")
