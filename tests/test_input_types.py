"""Every input every example stack declares is a real input of the installed provider SDKs
(tests/provider_types.py), checked at every depth; a typo or a wrong type fails."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import provider_types as pt
from conftest import STACK_FILES, evaluate_shipped
from infra.preview import harness


def _evaluated(path: Path) -> harness.Evaluation:
    return evaluate_shipped(path)


def _provider_resources(ev: harness.Evaluation) -> list[harness.Resource]:
    # Components of our own (accelstack:*) have no provider schema; everything else does.
    return [r for r in ev.resources if not r.type.startswith("accelstack:")]


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_input_is_a_provider_input(path: Path) -> None:
    ev = _evaluated(path)
    resources = _provider_resources(ev)
    assert resources
    problems = [f"{r.type} {r.name}: {p}" for r in resources
                for p in pt.check_resource(r.type, r.inputs)]
    assert problems == []


def test_every_resource_type_maps_to_an_sdk_args_class() -> None:
    types = {r.type for p in STACK_FILES for r in _provider_resources(_evaluated(p))}
    assert {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool",
            "kubernetes:apps/v1:DaemonSet", "pulumi:providers:kubernetes"} <= types
    for t in types:
        assert pt.properties(pt.args_class(t)), t


def _one(stack: str, type_: str) -> dict[str, Any]:
    ev = _evaluated(Path("stacks") / f"Pulumi.{stack}.yaml")
    found = [r for r in ev.resources if r.type == type_]
    return copy.deepcopy(found[0].inputs)


CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"


def test_a_typo_in_a_nested_field_fails() -> None:
    inputs = _one("v5p-reserved", CLUSTER)
    inputs["privateClusterConfig"]["enablePrivateNodez"] = True
    assert pt.check_resource(CLUSTER, inputs) == [
        "privateClusterConfig.enablePrivateNodez: not an input of "
        "pulumi_gcp.container._inputs.ClusterPrivateClusterConfigArgs"]


def test_a_field_in_the_wrong_place_fails() -> None:
    inputs = _one("v5e-spot", NODE_POOL)
    inputs["nodeConfig"]["autoRepair"] = True  # belongs under management
    assert pt.check_resource(NODE_POOL, inputs) == [
        "nodeConfig.autoRepair: not an input of "
        "pulumi_gcp.container._inputs.NodePoolNodeConfigArgs"]


def test_a_wrong_value_type_fails_at_depth() -> None:
    inputs = _one("v5p-reserved", CLUSTER)
    inputs["nodeConfig"]["shieldedInstanceConfig"]["enableSecureBoot"] = "yes"
    inputs["nodeLocations"] = "us-east5-a"
    assert sorted(pt.check_resource(CLUSTER, inputs)) == [
        "nodeConfig.shieldedInstanceConfig.enableSecureBoot: 'yes' is not a boolean",
        "nodeLocations: 'us-east5-a' is not a list",
    ]


def test_a_typo_deep_in_a_kubernetes_pod_spec_fails() -> None:
    inputs = _one("v5e-spot", DAEMONSET)
    pod = inputs["spec"]["template"]["spec"]
    pod["tolerationz"] = []
    pod["containers"][0]["imagePullPolicyy"] = "Always"
    problems = pt.check_resource(DAEMONSET, inputs)
    assert sorted(problems) == sorted([
        "spec.template.spec.tolerationz: not an input of "
        "pulumi_kubernetes.core.v1._inputs.PodSpecArgs",
        "spec.template.spec.containers[0].imagePullPolicyy: not an input of "
        "pulumi_kubernetes.core.v1._inputs.ContainerArgs",
    ])


def test_a_value_outside_a_declared_enum_fails() -> None:
    from pulumi_kubernetes.core.v1 import ServiceSpecArgs

    assert pt.check_object({"type": "LoadBalancer"}, ServiceSpecArgs, "spec") == []
    assert pt.check_object({"type": "LoadBalancr"}, ServiceSpecArgs, "spec") == [
        "spec.type: 'LoadBalancr' is not one of ['ExternalName', 'ClusterIP', 'NodePort', "
        "'LoadBalancer']"]


def test_an_unknown_top_level_input_fails() -> None:
    inputs = _one("a3mega", CLUSTER)
    inputs["deletionProtecton"] = True
    assert pt.check_resource(CLUSTER, inputs) == [
        "deletionProtecton: not an input of pulumi_gcp.container.cluster.ClusterArgs"]


def test_a_missing_required_field_fails() -> None:
    # Was: a TPU7x node pool sent placementPolicy {policyName} alone; pulumi-gcp requires
    # its `type`, so `pulumi up` would have refused what the mock engine accepted.
    inputs = _one("v5e-spot", NODE_POOL)
    inputs["placementPolicy"] = {"policyName": "wp"}
    inputs["nodeConfig"]["guestAccelerators"] = [{"type": "nvidia-l4"}]
    assert sorted(pt.check_resource(NODE_POOL, inputs)) == [
        "nodeConfig.guestAccelerators[0].count: required by "
        "pulumi_gcp.container._inputs.NodePoolNodeConfigGuestAcceleratorArgs, missing",
        "placementPolicy.type: required by "
        "pulumi_gcp.container._inputs.NodePoolPlacementPolicyArgs, missing"]
