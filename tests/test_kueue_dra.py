"""No claim a render makes is one Kueue refuses: Kueue v0.19.2's DRA admission, replayed.

For every example stack (and mixed cases with DRANET and A4X), the JobSets the submitter
renders are checked the way Kueue's workload controller checks a pending workload with the
DRA integration on (its default), written out here from its source:

- pkg/controller/core/workload_controller.go: a pod naming a ResourceClaim directly
  (``resourceClaimName``) is inadmissible ("KueueDRAIntegration feature does not support
  use of resource claims");
- pkg/dra/claims.go countDevicesPerClass: every request of a ResourceClaimTemplate must be
  ``exactly`` with allocationMode ExactCount; firstAvailable, adminAccess and
  ``allocationMode: All`` are refused;
- GetResourceRequestsForResourceClaimTemplates: each request's device class must be mapped
  in the Configuration's ``resources.deviceClassMappings`` ("DeviceClass ... is not mapped
  in DRA configuration"); the counts become requests of the mapped resource, which the
  ClusterQueue's flavor must then hold (tests/test_kueue_admission.py ``assign``).

The Configuration is the one the stack gives Kueue's Helm release; the templates are the
stack's own (DRANET) and, for an A4X ComputeDomain, the one NVIDIA's controller writes
(v25.12.0 templates/compute-domain-workload-claim-template.tmpl.yaml).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
import yaml

import schema
from conftest import MINIMAL, STACK_FILES, evaluate_shipped
from infra.contract import outputs as contract
from infra.preview import harness
from infra.preview.harness import Evaluation
from infra.specs import dra_driver
from infra.specs import kueue as kueue_spec
from submit.render import jobset as render
from submit.render.build import build_spec
from test_kueue_admission import assign

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
MIXED: dict[str, dict[str, Any]] = {
    # Single-host v6e with DRANET: pods in their own network namespace claim a NIC.
    "dranet-single-host": {"slices": [
        {"name": "one", "accelerator": "v6e-8-1vm", "count": 3, "dranet": True},
        {"name": "multi", "accelerator": "v6e-16", "dranet": True}],
        "gkeVersion": "1.34.1-gke.1829001",
        "queues": {"teams": [{"name": "t", "quota": {"one": 8}}]}},
    # A4X across nodes beside a DRANET pool: both classes mapped, each on its own flavor.
    "a4x-and-dranet": {"slices": [
        {"name": "gb", "accelerator": "gb200-4", "count": 4,
         "capacity": {"mode": "reservation", "reservation": "r"}},
        {"name": "v6e", "accelerator": "v6e-8-1vm", "dranet": True}],
        "gkeVersion": "1.34.1-gke.1829001"},
}
CASES = [p.name for p in STACK_FILES] + list(MIXED)


class Refused(AssertionError):
    """Kueue would leave the workload pending with this message."""


def _evaluate(case: str) -> Evaluation:
    if case in MIXED:
        raw = copy.deepcopy(MINIMAL)
        raw.update(copy.deepcopy(MIXED[case]))
        return harness.evaluate(raw, case)
    [path] = [p for p in STACK_FILES if p.name == case]
    return evaluate_shipped(path)


def kueue_configuration(ev: Evaluation) -> dict[str, Any]:
    """The Configuration the stack hands Kueue's chart."""
    [release] = [r for r in ev.of_type(RELEASE) if harness._plain(r.inputs)["name"] == "kueue"]
    values = harness._plain(release.inputs)["values"]
    return yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])  # type: ignore[no-any-return]


