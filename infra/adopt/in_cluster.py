"""An in-cluster stack's desired state from the description of a cluster it does not own.

Pure: from the GKE API's Cluster JSON (live, or the recorded description) and the stack's
own keys (queues, imageCache, addons, labels) to a parsed StackConfig whose slices are the
cluster's TPU and GPU pools, each of the catalog's type (infra/adopt/pools.py), marked
foreign: the stack never declares them, and their Kueue flavors select GKE's own node
labels (accelerator, topology, Spot), which another team's nodes carry, not the stack's.
CPU pools are not queued. The program (infra/program.py build_in_cluster) declares only
the in-cluster layer on it.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.adopt import pools as pools_mod
from infra.adopt.errors import AdoptError
from infra.adopt.plan import cluster_keys
from infra.config import stack as config_mod
from infra.config.errors import ConfigError
from infra.config.in_cluster import InClusterConfig
from infra.lazy_re import later
from infra.record import replace

_ZONE = later(r"^[a-z]+-[a-z]+[0-9]+-[a-z]\Z")


def stack_config(description: Mapping[str, Any], icfg: InClusterConfig
                 ) -> config_mod.StackConfig:
    """The parsed config of the in-cluster stack ``icfg`` on the cluster ``description``;
    AdoptError (one line) when the description is not that cluster or has no accelerator
    pool; ConfigError for the stack's own keys."""
    where = f"projects/{icfg.project}/locations/{icfg.location}/clusters/{icfg.cluster_name}"
    if description.get("name") != icfg.cluster_name or \
            description.get("location") != icfg.location:
        raise AdoptError(f"{icfg.description}: describes {description.get('location')}/"
                         f"{description.get('name')}, not {icfg.location}/{icfg.cluster_name}; "
                         "record it again with `accelstack-adopt ... --record FILE`")
    raw = cluster_keys(description, icfg.project)
    raw.pop("autoscalingProfile", None)
    if _ZONE.match(str(raw["region"])):
        # A zonal cluster: the stack's region is the zone's region, its zone the location.
        raw["zones"] = [raw["region"]]
        raw["region"] = str(raw["region"]).rsplit("-", 1)[0]
    entries, multi = [], {}
    names = {str(p.get("name")) for p in description.get("nodePools") or []}
    if icfg.controller_pool not in names:
        raise AdoptError(f"{where}: inCluster.controllerPool {icfg.controller_pool!r} is not "
                         f"a node pool of the cluster (it has {', '.join(sorted(names))}); name "
                         "a CPU pool for the Kueue and JobSet controllers")
    for pool in description.get("nodePools") or []:
        try:
            accel = pools_mod.accelerator(pool, where)
        except AdoptError:
            continue  # a pool the catalog cannot name gets no queue; it is not the stack's
        if accel.kind == "cpu":
            continue
        entries.append(pools_mod.entry(pool, accel, {}, []))
        multi[str(pool["name"])] = accel.vms_per_slice > 1
    # Only what the queues and the contract read: each pool's shape and capacity (slices
    # of one shape named NAME-I counted as one entry, as the adoption does).
    slices = [{k: e[k] for k in ("name", "accelerator", "count", "capacity", "zones")
               if k in e} for e in pools_mod.group(entries, multi)]
    if not slices:
        raise AdoptError(f"{where}: no TPU or GPU node pool the catalog knows; an in-cluster "
                         "stack queues accelerator pools")
    raw["slices"] = slices
    raw.update(icfg.layer)
    cfg = config_mod.parse(raw)
    return replace(cfg, slices=tuple(replace(p, foreign=True) for p in cfg.slices),
                   adopt=replace(cfg.adopt, controller_pool=icfg.controller_pool))


__all__ = ["ConfigError", "stack_config"]
