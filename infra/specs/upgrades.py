"""A slice pool's node management and upgrade settings, and the cluster's maintenance
policy, as pulumi-gcp 10.2.0 inputs (NodePoolManagementArgs, NodePoolUpgradeSettingsArgs,
ClusterMaintenancePolicyArgs). The rules are checked in infra/config/maintenance.py; this
module only writes them down. Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import SlicePool, StackConfig


def management(pool: SlicePool) -> dict[str, bool]:
    """Auto-repair as the pool says, else by capacity: GKE's flex-start and
    queued-provisioning pools are created with auto-repair off. Auto-upgrade stays on
    unless the pool turns it off (refused on a release channel)."""
    repair = pool.upgrade.auto_repair
    if repair is None:
        repair = not pool.capacity.autoscales_from_zero
    return {"auto_repair": repair, "auto_upgrade": pool.upgrade.auto_upgrade}


def upgrade_settings(pool: SlicePool) -> dict[str, Any]:
    """SURGE with the pool's counts (by default 0 surge, 1 unavailable: accelerator capacity
    rarely has room for surge nodes, and a multi-host slice is recreated whole either way),
    or BLUE_GREEN with its rollout settings."""
    up = pool.upgrade
    if up.strategy == "SURGE":
        return {"strategy": "SURGE", "max_surge": up.max_surge,
                "max_unavailable": up.max_unavailable}
    bg = up.blue_green
    settings: dict[str, Any] = {}
    rollout: dict[str, Any] = {}
    if bg is not None:
        if bg.node_pool_soak_seconds is not None:
            settings["node_pool_soak_duration"] = f"{bg.node_pool_soak_seconds}s"
        if bg.batch_node_count is not None:
            rollout["batch_node_count"] = bg.batch_node_count
        if bg.batch_percentage is not None:
            rollout["batch_percentage"] = bg.batch_percentage
        if bg.batch_soak_seconds is not None:
            rollout["batch_soak_duration"] = f"{bg.batch_soak_seconds}s"
    if rollout:
        settings["standard_rollout_policy"] = rollout
    return {"strategy": "BLUE_GREEN", "blue_green_settings": settings}


def maintenance_policy(cfg: StackConfig) -> dict[str, Any] | None:
    """The cluster's window and exclusions (exclusion_options.scope per exclusion)."""
    if cfg.maintenance is None:
        return None
    w = cfg.maintenance
    policy: dict[str, Any] = {"recurring_window": {
        "start_time": w.start, "end_time": w.end, "recurrence": w.recurrence}}
    if cfg.maintenance_exclusions:
        policy["maintenance_exclusions"] = [
            {"exclusion_name": x.name, "start_time": x.start, "end_time": x.end,
             "exclusion_options": {"scope": x.scope}} for x in cfg.maintenance_exclusions]
    return policy
