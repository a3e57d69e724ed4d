"""The per-pool settings of infra/config/pool_settings.py and the adoption keys of
infra/config/adopted.py, applied to the node pool and cluster arguments the specs build.

Applied last, so a pool that says nothing keeps exactly the arguments it had before.
Must not import pulumi.
"""

from __future__ import annotations

import copy
from typing import Any

from infra.config.stack import SlicePool, StackConfig

# What a TPU pool's host maintenance interval is when the stack does not say: GKE's own
# default (no policy sent), as before; xpk sends AS_NEEDED (its --host-maintenance-interval
# default, AI-Hypercomputer/xpk src/xpk/parser/cluster.py), which an adopted pool states.


def node_scopes(cfg: StackConfig, pool: SlicePool | None = None) -> list[str] | None:
    """The OAuth scopes of a pool's nodes when the stack says (the pool's own, else the
    existing node service account's); None: the stack's default."""
    if pool is not None and pool.settings.oauth_scopes is not None:
        return list(pool.settings.oauth_scopes)
    account = cfg.adopt.node_service_account
    return list(account.oauth_scopes) if account is not None else None


def slice_args(cfg: StackConfig, pool: SlicePool, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` of one of ``pool``'s node pools with its settings applied."""
    s = pool.settings
    out = copy.copy(args)
    node = dict(out["node_config"])
    out["node_config"] = node
    scopes = node_scopes(cfg, pool)
    if scopes is not None:
        node["oauth_scopes"] = scopes
    if s.gcp_labels:
        node["resource_labels"] = {**node.get("resource_labels", {}), **s.gcp_labels}
    if s.host_maintenance_interval is not None:
        # pulumi-gcp NodePool nodeConfig.hostMaintenancePolicy.maintenanceInterval (ForceNew).
        node["host_maintenance_policy"] = {"maintenance_interval": s.host_maintenance_interval}
    if not s.gvnic:
        node["gvnic"] = {"enabled": False}
    if s.location_policy is not None and "autoscaling" in out:
        out["autoscaling"] = {**out["autoscaling"], "location_policy": s.location_policy}
    if s.extra_networks:
        configs = [{"network": n, "subnetwork": sub} for n, sub in s.extra_networks]
        network = dict(out.get("network_config") or {})
        network["additional_node_network_configs"] = [
            *network.get("additional_node_network_configs", []), *configs]
        out["network_config"] = network
    return out


def cluster_args(cfg: StackConfig, args: dict[str, Any]) -> dict[str, Any]:
    """The cluster's arguments with the adoption keys applied."""
    out = copy.copy(args)
    scopes = node_scopes(cfg)
    if scopes is not None:
        out["node_config"] = {**out["node_config"], "oauth_scopes": scopes}
    if cfg.adopt.autoscaling_profile is not None:
        out["cluster_autoscaling"] = {**out.get("cluster_autoscaling", {}),
                                      "autoscaling_profile": cfg.adopt.autoscaling_profile}
    if cfg.adopt.importing:
        # The provider deletes the pool named default-pool when remove_default_node_pool
        # turns true on an existing cluster (resource_container_cluster.go:5404 at
        # 93c65b2): an imported cluster's state has it unset, so it is never declared.
        out.pop("remove_default_node_pool", None)
    return out
