"""The stack config: parsed from a stack file's ``accelstack:*`` keys into frozen dataclasses.

Everything is checked before the Pulumi program declares a single resource: types, names,
CIDRs, accelerator names (through the catalog) and the capacity rules GKE enforces on node
pools. Every message names the key path, the bad value and what is allowed.

The parser is built in layers that import one way only, each small enough to read at once:

    infra.config.errors, infra.config.reader, infra.config.fields   messages, the typed reader, names, labels
    infra.config.network                              network CIDRs and GPU subnet arithmetic
    infra.config.maintenance                          maintenance window, exclusions, pool upgrades
    infra.config.cluster                              project, zones, cluster, system pool, NAP
    infra.config.capacity, infra.config.dranet        a slice pool's capacity; its DRANET
    infra.config.slices                               slice pools and their capacity rules
    infra.config.slice_classes                        slice classes (GKE ComputeClasses)
    infra.config.addons                               add-on versions, queues, image cache
    infra.config.registry                               the workload image repository
    infra.config.storage                              stores, job identities and their grants
    infra.config.pathways                             the Pathways head pool, scratch, images
    infra.config.checkpointing                        multi-tier checkpointing (pools, bucket, RAM)
    infra.config.tensorboard                          the Vertex AI TensorBoard instance
    infra.config.replace                              allowReplace: allowances to replace pools
    infra.config.stack (this module)                        StackConfig: parse composes the layers

This module re-exports the layers' public names, so ``from infra.config.stack import SlicePool``
keeps working. It does not import pulumi; ``infra.program`` hands it the raw config.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping, Sequence

from infra.catalog import gke_versions
from infra.catalog.gke_versions import GkeVersion
from infra.config import addons as addons_config
from infra.config.addons import Addons, CachedImage, Queues
from infra.config.cluster import (NAP_KEYS, POLICY_RULES, RELEASE_CHANNELS, SYSTEM_POOL_KEYS,
                                  AuthorizedNetwork, AutoProvisioning, MaintenanceWindow,
                                  Policy, SystemPool, parse_cluster, parse_policy)
from infra.config.fields import DEFAULT_PODS_PER_NODE, MAX_NODES_PER_CLUSTER
from infra.config.network import (NETWORK_KEYS, Network, address_problems, gpu_cidr_problem,
                                  subnets_needed)
from infra.config.storage import Storage, Store, check_lustre_grants, parse_storage
from infra.config.pathways import Pathways, parse_pathways, resolve_scratch
from infra.config.checkpointing import Checkpointing, parse_checkpointing
from infra.config.tensorboard import VertexTensorboard, parse_tensorboard
from infra.config.observability import Observability, parse_observability
from infra.config.capacity import (CAPACITY_KEYS, CAPACITY_MODES, MAX_RUN_SECONDS,
                                   MIN_VERSION_FLEX_START, Capacity)
from infra.config.slices import (DISK_TYPES, GPU_DRIVER_VERSIONS, MIN_VERSION_TPU7X, PLACEMENTS,
                                 SLICE_KEYS, SlicePool, parse_slices)
from infra.config.errors import ConfigError
from infra.config import adopted as adopted_config
from infra.config.adopted import AdoptSettings
from infra.config.dynamic_slicing import check_addons as check_dynamic_addons
from infra.config.reader import Reader
from infra.config.slice_classes import SliceClass, parse_slice_classes
from infra.config.secrets import SECRET_KEYS
from infra.config.replace import Allowance, parse_allow_replace
from infra.config.registry import RegistryConfig, check_cached_images, parse_registry
from infra.contract.maintenance import Exclusion
from infra.record import record

__all__ = [
    "CAPACITY_KEYS", "CAPACITY_MODES", "DISK_TYPES", "GPU_DRIVER_VERSIONS", "MAX_RUN_SECONDS",
    "MIN_VERSION_FLEX_START", "MIN_VERSION_TPU7X", "NAP_KEYS", "NETWORK_KEYS", "PLACEMENTS",
    "POLICY_RULES", "RELEASE_CHANNELS", "SLICE_KEYS", "SYSTEM_POOL_KEYS", "TOP_LEVEL_KEYS",
    "Addons", "AuthorizedNetwork", "AutoProvisioning", "CachedImage", "Capacity",
    "ConfigError", "MaintenanceWindow", "Network", "Policy", "Queues", "SlicePool",
    "Pathways", "SliceClass", "StackConfig", "Storage", "Store", "SystemPool", "parse",
]


@record
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
    dns_endpoint: bool = False
    dns_k8s_tokens: bool = False  # Kubernetes (ServiceAccount) tokens at the DNS endpoint
    secret_keys: frozenset[str] = frozenset()  # top-level keys given as Pulumi secrets
    registry: RegistryConfig | None = None  # the workload image repository
    storage: Storage = Storage()
    pathways: Pathways | None = None  # its head pool is one of ``slices``
    slice_classes: tuple[SliceClass, ...] = ()  # slices made on demand (ComputeClasses)
    checkpointing: Checkpointing | None = None  # GKE multi-tier checkpointing
    tensorboard: VertexTensorboard | None = None  # a Vertex AI TensorBoard instance
    ml_diagnostics: bool = False  # ML Diagnostics' install and roles (infra/specs/ml_diagnostics.py)
    allow_replace: tuple[Allowance, ...] = ()  # infra/config/replace.py
    # Metric packages, dashboard, alert policies (infra/config/observability.py).
    observability: Observability = Observability()
    adopt: AdoptSettings = AdoptSettings()  # an adopted cluster (infra/config/adopted.py)
    # maintenanceExclusions (infra/config/maintenance.py): when GKE may not upgrade
    maintenance_exclusions: tuple[Exclusion, ...] = ()

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
    "addons", "queues", "imageCache", "policy", "dnsEndpoint", "registry", "storage",
    "pathways", "sliceClasses",
    "checkpointing",
    "tensorboard", "mlDiagnostics",
    "allowReplace",
    "observability",
    "maintenanceExclusions",
) + adopted_config.KEYS


def parse(raw: Mapping[str, Any], secret_keys: Collection[str] = (),
          channel_defaults: Mapping[str, str] | None = None) -> StackConfig:
    """Parse the stack's config (keys without the ``accelstack:`` prefix); ``secret_keys``
    names the keys Pulumi holds as secrets. ``channel_defaults``: the release channels'
    default versions the version floors are checked against when no version is pinned
    (infra/catalog/gke_versions.py CHANNEL_DEFAULTS unless given).

    Raises ConfigError listing every problem found; returns a fully checked config.
    """
    r = Reader()
    top = r.obj(raw, "", TOP_LEVEL_KEYS)
    for key in sorted(secret_keys):
        if key not in SECRET_KEYS:
            r.fail(key, f"a Pulumi secret is not supported for this key (secrets are "
                   f"supported for: {', '.join(SECRET_KEYS)}); its value appears in resource "
                   "names, labels or the outputs, so keep it in plain text")
    cluster = parse_cluster(r, top)
    version = _nodes_version(cluster.release_channel, cluster.gke_version, channel_defaults)
    slices_raw = r.get(top, "slices", "", list, default=[])
    pools, unresolved = parse_slices(r, slices_raw, cluster.zones, version,
                                     cluster.release_channel)
    pathways, head_pool = parse_pathways(r, top.get("pathways"), pools, cluster.zones)
    if head_pool is not None:
        pools.append(head_pool)  # a CPU pool like any other: node pool, flavor, contract
    classes = parse_slice_classes(r, top.get("sliceClasses"), cluster.zones,
                                  cluster.gke_version, [p.name for p in pools],
                                  nodes_version=version)
    addons = addons_config.parse_addons(r, top.get("addons"))
    if any(p.dynamic for p in pools):
        check_dynamic_addons(r, addons.jobset_version, addons.kueue_version)
    # A class that is declared but refused has its own error; a quota naming it is not a
    # second mistake (issue 42: one mistake, one line).
    raw_classes = top.get("sliceClasses")
    declared = {str(c["name"]) for c in (raw_classes if isinstance(raw_classes, list) else [])
                if isinstance(c, Mapping) and isinstance(c.get("name"), str)}
    unresolved |= declared - {c.name for c in classes}
    queues = addons_config.parse_queues(r, top.get("queues"), pools, unresolved,
                                        {c.name: c.max_chips for c in classes})
    image_cache = addons_config.parse_image_cache(r, top.get("imageCache"), pools, unresolved)
    policy = parse_policy(r, top.get("policy"))
    registry = parse_registry(r, top.get("registry"), project=cluster.project,
                              region=cluster.region, cluster_name=cluster.cluster_name)
    check_cached_images(r, registry, top.get("imageCache"))
    before_storage = len(r.problems)
    storage = parse_storage(r, top.get("storage"), queues, project=cluster.project,
                            cluster=cluster.cluster_name, region=cluster.region,
                            zones=tuple(cluster.zones), gke_version=version,
                            taken={f"network.{k}": v for k, v in (
                                ("nodesCidr", cluster.network.nodes_cidr),
                                ("podsCidr", cluster.network.pods_cidr),
                                ("servicesCidr", cluster.network.services_cidr),
                                ("masterCidr", cluster.network.master_cidr),
                                ("gpuNetworksCidr", cluster.network.gpu_cidr))})
    if len(r.problems) == before_storage:
        raw_storage = top.get("storage")
        check_lustre_grants(r, storage, raw_storage.get("stores") if isinstance(
            raw_storage, Mapping) else None, queues, pools, version)
    if len(r.problems) == before_storage:  # a broken storage section is reported once
        pathways = resolve_scratch(r, pathways, {
            st.name: st.bucket if st.kind == "gcs" else None for st in storage.stores})
    checkpointing = None
    if len(r.problems) == before_storage:  # it names a store and pools
        checkpointing = parse_checkpointing(r, top.get("checkpointing"), pools, storage,
                                            version, [c.name for c in classes])
    tensorboard = parse_tensorboard(r, top.get("tensorboard"), region=cluster.region,
                                    cluster_name=cluster.cluster_name)
    ml_diagnostics = bool(r.get(top, "mlDiagnostics", "", bool, default=False))
    allow_replace = parse_allow_replace(r, top.get("allowReplace"))
    observability = parse_observability(r, top.get("observability"), version)
    adopt = adopted_config.parse(r, top, project=cluster.project, location=cluster.region,
                                 cluster_name=cluster.cluster_name,
                                 node_pools=None if unresolved else [
                                     "system", *(n for p in pools for n in p.node_pool_names())])
    if not slices_raw and cluster.auto_provisioning is None and not top.get("sliceClasses"):
        r.fail("slices", "declares no slice pools, no slice classes and nodeAutoProvisioning "
               "is off; a stack needs at least one source of accelerators")

    if r.problems:
        raise ConfigError(r.problems)
    assert cluster.project and cluster.region and cluster.cluster_name
    problems = _capacity_problems(cluster.system_pool, len(cluster.zones), pools, classes)
    problem = gpu_cidr_problem(cluster.network,
                               subnets_needed((p.accelerator, p.zones[0]) for p in pools))
    if problem:
        problems.append(problem)
    if not problems and cluster.network.create:
        # Only the stack's own subnet has known ranges; an existing one is the user's.
        problems = address_problems(cluster.network, _node_demands(
            cluster.system_pool, len(cluster.zones), pools, classes))
    if problems:
        raise ConfigError(problems)
    return StackConfig(
        project=cluster.project, region=cluster.region, zones=cluster.zones,
        cluster_name=cluster.cluster_name, network=cluster.network,
        release_channel=cluster.release_channel, gke_version=cluster.gke_version,
        private_nodes=cluster.private_nodes, private_endpoint=cluster.private_endpoint,
        authorized_networks=cluster.authorized_networks, maintenance=cluster.maintenance,
        deletion_protection=cluster.deletion_protection, labels=cluster.labels,
        system_pool=cluster.system_pool, slices=tuple(pools),
        auto_provisioning=cluster.auto_provisioning, addons=addons, queues=queues,
        image_cache=image_cache, policy=policy, dns_endpoint=cluster.dns_endpoint,
        dns_k8s_tokens=cluster.dns_k8s_tokens,
        secret_keys=frozenset(secret_keys),
        registry=registry, storage=storage, pathways=pathways, slice_classes=tuple(classes),
        checkpointing=checkpointing, tensorboard=tensorboard,
        ml_diagnostics=ml_diagnostics, allow_replace=allow_replace,
        observability=observability, adopt=adopt,
        maintenance_exclusions=cluster.exclusions,
    )


def _nodes_version(channel: str | None, pinned: str | None,
                   defaults: Mapping[str, str] | None) -> GkeVersion | None:
    """The version the floors are checked against (None when the channel is not one GKE
    has: that error is reported by the cluster layer)."""
    table = dict(gke_versions.CHANNEL_DEFAULTS if defaults is None else defaults)
    if not pinned and (channel or gke_versions.DEFAULT_CHANNEL) not in table:
        return None
    return gke_versions.effective(channel, pinned, table)


def _node_demands(system: SystemPool, zones: int, pools: list[SlicePool],
                  classes: Sequence[SliceClass] = ()
                  ) -> list[tuple[str, int, int]]:
    """(what, nodes at full size, max pods per node) for every node the stack declares.
    Node auto-provisioning creates no nodes up front and is limited by chips, not nodes,
    so its nodes are not counted; a slice class is counted at its limits, the most nodes
    GKE may create for it."""
    out = [("system pool", system.max_nodes * zones,
            system.max_pods_per_node or DEFAULT_PODS_PER_NODE)]
    out += [(f"{p.name}", p.nodes, p.max_pods_per_node or DEFAULT_PODS_PER_NODE)
            for p in pools]
    out += [(f"class {c.name}", c.max_nodes, c.max_pods_per_node) for c in classes]
    return out


def _capacity_problems(system: SystemPool, zones: int, pools: list[SlicePool],
                       classes: Sequence[SliceClass]) -> list[str]:
    total = sum(n for _, n, _ in _node_demands(system, zones, pools, classes))
    if total > MAX_NODES_PER_CLUSTER:
        return [f"slices: the stack declares {total:,} nodes at full size (system pool, "
                f"slice pools and slice classes at their limits); GKE allows at most "
                f"{MAX_NODES_PER_CLUSTER:,} nodes in a cluster"]
    return []
