"""The Pulumi program: from a parsed stack config to resources and the outputs contract.

``run`` is what ``__main__`` calls under a real engine and what the tests and the offline
preview call under the SDK's mock engine, so both exercise the same code.
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, TypeVar

import pulumi
import yaml

from infra.config import fleet as fleet_config
from infra.config import in_cluster as in_cluster_config
from infra.config import pools as pools_config
from infra.config import stack as config_mod
from infra.contract import fleet as fleet_contract
from infra.contract import outputs as contract
from infra.specs import exports
from infra.specs import image_cache as image_cache_spec
from infra.config.secrets import decode_config_value
from infra.components.addons import ClusterAddons
from infra.components.fleet import Fleet
from infra.components.pools import Pools
from infra.components.checkpointing import MultiTierCheckpointing
from infra.components.tensorboard import VertexTensorboard
from infra.components.ml_diagnostics import MlDiagnostics
from infra.components.observability import Observability
from infra.components.cluster import GkeCluster
from infra.components.network import ClusterNetwork, GpuDataNetworks
from infra.components.pathways import PathwaysAccess
from infra.components.node_pools import SliceNodePools, SystemNodePool
from infra.components.services import ProjectServices
from infra.components.slice_classes import SliceClasses
from infra.components.registry import WorkloadRegistry
from infra.components.storage import StorageObjects, WorkloadStorage
from infra.config.stack import StackConfig
from infra.config.errors import ConfigError
from infra.specs.network import group_for, gpu_network_groups
from infra.config.secrets import hide
from infra.config.stack_file import NAMESPACE, StackFileError
from infra.config.stack_file import load as load_stack_file

T = TypeVar("T")


class StackConfigError(pulumi.RunError):
    """A bad stack config; pulumi prints the message without a traceback. ``problems``
    holds one line per problem (``FILE:LINE: key.path: ...`` when the file is known)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


def raw_config() -> tuple[dict[str, Any], set[str]]:
    """Every ``accelstack:*`` key of the running stack, structured values decoded, and
    the keys Pulumi holds as secrets (their strings come back as SecretStr)."""
    from pulumi.runtime import config as rc

    merged: dict[str, Any] = dict(rc.get_config_env())
    merged.update(rc.CONFIG.get())
    secret = set(rc.get_config_secret_keys_env())
    out: dict[str, Any] = {}
    secret_keys: set[str] = set()
    for key, value in merged.items():
        ns, _, name = key.partition(":")
        if ns != NAMESPACE or not name:
            continue
        out[name] = decode_config_value(value, name)
        if key in secret or rc.is_config_secret(key):
            secret_keys.add(name)
            out[name] = hide(out[name])
    return out, secret_keys


def stack_file_locator(stack: str, root: str | Path | None = None
                       ) -> Callable[[str], str] | None:
    """Where the running stack's config came from, to point errors at a line: the
    ``Pulumi.<stack>.yaml`` in the project's ``stackConfigDir`` (Pulumi.yaml). None when
    the file is not there (config from ESC environments or --config) or does not load."""
    base = Path(root or pulumi.get_root_directory() or Path(__file__).resolve().parents[1])
    try:
        project = yaml.safe_load((base / "Pulumi.yaml").read_text()) or {}
        config_dir = str(project.get("stackConfigDir") or ".")
        relative = Path(config_dir) / f"Pulumi.{stack}.yaml"
        text = (base / relative).read_text(encoding="utf-8")
        return load_stack_file(relative, text=text).locate
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError, StackFileError):
        return None


def _config_error(problems: list[str], locate: Callable[[str], str] | None
                  ) -> StackConfigError:
    problems = [locate(p) for p in problems] if locate else list(problems)
    lines = "\n  ".join(problems)
    return StackConfigError(f"invalid stack config ({len(problems)} problem"
                            f"{'s' if len(problems) != 1 else ''}):\n  {lines}", problems)


def load_config(raw: Mapping[str, Any], secret_keys: Collection[str] = (),
                locate: Callable[[str], str] | None = None) -> StackConfig:
    """Parse ``raw``; a bad config raises StackConfigError with one line per problem,
    each prefixed by ``locate`` (``FILE:LINE: ``) when the stack file is known."""
    try:
        return config_mod.parse(raw, secret_keys)
    except ConfigError as e:
        raise _config_error(e.problems, locate) from None


