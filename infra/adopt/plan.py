"""The adoption plan: from the GKE API's answer for one cluster to a stack in our config
language, with the import IDs of the cluster and each node pool.

Pure: ``plan`` takes the Cluster JSON (with its ``nodePools``, as
projects.locations.clusters.get answers) and returns the stack's config; the command
(infra/adopt/cli/) reads the answer through the one GKE API seam and writes the file.

The plan checks itself: it parses the config it wrote with the stack's own parser, builds
the arguments the program would declare (infra/specs, the same pure functions), and
compares every ForceNew field with what the provider reads from that answer
(infra/adopt/live.py, infra/adopt/diff.py). A field that differs is one our config
cannot express; the plan refuses (AdoptRefused, each field named with its live value), or
with ``keep`` writes it under ``adopt.keep`` so the program declares it with
``ignore_changes``. Nothing is dropped silently.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping

import yaml

from infra.adopt import diff as diff_mod
from infra.adopt import forcenew, live
from infra.adopt import pools as pools_mod
from infra.adopt.errors import AdoptError, AdoptRefused
from infra.config import stack as config_mod
from infra.config.adopted import (CLUSTER, CLUSTER_KEPT, POOL_KEPT, cluster_id,
                                  node_pool_id)
from infra.config.cluster import RELEASE_CHANNELS
from infra.config.errors import ConfigError
from infra.lazy_re import later
from infra.record import field, record
from infra.specs import cluster as cluster_spec
from infra.specs import nodepool as nodepool_spec
from infra.specs.network import group_for, gpu_network_groups

DEFAULT_POOL = "default-pool"  # the name GKE gives a cluster's default node pool
SYSTEM_POOL = "system"  # the stack's own CPU pool for controllers
_ZONE = later(r"^[a-z]+-[a-z]+[0-9]+-[a-z]\Z")


@record
class Plan:
    stack: str
    config: Mapping[str, Any]  # the stack's keys without ``accelstack:``
    kept: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # under adopt.keep
    notes: tuple[str, ...] = ()  # what the first `up` changes in place, what is left alone

    def stack_file(self) -> dict[str, Any]:
        return {"config": {f"accelstack:{k}": v for k, v in self.config.items()}}

    def text(self) -> str:
        """The stack file: a comment header (what the first `up` does), then the data,
        serialised once."""
        adopt = self.config["adopt"]
        head = [f"# Adopted from {adopt['cluster']} by accelstack-adopt (docs/adopt.md).",
                "# The first `pulumi up` imports the cluster and its node pools and replaces "
                "nothing;", "# in place it:"]
        head += [f"#   - {n}" for n in self.notes]
        if self.kept:
            head.append("# Kept as they are (adopt.keep: ignore_changes), fields our config "
                        "cannot express:")
            head += [f"#   - {r}: {p}" for r, fields in self.kept.items() for p in fields]
        body = yaml.safe_dump(self.stack_file(), sort_keys=False, default_flow_style=False)
        return "\n".join(head) + "\n" + str(body)


def _sub(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _check(cluster: Mapping[str, Any], where: str, location: str) -> None:
    if _sub(cluster, "autopilot").get("enabled"):
        raise AdoptError(f"{where}: an Autopilot cluster: GKE manages its nodes, so there are "
                         "no node pools to adopt; manage only its in-cluster layer with an "
                         "accelstack:inCluster stack (docs/adopt.md)")
    if cluster.get("location") != location:
        raise AdoptError(f"{where}: GKE answered for a cluster in {cluster.get('location')}, "
                         f"not {location}; give the location the cluster is in "
                         f"(PROJECT/{cluster.get('location')}/{cluster.get('name')})")
    if _ZONE.match(location):
        raise AdoptError(f"{where}: a zonal cluster ({location}); accelstack stacks declare "
                         "regional clusters and GKE cannot change a cluster's location, so it "
                         "cannot be adopted (its in-cluster layer can: accelstack:inCluster)")


def cluster_keys(cluster: Mapping[str, Any], project: str) -> dict[str, Any]:
    alloc = _sub(cluster, "ipAllocationPolicy")
    private = _sub(cluster, "privateClusterConfig")
    network: dict[str, Any] = {"create": False, "name": cluster.get("network"),
                               "subnetwork": cluster.get("subnetwork")}
    if alloc.get("clusterSecondaryRangeName"):
        network["podsRangeName"] = alloc["clusterSecondaryRangeName"]
    if alloc.get("servicesSecondaryRangeName"):
        network["servicesRangeName"] = alloc["servicesSecondaryRangeName"]
    if private.get("masterIpv4CidrBlock"):
        network["masterCidr"] = private["masterIpv4CidrBlock"]
    out: dict[str, Any] = {
        "project": project, "region": cluster["location"],
        "zones": list(cluster.get("locations") or []),
        "clusterName": cluster["name"], "network": network,
    }
    channel = _sub(cluster, "releaseChannel").get("channel")
    if channel in RELEASE_CHANNELS:
        out["releaseChannel"] = channel
    elif cluster.get("currentMasterVersion"):
        out["gkeVersion"] = cluster["currentMasterVersion"]
    out["privateNodes"] = bool(private.get("enablePrivateNodes") or _sub(
        cluster, "networkConfig").get("defaultEnablePrivateNodes"))
    if private.get("enablePrivateEndpoint"):
        out["privateEndpoint"] = True
    blocks = _sub(cluster, "masterAuthorizedNetworksConfig").get("cidrBlocks") or []
    if blocks:
        out["masterAuthorizedNetworks"] = [
            {"cidr": b["cidrBlock"], "name": b.get("displayName") or b["cidrBlock"]}
            for b in blocks]
    dns = _sub(_sub(cluster, "controlPlaneEndpointsConfig"), "dnsEndpointConfig")
    if dns.get("allowExternalTraffic"):
        out["dnsEndpoint"] = {"k8sTokens": True} if dns.get("enableK8sTokensViaDns") else True
    out["deletionProtection"] = True  # what the provider's importer sets
    if cluster.get("resourceLabels"):
        out["labels"] = dict(cluster["resourceLabels"])
    profile = _sub(cluster, "autoscaling").get("autoscalingProfile")
    if profile in ("BALANCED", "OPTIMIZE_UTILIZATION"):
        out["autoscalingProfile"] = profile
    return out


def _node_account(pools: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The node service account and scopes most of the adopted pools run with."""
    seen: dict[tuple[str, tuple[str, ...]], int] = {}
    for p in pools:
        c = _sub(p, "config")
        key = (str(c.get("serviceAccount") or "default"),
               tuple(c.get("oauthScopes") or []))
        seen[key] = seen.get(key, 0) + 1
    email, scopes = max(seen, key=lambda k: seen[k]) if seen else ("default", ())
    out: dict[str, Any] = {"email": email}
    if scopes:
        out["oauthScopes"] = list(scopes)
    return out


