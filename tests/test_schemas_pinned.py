"""The schemas committed under tests/schemas/ are exactly the upstream files named in its
README (source, version and checksum), so a validation can only pass against them."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml

from infra.specs import dra_driver as dra_driver_spec

SCHEMAS = Path(__file__).resolve().parent / "schemas"


def _readme_rows() -> dict[str, tuple[str, str]]:
    rows: dict[str, tuple[str, str]] = {}
    for line in (SCHEMAS / "README.md").read_text().splitlines():
        m = re.match(r"^\| `([^`]+\.yaml)` \|.*\| (v[0-9][^ ]*) .*\| `([0-9a-f]{64})` \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def test_every_schema_file_is_listed_with_its_checksum() -> None:
    rows = _readme_rows()
    files = sorted(p.name for p in SCHEMAS.glob("*.yaml"))
    assert files and sorted(rows) == files
    for name, (_, digest) in rows.items():
        assert hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest() == digest, name


def test_compute_domain_crd_is_the_installed_chart_version() -> None:
    version, _ = _readme_rows()["resource.nvidia.com_computedomains.yaml"]
    assert version == "v" + dra_driver_spec.VERSION
    crd = yaml.safe_load((SCHEMAS / "resource.nvidia.com_computedomains.yaml").read_text())
    assert crd["spec"]["group"] == "resource.nvidia.com"
    assert [v["name"] for v in crd["spec"]["versions"] if v["served"]] == ["v1beta1"]


def test_multikueue_crds_are_the_installed_kueue_version() -> None:
    from infra.config.addons import DEFAULT_KUEUE_VERSION

    for name in ("kueue.x-k8s.io_multikueueclusters.yaml",
                 "kueue.x-k8s.io_multikueueconfigs.yaml"):
        version, _ = _readme_rows()[name]
        assert version == DEFAULT_KUEUE_VERSION
        crd = yaml.safe_load((SCHEMAS / name).read_text())
        assert crd["spec"]["group"] == "kueue.x-k8s.io"
        # v1beta2 is the storage version at v0.19.2; v1beta1 is served but deprecated.
        assert [v["name"] for v in crd["spec"]["versions"] if v.get("storage")] == ["v1beta2"]