def build(cfg: StackConfig, stack: str) -> dict[str, Any]:
    """Declare every resource of the stack; return the outputs to export."""
    # Every Google Cloud resource waits for the APIs it needs.
    apis = ProjectServices("services", cfg)
    after_apis = pulumi.ResourceOptions(depends_on=[apis])
    net = ClusterNetwork(cfg.cluster_name, cfg, opts=after_apis)
    gke = GkeCluster(cfg.cluster_name, cfg, network=net.network, subnetwork=net.subnetwork,
                     opts=after_apis)
    # An imported node pool's state names its cluster by name (the provider's importer takes
    # it from the import ID; infra/adopt/live.py): an adopted stack's pools say the same.
    cluster_ref = gke.cluster.name if cfg.adopt.importing else gke.cluster.id
    system = SystemNodePool("system", cfg, cluster=cluster_ref,
                            service_account=gke.service_account_email)
    if cfg.registry is not None:
        # Artifact Registry's API first (infra/specs/services.py): on a fresh project the
        # repository is otherwise created before the API it needs is on.
        WorkloadRegistry("workloads", cfg.registry, labels=dict(cfg.labels),
                         node_service_account=gke.service_account_email, opts=after_apis)
    if cfg.pathways is not None:
        # Pathways pods run on the host network and so as the nodes (infra/specs/pathways.py).
        PathwaysAccess("pathways", cfg, node_service_account=gke.service_account_email,
                       opts=after_apis)

    groups = gpu_network_groups(cfg)
    data_nets = {g.key: GpuDataNetworks(g.key, cfg, g, opts=after_apis) for g in groups}
    pool_networks: dict[str, list[dict[str, str]]] = {}
    for pool in cfg.slices:
        group = group_for(groups, pool)
        extra = group.node_networks() if group else None
        if extra:
            pool_networks[pool.name] = extra
        deps = [data_nets[group.key]] if group else []
        SliceNodePools(pool.name, cfg, pool, cluster=cluster_ref,
                       service_account=gke.service_account_email, additional_networks=extra,
                       opts=pulumi.ResourceOptions(depends_on=deps))

    # The add-ons reach the cluster only once its node pools exist: the controllers run
    # on the system pool.
    addons = ClusterAddons("addons", cfg, kubeconfig=gke.kubeconfig,
                           opts=pulumi.ResourceOptions(depends_on=[system]))

    # Slice classes: GKE ComputeClasses whose node pools GKE creates per slice on demand.
    if cfg.slice_classes:
        SliceClasses("slice-classes", cfg, provider=addons.provider,
                     service_account=gke.service_account_email,
                     opts=pulumi.ResourceOptions(depends_on=[system]))

    # The stores, and the service accounts and claims jobs use them through (every
    # workload namespace has the job service account, stores or not).
    endpoints = {}
    stores: list[pulumi.Resource] = []
    if cfg.storage.stores:
        workload_storage = WorkloadStorage("storage", cfg, opts=pulumi.ResourceOptions(
            depends_on=[apis, net]))
        endpoints, stores = workload_storage.endpoints, [workload_storage]
    StorageObjects("storage", cfg, provider=addons.provider, endpoints=endpoints,
                   opts=pulumi.ResourceOptions(depends_on=list(addons.namespaces.values())))
    if cfg.checkpointing is not None:
        # After the bucket (a store) and the cluster with its add-on, which serves the CRD.
        MultiTierCheckpointing("checkpointing", cfg, provider=addons.provider,
                               opts=pulumi.ResourceOptions(depends_on=[system, *stores]))

    board = None
    if cfg.tensorboard is not None:
        # After the Vertex AI API (infra/specs/services.py).
        board = VertexTensorboard("tensorboard", cfg, opts=after_apis)
    if cfg.ml_diagnostics:
        # After the add-ons: the webhook mutates JobSets, whose CRD JobSet's install serves.
        MlDiagnostics("mldiagnostics", cfg, provider=addons.provider,
                      opts=pulumi.ResourceOptions(depends_on=[addons]))

    observed = None
    if cfg.observability.enabled:
        # After the Monitoring API and the add-ons (Kueue, whose metrics it scrapes).
        observed = Observability("observability", cfg, provider=addons.provider,
                                 opts=pulumi.ResourceOptions(depends_on=[apis, addons]))

    # One structure; plain fields stay plain and only the kubeconfig is a secret, so
    # `pulumi stack output` and previews show everything else.
    exported: dict[str, Any] = exports.build(
        cfg, stack, endpoint="", ca_certificate="", kubeconfig="", networks=pool_networks,
    ).to_dict()
    cluster_fields = exported["cluster"]
    exported["cluster"] = pulumi.Output.all(gke.endpoint, gke.ca_certificate,
                                            gke.dns_endpoint, gke.service_account_email,
                                            net.nat_addresses).apply(
        lambda a: {**cluster_fields, "endpoint": a[0], "caCertificate": a[1],
                   "dnsEndpoint": a[2], "nodeServiceAccount": a[3],
                   **({"natAddresses": a[4]} if a[4] is not None else {})})
    exported["kubeconfig"] = gke.kubeconfig
    if board is not None:
        board_fields = exported["tensorboard"]
        exported["tensorboard"] = board.resource_name.apply(
            lambda n: {**board_fields, "name": n})
    if observed is not None and observed.dashboard_id is not None:
        exported["monitoring"] = observed.dashboard_id.apply(
            lambda d: {"project": cfg.project, "dashboard": d, "goodput": observed.goodput})
    return {contract.OUTPUT_NAME: exported}


