"""A small typed reader for config mappings: each call checks one key and records a
precise message (key path, bad value, what is allowed). Pure; no pulumi."""

from __future__ import annotations

from typing import Any, Mapping, TypeVar

from infra.config.errors import did_you_mean, one_of, show

T = TypeVar("T")


class Reader:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def obj(self, value: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(path, f"{show(value)} is not a mapping; expected keys: {one_of(allowed)}")
            return {}
        for key in value:
            if key not in allowed:
                self.fail(f"{path}.{key}" if path else str(key),
                          f"unknown key{did_you_mean(str(key), allowed)} "
                          f"(allowed: {one_of(allowed)})")
        return dict(value)

    def get(self, raw: Mapping[str, Any], key: str, path: str, kind: type[T] | tuple[type, ...],
            default: Any = None, required: bool = False) -> Any:
        where = f"{path}.{key}" if path else key
        if key not in raw or raw[key] is None:
            if required:
                self.fail(where, "is required")
            return default
        value = raw[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if bool not in kinds and isinstance(value, bool) or not isinstance(value, kinds):
            names = " or ".join(_type_name(k) for k in kinds)
            self.fail(where, f"{show(value)} is not {names}")
            return default
        return value

    def check(self, ok: bool, path: str, message: str) -> bool:
        if not ok:
            self.fail(path, message)
        return ok


def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", bool: "true or false", list: "a list",
            dict: "a mapping"}.get(kind, kind.__name__)


