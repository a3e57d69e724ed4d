"""The cluster-wide part of the stack config: where the cluster lives and how it is run.

Project, region and zones, the cluster's name, network, version, control-plane access,
maintenance, labels, the system node pool, node auto-provisioning and the policy settings.
Sits above the network layer and below the slice pools, which need the zones and the
version parsed here. Pure; no pulumi.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Mapping

from infra.catalog import tables as catalog
from infra.catalog import machine_shapes
from infra.config.fields import (LABEL_KEY, MAX_NODES_PER_POOL_ZONE, check_gke_name,
                                 check_max_pods, parse_labels)
from infra.config.network import Network, parse_network
from infra.config.errors import did_you_mean, one_of, show
from infra.config import maintenance as maintenance_config
from infra.config.reader import Reader
from infra.contract import maintenance as maintenance_contract
from infra.record import field, record

RELEASE_CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
SYSTEM_POOL_KEYS = ("machineType", "minNodes", "maxNodes", "diskSizeGb", "maxPodsPerNode")
NAP_KEYS = ("cpu", "memoryGb", "accelerators")
POLICY_RULES = ("workload-identity", "node-service-account", "shielded-nodes",
                "authorized-networks", "deletion-protection", "capacity-reservation",
                "image-latest-tag", "required-labels", "accelerator-auto-repair",
                "plain-secret-config", "public-bucket", "budget")

_PROJECT = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]\Z")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+\Z")
_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-[a-z]\Z")
_GKE_VERSION = re.compile(r"^\d+\.\d+(\.\d+(-gke\.\d+)?)?\Z")


@record
class AuthorizedNetwork:
    cidr: str
    name: str


# The window (start, end, recurrence), checked in infra/config/maintenance.py.
MaintenanceWindow = maintenance_contract.Window


@record
class SystemPool:
    machine_type: str
    min_nodes: int
    max_nodes: int  # per zone
    disk_size_gb: int
    max_pods_per_node: int | None = None  # None: GKE's default (110)


@record
class AutoProvisioning:
    cpu_max: int
    memory_gb_max: int
    accelerators: Mapping[str, int]  # NAP resource type (GKE accelerator label) -> max chips


@record
class Policy:
    production: bool = False
    required_labels: tuple[str, ...] = ()
    waivers: Mapping[str, str] = field(default_factory=dict)  # rule -> written reason
    # The most the stack may cost per hour while it stands, in USD (the budget rule,
    # infra/policy/rules.py, prices it with infra/cost); None: no budget.
    budget_per_hour: float | None = None


@record
class Cluster:
    """The cluster-wide settings; None where a required value was missing or bad."""

    project: str | None
    region: str | None
    zones: tuple[str, ...]
    cluster_name: str | None
    network: Network
    release_channel: str | None
    gke_version: str | None
    private_nodes: bool
    private_endpoint: bool
    authorized_networks: tuple[AuthorizedNetwork, ...]
    maintenance: MaintenanceWindow | None
    deletion_protection: bool
    labels: Mapping[str, str]
    system_pool: SystemPool
    auto_provisioning: AutoProvisioning | None
    dns_endpoint: bool = False
    dns_k8s_tokens: bool = False  # Kubernetes tokens accepted at the DNS endpoint
    exclusions: tuple[maintenance_contract.Exclusion, ...] = ()  # maintenanceExclusions


def parse_cluster(r: Reader, top: Mapping[str, Any]) -> Cluster:
    """Everything of ``top`` but the slice pools, the add-ons and the policy, in key order."""
    project = r.get(top, "project", "", str, required=True)
    if project is not None:
        r.check(bool(_PROJECT.match(project)), "project",
                f"{show(project)} is not a GCP project ID (6-30 lowercase letters, digits, "
                "hyphens; starts with a letter)")
    region = r.get(top, "region", "", str, required=True)
    if region is not None:
        r.check(bool(_REGION.match(region)), "region",
                f"{show(region)} is not a GCP region such as us-central1")
    zones_raw = r.get(top, "zones", "", list, required=True)
    zones: list[str] = []
    for i, z in enumerate(zones_raw or []):
        m = _ZONE.match(z) if isinstance(z, str) else None
        if not m:
            r.fail(f"zones[{i}]", f"{show(z)} is not a GCP zone such as us-central1-a")
        elif region and m.group("region") != region:
            r.fail(f"zones[{i}]", f"{show(z)} is not in region {show(region)}")
        else:
            zones.append(z)
    if zones_raw is not None and not zones_raw:
        r.fail("zones", "must list at least one zone")
    if len(set(zones)) != len(zones):
        r.fail("zones", "lists a zone twice")

    cluster_name = r.get(top, "clusterName", "", str, required=True)
    if cluster_name is not None:
        check_gke_name(r, "clusterName", cluster_name)

    network = parse_network(r, top.get("network"), cluster_name or "cluster")

    channel = r.get(top, "releaseChannel", "", str)
    if channel is not None:
        channel = channel.upper()
        r.check(channel in RELEASE_CHANNELS, "releaseChannel",
                f"{show(top['releaseChannel'])} is not a release channel; allowed: "
                f"{one_of(RELEASE_CHANNELS)}")
    version = r.get(top, "gkeVersion", "", str)
    if version is not None:
        r.check(bool(_GKE_VERSION.match(version)), "gkeVersion",
                f"{show(version)} is not a GKE version such as 1.33 or 1.33.5-gke.1080000")
    if channel is None and version is None:
        channel = "REGULAR"

    private_nodes = r.get(top, "privateNodes", "", bool, default=True)
    private_endpoint = r.get(top, "privateEndpoint", "", bool, default=False)
    if private_endpoint and not private_nodes:
        r.fail("privateEndpoint", "true needs privateNodes: true")

    authorized = _authorized_networks(r, top.get("masterAuthorizedNetworks"))
    dns_endpoint, dns_k8s_tokens = _dns_endpoint(r, top.get("dnsEndpoint"))
    maintenance = maintenance_config.parse_window(r, top.get("maintenanceWindow"), channel)
    exclusions = maintenance_config.parse_exclusions(r, top.get("maintenanceExclusions"),
                                                     channel, maintenance)
    deletion_protection = r.get(top, "deletionProtection", "", bool, default=True)
    labels = parse_labels(r, top.get("labels"), "labels")
    system_pool = _system_pool(r, top.get("systemPool"))
    nap = _auto_provisioning(r, top.get("nodeAutoProvisioning"))
    return Cluster(
        project=project, region=region, zones=tuple(zones), cluster_name=cluster_name,
        network=network, release_channel=channel,
        gke_version=version, private_nodes=private_nodes, private_endpoint=private_endpoint,
        authorized_networks=tuple(authorized), maintenance=maintenance,
        deletion_protection=deletion_protection, labels=labels, system_pool=system_pool,
        auto_provisioning=nap, dns_endpoint=dns_endpoint, dns_k8s_tokens=dns_k8s_tokens,
        exclusions=exclusions,
    )


DNS_ENDPOINT_KEYS = ("k8sTokens",)


def _dns_endpoint(r: Reader, value: Any) -> tuple[bool, bool]:
    """``dnsEndpoint``: true, false, or a mapping that turns the endpoint on with options.

    GKE's DNS-based control-plane endpoint is reachable from any network that reaches
    Google APIs; requests carrying a Google identity are authorised by IAM
    (container.clusters.connect). ``k8sTokens: true`` also lets requests that carry a
    Kubernetes token (a ServiceAccount's) in through it: the GKE API's
    ControlPlaneEndpointsConfig.DNSEndpointConfig.enable_k8s_tokens_via_dns ("Controls
    whether the k8s token auth is allowed via DNS", google-cloud-container's
    ControlPlaneEndpointsConfig.DNSEndpointConfig reference,
    https://docs.cloud.google.com/python/docs/reference/container/latest/google.cloud.container_v1beta1.types.ControlPlaneEndpointsConfig.DNSEndpointConfig);
    without it such a request gets 401 Unauthorized
    (terraform-google-modules/terraform-google-kubernetes-engine#2578,
    crossplane-contrib/provider-upjet-gcp#988). A fleet's manager reaches a worker with a
    private endpoint that way (docs/fleets.md)."""
    if value is None or isinstance(value, bool):
        return bool(value), False
    if not isinstance(value, Mapping):
        r.fail("dnsEndpoint", f"{show(value)} is not true, false or a mapping such as "
               "{k8sTokens: true}")
        return False, False
    raw = r.obj(value, "dnsEndpoint", DNS_ENDPOINT_KEYS)
    tokens = r.get(raw, "k8sTokens", "dnsEndpoint", bool, default=False)
    return True, bool(tokens)


def _authorized_networks(r: Reader, value: Any) -> list[AuthorizedNetwork]:
    if value is None:
        return []
    if not isinstance(value, list):
        r.fail("masterAuthorizedNetworks", f"{show(value)} is not a list")
        return []
    out = []
    for i, item in enumerate(value):
        path = f"masterAuthorizedNetworks[{i}]"
        raw = r.obj(item, path, ("cidr", "name"))
        cidr = r.get(raw, "cidr", path, str, required=True)
        if cidr is not None:
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError:
                r.fail(f"{path}.cidr", f"{show(cidr)} is not a CIDR block")
                continue
            out.append(AuthorizedNetwork(cidr, r.get(raw, "name", path, str, default=cidr)))
    return out


def _system_pool(r: Reader, value: Any) -> SystemPool:
    path = "systemPool"
    raw = r.obj(value, path, SYSTEM_POOL_KEYS)
    machine = r.get(raw, "machineType", path, str, default="e2-standard-8")
    lo = r.get(raw, "minNodes", path, int, default=1)
    hi = r.get(raw, "maxNodes", path, int, default=3)
    disk = r.get(raw, "diskSizeGb", path, int, default=100)
    r.check(lo >= 1, f"{path}.minNodes", f"{lo} is below 1; the system pool runs kube-system,"
            " Kueue and JobSet controllers and must keep a node")
    r.check(hi >= lo, f"{path}.maxNodes", f"{hi} is below minNodes ({lo})")
    r.check(hi <= MAX_NODES_PER_POOL_ZONE, f"{path}.maxNodes", f"{hi} is above GKE's "
            f"{MAX_NODES_PER_POOL_ZONE:,} nodes per node pool per zone")
    r.check(disk >= 10, f"{path}.diskSizeGb", f"{disk} is below GKE's 10 GB minimum")
    problem = machine_shapes.problem(machine)
    if problem:
        r.fail(f"{path}.machineType", problem)
    return SystemPool(machine, lo, hi, disk, check_max_pods(r, raw, path))


def _auto_provisioning(r: Reader, value: Any) -> AutoProvisioning | None:
    if value is None or value is False:
        return None
    path = "nodeAutoProvisioning"
    raw = r.obj(value, path, NAP_KEYS)
    cpu = r.get(raw, "cpu", path, int, default=1000)
    mem = r.get(raw, "memoryGb", path, int, default=4000)
    r.check(cpu > 0, f"{path}.cpu", f"{cpu} must be positive")
    r.check(mem > 0, f"{path}.memoryGb", f"{mem} must be positive")
    accel_raw = r.get(raw, "accelerators", path, dict, default={})
    known = {g.gke_accelerator for g in catalog.TPU_GENERATIONS} | {
        m.gke_accelerator for m in catalog.GPU_MODELS}
    accels: dict[str, int] = {}
    for key, limit in accel_raw.items():
        where = f"{path}.accelerators.{key}"
        if key not in known:
            r.fail(where, f"{show(key)} is not a GKE accelerator type{did_you_mean(key, known)}"
                   f" (allowed: {one_of(sorted(known))})")
        elif isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            r.fail(where, f"{show(limit)} is not a positive chip count")
        else:
            accels[key] = limit
    if not accel_raw:
        r.fail(f"{path}.accelerators", "lists no accelerator limits; auto-provisioning "
               "creates accelerator pools only up to these limits")
    return AutoProvisioning(cpu, mem, accels)


def parse_policy(r: Reader, value: Any) -> Policy:
    path = "policy"
    raw = r.obj(value, path, ("production", "requiredLabels", "waivers", "budgetPerHour"))
    production = r.get(raw, "production", path, bool, default=False)
    labels = r.get(raw, "requiredLabels", path, list, default=[])
    for i, key in enumerate(labels):
        if not isinstance(key, str) or not LABEL_KEY.match(key):
            r.fail(f"{path}.requiredLabels[{i}]", f"{show(key)} is not a GCP label key")
    waivers: dict[str, str] = {}
    for i, item in enumerate(r.get(raw, "waivers", path, list, default=[])):
        wpath = f"{path}.waivers[{i}]"
        w = r.obj(item, wpath, ("rule", "reason"))
        rule = r.get(w, "rule", wpath, str, required=True)
        reason = r.get(w, "reason", wpath, str, required=True)
        if rule is not None and rule not in POLICY_RULES:
            r.fail(f"{wpath}.rule", f"{show(rule)} is not a policy rule"
                   f"{did_you_mean(rule, POLICY_RULES)} (rules: {one_of(POLICY_RULES)})")
        elif reason is not None and len(reason.strip()) < 10:
            r.fail(f"{wpath}.reason", "a waiver needs a written reason (at least 10 characters)"
                   " that reviewers can judge")
        elif rule is not None and reason is not None:
            if rule in waivers:
                r.fail(f"{wpath}.rule", f"{show(rule)} is waived twice")
            waivers[rule] = reason.strip()
    budget = r.get(raw, "budgetPerHour", path, (int, float))
    if budget is not None and budget <= 0:
        r.fail(f"{path}.budgetPerHour", f"{show(budget)} is not a positive number of US "
               "dollars per hour")
        budget = None
    return Policy(production, tuple(labels), waivers,
                  float(budget) if budget is not None else None)
