"""The Pulumi program: from a parsed stack config to resources and the outputs contract.

``run`` is what ``__main__`` calls under a real engine and what the tests and the offline
preview call under the SDK's mock engine, so both exercise the same code.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import pulumi

from infra import config as config_mod
from infra import contract, exports
from infra.components.addons import ClusterAddons
from infra.components.cluster import GkeCluster
from infra.components.network import ClusterNetwork, GpuDataNetworks
from infra.components.node_pools import SliceNodePools, SystemNodePool
from infra.components.services import ProjectServices
from infra.components.storage import StorageObjects, WorkloadStorage
from infra.config import StackConfig
from infra.errors import ConfigError
from infra.network_spec import group_for, gpu_network_groups

NAMESPACE = "accelstack"


class StackConfigError(pulumi.RunError):
    """A bad stack config; pulumi prints the message without a traceback."""


def raw_config() -> dict[str, Any]:
    """Every ``accelstack:*`` key of the running stack, structured values decoded."""
    from pulumi.runtime import config as rc

    merged: dict[str, Any] = dict(rc.get_config_env())
    merged.update(rc.CONFIG.get())
    out: dict[str, Any] = {}
    for key, value in merged.items():
        ns, _, name = key.partition(":")
        if ns != NAMESPACE or not name:
            continue
        out[name] = _decode(value)
    return out


def _decode(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def load_config(raw: Mapping[str, Any]) -> StackConfig:
    try:
        return config_mod.parse(raw)
    except ConfigError as e:
        lines = "\n  ".join(e.problems)
        raise StackConfigError(f"invalid stack config ({len(e.problems)} problem"
                               f"{'s' if len(e.problems) != 1 else ''}):\n  {lines}") from None


def build(cfg: StackConfig, stack: str) -> dict[str, Any]:
    """Declare every resource of the stack; return the outputs to export."""
    # Every Google Cloud resource waits for the APIs it needs.
    apis = ProjectServices("services", cfg)
    after_apis = pulumi.ResourceOptions(depends_on=[apis])
    net = ClusterNetwork(cfg.cluster_name, cfg, opts=after_apis)
    gke = GkeCluster(cfg.cluster_name, cfg, network=net.network, subnetwork=net.subnetwork,
                     opts=after_apis)
    system = SystemNodePool("system", cfg, cluster=gke.cluster.id,
                            service_account=gke.service_account_email)

    groups = gpu_network_groups(cfg)
    data_nets = {g.key: GpuDataNetworks(g.key, cfg, g, opts=after_apis) for g in groups}
    pool_networks: dict[str, list[dict[str, str]]] = {}
    for pool in cfg.slices:
        group = group_for(groups, pool)
        extra = group.node_networks() if group else None
        if extra:
            pool_networks[pool.name] = extra
        deps = [data_nets[group.key]] if group else []
        SliceNodePools(pool.name, cfg, pool, cluster=gke.cluster.id,
                       service_account=gke.service_account_email, additional_networks=extra,
                       opts=pulumi.ResourceOptions(depends_on=deps))

    # The add-ons reach the cluster only once its node pools exist: the controllers run
    # on the system pool.
    addons = ClusterAddons("addons", cfg, kubeconfig=gke.kubeconfig,
                           opts=pulumi.ResourceOptions(depends_on=[system]))

    # The stores, and the service accounts and claims jobs use them through (every
    # workload namespace has the job service account, stores or not).
    endpoints = {}
    if cfg.storage.stores:
        endpoints = WorkloadStorage("storage", cfg, opts=pulumi.ResourceOptions(
            depends_on=[apis, net])).endpoints
    StorageObjects("storage", cfg, provider=addons.provider, endpoints=endpoints,
                   opts=pulumi.ResourceOptions(depends_on=list(addons.namespaces.values())))

    # One structure; plain fields stay plain and only the kubeconfig is a secret, so
    # `pulumi stack output` and previews show everything else.
    exported: dict[str, Any] = exports.build(
        cfg, stack, endpoint="", ca_certificate="", kubeconfig="", networks=pool_networks,
    ).to_dict()
    cluster_fields = exported["cluster"]
    exported["cluster"] = pulumi.Output.all(gke.endpoint, gke.ca_certificate).apply(
        lambda a: {**cluster_fields, "endpoint": a[0], "caCertificate": a[1]})
    exported["kubeconfig"] = gke.kubeconfig
    return {contract.OUTPUT_NAME: exported}


def run(stack: str | None = None) -> dict[str, Any]:
    cfg = load_config(raw_config())
    outputs = build(cfg, stack or pulumi.get_stack())
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
