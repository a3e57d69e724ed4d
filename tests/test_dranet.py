"""GKE managed DRANET on v6e pools: the config rule, the node pool, the claim template the
stack creates, the contract field and the claim the submitter's pods make."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schema
from conftest import MINIMAL
from infra.config import stack as config
from infra.contract import outputs as contract
from infra.specs import dranet as dranet_spec
from infra.preview import harness
from infra.specs import nodepool as nodepool_spec
from infra.config.errors import ConfigError
from submit.render.jobset import render
from submit.render.build import build_spec

NODE_POOL = "gcp:container/nodePool:NodePool"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
PAGE = "https://cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra"


def _raw(accelerator: str = "v6e-16", version: str | None = None, **extra: Any
         ) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": accelerator, "dranet": True, **extra}]
    if version is not None:
        raw["gkeVersion"] = version
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config.parse(raw)
    return info.value.problems


# ----------------------------------------------------------------------------------
# Config


def test_off_by_default() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": "v6e-16"}]
    assert config.parse(raw).slices[0].dranet is False


@pytest.mark.parametrize("accelerator", ["v6e-16", "v6e-8-1vm"])
def test_v6e_pools_may_turn_it_on(accelerator: str) -> None:
    assert config.parse(_raw(accelerator)).slices[0].dranet is True


@pytest.mark.parametrize("accelerator", ["v5litepod-16", "v5p-8", "tpu7x-8", "h200-141gb-8",
                                         "n2-standard-32-4"])
def test_other_machines_are_refused(accelerator: str) -> None:
    assert _problems(_raw(accelerator)) == [
        f"slices[0].dranet: GKE managed DRANET is offered for TPU v6e pools only, not "
        f"{accelerator}"]


@pytest.mark.parametrize("version", ["1.33", "1.34.1-gke.1829000", "1.34.0-gke.2201000"])
def test_older_gke_is_refused(version: str) -> None:
    assert _problems(_raw(version=version)) == [
        "slices[0].dranet: GKE managed DRANET needs GKE 1.34.1-gke.1829001 or later (GKE "
        f"installs the netdev.google.com DeviceClass from there: {PAGE}); gkeVersion is "
        f"{version}"]


@pytest.mark.parametrize("version", ["1.34", "1.34.1-gke.1829001", "1.35.0-gke.1"])
def test_documented_versions_pass(version: str) -> None:
    assert config.parse(_raw(version=version)).slices[0].dranet is True


def test_not_a_boolean() -> None:
    [problem] = _problems(_raw(dranet="yes"))
    assert problem.startswith("slices[0].dranet: ")


# ----------------------------------------------------------------------------------
# The program under mocks


def _evaluate(raw: dict[str, Any]) -> harness.Evaluation:
    return harness.evaluate(raw, "test")


def test_node_pools_get_the_profile_and_the_driver_label() -> None:
    raw = _raw(count=2)
    raw["slices"].append({"accelerator": "v6e-8-1vm", "name": "plain"})
    ev = _evaluate(raw)
    pools = {r.name: harness._plain(r.inputs) for r in ev.of_type(NODE_POOL)}
    for name in ("v6e-16-0", "v6e-16-1"):
        np = pools[name]
        assert np["networkConfig"] == {"acceleratorNetworkProfile": "auto"}
        assert np["nodeConfig"]["labels"][dranet_spec.NODE_LABEL] == "true"
    assert "networkConfig" not in pools["plain"]
    assert dranet_spec.NODE_LABEL not in pools["plain"]["nodeConfig"]["labels"]


def _claim_templates(ev: harness.Evaluation) -> list[dict[str, Any]]:
    out = []
    for r in ev.of_type(CONFIG_GROUP):
        for obj in harness._plain(r.inputs)["objs"]:
            if obj["kind"] == "ResourceClaimTemplate":
                out.append(obj)
    return out


def test_every_workload_namespace_gets_the_claim_template() -> None:
    raw = _raw()
    raw["queues"] = {"namespace": "jobs", "teams": [{"name": "a", "quota": {"v6e-16": 16}}]}
    templates = _claim_templates(_evaluate(raw))
    assert sorted(t["metadata"]["namespace"] for t in templates) == ["a", "jobs"]
    for t in templates:
        assert t["metadata"]["name"] == contract.DRANET_CLAIM_TEMPLATE
        assert t["spec"]["spec"]["devices"]["requests"] == [{
            "name": "netdev",
            # ExactCount, never All: Kueue v0.19.2 refuses All (pkg/dra/claims.go).
            "exactly": {"deviceClassName": "netdev.google.com", "allocationMode": "ExactCount",
                        "count": 1}}]
        # resource.k8s.io/v1 is served from Kubernetes 1.34 (GKE 1.34), below the version
        # DRANET needs; validated against that release's strict schema.
        import kubernetes_validate

        kubernetes_validate.validate(schema.drop_nulls(t), "1.34.0", strict=True)


def test_claim_template_schema_is_strict() -> None:
    import kubernetes_validate

    [t] = dranet_spec.claim_templates([True], ["jobs"])
    t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClass"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(t, "1.34.0", strict=True)


def test_no_template_without_dranet() -> None:
    assert _claim_templates(_evaluate(copy.deepcopy(MINIMAL))) == []


# ----------------------------------------------------------------------------------
# Contract and render


def _outputs(raw: dict[str, Any]) -> contract.StackOutputs:
    return contract.load(harness.plain_outputs(_evaluate(raw), reveal=True))


def test_contract_carries_the_flag_and_older_outputs_load() -> None:
    out = _outputs(_raw())
    assert out.slice_pools[0].dranet is True
    data = out.to_dict()
    del data["slicePools"][0]["dranet"]
    assert contract.load(data).slice_pools[0].dranet is False
    data["slicePools"][0]["dranet"] = "true"
    with pytest.raises(contract.ContractError, match=r"slicePools\[0\]\.dranet"):
        contract.load(data)


def _pod(outputs: contract.StackOutputs, accelerator: str) -> dict[str, Any]:
    spec = build_spec(outputs, workload="w", accelerator=accelerator, image="busybox:1.36",
                      command="python train.py")
    js = render(spec)[-1]
    schema.validate(js)
    return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def test_host_network_pods_claim_nothing() -> None:
    # Multi-host v6e-16 pods run on the host network; DRANET's NRI hook refuses a
    # host-network sandbox that claims devices (google/dranet pkg/driver/nri_hooks.go).
    pod = _pod(_outputs(_raw()), "v6e-16")
    assert pod["hostNetwork"] is True
    assert "resourceClaims" not in pod
    assert "claims" not in pod["containers"][0].get("resources", {})


def test_pods_on_dranet_pools_claim_the_nics() -> None:
    pod = _pod(_outputs(_raw("v6e-8-1vm")), "v6e-8-1vm")
    assert "hostNetwork" not in pod
    assert pod["resourceClaims"] == [{"name": "netdev",
                                      "resourceClaimTemplateName": "accelstack-netdev"}]
    assert pod["containers"][0]["resources"]["claims"] == [{"name": "netdev"}]
    import kubernetes_validate

    as_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod}
    kubernetes_validate.validate(schema.drop_nulls(as_pod), "1.34.0", strict=True)


def test_pods_elsewhere_claim_nothing() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": "v6e-16"}]
    pod = _pod(_outputs(raw), "v6e-16")
    assert "resourceClaims" not in pod
    assert "claims" not in pod["containers"][0].get("resources", {})


def test_node_labels_follow_the_flag() -> None:
    pool = config.parse(_raw()).slices[0]
    assert nodepool_spec.node_labels(pool)[dranet_spec.NODE_LABEL] == "true"
