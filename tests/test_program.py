"""The Pulumi program under the SDK's mock engine: every stack, every resource's inputs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schema
from infra.contract import outputs as contract
from infra.preview import harness
from infra.specs import storage as storage_spec
from infra.preview.harness import Evaluation
from conftest import MINIMAL, STACK_FILES, evaluate_shipped

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
FIREWALL = "gcp:compute/firewall:Firewall"
SERVICE = "gcp:projects/service:Service"


def _ev(**overrides: Any) -> Evaluation:
    raw = copy.deepcopy(MINIMAL)
    raw.update(overrides)
    return harness.evaluate(raw, "test")


def _pools(ev: Evaluation) -> dict[str, dict[str, Any]]:
    return {r.name: harness._plain(r.inputs) for r in ev.of_type(NODE_POOL)}


@pytest.fixture(scope="module", params=STACK_FILES, ids=lambda p: p.name)
def stack(request: pytest.FixtureRequest) -> Evaluation:
    return evaluate_shipped(request.param)


# ----------------------------------------------------------------------------------
# Every example stack


def test_cluster_settings(stack: Evaluation) -> None:
    cfg = stack.config
    [cluster] = stack.of_type(CLUSTER)
    c = harness._plain(cluster.inputs)
    assert c["name"] == cfg.cluster_name
    assert c["project"] == cfg.project
    assert c["location"] == cfg.region
    assert c["nodeLocations"] == list(cfg.zones)
    assert c["removeDefaultNodePool"] is True
    assert c["workloadIdentityConfig"] == {"workloadPool": f"{cfg.project}.svc.id.goog"}
    assert c["datapathProvider"] == "ADVANCED_DATAPATH"
    assert c["enableShieldedNodes"] is True
    assert c["nodePoolDefaults"] == {"nodeConfigDefaults": {"gcfsConfig": {"enabled": True}}}
    assert c["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert c["loggingConfig"] == {"enableComponents": ["SYSTEM_COMPONENTS", "WORKLOADS"]}
    # GKE's metric packages the stack needs (infra/specs/observability/packages.py).
    gpus = any(p.accelerator.kind == "gpu" for p in cfg.slices)
    assert c["monitoringConfig"]["enableComponents"] == [
        "SYSTEM_COMPONENTS", "POD", *(["DCGM"] if gpus else []), "JOBSET"]
    assert c["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert c["deletionProtection"] is cfg.deletion_protection
    assert c["resourceLabels"] == dict(cfg.labels)
    assert c["releaseChannel"] == {"channel": cfg.release_channel}
    assert c["privateClusterConfig"]["enablePrivateNodes"] is True
    assert c["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "pods",
                                       "servicesSecondaryRangeName": "services"}
    sa = stack.of_type("gcp:serviceaccount/account:Account")[0]
    assert c["nodeConfig"]["serviceAccount"] == \
        f"{sa.inputs['accountId']}@{cfg.project}.iam.gserviceaccount.com"
    assert c.get("enableMultiNetworking", False) is cfg.needs_multi_networking
    if cfg.authorized_networks:
        assert c["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
            {"cidrBlock": a.cidr, "displayName": a.name} for a in cfg.authorized_networks]
    if cfg.maintenance:
        assert c["maintenancePolicy"]["recurringWindow"]["recurrence"] == \
            cfg.maintenance.recurrence


def test_node_service_account_is_least_privilege(stack: Evaluation) -> None:
    # The job identities' goodput roles (infra/specs/observability/goodput.py) are
    # granted to workload namespaces' principals, not to the nodes.
    members = [r for r in stack.of_type("gcp:projects/iAMMember:IAMMember")
               if not r.name.startswith("goodput-")]
    roles = sorted(harness._plain(r.inputs)["role"] for r in members)
    # serviceUsageConsumer: image streaming with a custom node service account (GKE's
    # image-streaming page, Requirements)
    # A stack with its own registry reads that repository only (a repository-level grant,
    # infra/specs/registry.py), not every repository of the project.
    project_wide = [] if stack.config.registry else ["roles/artifactregistry.reader"]
    assert roles == project_wide + ["roles/container.defaultNodeServiceAccount",
                                    "roles/serviceusage.serviceUsageConsumer"]
    for r in members:
        assert r.inputs["member"].startswith("serviceAccount:")


def test_node_pools_match_the_declared_slices(stack: Evaluation) -> None:
    cfg = stack.config
    pools = _pools(stack)
    expected = {"system"} | {n for p in cfg.slices for n in p.node_pool_names()}
    assert set(pools) == expected
    for pool in cfg.slices:
        a = pool.accelerator
        for i, name in enumerate(pool.node_pool_names()):
            np = pools[name]
            nc = np["nodeConfig"]
            assert np["name"] == name
            assert np["nodeLocations"] == list(pool.zones)
            assert nc["machineType"] == a.machine_type
            assert nc["imageType"] == "COS_CONTAINERD"
            assert nc["labels"]["accelstack.dev/slice-pool"] == pool.name
            assert nc["shieldedInstanceConfig"] == {"enableSecureBoot": True,
                                                    "enableIntegrityMonitoring": True}
            assert nc["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
            assert nc["resourceLabels"] == dict(cfg.labels)
            if a.kind == "tpu" and a.multi_host and pool.dynamic is not None:
                # a sub-block: placed by its workload policy (tests/test_dynamic_slicing.py)
                assert np["nodeCount"] == a.vms_per_slice
                assert "tpuTopology" not in np["placementPolicy"]
            elif a.kind == "tpu" and a.multi_host:
                assert np["nodeCount"] == a.vms_per_slice
                assert np["placementPolicy"] == {"type": "COMPACT", "tpuTopology": a.topology}
                assert "autoscaling" not in np
            else:
                assert np["autoscaling"]["totalMaxNodeCount"] == pool.count * a.vms_per_slice
            mode = pool.capacity.mode
            assert nc.get("spot", False) is (mode == "spot")
            assert nc.get("flexStart", False) is (mode in ("flex-start", "queued"))
            if mode == "spot":
                assert nc["taints"] == [{"key": "cloud.google.com/gke-spot", "value": "true",
                                         "effect": "NO_SCHEDULE"}]
            else:
                assert "taints" not in nc
            if mode == "reservation":
                value = str(pool.capacity.reservation)
                if pool.dynamic is not None:  # node pool i: its sub-block's full path
                    value = pool.dynamic.sub_blocks[i].path(value)
                assert nc["reservationAffinity"] == {
                    "consumeReservationType": "SPECIFIC_RESERVATION",
                    "key": "compute.googleapis.com/reservation-name",
                    "values": [value]}


def test_resources_live_in_components(stack: Evaluation) -> None:
    comps = {r.urn: r for r in stack.resources if not r.custom}
    assert {r.type for r in comps.values()} <= {
        "accelstack:network:ClusterNetwork", "accelstack:network:GpuDataNetworks",
        "accelstack:services:ProjectServices",
        "accelstack:cluster:GkeCluster", "accelstack:nodepool:SystemNodePool",
        "accelstack:nodepool:SliceNodePools", "accelstack:addons:ClusterAddons",
        "kubernetes:yaml/v2:ConfigGroup", "kubernetes:yaml/v2:ConfigFile",
        "accelstack:registry:WorkloadRegistry", "accelstack:storage:WorkloadStorage",
        "accelstack:storage:StorageObjects", "accelstack:pathways:PathwaysAccess",
        "accelstack:slice_classes:SliceClasses",
        "accelstack:checkpointing:MultiTierCheckpointing",
        "accelstack:observability:Observability"}
    for r in stack.resources:
        if r.custom:
            assert r.parent in comps, f"{r.type} {r.name} is not parented by a component"


# Was: no API was declared; `pulumi up` on a new project failed on the first resource whose
# API was off, and image streaming (every pool) silently needs containerfilesystem.
def test_project_services_come_first(stack: Evaluation) -> None:
    services = {harness._plain(r.inputs)["service"]: r for r in stack.of_type(SERVICE)}
    assert sorted(services) == sorted({
        "compute.googleapis.com", "container.googleapis.com",
         "containerfilesystem.googleapis.com", "iam.googleapis.com",
        *(["artifactregistry.googleapis.com"] if stack.config.registry else []),
        *storage_spec.services(stack.config),  # storage, file, ... for declared stores
        *(["storage.googleapis.com"] if stack.config.pathways else []),
        # the dashboard and alert policies (infra/specs/observability/), on by default
        *(["monitoring.googleapis.com"] if stack.config.observability.enabled else [])})
    for r in services.values():
        inputs = harness._plain(r.inputs)
        assert inputs["project"] == stack.config.project
        assert inputs["disableOnDestroy"] is False
    urns = {r.urn for r in services.values()}
    by_urn = {r.urn: r for r in stack.resources}

    def waits(r: Any, seen: set[str]) -> set[str]:
        out = set(r.dependencies)
        for d in r.dependencies:
            if d not in seen and d in by_urn:
                seen.add(d)
                out |= waits(by_urn[d], seen)
        return out
    roots = [CLUSTER, NETWORK, SUBNET, FIREWALL, "gcp:serviceaccount/account:Account",
             "gcp:projects/iAMMember:IAMMember"]
    for type_ in roots:
        for r in stack.of_type(type_):
            assert urns <= waits(r, set()), f"{r.type} {r.name} does not wait for the APIs"


# Was: on a private cluster GKE's automatic rule lets the control plane reach the nodes on
# tcp 443 and 10250 only; Kueue's and JobSet's webhooks (failurePolicy Fail) listen on
# 9443 (Kueue v0.19.2 chart webhookService targetPort; JobSet v0.12.0
# config/components/webhook/service.yaml) and Kueue's visibility APIService on 8082.
def test_private_cluster_opens_the_webhook_ports() -> None:
    ev = _ev(privateNodes=True)
    [fw] = [harness._plain(r.inputs) for r in ev.of_type(FIREWALL)]
    [account] = ev.of_type("gcp:serviceaccount/account:Account")
    assert fw == {
        "name": "test-webhooks", "project": "test-project", "network": "test-net",
        "direction": "INGRESS", "sourceRanges": [ev.config.network.master_cidr],
        "targetServiceAccounts": [f"{harness._plain(account.inputs)['accountId']}"
                                  "@test-project.iam.gserviceaccount.com"],
        "allows": [{"protocol": "tcp", "ports": ["8082", "9443"]}],
        "description": "GKE control plane to the Kueue and JobSet webhooks (accelstack)"}
    # every pool runs as the service account the rule targets
    for np in _pools(ev).values():
        assert np["nodeConfig"]["serviceAccount"] == fw["targetServiceAccounts"][0]
    assert _ev(privateNodes=False).of_type(FIREWALL) == []


def test_exports_the_contract(stack: Evaluation) -> None:
    assert stack.secret_outputs == {"accelstack.kubeconfig"}
    masked = harness.plain_outputs(stack)
    assert masked["accelstack"]["kubeconfig"] == "[secret]"
    outputs = contract.load(harness.plain_outputs(stack, reveal=True))
    cfg = stack.config
    assert outputs.contract_version == contract.CONTRACT_VERSION
    assert outputs.cluster.name == cfg.cluster_name
    assert outputs.cluster.endpoint == harness.PREVIEW_ENDPOINT
    assert "gke-gcloud-auth-plugin" in outputs.kubeconfig
    fixed = [p for p in outputs.slice_pools if not p.compute_class and not p.slice_topology]
    assert [p.name for p in fixed] == [p.name for p in cfg.slices if p.dynamic is None]
    # a dynamic slicing pool: one entry per shape (tests/test_dynamic_slicing.py)
    assert [(p.name, p.slice_topology) for p in outputs.slice_pools if p.slice_topology] == [
        (c.name, s) for c in cfg.slices if c.dynamic for s in c.dynamic.shapes]
    # then one entry per shape of each slice class (tests/test_slice_classes.py)
    assert [(p.name, p.accelerator) for p in outputs.slice_pools if p.compute_class] == [
        (c.name, a.name) for c in cfg.slice_classes for a in c.shapes]
    for info, pool in zip(fixed, [p for p in cfg.slices if p.dynamic is None]):
        assert info.accelerator == pool.accelerator.name
        assert info.slice_count == pool.count
        assert info.node_pools == tuple(pool.node_pool_names())
        assert info.capacity_mode == pool.capacity.mode
        for key, value in pool.accelerator.node_selector.items():
            assert info.node_selector[key] == value


# ----------------------------------------------------------------------------------
# Particular stacks and capacity modes


def _by_file(name: str) -> Evaluation:
    [path] = [p for p in STACK_FILES if p.name == name]
    return evaluate_shipped(path)


def test_v5e_spot_two_slices() -> None:
    ev = _by_file("Pulumi.v5e-spot.yaml")
    pools = _pools(ev)
    assert sorted(pools) == ["system", "v5litepod-16-0", "v5litepod-16-1"]
    for name in ("v5litepod-16-0", "v5litepod-16-1"):
        np = pools[name]
        assert np["nodeCount"] == 4
        assert np["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
        assert np["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
        assert np["nodeConfig"]["spot"] is True
        assert np["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    out = contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools[0]
    assert out.node_selector == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x4",
        "accelstack.dev/capacity": "spot",
        "cloud.google.com/gke-spot": "true"}
    assert pools["v5litepod-16-0"]["nodeConfig"]["labels"] == {
        "accelstack.dev/slice-pool": "v5litepod-16", "accelstack.dev/capacity": "spot"}
    assert [t["key"] for t in out.tolerations] == ["google.com/tpu", "cloud.google.com/gke-spot"]
    [nat] = ev.of_type("gcp:compute/routerNat:RouterNat")
    # Cloud NAT sends from addresses the stack reserves (predictable, exported for fleets),
    # enough for every node at 64 ports each (64,512 per address).
    addresses = ev.of_type("gcp:compute/address:Address")
    assert nat.inputs["natIpAllocateOption"] == "MANUAL_ONLY"
    assert len(nat.inputs["natIps"]) == len(addresses) >= 1
    assert all(a.inputs["addressType"] == "EXTERNAL" for a in addresses)
    cluster = harness.plain_outputs(ev, reveal=True)["accelstack"]["cluster"]
    assert cluster["natAddresses"] == [f"203.0.113.{64 + i}/32" for i in range(len(addresses))]
    from infra.specs import network as network_spec
    from infra.config.stack import parse
    big = parse({**MINIMAL, "slices": [{"accelerator": "v5p-8", "count": 600},
                                       {"name": "more", "accelerator": "v5p-8", "count": 500}]})
    assert network_spec.nat_address_count(big) == 2  # 1100 + system nodes, 64 ports each


def test_v5p_reservation() -> None:
    np = _pools(_by_file("Pulumi.v5p-reserved.yaml"))["v5p-128-0"]
    assert np["nodeCount"] == 16
    assert np["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4x4"}
    assert np["nodeConfig"]["machineType"] == "ct5p-hightpu-4t"
    assert np["nodeConfig"]["reservationAffinity"]["values"] == ["v5p-128-reservation"]


def test_trillium_four_slices() -> None:
    pools = _pools(_by_file("Pulumi.v6e-training.yaml"))
    names = [n for n in pools if n not in ("system", "pathways-head")]
    assert names == [f"v6e-256-{i}" for i in range(4)]
    # The Pathways head pool: one autoscaled n2-standard-64 pool of up to two VMs.
    head = pools["pathways-head"]
    assert head["nodeConfig"]["machineType"] == "n2-standard-64"
    assert head["autoscaling"]["totalMaxNodeCount"] == 2
    for n in names:
        assert pools[n]["nodeCount"] == 64
        assert pools[n]["placementPolicy"]["tpuTopology"] == "16x16"
        assert pools[n]["nodeConfig"]["diskSizeGb"] == 300
        assert "reservationAffinity" not in pools[n]["nodeConfig"]


def test_a3_mega_networks() -> None:
    ev = _by_file("Pulumi.a3mega.yaml")
    np = _pools(ev)["h100-mega-80gb-8"]
    nets = [harness._plain(r.inputs) for r in ev.of_type(NETWORK)]
    data = [n for n in nets if n["name"].startswith("a3mega-tcpxo-")]
    assert len(data) == 8 and all(n["mtu"] == 8244 for n in data)
    subnets = sorted((harness._plain(r.inputs) for r in ev.of_type(SUBNET)
                      if r.name.startswith("a3mega-tcpxo-")), key=lambda s: s["name"])
    assert [s["ipCidrRange"] for s in subnets] == [f"192.168.{i}.0/24" for i in range(8)]
    extra = np["networkConfig"]["additionalNodeNetworkConfigs"]
    assert extra == [{"network": f"a3mega-tcpxo-b-net-{i}", "subnetwork": f"a3mega-tcpxo-b-net-{i}-sub"}
                     for i in range(1, 9)]
    assert np["nodeConfig"]["guestAccelerators"] == [{
        "type": "nvidia-h100-mega-80gb", "count": 8,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]
    assert np["nodeConfig"]["gvnic"] == {"enabled": True}
    assert np["placementPolicy"] == {"type": "COMPACT"}
    assert np["autoscaling"] == {"totalMinNodeCount": 2, "totalMaxNodeCount": 2,
                                 "locationPolicy": "ANY"}
    assert np["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name", "values": ["a3mega-reservation"]}
    # the reservation's host maintenance interval (xpk and Cluster Toolkit: PERIODIC)
    assert np["nodeConfig"]["hostMaintenancePolicy"] == {"maintenanceInterval": "PERIODIC"}
    # node pools must wait for their data networks
    pool_comp = ev.named("h100-mega-80gb-8", "accelstack:nodepool:SliceNodePools")
    assert any("GpuDataNetworks" in d for d in pool_comp.dependencies)
    assert len([r for r in ev.of_type(FIREWALL) if "tcpxo" in r.name]) == 8


@pytest.mark.parametrize("accelerator,disks", [
    ("h100-80gb-8", 16), ("h100-mega-80gb-8", 16), ("h200-141gb-8", 32),
])
def test_local_ssd_backs_ephemeral_storage(accelerator: str, disks: int) -> None:
    # A3 machines come with Local SSD; the pool gives all of it to ephemeral storage, with
    # the machine's own count (GKE's A3 pages: --ephemeral-storage-local-ssd=count=N).
    ev = _ev(slices=[{"accelerator": accelerator, "count": 2,
                      "capacity": {"mode": "reservation", "reservation": "r"}}])
    np = _pools(ev)[accelerator]
    assert np["nodeConfig"]["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": disks}
    [pool] = contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools
    assert pool.local_ssd_gib == disks * 375


@pytest.mark.parametrize("accelerator", [
    "b200-8", "gb200-4", "gb200-4-nolssd", "l4-8", "a100-40gb-8", "v6e-8", "v5p-8",
    "n2-standard-32-1",
])
def test_no_local_ssd_setting_elsewhere(accelerator: str) -> None:
    # TPU VMs, G2/A2 (optional Local SSD the stack does not buy), the -nolssd A4X, and A4 /
    # A4X whose disk count no source gives: GKE's default, and no file cache for jobs.
    zone = {"gb200-4": "us-central1-a", "gb200-4-nolssd": "us-central1-a"}
    capacity: Any = ({"mode": "reservation", "reservation": "r"}
                     if accelerator.startswith(("b200", "gb200")) else "on-demand")
    ev = _ev(zones=[zone.get(accelerator, "us-central1-a")], gkeVersion="1.34",
             slices=[{"accelerator": accelerator, "count": 1, "capacity": capacity}])
    for name, np in _pools(ev).items():
        assert "ephemeralStorageLocalSsdConfig" not in np["nodeConfig"], name
    assert all(p.local_ssd_gib == 0
               for p in contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools)


def test_rdma_networks_for_b200() -> None:
    ev = _ev(region="us-south1", zones=["us-south1-b"],
             slices=[{"accelerator": "b200-8", "count": 4,
                      "capacity": {"mode": "reservation", "reservation": "a4-res", "block": "blk-1"}}])
    nets = {r.name: harness._plain(r.inputs) for r in ev.of_type(NETWORK)}
    # Was: the bare name 'us-south1-b-vpc-roce', which the Compute API refuses
    assert nets["test-rdma-b-rdma"]["networkProfile"] == (
        "projects/test-project/global/networkProfiles/us-south1-b-vpc-roce")
    assert nets["test-rdma-b-rdma"]["mtu"] == 8896
    assert "networkProfile" not in nets["test-rdma-b-gvnic"]
    np = _pools(ev)["b200-8"]
    extra = np["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(extra) == 9
    assert extra[0] == {"network": "test-rdma-b-gvnic", "subnetwork": "test-rdma-b-gvnic-sub"}
    assert extra[1:] == [{"network": "test-rdma-b-rdma", "subnetwork": f"test-rdma-b-rdma-sub-{i}"}
                         for i in range(8)]
    assert np["nodeConfig"]["reservationAffinity"]["values"] == ["a4-res/reservationBlocks/blk-1"]
    assert np["autoscaling"]["totalMinNodeCount"] == 4
    # RoCE VPCs take no firewall rules; the gVNIC VPC gets one
    assert [r.name for r in ev.of_type(FIREWALL) if r.name != "test-webhooks"] == [
        "test-rdma-b-gvnic-internal"]


def test_queued_multi_host_tpu() -> None:
    ev = _ev(slices=[{"accelerator": "v5p-64", "count": 2,
                      "capacity": {"mode": "queued", "maxRunDuration": "3d"}}])
    pools = _pools(ev)
    for i in range(2):
        np = pools[f"v5p-64-{i}"]
        assert np["queuedProvisioning"] == {"enabled": True}
        assert np["initialNodeCount"] == 0
        assert np["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 8,
                                     "locationPolicy": "ANY"}
        assert np["management"] == {"autoRepair": False, "autoUpgrade": True}
        assert np["nodeConfig"]["flexStart"] is True
        # queued provisioning takes its run limit from the ProvisioningRequest, not the pool
        assert "maxRunDuration" not in np["nodeConfig"]
        assert np["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    out = contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools[0]
    assert out.node_selector["cloud.google.com/gke-queued"] == "true"
    assert {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true",
            "effect": "NoSchedule"} in out.tolerations


# Was: a queued pool's maxRunDuration went to the node pool, a flex-start setting; GKE
# reads a queued node's run limit from the ProvisioningRequest's maxRunDurationSeconds.
def test_queued_max_run_duration_is_a_provisioning_request_parameter() -> None:
    from infra.specs import kueue as kueue_spec
    ev = _ev(slices=[{"name": "a", "accelerator": "v5p-64", "capacity": {
        "mode": "queued", "maxRunDuration": "3d"}},
        {"name": "b", "accelerator": "l4-1", "capacity": "queued"},
        {"name": "c", "accelerator": "l4-1", "count": 2,
         "capacity": {"mode": "flex-start", "maxRunDuration": "1d"}}])
    objs = kueue_spec.kueue_objects(ev.config)
    configs = {o["metadata"]["name"]: o["spec"] for o in objs
               if o["kind"] == "ProvisioningRequestConfig"}
    assert configs["dws-config-259200s"]["parameters"] == {"maxRunDurationSeconds": "259200"}
    assert "parameters" not in configs["dws-config"]
    checks = {o["metadata"]["name"]: o["spec"]["parameters"]["name"] for o in objs
              if o["kind"] == "AdmissionCheck"}
    assert checks == {"dws-prov-259200s": "dws-config-259200s", "dws-prov": "dws-config"}
    [cq] = [o for o in objs if o["kind"] == "ClusterQueue"]
    assert cq["spec"]["admissionChecksStrategy"]["admissionChecks"] == [
        {"name": "dws-prov-259200s", "onFlavors": ["v5p-64-queued"]},
        {"name": "dws-prov", "onFlavors": ["l4-1-queued"]}]
    # flex-start keeps the node pool's own limit
    assert _pools(ev)["c"]["nodeConfig"]["maxRunDuration"] == "86400s"
    for obj in objs:
        schema.validate(obj)


def test_flex_start_single_host_tpu() -> None:
    np = _pools(_ev(slices=[{"accelerator": "v6e-8-1vm", "count": 6, "capacity": "flex-start"}]))[
        "v6e-8-1vm"]
    assert np["nodeConfig"]["machineType"] == "ct6e-standard-8t"
    assert np["nodeConfig"]["flexStart"] is True
    assert "queuedProvisioning" not in np
    assert np["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 6,
                                 "locationPolicy": "ANY"}
    assert "placementPolicy" not in np


def test_ironwood_workload_policy() -> None:
    ev = _ev(region="us-central1", slices=[{"accelerator": "tpu7x-4x4x4", "count": 2}])
    policies = {r.name: harness._plain(r.inputs) for r in ev.of_type(POLICY)}
    assert sorted(policies) == ["tpu7x-128-0-wp", "tpu7x-128-1-wp"]
    assert policies["tpu7x-128-0-wp"]["workloadPolicy"] == {
        "type": "HIGH_THROUGHPUT", "acceleratorTopology": "4x4x4"}
    np = _pools(ev)["tpu7x-128-0"]
    # Was: COMPACT together with the policy; the workload policy goes alone
    assert np["placementPolicy"] == {"type": "COMPACT", "policyName": "test-tpu7x-128-0-wp"}
    assert np["nodeCount"] == 16
    # single-host Ironwood takes no workload policy
    ev1 = _ev(slices=[{"accelerator": "tpu7x-8", "count": 3}])
    assert ev1.of_type(POLICY) == []


def test_spot_pools_never_consume_reservations_and_no_host_maintenance_opt_in() -> None:
    ev = _ev(slices=[{"accelerator": "v5litepod-16", "capacity": "spot"},
                     {"accelerator": "v5p-8", "count": 2}])
    for name, np in _pools(ev).items():
        assert "hostMaintenancePolicy" not in np["nodeConfig"], name
    spot = _pools(ev)["v5litepod-16-0"]["nodeConfig"]
    assert spot["spot"] is True
    assert spot["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}


def test_tpu7_multi_host_workload_policy() -> None:
    # TPU7 multi-host slices are placed by a workload policy too (xpk:
    # tpu_type_requires_workload_policy for prefix tpu7).
    ev = _ev(region="us-central1", slices=[{"accelerator": "tpu7-4x4x8", "count": 1}])
    policies = {r.name: harness._plain(r.inputs) for r in ev.of_type(POLICY)}
    assert sorted(policies) == ["tpu7-256-0-wp"]
    assert policies["tpu7-256-0-wp"]["workloadPolicy"] == {
        "type": "HIGH_THROUGHPUT", "acceleratorTopology": "4x4x8"}
    assert policies["tpu7-256-0-wp"]["description"] == "TPU7 4x4x8 slice tpu7-256-0"
    np = _pools(ev)["tpu7-256-0"]
    assert np["placementPolicy"] == {"type": "COMPACT", "policyName": "test-tpu7-256-0-wp"}
    assert np["nodeCount"] == 32
    assert np["nodeConfig"]["machineType"] == "tpu7-standard-4t"


def test_node_auto_provisioning_limits() -> None:
    ev = _ev(slices=[], nodeAutoProvisioning={
        "cpu": 512, "memoryGb": 2048, "accelerators": {"tpu-v6e-slice": 256, "nvidia-l4": 16}})
    c = harness._plain(ev.of_type(CLUSTER)[0].inputs)
    ca = c["clusterAutoscaling"]
    assert ca["enabled"] is True
    assert ca["resourceLimits"] == [
        {"resourceType": "cpu", "minimum": 0, "maximum": 512},
        {"resourceType": "memory", "minimum": 0, "maximum": 2048},
        {"resourceType": "nvidia-l4", "minimum": 0, "maximum": 16},
        {"resourceType": "tpu-v6e-slice", "minimum": 0, "maximum": 256},
    ]
    outputs = contract.load(harness.plain_outputs(ev, reveal=True))
    assert outputs.auto_provisioning == {"tpu-v6e-slice": 256, "nvidia-l4": 16}


def test_existing_network_is_used_not_created() -> None:
    ev = _ev(network={"create": False, "name": "shared-vpc", "subnetwork": "gke-nodes"},
             privateNodes=True)
    assert ev.of_type(NETWORK) == [] and ev.of_type(SUBNET) == []
    assert ev.of_type("gcp:compute/routerNat:RouterNat") == []
    c = harness._plain(ev.of_type(CLUSTER)[0].inputs)
    assert (c["network"], c["subnetwork"]) == ("shared-vpc", "gke-nodes")


def test_pinned_version_without_channel() -> None:
    c = harness._plain(_ev(gkeVersion="1.33.5-gke.1080000").of_type(CLUSTER)[0].inputs)
    assert c["minMasterVersion"] == "1.33.5-gke.1080000"
    assert c["releaseChannel"] == {"channel": "UNSPECIFIED"}


def test_cpu_pool_selects_its_pool() -> None:
    ev = _ev(slices=[{"accelerator": "n2-standard-32-4", "count": 2}])
    np = _pools(ev)["n2-standard-32-4"]
    assert np["nodeConfig"]["machineType"] == "n2-standard-32"
    assert np["autoscaling"]["totalMaxNodeCount"] == 8
    assert "guestAccelerators" not in np["nodeConfig"]
    out = contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools[0]
    assert out.node_selector == {"node.kubernetes.io/instance-type": "n2-standard-32",
                                 "accelstack.dev/capacity": "on-demand",
                                 "accelstack.dev/slice-pool": "n2-standard-32-4"}
    assert out.tolerations == () and out.resource_name is None


def test_evaluation_is_deterministic() -> None:
    def snapshot(ev: Evaluation) -> list[tuple[str, str, Any]]:
        return [(r.type, r.name, harness._plain(r.inputs)) for r in ev.resources]
    path = STACK_FILES[0]
    assert snapshot(harness.evaluate_file(path)) == snapshot(harness.evaluate_file(path))


