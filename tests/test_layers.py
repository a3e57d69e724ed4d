"""Layering: each package's __init__ docstring states what its modules may import, and this
test holds every module to it, so a wrong import fails CI.

The two lines it reads, in the docstring of every package under infra/ and submit/:
    May import: infra.config, infra.catalog          (the project's own modules: only these)
    Must not import: pulumi, click, submit.cli       (anything: never these)
A module obeys the rules of the nearest package above it that states them; names match on
whole dotted parts (``infra.config`` covers ``infra.config.stack``, not ``infra.configx``).
Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

OWN = ("infra", "submit")
EXTERNAL_HEAVY = ("pulumi", "pulumi_gcp", "pulumi_kubernetes", "kubernetes")


@dataclass(frozen=True)
class Rules:
    package: str
    may: tuple[str, ...]
    must_not: tuple[str, ...]


def _names(line: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in line.split(":", 1)[1].split(",") if n.strip())


def _rules_of(init: Path) -> Rules | None:
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    # a rule may go on over indented lines
    doc = doc.replace(",\n    ", ", ")
    may = [ln for ln in doc.splitlines() if ln.startswith("May import:")]
    must_not = [ln for ln in doc.splitlines() if ln.startswith("Must not import:")]
    if not may or not must_not:
        return None
    pkg = ".".join(init.parent.relative_to(ROOT).parts)
    return Rules(pkg, _names(may[0]), _names(must_not[0]))


def _packages() -> list[Path]:
    return sorted(p for top in OWN for p in (ROOT / top).rglob("__init__.py"))


RULES = {r.package: r for r in (_rules_of(p) for p in _packages()) if r is not None}


def _covers(prefix: str, name: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _rules_for(module: str) -> Rules:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        pkg = ".".join(parts[:n])
        if pkg in RULES:
            return RULES[pkg]
    raise AssertionError(f"{module}: no package above it states its layer rules")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from infra.config import stack` depends on the module infra.config.stack
            subs = {f"{node.module}.{a.name}" for a in node.names
                    if node.module.split(".")[0] in OWN and _is_module(f"{node.module}.{a.name}")}
            names |= subs or {node.module}
    return names


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def violations(path: Path, module: str | None = None) -> list[str]:
    """What `path` imports against its layer's rules; `module` is its dotted name (by
    default, from where it lies under ROOT)."""
    module = module or _module_name(path)
    rules = _rules_for(module)
    found = []
    for name in sorted(_imports(path)):
        if any(_covers(bad, name) for bad in rules.must_not):
            found.append(f"{module} imports {name}, which {rules.package} must not import")
        elif name.split(".")[0] in OWN and name not in OWN and \
                not any(_covers(ok, name) for ok in rules.may):
            found.append(f"{module} imports {name}; {rules.package} may import only "
                         f"{', '.join(rules.may)}")
    return found


MODULES = sorted(p for top in OWN for p in (ROOT / top).rglob("*.py"))


def test_every_package_states_its_layer_rules() -> None:
    missing = [str(p.relative_to(ROOT)) for p in _packages() if _rules_of(p) is None]
    assert not missing, f"packages whose __init__ docstring has no layer rules: {missing}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_keeps_to_its_layer(path: Path) -> None:
    assert violations(path) == []


def test_a_wrong_import_is_caught(tmp_path: Path) -> None:
    # The check itself can fail: a render module that reaches for the cluster seam (written
    # outside the tree, so that no other test, in this process or another, sees it).
    bad = tmp_path / "_layer_probe.py"
    bad.write_text("from submit.experiment import expand\nimport click\n")
    found = violations(bad, "submit.render._layer_probe")
    assert len(found) == 2, found
    assert any("imports click, which submit.render must not" in f for f in found), found
    assert any("imports submit.experiment.expand; submit.render may import only" in f
               for f in found), found


def _pure_packages() -> list[str]:
    return sorted(p for p, r in RULES.items()
                  if any(_covers(bad, "pulumi") for bad in r.must_not))


@pytest.mark.parametrize("package", _pure_packages())
def test_pure_layers_do_not_load_pulumi_even_transitively(package: str) -> None:
    # Import every module of the package in one fresh interpreter and look at what loaded.
    mods = [m for m in (_module_name(p) for p in MODULES)
            if _covers(package, m) and _rules_for(m).package == package]
    forbidden = tuple(b for b in RULES[package].must_not if b in EXTERNAL_HEAVY)
    code = ("import importlib, sys\n"
            f"for m in {mods!r}: importlib.import_module(m)\n"
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {forbidden!r})\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_infra_never_imports_submit() -> None:
    for path in (ROOT / "infra").rglob("*.py"):
        assert not any(n.split(".")[0] == "submit" for n in _imports(path)), path


def _graph() -> dict[str, set[str]]:
    """Every module of infra/ and submit/ -> the modules of ours it imports (module-level,
    lazy and TYPE_CHECKING imports alike: each is a dependency a reader must follow)."""
    modules = {_module_name(p): p for p in MODULES}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for imported in _imports(path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                deps.add(imported)
        graph[name] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle() -> None:
    # submit.render had one (spec.py, checkpointing.py, diagnostics/options.py), broken by
    # moving the values every render module needs to submit/render/values.py.
    assert _cycles(_graph()) == []


def test_the_circle_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_400_lines(path: Path) -> None:
    shown = str(path.relative_to(ROOT))
    assert len(path.read_text().splitlines()) <= 400, shown
