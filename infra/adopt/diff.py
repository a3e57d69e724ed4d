"""The offline replacement check: which ForceNew fields of a resource differ between what
the program declares and what GKE holds.

Both sides are in pulumi's names (camelCase; a block of at most one item is a mapping, a
list of blocks a list): the desired side is the program's inputs, the live side what the
provider reads from the GKE API (infra/adopt/live.py). The rules are the provider's: a
ForceNew leaf that differs replaces; a ForceNew block added or removed replaces; a field
the program leaves out is no change when the provider computes it, and a change to empty
when it does not. A field kept with ``ignore_changes`` is never a change.
"""

from __future__ import annotations

from typing import Any, Collection, Iterable, Mapping

from infra.adopt.forcenew import Field
from infra.record import record


@record
class Difference:
    path: str
    desired: Any
    live: Any


def _values(data: Any, parts: list[str]) -> Any:
    """The value at ``parts``; through a list of blocks, the list of the items' values."""
    if not parts:
        return data
    if isinstance(data, list):
        items = [_values(item, parts) for item in data]
        return None if all(i is None for i in items) else items
    if not isinstance(data, Mapping):
        return None
    return _values(data.get(parts[0]), parts[1:])


def _empty(value: Any) -> bool:
    # Terraform reads an unset optional field as its zero value.
    return value is None or value in ("", 0, False) or value == [] or value == {} or (
        isinstance(value, list) and all(_empty(v) for v in value))


def _last(value: Any) -> Any:
    if isinstance(value, str):
        return value.rstrip("/").rsplit("/", 1)[-1]
    if isinstance(value, list):
        return [_last(v) for v in value]
    return value


def _same(field: Field, desired: Any, live: Any) -> bool:
    if field.empty_default is not None:
        desired = None if desired == field.empty_default else desired
        live = None if live == field.empty_default else live
    if _empty(desired) and _empty(live):
        return True
    if field.by_name:
        desired, live = _last(desired), _last(live)
    if field.set_typed:
        return sorted(map(str, desired or [])) == sorted(map(str, live or []))
    return bool(desired == live)


def _ignored(path: str, ignored: Collection[str]) -> bool:
    return any(path == i or path.startswith(i + ".") for i in ignored)


def replacements(fields: Iterable[Field], desired: Mapping[str, Any], live: Mapping[str, Any],
                 ignored: Collection[str] = ()) -> list[Difference]:
    """The ForceNew fields whose change would replace the resource, in the list's order."""
    out: list[Difference] = []
    for field in fields:
        if not field.force_new or _ignored(field.path, ignored) or _ignored(
                field.path, [d.path for d in out]):  # a block already added or removed
            continue
        parts = field.path.split(".")
        want, have = _values(desired, parts), _values(live, parts)
        if want is None and field.computed:
            continue  # left to the provider: it keeps what it read
        if field.block:
            if (want is None) != (have is None) and not (_empty(want) and _empty(have)):
                out.append(Difference(field.path, want, have))
            continue
        if not _same(field, want, have):
            out.append(Difference(field.path, want, have))
    return out


# Map-typed inputs: their keys are data (label keys such as gke_product_type), kept as is.
_MAPS = ("labels", "resource_labels", "metadata", "resource_manager_tags")


def camel(value: Any) -> Any:
    """Program arguments (snake_case, as the specs build them) in pulumi's wire names."""
    if isinstance(value, Mapping):
        return {_camel_key(str(k)): (dict(v) if k in _MAPS and isinstance(v, Mapping)
                                     else camel(v))
                for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    if "_" not in key or key.startswith("_"):
        return key
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)
