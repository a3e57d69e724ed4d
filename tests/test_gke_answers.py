"""The recorded GKE API answers (tests/gke_answers/) are Clusters as the API writes them:
each validates, strictly (no unknown field, enums and types as declared), against the
Kubernetes Engine API's v1 discovery document in ../shared/reference/upstream/."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import REFERENCE, ROOT

DISCOVERY = REFERENCE / "upstream" / "gke-container-v1-discovery" / "container.v1.json"
ANSWERS = sorted((ROOT / "tests" / "gke_answers").glob("*.json"))
# Read through v1beta1 (infra/adopt/gke/api.py): the v1 document has no
# NodeConfig.hostMaintenancePolicy; v1beta1's HostMaintenancePolicy has maintenanceInterval
# (AS_NEEDED, PERIODIC: https://cloud.google.com/kubernetes-engine/docs/reference/rest/
# v1beta1/HostMaintenancePolicy). Allowed by name, nothing else.
V1BETA1_ONLY = {"NodeConfig": {"hostMaintenancePolicy": {
    "type": "object", "additionalProperties": False,
    "properties": {"maintenanceInterval": {"enum": ["AS_NEEDED", "PERIODIC"]}}}}}


def _convert(prop: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        return {"$ref": f"#/definitions/{prop['$ref']}"}
    kind = prop.get("type")
    if kind == "array":
        return {"type": "array", "items": _convert(prop.get("items", {}))}
    if kind == "object":
        extra = prop.get("additionalProperties")
        return {"type": "object",
                "additionalProperties": _convert(extra) if extra else True}
    if kind == "string":
        out: dict[str, Any] = {"type": "string"}  # int64 and uint64 travel as strings
        if "enum" in prop:
            out["enum"] = prop["enum"]
        return out
    if kind == "integer":
        return {"type": "integer"}
    if kind == "number":
        return {"type": "number"}
    if kind == "boolean":
        return {"type": "boolean"}
    return {}


def _schema() -> dict[str, Any]:
    if not DISCOVERY.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{DISCOVERY} not found and CI=true")
        pytest.skip(f"{DISCOVERY} not found (../shared/reference/ beside the project root)")
    doc = json.loads(DISCOVERY.read_text())
    definitions = {}
    for name, schema in doc["schemas"].items():
        props = {k: _convert(v) for k, v in schema.get("properties", {}).items()}
        props.update(V1BETA1_ONLY.get(name, {}))
        definitions[name] = {"type": "object", "properties": props,
                             "additionalProperties": False}
    return {"$ref": "#/definitions/Cluster", "definitions": definitions}


def test_there_are_answers_for_each_maker() -> None:
    names = {p.stem for p in ANSWERS}
    assert {"xpk-v5e", "toolkit-v6e", "gcloud-mixed"} <= names


@pytest.mark.parametrize("path", [p for p in ANSWERS if p.stem != "pool-l4"], ids=lambda p: p.stem)
def test_answer_is_a_cluster_of_the_discovery_document(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), _schema())


def test_single_pool_answer_is_a_node_pool() -> None:
    schema = _schema()
    schema["$ref"] = "#/definitions/NodePool"
    jsonschema.validate(json.loads((ROOT / "tests/gke_answers/pool-l4.json").read_text()),
                        schema)


def test_the_validation_refuses_an_unknown_field() -> None:
    data = json.loads(ANSWERS[0].read_text())
    data["nodePools"][0]["config"]["spotVm"] = True
    with pytest.raises(jsonschema.ValidationError, match="spotVm"):
        jsonschema.validate(data, _schema())


def test_the_validation_refuses_a_bad_enum() -> None:
    data = json.loads((ROOT / "tests/gke_answers/xpk-v5e.json").read_text())
    data["nodePools"][1]["config"]["hostMaintenancePolicy"]["maintenanceInterval"] = "WEEKLY"
    with pytest.raises(jsonschema.ValidationError, match="WEEKLY"):
        jsonschema.validate(data, _schema())
