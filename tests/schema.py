"""Validate rendered objects against the real schemas, strictly, as the API server would.

Custom resources validate against the CRDs in ``../shared/reference/crds/`` (JobSet
v0.12.0, Kueue v0.19.2); core kinds against the upstream OpenAPI schemas shipped with
``kubernetes-validate``. Strict means: every object schema with ``properties`` and no
``x-kubernetes-preserve-unknown-fields`` is closed (a typo such as ``parallelizm`` fails),
``x-kubernetes-int-or-string`` admits an integer or a string, and ``null`` values are
dropped first (the server's decoder does). CEL rules and webhooks are not run here.
"""

from __future__ import annotations

import copy
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import REFERENCE

CRD_DIR = REFERENCE / "crds"
# CRDs that are not in ../shared/reference, committed with their source and checksum
# (tests/schemas/README.md; tests/test_schemas_pinned.py checks them).
LOCAL_CRD_DIR = Path(__file__).resolve().parent / "schemas"
K8S_VERSION = "1.33.0"  # a GKE version the project supports; core schemas are stable


def require_reference() -> None:
    if not CRD_DIR.is_dir():
        if os.environ.get("CI") == "true":
            # In CI a skipped schema test would pass unseen: the workflow fetches the
            # reference CRDs (tools/reference_crds.py), so their absence is a failure.
            pytest.fail(f"reference schemas not found at {CRD_DIR} and CI=true: run "
                        "`python tools/reference_crds.py fetch --dest ../shared/reference/crds`")
        pytest.skip(f"reference schemas not found at {CRD_DIR} (../shared/reference/ beside "
                    "the project root); schema validation cannot run")


def _strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()
           if k not in ("x-kubernetes-validations",)}
    pattern = out.get("pattern")
    if isinstance(pattern, str) and "(?i)" in pattern:
        # Go allows inline flags anywhere; Python wants them at the start.
        out["pattern"] = "(?i)" + pattern.replace("(?i)", "")
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        out.pop("pattern", None)
    if ("properties" in out and out.get("type", "object") == "object"
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out.setdefault("additionalProperties", False)
    return out


@lru_cache(maxsize=None)
def _crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    paths = sorted(Path(CRD_DIR).glob("*.yaml")) + sorted(LOCAL_CRD_DIR.glob("*.yaml"))
    for path in paths:
        crd = yaml.safe_load(path.read_text())
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for v in crd["spec"]["versions"]:
            if v.get("served"):
                schema = _strict(copy.deepcopy(v["schema"]["openAPIV3Schema"]))
                # metadata is validated by the server's ObjectMeta rules, not the CRD
                schema.setdefault("properties", {})["metadata"] = {"type": "object"}
                # apiVersion and kind are the server's own at the root of every custom
                # resource, whether the CRD's schema lists them (kubebuilder's do) or
                # not (the CheckpointConfiguration CRD's does not).
                for key in ("apiVersion", "kind"):
                    schema["properties"].setdefault(key, {"type": "string"})
                out[(f"{group}/{v['name']}", kind)] = schema
    return out


def drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


# The first Kubernetes release that serves resource.k8s.io/v1 (DRA GA): its objects are
# validated against that release (or a later one the caller names), never skipped.
DRA_V1_VERSION = "1.34.0"


def stack_version(gke_version: str | None) -> str:
    """The Kubernetes release a stack targets: its pinned GKE minor (1.34.1-gke.1 -> 1.34.0),
    or K8S_VERSION when a release channel chooses."""
    if not gke_version:
        return K8S_VERSION
    major, minor = gke_version.split(".")[:2]
    return f"{major}.{minor}.0"


def _version_for(obj: dict[str, Any], k8s_version: str | None) -> str:
    version = k8s_version or K8S_VERSION
    if obj.get("apiVersion") == "resource.k8s.io/v1":
        nums = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
        if nums(version) < nums(DRA_V1_VERSION):
            version = DRA_V1_VERSION
    return version


def validate(obj: dict[str, Any], k8s_version: str | None = None) -> None:
    """Raise AssertionError naming the object and the failing path if it is invalid.
    ``k8s_version``: the Kubernetes release the stack targets (default K8S_VERSION);
    resource.k8s.io/v1 objects are checked against 1.34 at least, where that API starts."""
    version = _version_for(obj, k8s_version)
    obj = drop_nulls(obj)
    api, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    what = f"{kind} {obj.get('metadata', {}).get('name')}"
    if "/" in api and "." in api.split("/")[0]:
        require_reference()
        schema = _crd_schemas().get((api, kind))
        if schema is None:
            import kubernetes_validate

            try:
                kubernetes_validate.validate(obj, version, strict=True)
                return
            except kubernetes_validate.ValidationError as e:  # pragma: no cover - message
                raise AssertionError(f"{what}: {e}") from None
            except Exception as e:  # no schema for this group at all
                raise AssertionError(f"{what}: no schema for {api} {kind}: {e}") from None
        errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(obj),
                        key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            path = ".".join(str(p) for p in e.absolute_path)
            raise AssertionError(f"{what}: {path}: {e.message}")
        return
    import kubernetes_validate

    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as e:
        raise AssertionError(f"{what}: {'.'.join(map(str, e.path))}: {e.message}") from None
