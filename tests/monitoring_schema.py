"""A small validator over a Google API discovery document's ``schemas``: every property a
value names must be one the schema declares (closed objects, as the API's JSON decoder
refuses unknown fields), with its type (string, integer, number, boolean, array, object,
``$ref``) and enum. Enough to hold the dashboard JSON and the alert policies to the Cloud
Monitoring API's own shapes (../shared/reference/upstream/monitoring-api-discovery/)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from conftest import REFERENCE

DISCOVERY = REFERENCE / "upstream" / "monitoring-api-discovery"


@lru_cache(maxsize=None)
def schemas(version: str) -> dict[str, Any]:
    doc = json.loads((DISCOVERY / f"monitoring.{version}.json").read_text())
    return dict(doc["schemas"])


def problems(value: Any, schema: dict[str, Any], table: dict[str, Any],
             path: str = "$") -> list[str]:
    if "$ref" in schema:
        return problems(value, table[schema["$ref"]], table, path)
    kind = schema.get("type")
    out: list[str] = []
    if kind == "object" or "properties" in schema:
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object"]
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if props is not None and key in props:
                out += problems(item, props[key], table, f"{path}.{key}")
            elif isinstance(extra, dict):
                out += problems(item, extra, table, f"{path}.{key}")
            else:
                out.append(f"{path}.{key}: not a field of {schema.get('id', 'this object')}")
        return out
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not an array"]
        for i, item in enumerate(value):
            out += problems(item, schema["items"], table, f"{path}[{i}]")
        return out
    if kind == "string":
        # int64 and Duration are strings on the wire.
        if not isinstance(value, str):
            return [f"{path}: {value!r} is not a string"]
        if "enum" in schema and value not in schema["enum"]:
            return [f"{path}: {value!r} is not one of {schema['enum']}"]
        return []
    if kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not an integer"]
    if kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not a number"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a boolean"]
    return []


def validate(value: Any, kind: str, version: str) -> list[str]:
    table = schemas(version)
    return problems(value, table[kind], table)


def snake_to_camel(value: Any) -> Any:
    """pulumi-gcp's snake_case arguments as the API's camelCase JSON."""
    if isinstance(value, dict):
        return {_camel(k): snake_to_camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_to_camel(v) for v in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


__all__ = ["DISCOVERY", "Path", "problems", "snake_to_camel", "validate"]