def _stack_templates(ev: Evaluation) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for r in ev.of_type(CONFIG_GROUP):
        for obj in harness._plain(r.inputs)["objs"]:
            if obj["kind"] == "ResourceClaimTemplate":
                out[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
    return out


def _compute_domain_template(cd: dict[str, Any]) -> dict[str, Any]:
    """The claim template NVIDIA's ComputeDomain controller writes for ``cd``."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"namespace": cd["metadata"]["namespace"],
                         "name": cd["spec"]["channel"]["resourceClaimTemplate"]["name"]},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "channel",
                 "exactly": {"deviceClassName": dra_driver.CHANNEL_DEVICE_CLASS}}]}}}}


def _api_defaults(exactly: dict[str, Any]) -> dict[str, Any]:
    # ExactDeviceRequest: "If AllocationMode is not specified, the default mode is
    # ExactCount. If the mode is ExactCount and count is not specified, the default count
    # is one." Kueue reads the stored (defaulted) object.
    out = {"allocationMode": "ExactCount", **exactly}
    if out["allocationMode"] == "ExactCount":
        out.setdefault("count", 1)
    return out


def dra_requests(pod: dict[str, Any], namespace: str,
                 templates: dict[tuple[str, str], dict[str, Any]],
                 configuration: dict[str, Any]) -> dict[str, int]:
    """Quota resource -> devices one pod asks for, or Refused as Kueue v0.19.2 would."""
    mapped: dict[str, str] = {}
    for m in (configuration.get("resources") or {}).get("deviceClassMappings") or []:
        for cls in m["deviceClassNames"]:
            mapped[cls] = m["name"]
    out: dict[str, int] = {}
    for prc in pod.get("resourceClaims") or []:
        if "resourceClaimName" in prc:
            raise Refused("KueueDRAIntegration feature does not support use of resource claims")
        name = prc["resourceClaimTemplateName"]
        template = templates.get((namespace, name))
        if template is None:
            raise Refused(f"ResourceClaimTemplate {namespace}/{name} does not exist")
        for i, req in enumerate(template["spec"]["spec"]["devices"]["requests"]):
            if "firstAvailable" in req or "exactly" not in req:
                raise Refused(f"{name}: requests[{i}]: FirstAvailable device selection is "
                              "not supported")
            exactly = _api_defaults(req["exactly"])
            if exactly.get("adminAccess"):
                raise Refused(f"{name}: requests[{i}]: AdminAccess is not supported")
            if exactly["allocationMode"] != "ExactCount":
                raise Refused(f"{name}: requests[{i}]: AllocationMode "
                              f"'{exactly['allocationMode']}' is not supported")
            cls = exactly["deviceClassName"]
            if cls not in mapped:
                raise Refused(f"DeviceClass {cls} is not mapped in DRA configuration")
            out[mapped[cls]] = out.get(mapped[cls], 0) + int(exactly["count"])
    return out


def _renders(ev: Evaluation) -> list[tuple[Any, list[dict[str, Any]]]]:
    """(pool, objects) of a multi-node render on every pool (where the pool has room)."""
    outputs = contract.load(harness.plain_outputs(ev, reveal=True))
    lq = outputs.local_queues[0]
    out = []
    for pool in outputs.slice_pools:
        spec = build_spec(outputs, workload="w", accelerator=pool.accelerator, pool=pool.name,
                          image="us-docker.pkg.dev/p/r/img:1", namespace=lq.namespace)
        out.append((pool, render.render(spec)))
        if pool.kind == "gpu" and pool.slice_count > 1:  # and across nodes (A4X: IMEX)
            spec = build_spec(outputs, workload="w", accelerator=pool.accelerator,
                              pool=pool.name, image="us-docker.pkg.dev/p/r/img:1",
                              namespace=lq.namespace, num_nodes=pool.slice_count)
            out.append((pool, render.render(spec)))
    return out


def replay(ev: Evaluation, renders: list[tuple[Any, list[dict[str, Any]]]]) -> int:
    """Admit every render as Kueue would; the number of pod sets that claim devices."""
    configuration = kueue_configuration(ev)
    objs = kueue_spec.kueue_objects(ev.config)
    flavors = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceFlavor"}
    [cq] = [o for o in objs if o["kind"] == "ClusterQueue"
            and o["metadata"]["name"] == ev.config.queues.cluster_queue]
    claiming = 0
    for _pool, rendered in renders:
        templates = _stack_templates(ev)
        for cd in (o for o in rendered if o["kind"] == "ComputeDomain"):
            t = _compute_domain_template(cd)
            templates[(t["metadata"]["namespace"], t["metadata"]["name"])] = t
        [js] = [o for o in rendered if o["kind"] == "JobSet"]
        for rj in js["spec"]["replicatedJobs"]:
            pod = rj["template"]["spec"]["template"]["spec"]
            devices = dra_requests(pod, js["metadata"]["namespace"], templates,
                                   configuration)
            claiming += bool(devices)
            pods = rj["replicas"] * rj["template"]["spec"]["parallelism"]
            assign(cq, flavors, pod, pods, {k: str(v) for k, v in devices.items()})
    return claiming


@pytest.mark.parametrize("case", CASES)
def test_kueue_admits_every_claim_the_renders_make(case: str) -> None:
    ev = _evaluate(case)
    claiming = replay(ev, _renders(ev))
    expected = {"Pulumi.a4x.yaml": 1, "dranet-single-host": 1, "a4x-and-dranet": 2}
    assert claiming == expected.get(case, 0), claiming


def test_multi_host_dranet_pods_make_no_claim() -> None:
    # v6e-training's pools are multi-host: host-network pods, no claim (google/dranet's NRI
    # hook refuses host-network pods that claim devices).
    ev = _evaluate("Pulumi.v6e-training.yaml")
    for _pool, rendered in _renders(ev):
        [js] = [o for o in rendered if o["kind"] == "JobSet"]
        for rj in js["spec"]["replicatedJobs"]:
            pod = rj["template"]["spec"]["template"]["spec"]
            assert not (pod.get("hostNetwork") and pod.get("resourceClaims")), rj["name"]


def _claiming_render(case: str) -> tuple[Evaluation, list[tuple[Any, list[dict[str, Any]]]]]:
    ev = _evaluate(case)
    renders = [(p, objs) for p, objs in _renders(ev)
               if any("resourceClaims" in rj["template"]["spec"]["template"]["spec"]
                      for o in objs if o["kind"] == "JobSet"
                      for rj in o["spec"]["replicatedJobs"])]
    assert renders
    return ev, renders


def test_a_claim_of_an_unmapped_device_class_is_caught() -> None:
    # The replay fails when a render claims a class the stack's Kueue does not map.
    ev, renders = _claiming_render("Pulumi.a4x.yaml")
    pool, objs = renders[0]
    objs = copy.deepcopy(objs)
    [cd] = [o for o in objs if o["kind"] == "ComputeDomain"]
    objs.remove(cd)
    [js] = [o for o in objs if o["kind"] == "JobSet"]
    ns = js["metadata"]["namespace"]
    ev.resources.append(harness.Resource(  # a template of another driver's class
        urn="x", type=CONFIG_GROUP, name="other", parent="", custom=True, inputs={"objs": [{
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"namespace": ns, "name": "w-imex-channel"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}]}))
    with pytest.raises(Refused, match="DeviceClass gpu.nvidia.com is not mapped"):
        replay(ev, [(pool, objs)])


@pytest.mark.parametrize("exactly, message", [
    ({"deviceClassName": "netdev.google.com", "allocationMode": "All"},
     "AllocationMode 'All' is not supported"),
    ({"deviceClassName": "netdev.google.com", "adminAccess": True}, "AdminAccess"),
])
def test_requests_kueue_cannot_count_are_caught(exactly: dict[str, Any], message: str) -> None:
    ev, renders = _claiming_render("dranet-single-host")
    for i, r in enumerate(ev.resources):
        if r.type != CONFIG_GROUP:
            continue
        objs = harness._plain(r.inputs)["objs"]
        for obj in objs:
            if obj["kind"] == "ResourceClaimTemplate":
                obj["spec"]["spec"]["devices"]["requests"][0]["exactly"] = exactly
        ev.resources[i] = dataclasses.replace(r, inputs={**r.inputs, "objs": objs})
    with pytest.raises(Refused, match=message):
        replay(ev, renders)


def test_a_pod_naming_a_resource_claim_is_caught() -> None:
    ev, renders = _claiming_render("dranet-single-host")
    pool, objs = renders[0]
    objs = copy.deepcopy(objs)
    [js] = [o for o in objs if o["kind"] == "JobSet"]
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["resourceClaims"] = [{"name": "netdev", "resourceClaimName": "shared"}]
    with pytest.raises(Refused, match="does not support use of resource claims"):
        replay(ev, [(pool, objs)])


@pytest.mark.parametrize("case", CASES)
def test_claims_and_templates_validate_at_the_stacks_kubernetes_version(case: str) -> None:
    # resource.k8s.io/v1 objects and pods with claims, against the release the stack pins
    # (never below 1.34, where resource.k8s.io/v1 starts), with no skip.
    ev = _evaluate(case)
    version = schema.stack_version(ev.config.gke_version)
    templates = _stack_templates(ev)
    for t in templates.values():
        schema.validate(t, version)
    for _pool, rendered in _renders(ev):
        for obj in rendered:
            schema.validate(obj, version)
            if obj["kind"] == "ComputeDomain":
                schema.validate(_compute_domain_template(obj), version)
            if obj["kind"] == "JobSet":
                for rj in obj["spec"]["replicatedJobs"]:
                    spec = rj["template"]["spec"]["template"]["spec"]
                    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                           "spec": spec}
                    schema.validate(pod, version)


def test_resource_claim_templates_are_not_checked_below_1_34() -> None:
    [t] = [t for t in _stack_templates(_evaluate("dranet-single-host")).values()][:1]
    schema.validate(t, "1.33.0")  # raised to 1.34, where resource.k8s.io/v1 is served
    import kubernetes_validate

    with pytest.raises(Exception):
        kubernetes_validate.validate(schema.drop_nulls(t), "1.33.0", strict=True)