def _desired(cfg: config_mod.StackConfig) -> dict[str, dict[str, Any]]:
    """What the program declares for the cluster and each node pool, in pulumi's names,
    with the references the program passes (the cluster by name, the node account)."""
    account = cfg.adopt.node_service_account
    email = account.email if account else f"{cfg.cluster_name}-nodes"
    out = {CLUSTER: diff_mod.camel(cluster_spec.cluster_args(
        cfg, network=cfg.network.name, subnetwork=cfg.network.subnetwork,
        service_account=email))}
    out[SYSTEM_POOL] = diff_mod.camel(nodepool_spec.system_node_pool_args(
        cfg, cfg.system_pool, cluster=cfg.cluster_name, service_account=email))
    groups = gpu_network_groups(cfg)
    for pool in cfg.slices:
        group = group_for(groups, pool)
        extra = group.node_networks() if group else None
        for i, name in enumerate(pool.node_pool_names()):
            wp = nodepool_spec.workload_policy_args(cfg, pool, i)
            out[name] = diff_mod.camel(nodepool_spec.slice_node_pool_args(
                cfg, pool, i, cluster=cfg.cluster_name, service_account=email,
                additional_networks=extra, workload_policy=wp["name"] if wp else None))
    return out


def differences(cfg: config_mod.StackConfig, cluster: Mapping[str, Any],
                ignored: Mapping[str, Collection[str]] | None = None
                ) -> dict[str, list[diff_mod.Difference]]:
    """Per resource (CLUSTER or a node pool), the ForceNew fields the program would
    change on the live cluster: each one a replacement."""
    project = cfg.project
    state = {CLUSTER: live.cluster(cluster, project=project)}
    for p in cluster.get("nodePools") or []:
        state[p["name"]] = live.node_pool(p, project=project, location=cfg.location,
                                          cluster=cfg.cluster_name)
    out: dict[str, list[diff_mod.Difference]] = {}
    for name, want in _desired(cfg).items():
        if name not in state:
            continue  # a pool the stack adds (its system pool): created, not replaced
        kind = forcenew.CLUSTER if name == CLUSTER else forcenew.NODE_POOL
        base = CLUSTER_KEPT if name == CLUSTER else POOL_KEPT
        skip = [*base, *((ignored or {}).get(name, ()))]
        found = diff_mod.replacements(forcenew.load(kind), want, state[name], skip)
        if found:
            out[name] = found
    return out