def _parsed(parse: Callable[[Mapping[str, Any], str], T], raw: Mapping[str, Any], stack: str,
            locate: Callable[[str], str] | None) -> T:
    try:
        return parse(raw, stack)
    except ConfigError as e:
        raise _config_error(e.problems, locate) from None


def load_fleet_config(raw: Mapping[str, Any], stack: str,
                      locate: Callable[[str], str] | None = None) -> fleet_config.FleetConfig:
    """Parse a fleet stack's config (``accelstack:fleet``); StackConfigError as for a
    cluster stack."""
    return _parsed(fleet_config.parse_fleet, raw, stack, locate)


# The fleet's outputs: plain fields stay plain; the contracts it read (each holding a
# kubeconfig) are secrets.
_FLEET_SECRET_KEYS = ("manager", "workers")


def _get(data: dict[str, Any], key: str) -> Any:
    return data[key]


def build_fleet(cfg: fleet_config.FleetConfig, stack: str, *, now: float | None = None,
                locate: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Declare a fleet stack (infra/components/fleet.py); return the outputs to export.
    ``now`` picks the token rotation window (the clock, unless a test or preview fixes it)."""
    fleet = Fleet("fleet", cfg, stack, now=time.time() if now is None else now,
                  locate=locate)
    data: pulumi.Output[dict[str, Any]] = fleet.plan.apply(lambda p: p.info.to_dict(p.manager))
    keys = ("fleetContractVersion", "name", "stack", "managerStack", "manager", "workers",
            "queues", "kueueVersion", "jobsetVersion")
    exported: dict[str, Any] = {}
    for key in keys:
        value = data.apply(functools.partial(_get, key=key))
        exported[key] = pulumi.Output.secret(value) if key in _FLEET_SECRET_KEYS else value
    return {fleet_contract.FLEET_OUTPUT_NAME: exported}


def load_pools_config(raw: Mapping[str, Any], stack: str,
                      locate: Callable[[str], str] | None = None) -> pools_config.PoolsConfig:
    """Parse a pools stack's config (``accelstack:onCluster``); StackConfigError as for a
    cluster stack."""
    return _parsed(pools_config.parse_pools, raw, stack, locate)


def _pools_contract(plan: Any) -> dict[str, Any]:
    data: dict[str, Any] = plan.outputs.to_dict()
    return data


def _get_or_none(data: dict[str, Any], key: str) -> Any:
    return data.get(key)


def build_pools(cfg: pools_config.PoolsConfig, stack: str,
                locate: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Declare a pools stack (infra/components/pools.py); its outputs are a cluster
    stack's contract: the host's cluster, this stack's pools, classes and queues."""
    pools = Pools("pools", cfg, locate=locate)
    data: pulumi.Output[dict[str, Any]] = pools.plan.apply(_pools_contract)
    exported: dict[str, Any] = {}
    keys = ("contractVersion", "stack", "cluster", "slicePools", "autoProvisioning",
            "workloadNamespace", "localQueues", "priorityClasses", "jobsetVersion",
            "kueueVersion", "cachedImages", "imageRepository", "storage", "pathways",
            "sliceClasses", "cohort", "onCluster")
    for key in keys:
        exported[key] = data.apply(functools.partial(_get_or_none, key=key))
    # As a cluster stack: only the kubeconfig (the host's) is a secret.
    exported["kubeconfig"] = pulumi.Output.secret(data.apply(lambda d: d["kubeconfig"]))
    return {contract.OUTPUT_NAME: exported}


def load_in_cluster_config(raw: Mapping[str, Any], stack: str,
                           locate: Callable[[str], str] | None = None
                           ) -> in_cluster_config.InClusterConfig:
    """Parse an in-cluster stack's config (``accelstack:inCluster``, docs/adopt.md)."""
    return _parsed(in_cluster_config.parse_in_cluster, raw, stack, locate)


def in_cluster_stack_config(icfg: in_cluster_config.InClusterConfig,
                            description: Mapping[str, Any],
                            locate: Callable[[str], str] | None = None) -> StackConfig:
    """The in-cluster stack's config on the cluster ``description`` describes."""
    from infra.adopt import in_cluster
    from infra.adopt.errors import AdoptError

    try:
        return in_cluster.stack_config(description, icfg)
    except ConfigError as e:
        raise _config_error(e.problems, locate) from None
    except AdoptError as e:
        raise StackConfigError(str(e)) from None


def build_in_cluster(cfg: StackConfig, stack: str,
                     description: Mapping[str, Any]) -> dict[str, Any]:
    """Declare an in-cluster stack: Kueue, JobSet, queues, the image cache and the job
    service accounts on a cluster the stack does not own; its outputs are a cluster
    stack's contract, so `submit` works unchanged."""
    from infra.specs import cluster as cluster_spec

    endpoint = str(description.get("endpoint") or "")
    ca = str((description.get("masterAuth") or {}).get("clusterCaCertificate") or "")
    dns = ((description.get("controlPlaneEndpointsConfig") or {}).get(
        "dnsEndpointConfig") or {})
    dns_endpoint = dns.get("endpoint") if dns.get("allowExternalTraffic") else None
    kubeconfig = pulumi.Output.secret(cluster_spec.kubeconfig(
        cfg.cluster_name, endpoint, ca, dns_endpoint))
    addons = ClusterAddons("addons", cfg, kubeconfig=kubeconfig)
    StorageObjects("storage", cfg, provider=addons.provider, endpoints={},
                   opts=pulumi.ResourceOptions(depends_on=list(addons.namespaces.values())))
    exported: dict[str, Any] = exports.build(
        cfg, stack, endpoint=endpoint, ca_certificate=ca, kubeconfig="",
        dns_endpoint=dns_endpoint).to_dict()
    exported["kubeconfig"] = kubeconfig
    return {contract.OUTPUT_NAME: exported}


def describe_cluster(icfg: in_cluster_config.InClusterConfig, folder: Path,
                     live: bool) -> dict[str, Any]:
    """The referenced cluster: from the GKE API when ``live`` and it answers (the one GKE
    API seam), else the recorded description beside the stack file."""
    if live:
        from infra.adopt.gke import api

        try:
            return api.get_cluster(icfg.project, icfg.location, icfg.cluster_name)
        except api.GkeApiError as e:
            pulumi.log.warn(f"{e}; using the recorded description {icfg.description}")
    path = folder / icfg.description
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StackConfigError(f"{path}: the recorded description of {icfg.cluster_name} "
                               f"does not load ({type(e).__name__}); record it with "
                               "`accelstack-adopt ... --record FILE`") from None
    if not isinstance(data, dict):
        raise StackConfigError(f"{path}: not a GKE Cluster resource")
    return data


def _stack_dir(root: str | Path | None = None) -> Path:
    base = Path(root or pulumi.get_root_directory() or Path(__file__).resolve().parents[1])
    try:
        project = yaml.safe_load((base / "Pulumi.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        project = {}
    return base / str(project.get("stackConfigDir") or ".")


def run(stack: str | None = None) -> dict[str, Any]:
    stack = stack or pulumi.get_stack()
    raw, secret_keys = raw_config()
    locate = stack_file_locator(stack)
    if fleet_config.is_fleet(raw):
        outputs = build_fleet(load_fleet_config(raw, stack, locate), stack, locate=locate)
    elif pools_config.is_pools(raw):
        outputs = build_pools(load_pools_config(raw, stack, locate), stack, locate=locate)
    elif in_cluster_config.is_in_cluster(raw):
        icfg = load_in_cluster_config(raw, stack, locate)
        description = describe_cluster(icfg, _stack_dir(), live=True)
        outputs = build_in_cluster(in_cluster_stack_config(icfg, description, locate), stack,
                                   description)
    else:
        cfg = load_config(raw, secret_keys, locate)
        for warning in image_cache_spec.warnings(cfg):
            pulumi.log.warn(warning)
        outputs = build(cfg, stack)
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
