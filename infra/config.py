"""The stack config: parsed from a stack file's ``accelstack:*`` keys into frozen dataclasses.

Everything is checked here, before the Pulumi program declares a single resource: types,
names, CIDRs, accelerator names (through the catalog) and the capacity rules GKE enforces
on node pools. Every message names the key path, the bad value and what is allowed.
This module does not import pulumi; ``infra.program`` hands it the raw config.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from infra import addons_config, catalog
from infra.addons_config import Addons, CachedImage, Queues
from infra.catalog import Accelerator
from infra.errors import ConfigError, did_you_mean, one_of, show
from infra.reader import Reader as _Reader

CAPACITY_MODES = ("on-demand", "spot", "reservation", "flex-start", "queued")
RELEASE_CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
GPU_DRIVER_VERSIONS = ("DEFAULT", "LATEST", "INSTALLATION_DISABLED")
PLACEMENTS = ("auto", "compact", "none")
DISK_TYPES = ("pd-balanced", "pd-ssd", "pd-standard", "hyperdisk-balanced")
MAX_RUN_SECONDS = 7 * 24 * 3600  # DWS flex-start VMs run for at most seven days

# GKE names: a lowercase letter first, then lowercase letters, digits and hyphens, ending
# in a letter or digit; clusters and node pools at most 40 characters.
_GKE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_PROJECT = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]\Z")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+\Z")
_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-[a-z]\Z")
_LABEL_KEY = re.compile(r"^[a-z][-_a-z0-9]{0,62}\Z")
_LABEL_VALUE = re.compile(r"^[-_a-z0-9]{0,63}\Z")
_GKE_VERSION = re.compile(r"^\d+\.\d+(\.\d+(-gke\.\d+)?)?\Z")
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?(Z|[+-]\d\d:\d\d)\Z")
_DISK_IMAGE = re.compile(r"^(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/)?global/images/"
                         r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_DURATION = re.compile(r"^(\d+)([smhd])\Z")

# Ranges GKE accepts for nodes, pods and services: RFC 1918 and RFC 6598 shared space.
_PRIVATE_RANGES = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"))

# GKE minimum versions stated in its docs, checked when a stack pins a version.
MIN_VERSION_FLEX_START = (1, 33, 0, 1712000)
MIN_VERSION_TPU7X = (1, 34, 0, 2201000)


@dataclass(frozen=True)
class Capacity:
    mode: str
    reservation: str | None = None  # reservation name, or projects/P/reservations/R
    block: str | None = None  # reservation block within it
    max_run_seconds: int | None = None  # flex-start and queued

    @property
    def consumes_reservation(self) -> bool:
        return self.mode == "reservation"

    @property
    def autoscales_from_zero(self) -> bool:
        return self.mode in ("flex-start", "queued")


@dataclass(frozen=True)
class SlicePool:
    """One entry of ``slices``: ``count`` identical slices of one accelerator."""

    name: str
    accelerator: Accelerator
    count: int
    capacity: Capacity
    zones: tuple[str, ...]
    placement: str  # "compact" or "none", resolved from "auto"
    min_count: int  # single-host pools: autoscaling floor, in VMs
    disk_size_gb: int
    disk_type: str
    gpu_driver_version: str
    labels: Mapping[str, str] = field(default_factory=dict)
    secondary_boot_disk: str | None = None  # disk image with pre-loaded container images

    @property
    def chips(self) -> int:
        return self.count * self.accelerator.chips

    @property
    def one_pool_per_slice(self) -> bool:
        """Multi-host TPU slices get a node pool each; everything else shares one pool."""
        return self.accelerator.kind == "tpu" and self.accelerator.multi_host

    def node_pool_names(self) -> list[str]:
        if self.one_pool_per_slice:
            return [f"{self.name}-{i}" for i in range(self.count)]
        return [self.name]


@dataclass(frozen=True)
class Network:
    create: bool
    name: str
    subnetwork: str
    nodes_cidr: str
    pods_cidr: str
    services_cidr: str
    pods_range_name: str
    services_range_name: str
    master_cidr: str
    mtu: int
    gpu_cidr: str  # carved into /24s for GPU data networks


@dataclass(frozen=True)
class AuthorizedNetwork:
    cidr: str
    name: str


@dataclass(frozen=True)
class MaintenanceWindow:
    start: str
    end: str
    recurrence: str


@dataclass(frozen=True)
class SystemPool:
    machine_type: str
    min_nodes: int
    max_nodes: int
    disk_size_gb: int


@dataclass(frozen=True)
class AutoProvisioning:
    cpu_max: int
    memory_gb_max: int
    accelerators: Mapping[str, int]  # NAP resource type (GKE accelerator label) -> max chips


POLICY_RULES = ("workload-identity", "node-service-account", "shielded-nodes",
                "authorized-networks", "deletion-protection", "capacity-reservation",
                "image-latest-tag", "required-labels")


@dataclass(frozen=True)
class Policy:
    production: bool = False
    required_labels: tuple[str, ...] = ()
    waivers: Mapping[str, str] = field(default_factory=dict)  # rule -> written reason


@dataclass(frozen=True)
class StackConfig:
    project: str
    region: str
    zones: tuple[str, ...]
    cluster_name: str
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
    slices: tuple[SlicePool, ...]
    auto_provisioning: AutoProvisioning | None
    addons: Addons
    queues: Queues
    image_cache: tuple[CachedImage, ...] = ()
    policy: Policy = Policy()

    @property
    def location(self) -> str:
        """Clusters are regional; a single-zone stack may still pin its node locations."""
        return self.region

    @property
    def needs_multi_networking(self) -> bool:
        return any(p.accelerator.networking != "none" for p in self.slices)


TOP_LEVEL_KEYS = (
    "project", "region", "zones", "clusterName", "network", "releaseChannel", "gkeVersion",
    "privateNodes", "privateEndpoint", "masterAuthorizedNetworks", "maintenanceWindow",
    "deletionProtection", "labels", "systemPool", "slices", "nodeAutoProvisioning",
    "addons", "queues", "imageCache", "policy",
)
NETWORK_KEYS = ("create", "name", "subnetwork", "nodesCidr", "podsCidr", "servicesCidr",
                "podsRangeName", "servicesRangeName", "masterCidr", "mtu", "gpuNetworksCidr")
SLICE_KEYS = ("name", "accelerator", "count", "capacity", "zones", "placement", "minCount",
              "diskSizeGb", "diskType", "gpuDriverVersion", "labels", "secondaryBootDisk")
CAPACITY_KEYS = ("mode", "reservation", "block", "maxRunDuration")
SYSTEM_POOL_KEYS = ("machineType", "minNodes", "maxNodes", "diskSizeGb")
NAP_KEYS = ("cpu", "memoryGb", "accelerators")


def parse(raw: Mapping[str, Any]) -> StackConfig:
    """Parse the stack's config (keys without the ``accelstack:`` prefix).

    Raises ConfigError listing every problem found; returns a fully checked config.
    """
    r = _Reader()
    top = r.obj(raw, "", TOP_LEVEL_KEYS)

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
        _check_gke_name(r, "clusterName", cluster_name)

    network = _network(r, top.get("network"), cluster_name or "cluster")

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
    maintenance = _maintenance(r, top.get("maintenanceWindow"))
    deletion_protection = r.get(top, "deletionProtection", "", bool, default=True)
    labels = _labels(r, top.get("labels"), "labels")
    system_pool = _system_pool(r, top.get("systemPool"))
    nap = _auto_provisioning(r, top.get("nodeAutoProvisioning"))

    slices_raw = r.get(top, "slices", "", list, default=[])
    pools: list[SlicePool] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(slices_raw):
        pool = _slice(r, item, f"slices[{i}]", zones, version)
        if pool is None:
            continue
        pools.append(pool)
        for np_name in pool.node_pool_names():
            if np_name == "system":
                r.fail(f"slices[{i}].name", "'system' is the name of the stack's system node "
                       "pool; give the slice pool another name")
                break
            if np_name in seen:
                r.fail(f"slices[{i}].name", f"node pool name {show(np_name)} is already used"
                       f" by slices[{seen[np_name]}]; give each pool its own name")
                break
            seen[np_name] = i
    addons = addons_config.parse_addons(r, top.get("addons"))
    queues = addons_config.parse_queues(r, top.get("queues"), pools)
    image_cache = addons_config.parse_image_cache(r, top.get("imageCache"), pools)
    policy = _policy(r, top.get("policy"))
    if not slices_raw and nap is None:
        r.fail("slices", "declares no slice pools and nodeAutoProvisioning is off; a stack "
               "needs at least one source of accelerators")

    if r.problems:
        raise ConfigError(r.problems)
    assert project and region and cluster_name and system_pool
    cfg = StackConfig(
        project=project, region=region, zones=tuple(zones), cluster_name=cluster_name,
        network=network, release_channel=channel, gke_version=version,
        private_nodes=private_nodes, private_endpoint=private_endpoint,
        authorized_networks=tuple(authorized), maintenance=maintenance,
        deletion_protection=deletion_protection, labels=labels, system_pool=system_pool,
        slices=tuple(pools), auto_provisioning=nap, addons=addons, queues=queues,
        image_cache=image_cache, policy=policy,
    )
    from infra.network_spec import subnets_needed  # late: network_spec reads this module

    need = subnets_needed(cfg)
    prefix = ipaddress.ip_network(network.gpu_cidr).prefixlen
    have = 2 ** (24 - prefix) if prefix <= 24 else 0
    if need > have:
        raise ConfigError([f"network.gpuNetworksCidr: {show(network.gpu_cidr)} holds {have} /24 "
                           f"subnets; the stack's GPU data networks need {need}"])
    return cfg


def _check_gke_name(r: _Reader, path: str, name: str, limit: int = 40) -> None:
    r.check(bool(_GKE_NAME.match(name)) and len(name) <= limit, path,
            f"{show(name)} is not a valid GKE name (1-{limit} lowercase letters, digits and "
            "hyphens, starting with a letter and ending with a letter or digit)")


def _cidr(r: _Reader, raw: Mapping[str, Any], key: str, path: str, default: str) -> str:
    value = r.get(raw, key, path, str, default=default)
    try:
        net = ipaddress.ip_network(value, strict=True)
    except ValueError:
        r.fail(f"{path}.{key}", f"{show(value)} is not a CIDR block such as 10.0.0.0/20")
        return default
    if not any(net.subnet_of(p) for p in _PRIVATE_RANGES  # type: ignore[arg-type]
               if p.version == net.version):
        r.fail(f"{path}.{key}", f"{show(value)} is not inside a private range "
               f"({one_of(str(p) for p in _PRIVATE_RANGES)})")
    return str(value)


def _network(r: _Reader, value: Any, cluster: str) -> Network:
    path = "network"
    raw = r.obj(value, path, NETWORK_KEYS)
    create = r.get(raw, "create", path, bool, default=True)
    name = r.get(raw, "name", path, str, default=f"{cluster}-net" if create else None,
                 required=not create)
    subnet = r.get(raw, "subnetwork", path, str,
                   default=f"{cluster}-nodes" if create else None, required=not create)
    for key, val in (("name", name), ("subnetwork", subnet)):
        if val is not None and key in raw:  # defaults derive from the checked cluster name
            r.check(bool(_GKE_NAME.match(val)) and len(val) <= 63, f"{path}.{key}",
                    f"{show(val)} is not a valid VPC resource name (1-63 lowercase letters, "
                    "digits and hyphens)")
    nodes = _cidr(r, raw, "nodesCidr", path, "10.0.0.0/20")
    pods = _cidr(r, raw, "podsCidr", path, "10.16.0.0/14")
    services = _cidr(r, raw, "servicesCidr", path, "10.20.0.0/20")
    master = _cidr(r, raw, "masterCidr", path, "172.16.0.0/28")
    gpu = _cidr(r, raw, "gpuNetworksCidr", path, "192.168.0.0/16")
    if not r.problems or all(not p.startswith("network.") for p in r.problems):
        nets = {k: ipaddress.ip_network(v) for k, v in
                (("nodesCidr", nodes), ("podsCidr", pods), ("servicesCidr", services),
                 ("masterCidr", master), ("gpuNetworksCidr", gpu))}
        keys = list(nets)
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                if nets[a].overlaps(nets[b]):
                    r.fail(f"{path}.{b}", f"{show(str(nets[b]))} overlaps {path}.{a} "
                           f"{show(str(nets[a]))}; the ranges must be disjoint")
        if nets["masterCidr"].prefixlen != 28:
            r.fail(f"{path}.masterCidr", f"{show(master)} must be a /28 (GKE's control-plane range)")
    mtu = r.get(raw, "mtu", path, int, default=8896)
    r.check(1300 <= mtu <= 8896, f"{path}.mtu", f"{mtu} is outside 1300-8896")
    return Network(
        create=create, name=name or "", subnetwork=subnet or "", nodes_cidr=nodes,
        pods_cidr=pods, services_cidr=services,
        pods_range_name=r.get(raw, "podsRangeName", path, str, default="pods"),
        services_range_name=r.get(raw, "servicesRangeName", path, str, default="services"),
        master_cidr=master, mtu=mtu, gpu_cidr=gpu,
    )


def _authorized_networks(r: _Reader, value: Any) -> list[AuthorizedNetwork]:
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


def _maintenance(r: _Reader, value: Any) -> MaintenanceWindow | None:
    if value is None:
        return None
    path = "maintenanceWindow"
    raw = r.obj(value, path, ("start", "end", "recurrence"))
    start = r.get(raw, "start", path, str, required=True)
    end = r.get(raw, "end", path, str, required=True)
    rec = r.get(raw, "recurrence", path, str, required=True)
    for key, val in (("start", start), ("end", end)):
        if val is not None:
            r.check(bool(_RFC3339.match(val)), f"{path}.{key}",
                    f"{show(val)} is not an RFC 3339 time such as 2026-01-03T02:00:00Z")
    if rec is not None:
        r.check(rec.startswith("FREQ="), f"{path}.recurrence",
                f"{show(rec)} is not an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU")
    if start and end and rec:
        return MaintenanceWindow(start, end, rec)
    return None


def _labels(r: _Reader, value: Any, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        r.fail(path, f"{show(value)} is not a mapping of label keys to values")
        return {}
    out = {}
    for k, v in value.items():
        if not _LABEL_KEY.match(str(k)):
            r.fail(f"{path}.{k}", "is not a GCP label key (lowercase letters, digits, '-' and "
                   "'_', starting with a letter, at most 63 characters)")
        elif not isinstance(v, str) or not _LABEL_VALUE.match(v):
            r.fail(f"{path}.{k}", f"{show(v)} is not a GCP label value (at most 63 lowercase "
                   "letters, digits, '-' and '_')")
        else:
            out[str(k)] = v
    return out


def _system_pool(r: _Reader, value: Any) -> SystemPool:
    path = "systemPool"
    raw = r.obj(value, path, SYSTEM_POOL_KEYS)
    machine = r.get(raw, "machineType", path, str, default="e2-standard-8")
    lo = r.get(raw, "minNodes", path, int, default=1)
    hi = r.get(raw, "maxNodes", path, int, default=3)
    disk = r.get(raw, "diskSizeGb", path, int, default=100)
    r.check(lo >= 1, f"{path}.minNodes", f"{lo} is below 1; the system pool runs kube-system,"
            " Kueue and JobSet controllers and must keep a node")
    r.check(hi >= lo, f"{path}.maxNodes", f"{hi} is below minNodes ({lo})")
    r.check(disk >= 10, f"{path}.diskSizeGb", f"{disk} is below GKE's 10 GB minimum")
    return SystemPool(machine, lo, hi, disk)


def _auto_provisioning(r: _Reader, value: Any) -> AutoProvisioning | None:
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


def _policy(r: _Reader, value: Any) -> Policy:
    path = "policy"
    raw = r.obj(value, path, ("production", "requiredLabels", "waivers"))
    production = r.get(raw, "production", path, bool, default=False)
    labels = r.get(raw, "requiredLabels", path, list, default=[])
    for i, key in enumerate(labels):
        if not isinstance(key, str) or not _LABEL_KEY.match(key):
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
    return Policy(production, tuple(labels), waivers)


def _duration_seconds(r: _Reader, value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        m = _DURATION.match(str(value))
        if not m:
            r.fail(path, f"{show(value)} is not a duration such as 86400s, 72h or 7d")
            return None
        seconds = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if not 0 < seconds <= MAX_RUN_SECONDS:
        r.fail(path, f"{show(value)} is outside 1s-7d (GKE: flex-start VMs run at most seven days)")
        return None
    return seconds


def _capacity(r: _Reader, value: Any, path: str) -> Capacity | None:
    if isinstance(value, str):
        value = {"mode": value}
    if isinstance(value, Mapping) and "spot" in value:
        r.fail(f"{path}.spot", "flex-start, queued and spot are distinct capacity modes and "
               "cannot be combined (GKE: flex-start VMs are not Spot VMs); set mode: spot or "
               "mode: flex-start")
        value = {k: v for k, v in value.items() if k != "spot"}
    raw = r.obj(value, path, CAPACITY_KEYS)
    mode = r.get(raw, "mode", path, str, default="on-demand")
    if mode not in CAPACITY_MODES:
        r.fail(f"{path}.mode", f"{show(mode)} is not a capacity mode"
               f"{did_you_mean(mode, CAPACITY_MODES)} (allowed: {one_of(CAPACITY_MODES)})")
        return None
    reservation = r.get(raw, "reservation", path, str)
    block = r.get(raw, "block", path, str)
    if mode == "reservation":
        if reservation is None:
            r.fail(f"{path}.reservation", "is required with mode: reservation (the name of a "
                   "specific reservation, or projects/PROJECT/reservations/NAME when shared)")
        elif not re.match(r"^(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/reservations/)?"
                          r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z", reservation):
            r.fail(f"{path}.reservation", f"{show(reservation)} is not a reservation name or "
                   "projects/PROJECT/reservations/NAME")
        if block is not None and not _GKE_NAME.match(block):
            r.fail(f"{path}.block", f"{show(block)} is not a reservation block name")
    else:
        for key, val in (("reservation", reservation), ("block", block)):
            if val is not None:
                r.fail(f"{path}.{key}", f"{mode} pools do not consume reservations (GKE: only "
                       "mode: reservation may set reservation affinity; spot, flex-start and "
                       "queued nodes are provisioned without one)")
    max_run = _duration_seconds(r, raw.get("maxRunDuration"), f"{path}.maxRunDuration")
    if max_run is not None and mode not in ("flex-start", "queued"):
        r.fail(f"{path}.maxRunDuration", f"only flex-start and queued pools have a maximum run "
               f"duration, not {mode}")
        max_run = None
    return Capacity(mode, reservation if mode == "reservation" else None,
                    block if mode == "reservation" else None, max_run)


def _version_tuple(version: str) -> tuple[int, ...]:
    nums = [int(x) for x in re.findall(r"\d+", version)]
    return tuple(nums + [0] * (4 - len(nums)))


def _slice(r: _Reader, item: Any, path: str, zones: list[str],
           version: str | None) -> SlicePool | None:
    before = len(r.problems)
    raw = r.obj(item, path, SLICE_KEYS)
    if not raw:
        if item is not None and before == len(r.problems):
            r.fail(path, "is empty; a slice pool needs at least an accelerator")
        return None
    accel_name = r.get(raw, "accelerator", path, str, required=True)
    accel: Accelerator | None = None
    if accel_name is not None:
        try:
            accel = catalog.resolve(accel_name)
        except catalog.UnknownAccelerator as e:
            r.fail(f"{path}.accelerator", str(e))
    count = r.get(raw, "count", path, int, default=1)
    r.check(count >= 1, f"{path}.count", f"{count} is below 1")
    capacity = _capacity(r, raw.get("capacity"), f"{path}.capacity")
    pool_zones = r.get(raw, "zones", path, list, default=zones[:1])
    for j, z in enumerate(pool_zones):
        if z not in zones:
            r.fail(f"{path}.zones[{j}]", f"{show(z)} is not one of the stack's zones "
                   f"({one_of(zones)})")
    if "zones" in raw and not pool_zones:
        r.fail(f"{path}.zones", "must list at least one zone")
    placement = r.get(raw, "placement", path, str, default="auto")
    if placement not in PLACEMENTS:
        r.fail(f"{path}.placement", f"{show(placement)} is not a placement; allowed: "
               f"{one_of(PLACEMENTS)}")
    min_count = r.get(raw, "minCount", path, int)
    disk = r.get(raw, "diskSizeGb", path, int, default=200)
    r.check(disk >= 10, f"{path}.diskSizeGb", f"{disk} is below GKE's 10 GB minimum")
    disk_type = r.get(raw, "diskType", path, str, default="pd-balanced")
    if disk_type not in DISK_TYPES:
        r.fail(f"{path}.diskType", f"{show(disk_type)} is not a boot disk type; allowed: "
               f"{one_of(DISK_TYPES)}")
    driver = r.get(raw, "gpuDriverVersion", path, str, default="LATEST")
    if driver not in GPU_DRIVER_VERSIONS:
        r.fail(f"{path}.gpuDriverVersion", f"{show(driver)} is not a GKE GPU driver version; "
               f"allowed: {one_of(GPU_DRIVER_VERSIONS)}")
    labels = _labels(r, raw.get("labels"), f"{path}.labels")
    boot_disk = r.get(raw, "secondaryBootDisk", path, str)
    if boot_disk is not None and not _DISK_IMAGE.match(boot_disk):
        r.fail(f"{path}.secondaryBootDisk", f"{show(boot_disk)} is not a disk image "
               "(global/images/NAME or projects/PROJECT/global/images/NAME)")
    name = r.get(raw, "name", path, str, default=accel.name if accel else None)
    if accel is None or capacity is None or name is None or len(r.problems) > before:
        return None

    suffix_len = len(f"-{count - 1}") if accel.kind == "tpu" and accel.multi_host else 0
    _check_gke_name(r, f"{path}.name", name, limit=40 - suffix_len)
    if accel.kind != "gpu" and "gpuDriverVersion" in raw:
        r.fail(f"{path}.gpuDriverVersion", f"applies to GPU pools only, not {accel.name}")

    # The capacity rules GKE enforces, checked before anything is declared.
    mode = capacity.mode
    if placement == "auto":
        placement = _default_placement(accel, mode)
    if placement == "compact" and len(pool_zones) > 1:
        r.fail(f"{path}.zones", f"{one_of(pool_zones)}: compact placement needs a single zone "
               "(GKE places a compact node pool's nodes in one zone)")
    elif accel.kind == "tpu" and accel.multi_host and len(pool_zones) > 1:
        r.fail(f"{path}.zones", f"{one_of(pool_zones)}: a multi-host TPU slice lives in one "
               "zone; list a single zone")
    multi = accel.kind == "tpu" and accel.multi_host
    if placement == "compact" and mode == "queued" and not multi:
        r.fail(f"{path}.placement", "compact placement is not supported with queued "
               "provisioning (GKE: queued provisioning node pools take no compact placement "
               "policy; only a multi-host TPU slice keeps its topology placement)")
    if accel.kind == "tpu" and accel.multi_host and placement != "compact":
        r.fail(f"{path}.placement", f"{show(placement)}: a multi-host TPU slice "
               f"({accel.name}) is placed as one compact unit with its topology; remove "
               "placement or set it to compact")
    if accel.family == "tpu7x" and mode == "queued" and accel.multi_host:
        r.fail(f"{path}.capacity.mode", "queued provisioning does not support multi-host "
               "TPU7x slices, which need a workload policy; use flex-start, spot, "
               "reservation or on-demand")
    if mode == "flex-start" and accel.family == "v4":
        r.fail(f"{path}.capacity.mode", "flex-start does not support TPU v4 (GKE: flex-start "
               "supports TPU v5e and later)")
    if min_count is not None:
        if multi:
            r.fail(f"{path}.minCount", f"multi-host TPU slices ({accel.name}) are created "
                   "whole; minCount applies to single-host and GPU pools only")
        elif capacity.autoscales_from_zero and min_count != 0:
            r.fail(f"{path}.minCount", f"{min_count}: {mode} pools must autoscale from zero "
                   "(GKE: flex-start and queued provisioning need --num-nodes=0 with "
                   "autoscaling)")
        elif not 0 <= min_count <= count:
            r.fail(f"{path}.minCount", f"{min_count} is outside 0-{count} (count)")
    if min_count is None:
        min_count = count if mode == "reservation" else 0
    if version is not None:
        v = _version_tuple(version)
        full = len(version.split(".")) > 2
        if mode in ("flex-start", "queued") and (
                v[:2] < MIN_VERSION_FLEX_START[:2] or full and v < MIN_VERSION_FLEX_START):
            r.fail(f"{path}.capacity.mode", f"{mode} needs GKE 1.33.0-gke.1712000 or later; "
                   f"gkeVersion is {version}")
        if accel.family == "tpu7x" and (
                v[:2] < MIN_VERSION_TPU7X[:2] or full and v < MIN_VERSION_TPU7X):
            r.fail(f"{path}.accelerator", f"TPU7x (Ironwood) needs GKE 1.34.0-gke.2201000 or "
                   f"later; gkeVersion is {version}")
    if len(r.problems) > before:
        return None
    return SlicePool(
        name=name, accelerator=accel, count=count, capacity=capacity, zones=tuple(pool_zones),
        placement=placement, min_count=min_count, disk_size_gb=disk, disk_type=disk_type,
        gpu_driver_version=driver, labels=labels, secondary_boot_disk=boot_disk,
    )


def _default_placement(accel: Accelerator, mode: str) -> str:
    if accel.kind == "tpu":
        return "compact" if accel.multi_host else "none"
    if accel.kind == "gpu" and accel.networking != "none" and mode in ("on-demand", "reservation"):
        # GPUDirect machines are placed close together; flex-start and queued capacity is
        # placed by DWS itself and spot capacity is taken wherever it is.
        return "compact"
    return "none"

