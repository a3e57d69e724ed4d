"""The replacement summary from the real CLI's ``pulumi preview --json``.

The document is pulumi's ``PreviewDigest`` (pulumi/pulumi sdk/pkg/display/json.go@6804a1e:
``steps`` of ``PreviewStep`` ``{op, urn, provider, oldState, newState, diffReasons,
replaceReasons, detailedDiff}``; written by ShowPreviewDigest in
pkg/backend/display/json.go@00d498e), with ``oldState``/``newState`` as ``apitype.ResourceV3``
(``urn``, ``type``, ``inputs``, ...). A replacement shows as up to three steps of one URN:
``create-replacement``, ``replace`` and ``delete-replaced`` (their order depends on
deleteBeforeReplace), carrying ``replaceReasons``; an in-place update is ``update`` with
``diffReasons``. An ``update`` of a node pool is still judged by the ForceNew data, so a
field the provider never applies (``placementPolicy.tpuTopology``) is not shown as harmless.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.replacements import forcenew
from infra.replacements.forcenew import Change, Reason
from infra.replacements.summary import ResourceChange, Summary, _with_pools

REPLACE_OPS = ("replace", "create-replacement", "delete-replaced", "discard-replaced")
PLAIN_OPS = {"create": "create", "delete": "delete", "update": "update",
             "read-replacement": "replace"}
IGNORED_OPS = ("same", "read", "refresh", "discard", "import", "import-replacement",
               "remove-pending-replace")


class PreviewJsonError(ValueError):
    """A document that is not what `pulumi preview --json` writes."""


def _type_and_name(urn: str) -> tuple[str, str]:
    # urn:pulumi:STACK::PROJECT::PARENT$TYPE::NAME
    parts = urn.split("::")
    if len(parts) < 4 or not urn.startswith("urn:pulumi:"):
        raise PreviewJsonError(f"{urn!r} is not a Pulumi URN")
    return parts[2].split("$")[-1], "::".join(parts[3:])


def from_preview(doc: Mapping[str, Any], stack: str) -> Summary:
    """The summary of one stack's ``pulumi preview --json`` document."""
    steps = doc.get("steps")
    if not isinstance(steps, list):
        raise PreviewJsonError("no 'steps' list: not the output of `pulumi preview --json`")
    by_urn: dict[str, list[Mapping[str, Any]]] = {}
    for step in steps:
        if not isinstance(step, Mapping) or "op" not in step or "urn" not in step:
            raise PreviewJsonError(f"a step without op and urn: {str(step)[:80]}")
        by_urn.setdefault(str(step["urn"]), []).append(step)
    changes = []
    old_inputs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for urn, group in by_urn.items():
        type_, name = _type_and_name(urn)
        ops = [str(s["op"]) for s in group]
        old = next((s["oldState"].get("inputs") for s in group if s.get("oldState")), None)
        new = next((s["newState"].get("inputs") for s in group if s.get("newState")), None)
        if old is not None:
            old_inputs[(type_, name)] = old
        judged = forcenew.classify(old, new, type_)
        if any(op in REPLACE_OPS for op in ops):
            keys = sorted({str(k) for s in group for k in s.get("replaceReasons") or []})
            rules = {r.path.split(".")[0]: r for r in forcenew.rules(type_)}
            reasons = tuple(judged.reasons) + tuple(
                Reason(k, rules[k]) for k in keys
                if k in rules and not any(r.path.split(".")[0] == k for r in judged.reasons))
            extra = tuple(f"{k}: the provider asks for a replacement (replaceReasons)"
                          for k in keys if k not in rules)
            changes.append(ResourceChange(type_, name, Change("replace", reasons,
                                                              judged.changed), None, extra))
        elif any(op in PLAIN_OPS for op in ops):
            op = next(PLAIN_OPS[o] for o in ops if o in PLAIN_OPS)
            if op == "update" and judged.op in ("unapplied", "replace"):
                # The engine plans it in place; the ForceNew data says it cannot be.
                changes.append(ResourceChange(type_, name, judged))
            else:
                changes.append(ResourceChange(type_, name, Change(op, (), judged.changed)))
        elif not all(op in IGNORED_OPS for op in ops):
            raise PreviewJsonError(f"{urn}: unknown step op(s) {', '.join(ops)}")
    return Summary(stack, _with_pools(changes, old_inputs), "pulumi preview --json")
