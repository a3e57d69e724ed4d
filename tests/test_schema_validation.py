"""The strict schema validator itself: it must catch typos and wrong types, accept what the
API server accepts, and skip (not pass) when the reference schemas are absent.

Every other test that calls ``schema.validate`` relies on these properties; if the
validator quietly accepted unknown fields, those tests would prove nothing.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import schema
from infra.config import stack as config
from infra.specs import image_cache as image_cache_spec
from conftest import MINIMAL

KUEUE = "kueue.x-k8s.io/v1beta2"


def _flavor() -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "f"},
            "spec": {"nodeLabels": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice"},
                     "tolerations": [{"key": "google.com/tpu", "operator": "Equal",
                                      "value": "present", "effect": "NoSchedule"}]}}


def _queue(**resource: Any) -> dict[str, Any]:
    res = {"name": "cpu", "nominalQuota": 8, **resource}
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "q"},
            "spec": {"namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": ["cpu"],
                                         "flavors": [{"name": "f", "resources": [res]}]}]}}


def _check() -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                     "parameters": {"apiGroup": "kueue.x-k8s.io",
                                    "kind": "ProvisioningRequestConfig", "name": "dws-config"}}}


def _daemonset() -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["imageCache"] = ["busybox:1.37"]
    # A deep copy: the rendered DaemonSet shares its resources dict with a module constant.
    return copy.deepcopy(image_cache_spec.daemonsets(config.parse(raw))[0])


def _fails(obj: dict[str, Any]) -> str:
    with pytest.raises(AssertionError) as info:
        schema.validate(obj)
    return str(info.value)


# ----------------------------------------------------------------------------------
# Valid objects pass


@pytest.mark.parametrize("obj", [_flavor(), _queue(), _check(), _daemonset()],
                         ids=["ResourceFlavor", "ClusterQueue", "AdmissionCheck", "DaemonSet"])
def test_valid_objects_pass(obj: dict[str, Any]) -> None:
    schema.validate(obj)


# ----------------------------------------------------------------------------------
# Typos and wrong types fail, naming the object and the path


def test_unknown_field_in_resource_flavor_spec() -> None:
    obj = _flavor()
    obj["spec"]["nodeLabel"] = obj["spec"].pop("nodeLabels")
    assert _fails(obj) == ("ResourceFlavor f: spec: Additional properties are not allowed "
                           "('nodeLabel' was unexpected)")


def test_unknown_field_in_a_toleration() -> None:
    obj = _flavor()
    obj["spec"]["tolerations"][0]["efect"] = obj["spec"]["tolerations"][0].pop("effect")
    assert _fails(obj) == ("ResourceFlavor f: spec.tolerations.0: Additional properties are "
                           "not allowed ('efect' was unexpected)")


def test_unknown_field_in_cluster_queue_resource_group() -> None:
    obj = _queue()
    obj["spec"]["resourceGroups"][0]["flavours"] = []
    assert _fails(obj) == ("ClusterQueue q: spec.resourceGroups.0: Additional properties are "
                           "not allowed ('flavours' was unexpected)")


def test_v1beta1_field_name_in_v1beta2_cluster_queue() -> None:
    # v1beta2 renamed spec.cohort to spec.cohortName; the served v1beta1 still has cohort.
    obj = _queue()
    obj["spec"]["cohort"] = "org"
    assert _fails(obj) == ("ClusterQueue q: spec: Additional properties are not allowed "
                           "('cohort' was unexpected)")
    obj["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    schema.validate(obj)


def test_unknown_field_in_daemonset_pod_spec() -> None:
    obj = _daemonset()
    obj["spec"]["template"]["spec"]["tolerationz"] = []
    assert _fails(obj) == ("DaemonSet image-cache-busybox: spec.template.spec: Additional "
                           "properties are not allowed ('tolerationz' was unexpected)")


def test_unknown_field_in_daemonset_container() -> None:
    obj = _daemonset()
    obj["spec"]["template"]["spec"]["initContainers"][1]["imagePullPolicyy"] = "Always"
    assert _fails(obj) == ("DaemonSet image-cache-busybox: spec.template.spec.initContainers.1:"
                           " Additional properties are not allowed ('imagePullPolicyy' was "
                           "unexpected)")


def test_nominal_quota_of_the_wrong_type() -> None:
    assert _fails(_queue(nominalQuota=[])) == (
        "ClusterQueue q: spec.resourceGroups.0.flavors.0.resources.0.nominalQuota: [] is not "
        "valid under any of the given schemas")


def test_priority_value_of_the_wrong_type() -> None:
    obj = {"apiVersion": KUEUE, "kind": "WorkloadPriorityClass", "metadata": {"name": "low"},
           "value": "250"}
    assert _fails(obj) == "WorkloadPriorityClass low: value: '250' is not of type 'integer'"


def test_missing_required_field() -> None:
    obj = _check()
    del obj["spec"]["controllerName"]
    assert _fails(obj) == "AdmissionCheck dws-prov: spec: 'controllerName' is a required property"


def test_missing_required_field_in_daemonset() -> None:
    obj = _daemonset()
    del obj["spec"]["selector"]
    assert _fails(obj) == "DaemonSet image-cache-busybox: spec: 'selector' is a required property"


def test_jobset_typo() -> None:
    obj = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
           "metadata": {"name": "train"},
           "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
               "parallelizm": 2,
               "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}}]}}
    assert _fails(obj) == ("JobSet train: spec.replicatedJobs.0.template.spec: Additional "
                           "properties are not allowed ('parallelizm' was unexpected)")


def test_unknown_kind_in_a_reference_group() -> None:
    obj = {"apiVersion": KUEUE, "kind": "Flavour", "metadata": {"name": "f"}}
    assert _fails(obj).startswith(f"Flavour f: no schema for {KUEUE} Flavour")


# ----------------------------------------------------------------------------------
# What the API server accepts passes


@pytest.mark.parametrize("quantity", [8, "8", "500m", "32Gi", 0])
def test_int_or_string_quantities(quantity: Any) -> None:
    schema.validate(_queue(nominalQuota=quantity, borrowingLimit=quantity))


@pytest.mark.parametrize("path,value", [
    (("spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), 1),
    (("spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), "100%"),
    (("spec", "template", "spec", "containers", 0, "resources", "requests", "cpu"), 1),
    (("spec", "template", "spec", "containers", 0, "resources", "requests", "cpu"), "1m"),
])
def test_int_or_string_in_core_kinds(path: tuple[Any, ...], value: Any) -> None:
    obj = _daemonset()
    node: Any = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    schema.validate(obj)


def test_quantity_of_the_wrong_type_in_core_kinds() -> None:
    obj = _daemonset()
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = []
    assert _fails(obj) == ("DaemonSet image-cache-busybox: spec.template.spec.containers.0."
                           "resources.requests.cpu: [] is not valid under any of the given "
                           "schemas")


def test_null_values_are_dropped() -> None:
    obj = _flavor()
    obj["spec"]["topologyName"] = None
    schema.validate(obj)
    ds = _daemonset()
    ds["spec"]["template"]["spec"]["nodeSelector"] = None
    schema.validate(ds)


def test_validation_does_not_change_the_object() -> None:
    obj = _flavor()
    obj["spec"]["topologyName"] = None
    before = copy.deepcopy(obj)
    schema.validate(obj)
    assert obj == before


# ----------------------------------------------------------------------------------
# A missing reference folder skips, with the reason


def test_missing_reference_skips_with_a_reason(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    missing = tmp_path / "no-such-reference" / "crds"
    monkeypatch.setattr(schema, "CRD_DIR", missing)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        schema.validate(_flavor())
    assert str(info.value) == (
        f"reference schemas not found at {missing} (../shared/reference/ beside the project "
        "root); schema validation cannot run")
    with pytest.raises(pytest.skip.Exception):
        schema.require_reference()


def test_a_missing_reference_fails_in_ci(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    missing = tmp_path / "no-such-reference" / "crds"
    monkeypatch.setattr(schema, "CRD_DIR", missing)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="reference schemas not found at .* and "
                       "CI=true"):
        schema.validate(_flavor())


def test_core_kinds_do_not_need_the_reference(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    # Core kinds come from kubernetes-validate's own schemas, so they still validate.
    monkeypatch.setattr(schema, "CRD_DIR", tmp_path / "missing")
    schema.validate(_daemonset())
    obj = _daemonset()
    obj["spec"]["template"]["spec"]["tolerationz"] = []
    with pytest.raises(AssertionError):
        schema.validate(obj)


def test_reference_folder_is_present() -> None:
    schema.require_reference()  # skips (with the reason) where the folder is absent
    names = sorted(p.name for p in Path(schema.CRD_DIR).glob("*.yaml"))
    assert "jobset.x-k8s.io_jobsets.yaml" in names
    assert {"kueue.x-k8s.io_admissionchecks.yaml", "kueue.x-k8s.io_clusterqueues.yaml",
            "kueue.x-k8s.io_localqueues.yaml", "kueue.x-k8s.io_provisioningrequestconfigs.yaml",
            "kueue.x-k8s.io_resourceflavors.yaml", "kueue.x-k8s.io_topologies.yaml",
            "kueue.x-k8s.io_workloadpriorityclasses.yaml"} <= set(names)
