"""The Python promise (issue 34): pyproject.toml's requires-python floor is what every module
can run on, and CI runs the floor and the newest CPython the dependencies support.

Statically, for the floor: every module parses with the floor's grammar, and names that
later versions added to the standard library (typing.dataclass_transform, tomllib, ...)
are imported only under a ``sys.version_info`` check. The smoke runs on the interpreters
themselves are in .ci/run (tools/python-smoke)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

# What CPython added after 3.10, by module (the "New in version 3.11/3.12/3.13" notes of
# https://docs.python.org/3/library/typing.html, tomllib.html, datetime.html, enum.html).
NEWER = {
    "typing": {"dataclass_transform", "Self", "Never", "assert_never", "assert_type",
               "reveal_type", "LiteralString", "Required", "NotRequired", "TypeVarTuple",
               "Unpack", "get_overloads", "clear_overloads", "override", "TypeAliasType",
               "ReadOnly", "TypeIs", "get_protocol_members", "is_protocol", "NoDefault"},
    "datetime": {"UTC"},
    "enum": {"StrEnum", "ReprEnum", "verify", "EnumCheck", "FlagBoundary", "member",
             "nonmember", "global_enum", "show_flag_values"},
    "tomllib": {"*"},
}
SOURCES = sorted(p for top in ("infra", "submit", "tools", "bench")
                 for p in (ROOT / top).rglob("*.py"))


def floor() -> tuple[int, int]:
    text = (ROOT / "pyproject.toml").read_text()
    m = re.search(r'^requires-python = ">=(\d+)\.(\d+)"$', text, re.M)
    assert m, "pyproject.toml states requires-python as >=X.Y"
    return int(m.group(1)), int(m.group(2))


def _guarded(tree: ast.Module) -> set[int]:
    """Line numbers under an ``if sys.version_info ...`` (either branch)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "version_info" in ast.unparse(node.test):
            for child in [*node.body, *node.orelse]:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def _newer_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), feature_version=floor())
    guarded = _guarded(tree)
    found = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in guarded:
            continue
        if isinstance(node, ast.ImportFrom) and node.module in NEWER and node.level == 0:
            bad = {a.name for a in node.names} & NEWER[node.module] or (
                {node.module} if "*" in NEWER[node.module] else set())
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{n}"
                      for n in sorted(bad)]
        elif isinstance(node, ast.Import):
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name}" for a in node.names
                      if "*" in NEWER.get(a.name, set())]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr in NEWER.get(node.value.id, set()):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_the_floor_is_the_one_the_readme_states() -> None:
    major, minor = floor()
    readme = (ROOT / "README.md").read_text()
    assert f"Python {major}.{minor} or newer" in readme


def test_every_module_runs_on_the_floor() -> None:
    problems = [p for path in SOURCES for p in _newer_names(path)]
    assert problems == [], f"names newer than Python {floor()}: guard them or use " \
                           "typing_extensions"


def test_ci_runs_the_floor_and_the_newest() -> None:
    major, minor = floor()
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"tools/python-smoke {major}.{minor}" in ci
    assert re.search(r"tools/python-smoke 3\.1[3-9]", ci)
