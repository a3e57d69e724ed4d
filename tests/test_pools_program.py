"""Pools stacks (infra/config/pools.py, infra/specs/pools.py, infra/components/pools.py)
under the Pulumi SDK's mock engine: every resource's inputs, each check against the host,
and every Kubernetes object against its schema."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schema
from conftest import ROOT, evaluate_shipped
from fakes import stacks
from infra import program
from infra.config.errors import ConfigError
from infra.config.pools import parse_pools
from infra.config.stack_file import load as load_stack_file
from infra.contract.outputs import load
from infra.preview import harness
from infra.specs import pools as pools_spec

HOST = "my-org/accelstack/v5e-spot"
FILE = ROOT / "stacks" / "Pulumi.v5e-extra.yaml"
NODE_SA = "v5e-spot-nodes@my-ml-project.iam.gserviceaccount.com"


def _raw(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(load_stack_file(FILE).raw)
    raw.update(changes)
    return raw


def _host(**changes: Any) -> dict[str, Any]:
    data = stacks.outputs("v5e-spot")["accelstack"]
    data.update(changes)
    return data


def _eval(raw: dict[str, Any] | None = None, host: dict[str, Any] | None = None,
          stack: str = "v5e-extra") -> harness.Evaluation:
    return harness.evaluate_pools(raw or _raw(), stack,
                                  {HOST: {"accelstack": host or _host()}})


def _problems(raw: dict[str, Any] | None = None, host: Any = None) -> list[str]:
    cfg = parse_pools(raw or _raw(), "v5e-extra")
    with pytest.raises(ConfigError) as e:
        pools_spec.plan(cfg, _host() if host is None else host)
    return e.value.problems


def test_the_example_declares_pools_on_the_hosts_cluster_and_nothing_of_the_cluster() -> None:
    ev = evaluate_shipped(FILE)
    types = sorted({r.type for r in ev.resources})
    assert types == sorted([
        "accelstack:nodepool:SliceNodePools", "accelstack:pools:Pools",
        "gcp:container/nodePool:NodePool", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "pulumi:providers:kubernetes",
        "pulumi:pulumi:StackReference"])
    assert ev.named("pools-host").inputs == {"name": HOST}
    for name in ("extra-0", "extra-1"):
        np = ev.named(name, "gcp:container/nodePool:NodePool").inputs
        assert np["cluster"] == "projects/my-ml-project/locations/us-west4/clusters/v5e-spot"
        assert (np["project"], np["location"], np["nodeLocations"]) == (
            "my-ml-project", "us-west4", ["us-west4-a"])
        assert np["nodeCount"] == 4 and np["placementPolicy"] == {
            "type": "COMPACT", "tpuTopology": "4x4"}
        cfg = np["nodeConfig"]
        assert cfg["serviceAccount"] == NODE_SA
        assert cfg["machineType"] == "ct5lp-hightpu-4t" and cfg["spot"] is True
        assert cfg["labels"] == {"accelstack.dev/slice-pool": "extra",
                                 "accelstack.dev/capacity": "spot"}
        # Tainted with the pools stack: the host's own spot v5e flavor selects the same
        # slice type, and its pods never tolerate this.
        assert {"key": "accelstack.dev/pools-stack", "value": "v5e-extra",
                "effect": "NO_SCHEDULE"} in cfg["taints"]
        assert cfg["resourceLabels"] == {"team": "research", "env": "burst"}
    provider = ev.named("pools-k8s").inputs
    assert provider["upsertExistingObjects"] == "false"  # provider inputs travel as strings
    assert isinstance(provider["kubeconfig"], harness.Secret)


def test_kueue_objects_are_its_own_in_the_hosts_namespace() -> None:
    ev = evaluate_shipped(FILE)
    [flavor] = ev.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert flavor.inputs["metadata"] == {"name": "pools-v5e-extra-extra-v5litepod-16-spot"}
    assert flavor.inputs["spec"]["nodeLabels"]["accelstack.dev/slice-pool"] == "extra"
    assert {"key": "accelstack.dev/pools-stack", "operator": "Equal", "value": "v5e-extra",
            "effect": "NoSchedule"} in flavor.inputs["spec"]["tolerations"]
    [cq] = ev.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    assert cq.inputs["metadata"] == {"name": "pools-v5e-extra"}
    spec = cq.inputs["spec"]
    assert "cohortName" not in spec  # v5e-spot has no teams, so no cohort
    assert spec["namespaceSelector"] == {"matchExpressions": [{
        "key": "kubernetes.io/metadata.name", "operator": "In", "values": ["training"]}]}
    [group] = spec["resourceGroups"]
    [entry] = group["flavors"]
    assert entry["name"] == flavor.inputs["metadata"]["name"]
    assert entry["resources"][0] == {"name": "google.com/tpu", "nominalQuota": 32}
    [lq] = ev.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")
    assert lq.inputs["metadata"] == {"name": "pools-v5e-extra", "namespace": "training"}
    assert lq.inputs["spec"] == {"clusterQueue": "pools-v5e-extra"}
    # created flavor -> queue -> local queue (and deleted the other way round)
    assert flavor.urn in cq.dependencies and cq.urn in lq.dependencies
    for obj in (flavor, cq, lq):
        schema.validate({"apiVersion": "kueue.x-k8s.io/v1beta2",
                         "kind": obj.type.rsplit(":", 1)[-1], **obj.inputs})


def test_the_outputs_are_a_contract_the_submitter_loads() -> None:
    out = load(harness.plain_outputs(evaluate_shipped(FILE), reveal=True))
    host = load(_host())
    assert out.stack == "v5e-extra" and out.on_cluster == HOST
    assert out.cluster == host.cluster and out.kubeconfig == host.kubeconfig
    assert [p.name for p in out.slice_pools] == ["extra"]
    assert out.slice_pools[0].node_selector["accelstack.dev/slice-pool"] == "extra"
    assert [(q.name, q.namespace, q.cluster_queue) for q in out.local_queues] == [
        ("pools-v5e-extra", "training", "pools-v5e-extra")]
    assert out.storage == host.storage and out.priority_classes == host.priority_classes


def test_a_cohort_of_the_host_takes_the_pools_queue() -> None:
    ev = _eval(host=_host(cohort="research"))
    [cq] = ev.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    assert cq.inputs["spec"]["cohortName"] == "research"


def test_slice_classes_become_compute_classes_on_the_host() -> None:
    host = _host()
    host["storage"]["gkeVersion"] = "1.34.1-gke.1000000"
    classes = [{"name": "spare", "shapes": ["v5litepod-16"], "capacity": ["spot"],
                "limits": {"chips": 32}}]
    ev = _eval(_raw(slices=[], sliceClasses=classes), host)
    [cc] = ev.of_type("kubernetes:cloud.google.com/v1:ComputeClass")
    assert cc.inputs["metadata"]["name"] == "spare"
    assert cc.inputs["spec"]["nodePoolConfig"]["serviceAccount"] == NODE_SA
    schema.validate({"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass",
                     **cc.inputs})
    assert not ev.of_type("gcp:container/nodePool:NodePool")


# ---------------------------------------------------------------------------------
# The checks: config alone, then against the host's outputs.


@pytest.mark.parametrize("key,value", [("network", {"create": True}),
                                       ("clusterName", "x"), ("storage", {}),
                                       ("registry", {}), ("pathways", {})])
def test_cluster_keys_are_refused(key: str, value: Any) -> None:
    with pytest.raises(ConfigError) as e:
        parse_pools(_raw(**{key: value}), "v5e-extra")
    assert e.value.problems == [
        f"{key}: is a setting of the cluster, which belongs to the stack onCluster.stack "
        "names; a pools stack allows only onCluster, slices, sliceClasses, labels"]


def test_bad_config_lines_name_the_file_line() -> None:
    raw = _raw(region="us-west4")
    with pytest.raises(program.StackConfigError) as e:
        program.load_pools_config(raw, "v5e-extra", load_stack_file(FILE).locate)
    assert e.value.problems[0].startswith(f"{FILE.relative_to(ROOT)}:") or \
        e.value.problems[0].startswith(f"{FILE}:")


def test_a_fleet_or_missing_host_is_refused() -> None:
    # A fleet stack has no `accelstack` output, nor has a stack not deployed yet: the
    # StackReference reads nothing.
    cfg = parse_pools(_raw(), "v5e-extra")
    with pytest.raises(ConfigError) as e:
        pools_spec.plan(cfg, None)
    assert e.value.problems == [
        f"onCluster.stack: stack {HOST!r} has no 'accelstack' output: it is not an "
        "accelstack cluster stack, or not deployed yet"]
    with pytest.raises(ConfigError) as e:
        pools_spec.plan(cfg, {"fleetContractVersion": 1, "name": "research"})
    assert e.value.problems == [
        f"onCluster.stack: stack {HOST!r} is a fleet, not a cluster stack; name the cluster "
        "stack whose cluster gets the pools"]


def test_another_pools_stack_is_not_a_host() -> None:
    other = harness.plain_outputs(evaluate_shipped(FILE), reveal=True)["accelstack"]
    assert _problems(host=other) == [
        "onCluster.stack: stack 'my-org/accelstack/v5e-spot' is a pools stack (on "
        f"the cluster of {HOST!r}), not a cluster stack; name the cluster stack"]


def test_a_host_without_its_node_service_account_is_refused() -> None:
    host = _host()
    del host["cluster"]["nodeServiceAccount"]
    [problem] = _problems(host=host)
    assert "does not export its nodes' service account" in problem


def test_a_name_the_host_has_is_refused() -> None:
    slices = [{"name": "v5litepod-16", "accelerator": "v5litepod-16", "count": 1}]
    [problem] = _problems(_raw(slices=slices))
    assert problem.startswith("slices[0].name: 'v5litepod-16' is a pool or class of "
                              f"{HOST} already")


def test_a_zone_outside_the_hosts_region_is_refused() -> None:
    slices = [{"name": "far", "accelerator": "v5litepod-16", "count": 1,
               "zones": ["us-east5-b"]}]
    assert _problems(_raw(slices=slices)) == [
        f"slices[0].zones[0]: 'us-east5-b' is not a zone of us-west4, the region of "
        f"{HOST}'s cluster"]


def test_a_zone_of_the_hosts_region_is_taken() -> None:
    slices = [{"name": "b", "accelerator": "v5litepod-16", "count": 1,
               "zones": ["us-west4-b"]}]
    ev = _eval(_raw(slices=slices))
    assert ev.named("b-0", "gcp:container/nodePool:NodePool").inputs["nodeLocations"] == [
        "us-west4-b"]


def test_a_namespace_the_host_lacks_is_refused() -> None:
    raw = _raw(onCluster={"stack": HOST, "namespaces": ["nope"]})
    assert _problems(raw) == [
        f"onCluster.namespaces[0]: 'nope' is not a workload namespace of {HOST} (it has "
        "training)"]


def test_version_floors_are_the_hosts() -> None:
    # Slice classes on a host that pins no version from 1.33.3-gke.1136000: GKE fits a
    # class's node pools in the cluster's auto-provisioning limits, the host's.
    classes = [{"name": "spare", "shapes": ["v5litepod-16"], "capacity": ["spot"],
                "limits": {"chips": 32}}]
    [problem] = _problems(_raw(slices=[], sliceClasses=classes))
    assert problem.startswith("sliceClasses: the cluster of my-org/accelstack/v5e-spot does "
                              "not pin GKE 1.33.3-gke.1136000 or later")


def test_a_pool_that_needs_the_clusters_own_objects_is_refused() -> None:
    slices = [{"name": "q", "accelerator": "v5litepod-16", "count": 1,
               "capacity": {"mode": "queued"}}]
    [problem] = _problems(_raw(slices=slices))
    assert problem == ("slices[0]: v5litepod-16 (queued) cannot be a pool of a pools stack: "
                       "queued provisioning needs the cluster's AdmissionCheck; declare it in "
                       f"{HOST}")


def test_the_pools_stack_cannot_host_itself() -> None:
    with pytest.raises(ConfigError) as e:
        parse_pools(_raw(onCluster={"stack": "org/proj/v5e-extra"}), "v5e-extra")
    assert e.value.problems == ["onCluster.stack: 'org/proj/v5e-extra' is this pools stack "
                                "itself"]


def test_a_stack_without_pools_is_refused() -> None:
    with pytest.raises(ConfigError) as e:
        parse_pools({"onCluster": {"stack": HOST}}, "v5e-extra")
    assert e.value.problems[0].startswith("slices: a pools stack declares slices, "
                                          "sliceClasses or both")
@pytest.mark.parametrize("pool,why", [
    ({"accelerator": "h100-mega-80gb-8"}, "GPUDirect needs the cluster's data networks"),
    ({"accelerator": "v6e-16", "dranet": True}, "DRANET needs the cluster's claim templates"),
])
def test_gpudirect_and_dranet_pools_are_refused(pool: dict[str, Any], why: str) -> None:
    slices = [{"name": "p", "count": 1, **pool}]
    assert _problems(_raw(slices=slices)) == [
        f"slices[0]: {pool['accelerator']} (on-demand) cannot be a pool of a pools stack: "
        f"{why}; declare it in {HOST}"]


def test_a_node_pool_name_the_host_uses_is_refused() -> None:
    # A CPU pool's node pool is named after the pool: this one is a node pool of the
    # host's v5litepod-16 pool (GKE refuses a second node pool of the same name).
    slices = [{"name": "v5litepod-16-0", "accelerator": "n2-standard-8-1", "count": 1}]
    assert _problems(_raw(slices=slices)) == [
        f"slices[0].name: node pool v5litepod-16-0 exists on the cluster of {HOST}; give "
        "the pool a name of its own"]


def test_a_region_is_not_a_zone() -> None:
    slices = [{"name": "r", "accelerator": "v5litepod-16", "count": 1,
               "zones": ["us-west4"]}]
    assert _problems(_raw(slices=slices)) == [
        f"slices[0].zones[0]: 'us-west4' is not a zone of us-west4, the region of "
        f"{HOST}'s cluster"]


def test_a_problem_of_the_hosts_settings_names_the_host() -> None:
    host = _host()
    host["cluster"]["releaseChannel"] = "BOGUS"
    [problem] = _problems(host=host)
    assert problem.startswith(f"onCluster.stack: on the cluster of {HOST!r}: "
                              "releaseChannel: 'BOGUS' is not a release channel")


def test_a_dynamic_slicing_pool_is_refused() -> None:
    # Its slice controller, Topology and AdmissionCheck are the cluster's (the host's).
    host = _host()
    host["cluster"]["releaseChannel"] = "RAPID"
    slices = [{"name": "iw", "accelerator": "tpu7x-4x4x4",
               "capacity": {"mode": "reservation", "reservation": "iw-res"},
               "dynamicSlicing": {"reservationBlocks": [{"name": "b", "subBlocks": ["s"]}],
                                  "shapes": ["4x4x4"]}}]
    [problem] = _problems(_raw(slices=slices), host)
    assert problem == ("slices[0]: tpu7x-128 (reservation) cannot be a pool of a pools stack: "
                       "dynamic slicing needs the cluster's slice controller, Topology and "
                       f"AdmissionCheck; declare it in {HOST}")
