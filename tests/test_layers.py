"""Layering: pure modules import no pulumi; infra never imports submit."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PURE = ["infra.catalog", "infra.config", "infra.contract", "infra.errors",
        "infra.nodepool_spec", "infra.network_spec", "infra.cluster_spec", "infra.kueue_spec",
        "infra.image_cache_spec", "infra.addons_spec", "infra.images", "infra.pod_resources",
        "infra.services_spec", "infra.policy",
        "infra.gpudirect_release", "infra.dranet_spec",
        "submit.cli", "submit.api", "submit.experiment.expand", "submit.group",
        "submit.render", "submit.spec", "submit.stack_outputs", "infra.registry_spec",
        "submit.bundle.plan", "submit.bundle.registry", "submit.bundle.push"]


@pytest.mark.parametrize("module", PURE)
def test_pure_modules_do_not_load_pulumi(module: str) -> None:
    code = (f"import sys, {module}; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pulumi', 'pulumi_gcp', 'pulumi_kubernetes', 'kubernetes')); "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_infra_never_imports_submit() -> None:
    for path in (ROOT / "infra").rglob("*.py"):
        assert not any(n.split(".")[0] == "submit" for n in _imports(path)), path


def test_submit_reads_infra_only_through_catalog_and_contract() -> None:
    allowed = {"infra", "infra.catalog", "infra.contract", "infra.errors", "infra.images",
               "infra.gpudirect_release"}
    for path in (ROOT / "submit").rglob("*.py"):
        used = {n for n in _imports(path) if n.split(".")[0] == "infra"}
        assert used <= allowed, f"{path}: {used - allowed}"
