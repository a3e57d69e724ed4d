"""tools/reference_crds.py: the committed CRD checksums hold for the reference folder, and
the extraction from a release manifest verifies, writes and refuses what it should."""

from __future__ import annotations

import copy
import subprocess
from functools import lru_cache
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import schema
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import reference_crds as rc  # noqa: E402

SCRIPT = ROOT / "tools" / "reference_crds.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)


def _reference_docs() -> list[dict[str, Any]]:
    schema.require_reference()
    return copy.deepcopy(_load_reference(str(schema.CRD_DIR)))


@lru_cache(maxsize=1)
def _load_reference(directory: str) -> list[dict[str, Any]]:
    return [d for p in sorted(Path(directory).glob("*.yaml")) for d in rc.crds(p.read_text())]


def _as_release(docs: list[dict[str, Any]], namespace: str) -> str:
    """What `kustomize build config/default` makes of the bases: labels, CA-injection
    annotation and a conversion webhook on each CRD, other objects around them, keys sorted."""
    out: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": namespace}}]
    for doc in docs:
        d = copy.deepcopy(doc)
        d["metadata"].setdefault("labels", {})["app.kubernetes.io/name"] = namespace
        d["metadata"].setdefault("annotations", {})["cert-manager.io/inject-ca-from"] = (
            f"{namespace}/serving-cert")
        d["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": "webhook-service", "namespace": namespace,
                                         "path": "/convert"}},
            "conversionReviewVersions": ["v1"]}}
        out.append(d)
    out.append({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "controller-manager", "namespace": namespace}})
    return yaml.dump_all(out, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                         sort_keys=True)


def test_committed_checksums_cover_the_reference_folder() -> None:
    schema.require_reference()
    expected = rc.read_checksums()
    assert sorted(expected) == sorted(p.name for p in Path(schema.CRD_DIR).glob("*.yaml"))
    res = _run("verify", str(schema.CRD_DIR))
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"reference CRDs: {len(expected)} verified\n"


def test_release_urls_are_the_pinned_versions() -> None:
    assert rc.RELEASES == {
        "jobset": "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/"
                  "manifests.yaml",
        "kueue": "https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/"
                 "manifests.yaml",
    }


def test_extract_from_release_manifests_writes_verified_crds(tmp_path: Path) -> None:
    docs = _reference_docs()
    jobset = [d for d in docs if d["spec"]["group"] == "jobset.x-k8s.io"]
    kueue = [d for d in docs if d["spec"]["group"] == "kueue.x-k8s.io"]
    (tmp_path / "jobset.yaml").write_text(_as_release(jobset, "jobset-system"))
    (tmp_path / "kueue.yaml").write_text(_as_release(kueue, "kueue-system"))
    dest = tmp_path / "shared" / "reference" / "crds"
    res = _run("extract", str(tmp_path / "jobset.yaml"), str(tmp_path / "kueue.yaml"),
               "--dest", str(dest))
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in dest.iterdir()) == sorted(rc.read_checksums())
    assert _run("verify", str(dest)).returncode == 0
    # The written schemas are the reference ones (the tests read them the same way).
    written = yaml.safe_load((dest / "jobset.x-k8s.io_jobsets.yaml").read_text())
    assert written["spec"]["versions"] == jobset[0]["spec"]["versions"]


def test_a_changed_schema_is_refused(tmp_path: Path) -> None:
    docs = _reference_docs()
    bad = copy.deepcopy(docs)
    flavor = next(d for d in bad if d["spec"]["names"]["plural"] == "resourceflavors")
    flavor["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["nodeLabels"]["maxProperties"] = 99
    (tmp_path / "m.yaml").write_text(_as_release(bad, "kueue-system"))
    dest = tmp_path / "crds"
    res = _run("extract", str(tmp_path / "m.yaml"), "--dest", str(dest))
    assert res.returncode == 2
    assert res.stderr.startswith("reference CRDs: kueue.x-k8s.io_resourceflavors.yaml: "
                                 "checksum ")
    assert "does not match the committed" in res.stderr
    assert not dest.exists()  # nothing half-written


def test_a_missing_crd_is_refused(tmp_path: Path) -> None:
    docs = [d for d in _reference_docs() if d["spec"]["names"]["plural"] != "topologies"]
    (tmp_path / "m.yaml").write_text(_as_release(docs, "kueue-system"))
    res = _run("extract", str(tmp_path / "m.yaml"), "--dest", str(tmp_path / "crds"))
    assert res.returncode == 2
    assert res.stderr == ("reference CRDs: kueue.x-k8s.io_topologies.yaml: not in the release "
                          "manifests\n")


def test_normalisation_ignores_only_what_kustomize_adds() -> None:
    doc = _reference_docs()[0]
    dressed = copy.deepcopy(doc)
    dressed["metadata"]["labels"] = {"a": "b"}
    dressed["spec"]["conversion"] = {"strategy": "None"}
    assert rc.checksum(dressed) == rc.checksum(doc)
    renamed = copy.deepcopy(doc)
    renamed["spec"]["names"]["kind"] = "Other"
    assert rc.checksum(renamed) != rc.checksum(doc)


@pytest.mark.parametrize("argv", [["verify", "/no/such/dir"]])
def test_a_missing_folder_is_one_line(argv: list[str]) -> None:
    res = _run(*argv)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "missing" in res.stderr