def plan(cluster: Mapping[str, Any], *, project: str, location: str, stack: str,
         keep: bool = False, skip_pools: Collection[str] = ()) -> Plan:
    """The adopted stack for ``cluster``; AdoptError (one line) when it cannot be adopted,
    AdoptRefused when fields our config cannot express differ and ``keep`` is off."""
    name = str(cluster.get("name"))
    where = cluster_id(project, location, name)
    _check(cluster, where, location)
    config = cluster_keys(cluster, project)
    labels = config.get("labels", {})
    node_pools = [p for p in cluster.get("nodePools") or [] if p.get("name") not in skip_pools]
    unknown = sorted(set(skip_pools) - {p.get("name") for p in cluster.get("nodePools") or []})
    if unknown:
        raise AdoptError(f"{where}: --skip-pool {unknown[0]}: the cluster has no such node "
                         "pool")
    default = [p for p in node_pools if p.get("name") == DEFAULT_POOL]
    system = [p for p in node_pools if p.get("name") == SYSTEM_POOL]
    adopted = [p for p in node_pools if p.get("name") not in (DEFAULT_POOL, SYSTEM_POOL)]
    if not adopted:
        raise AdoptError(f"{where}: no node pool to adopt besides {DEFAULT_POOL}; declare "
                         "accelerator pools in a new stack instead")
    account = _node_account(adopted)
    config["nodeServiceAccount"] = account
    scopes = list(account.get("oauthScopes") or [])
    if default:
        config["defaultPool"] = DEFAULT_POOL
    accels = {p["name"]: pools_mod.accelerator(p, where) for p in adopted}
    entries = [pools_mod.entry(p, accels[p["name"]], labels, scopes) for p in adopted]
    multi = {p["name"]: accels[p["name"]].vms_per_slice > 1 for p in adopted}
    config["slices"] = pools_mod.group(entries, multi)
    if system:
        # A pool named system (Cluster Toolkit's gke-cluster makes one) is the stack's own
        # system pool, adopted as it is.
        config["systemPool"] = pools_mod.system_pool(system[0])
    config["adopt"] = {
        "cluster": where,
        "nodePools": {p["name"]: node_pool_id(project, location, name, p["name"])
                      for p in [*system, *adopted]},
    }
    cfg = _parse(config, where)
    found = differences(cfg, cluster)
    kept: dict[str, dict[str, Any]] = {}
    lines = []
    for resource, diffs in found.items():
        for d in diffs:
            lines.append(f"{resource}: {d.path}: live {d.live!r}, the stack would declare "
                         f"{d.desired!r}")
            kept.setdefault(resource, {})[d.path] = d.live
    if lines and not keep:
        raise AdoptRefused(
            f"{where}: {len(lines)} field(s) our config cannot express differ from the live "
            "cluster, and each would replace its resource; rerun with --keep-unexpressed to "
            "keep them as they are (ignore_changes), or change the cluster first", lines)
    if kept:
        config["adopt"]["keep"] = kept
        cfg = _parse(config, where)
    return Plan(stack, config, kept, tuple(_notes(cfg, cluster)))


def _parse(config: Mapping[str, Any], where: str) -> config_mod.StackConfig:
    try:
        return config_mod.parse(config)
    except ConfigError as e:
        raise AdoptError(f"{where}: the adopted config does not parse ({e.problems[0]}); the "
                         "cluster has a setting our config cannot express") from None


def _notes(cfg: config_mod.StackConfig, cluster: Mapping[str, Any]) -> list[str]:
    """What the first `up` changes in place (no replacement), for the file's header."""
    notes = [] if SYSTEM_POOL in cfg.adopt.node_pool_imports else [
        "the stack adds its own system node pool (system) for the Kueue and JobSet "
        "controllers"]
    if cfg.adopt.default_pool:
        notes.append(f"{cfg.adopt.default_pool} is kept as it is: never declared or removed")
    for pool in cfg.slices:
        if pool.capacity.mode == "spot":
            notes.append(f"{pool.name}: adds the taint {nodepool_spec.SPOT_TAINT.key}="
                         f"{nodepool_spec.SPOT_TAINT.value}:NoSchedule (the stack's Spot rule);"
                         " pods that do not tolerate it stop landing there")
    notes.append("every adopted node pool gets the node labels accelstack.dev/slice-pool and "
                 "accelstack.dev/capacity (in place)")
    return notes
