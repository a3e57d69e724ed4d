"""The A4X example stack under the mock engine: the NVL72 workload policy as the pool's
placement, the reservation, the RDMA installer of the pinned release, and NVIDIA's DRA
driver (chart, values of GKE's A4X page, the quota its critical pods need)."""

from __future__ import annotations

import copy
from typing import Any

import schema
from conftest import MINIMAL, ROOT, evaluate_shipped
from infra.config import stack as config_mod
from infra.specs import dra_driver as dra_driver_spec
from infra.catalog import gpudirect_release
from infra.preview import harness
from infra.preview.harness import Evaluation

STACK = ROOT / "stacks" / "Pulumi.a4x.yaml"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _ev() -> Evaluation:
    return evaluate_shipped(STACK)


def test_a4x_pool_is_placed_by_a_1x72_workload_policy() -> None:
    ev = _ev()
    [policy] = [harness._plain(r.inputs) for r in
                ev.of_type("gcp:compute/resourcePolicy:ResourcePolicy")]
    assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    assert policy["name"] == "a4x-gb200-4-wp" and policy["region"] == "us-central1"
    [np] = [harness._plain(r.inputs) for r in ev.of_type("gcp:container/nodePool:NodePool")
            if r.name == "gb200-4"]
    assert np["placementPolicy"] == {"type": "COMPACT", "policyName": "a4x-gb200-4-wp"}
    assert np["nodeConfig"]["reservationAffinity"]["values"] == ["gb200-reservation"]
    assert np["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-gb200"
    # no host maintenance interval is documented for A4X reservations: GKE's default
    assert "hostMaintenancePolicy" not in np["nodeConfig"]


def test_a4x_stack_installs_the_dra_driver_with_gke_values() -> None:
    ev = _ev()
    releases = {harness._plain(r.inputs)["name"]: harness._plain(r.inputs)
                for r in ev.of_type(RELEASE)}
    dra = releases["nvidia-dra-driver-gpu"]
    assert (dra["chart"], dra["version"], dra["namespace"]) == (
        "nvidia-dra-driver-gpu", "25.12.0", "nvidia-dra-driver-gpu")
    assert dra["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    values = dra["values"]
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    assert values["resources"] == {"gpus": {"enabled": False}}
    terms = values["kubeletPlugin"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [
        {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-gb200"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}]
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
        {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
         "effect": "NoSchedule"}]
    [quota] = [harness._plain(r.inputs) for r in ev.of_type("kubernetes:core/v1:ResourceQuota")]
    # GKE: "twice the number of A4X nodes in the cluster, plus one"
    assert quota["spec"]["hard"] == {"pods": "37"}
    release = ev.named("nvidia-dra-driver-gpu", RELEASE)
    assert any("ResourceQuota" in d for d in release.dependencies)
    assert ev.named("kueue", RELEASE).urn in release.dependencies


def test_dra_driver_objects_validate() -> None:
    cfg = config_mod.parse(harness.read_stack_file(STACK))
    assert dra_driver_spec.a4x_nodes(cfg) == 18
    schema.validate(dra_driver_spec.namespace())
    schema.validate(dra_driver_spec.resource_quota(cfg))


def test_only_a4x_stacks_get_the_driver() -> None:
    raw: dict[str, Any] = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": "b200-8",
                      "capacity": {"mode": "reservation", "reservation": "r"}}]
    ev = harness.evaluate(raw, "test")
    assert [harness._plain(r.inputs)["name"] for r in ev.of_type(RELEASE)] == ["kueue"]
    assert not ev.of_type("kubernetes:core/v1:ResourceQuota")
    assert not ev.of_type("gcp:compute/resourcePolicy:ResourcePolicy")


def test_a4x_installer_is_the_arm64_build_of_the_release() -> None:
    urls = [harness._plain(r.inputs).get("file") for r in
            _ev().of_type("kubernetes:yaml/v2:ConfigFile")]
    assert gpudirect_release.RDMA_A4X_INSTALLER.url in urls
