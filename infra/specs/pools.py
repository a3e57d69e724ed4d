"""A pools stack's desired state, from its config and its host's outputs contract: pure.

A pools stack adds node pools (and ComputeClasses) to a cluster another stack owns
(infra/config/pools.py). Its ``slices`` and ``sliceClasses`` are parsed by the cluster
stack's own parser against a config made of the host's cluster (project, location, zones,
name, release channel, pinned version), so the same rules, the same node pool arguments
(infra/specs/nodepool.py), ComputeClasses and Kueue flavors come out as a cluster stack's;
then what only the host can tell is checked (``plan``), before anything is declared.

Kueue: the stack's own ResourceFlavors (``pools-STACK-<flavor>``), one ClusterQueue
``pools-STACK`` in the host's cohort (when the host has one) and a LocalQueue ``pools-STACK``
in each namespace it serves. Every name starts with ``pools-STACK``, which the host's objects
never do (infra/specs/kueue.py names flavors after accelerators, ``cpu-``, ``class-``, ``nap-``
and ``system-cpu``), and a second pools stack has another STACK; deleting the stack deletes
exactly these. No host queue can borrow this stack's quota or lend it its own: Kueue's quota
is per flavor and resource, and a ClusterQueue borrows only for the flavors it lists
(kueue v0.19.2 site/content/en/docs/concepts/cluster_queue.md, "Flavors and borrowing
semantics": "A ClusterQueue can only borrow quota for flavors that the ClusterQueue
defines"), and no queue lists another stack's flavors. Deleting a ClusterQueue waits
while Workloads it admitted hold quota (its finalizer kueue.x-k8s.io/resource-in-use:
site/content/en/docs/tasks/troubleshooting/troubleshooting_delete_clusterqueue.md), so
`submit run` and `submit reap` delete the work queued to a pools stack before they destroy
it (submit/ephemeral/pools_work.py).
Must not import pulumi.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from infra.config import stack as config_mod
from infra.config.errors import ConfigError, one_of, show
from infra.config.pools import ON_CLUSTER_KEY, PoolsConfig
from infra.config.slice_classes import MIN_VERSION_CLASS_ONLY_AUTOCREATION, \
    needs_cluster_autoprovisioning
from infra.config.stack import StackConfig
from infra.catalog.gke_versions import shown
from infra.contract.fleet import from_engine, is_fleet
from infra.contract.outputs import ContractError, LocalQueueInfo, OUTPUT_NAME, StackOutputs, \
    load
from infra.record import record, replace
from infra.specs import exports, kueue as kueue_spec, kueue_dra
from infra.specs.slice_classes import computeclass

# Keys of the made-up cluster config that are the host's, never the pools stack's: a problem
# under one of them is reported against onCluster.stack.
_HOST_KEYS = ("project", "region", "zones", "clusterName", "releaseChannel", "gkeVersion",
              "network", "queues", "addons", "systemPool")
_SYSTEM_POOL = "system"  # the host's system node pool (infra/specs/nodepool.py)


@record
class PoolsPlan:
    cfg: StackConfig  # the host's cluster with this stack's pools and classes
    cluster_id: str  # projects/P/locations/L/clusters/N: the node pools' parent
    node_service_account: str
    compute_classes: tuple[dict[str, Any], ...]
    kueue_objects: tuple[dict[str, Any], ...]
    outputs: StackOutputs  # kubeconfig, endpoint and CA are the host's


def _host(raw: Any, host: str, problems: list[str]) -> StackOutputs | None:
    path = f"{ON_CLUSTER_KEY}.stack"
    if is_fleet(raw):
        problems.append(f"{path}: stack {host!r} is a fleet, not a cluster stack; name the "
                        "cluster stack whose cluster gets the pools")
        return None
    if not isinstance(raw, dict):
        problems.append(f"{path}: stack {host!r} has no '{OUTPUT_NAME}' output: it is not an "
                        "accelstack cluster stack, or not deployed yet")
        return None
    try:
        outputs = load(from_engine(raw))  # as the engine hands it over (ints as floats)
    except ContractError as e:
        problems.append(f"{path}: stack {host!r}: {e}")
        return None
    if outputs.on_cluster is not None:
        problems.append(f"{path}: stack {host!r} is a pools stack (on the cluster of "
                        f"{outputs.on_cluster!r}), not a cluster stack; name the cluster stack")
        return None
    if outputs.cluster.node_service_account is None:
        problems.append(f"{path}: stack {host!r} does not export its nodes' service account "
                        "(outputs written by an older accelstack): run `pulumi up` on it with "
                        "this version first")
        return None
    return outputs


def _region(location: str) -> str:
    # A zone is its region and a letter (us-west4-a); accelstack's clusters are regional.
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else location


def _zones(cfg: PoolsConfig, host: StackOutputs, problems: list[str]) -> list[str]:
    """The host's zones, and every zone a pool or class names that is in its region."""
    region = _region(host.cluster.location)
    zones = list(host.cluster.zones)
    for key, items in (("slices", cfg.slices), ("sliceClasses", cfg.slice_classes)):
        for i, item in enumerate(items):
            named = item.get("zones") if isinstance(item, dict) else None
            for j, zone in enumerate(named if isinstance(named, list) else []):
                if not isinstance(zone, str):
                    continue
                if _region(zone) != region or zone == region:
                    problems.append(f"{key}[{i}].zones[{j}]: {show(zone)} is not a zone of "
                                    f"{region}, the region of {cfg.host_stack}'s cluster")
                elif zone not in zones:
                    zones.append(zone)
    return zones


def _made_up(cfg: PoolsConfig, host: StackOutputs, zones: list[str],
             namespace: str) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "project": host.cluster.project, "region": _region(host.cluster.location),
        "zones": zones, "clusterName": host.cluster.name,
        # The host's network: never created or checked here.
        "network": {"create": False, "name": "host", "subnetwork": "host"},
        "queues": {"namespace": namespace, "localQueue": cfg.name, "clusterQueue": cfg.name,
                   # The host's TAS Topology is the host's; this stack asks for none.
                   "topologyAwareScheduling": "off"},
        "labels": dict(cfg.labels),
    }
    if host.cluster.release_channel:
        raw["releaseChannel"] = host.cluster.release_channel
    if host.storage.gke_version:
        raw["gkeVersion"] = host.storage.gke_version
    if cfg.slices:
        raw["slices"] = list(cfg.slices)
    if cfg.slice_classes:
        raw["sliceClasses"] = list(cfg.slice_classes)
    return raw


def _reword(problem: str, host: str) -> str:
    key = problem.split(":", 1)[0].split(".", 1)[0].split("[", 1)[0]
    if key in _HOST_KEYS:
        return f"{ON_CLUSTER_KEY}.stack: on the cluster of {host!r}: {problem}"
    return problem


def _refusals(cfg: PoolsConfig, parsed: StackConfig, host: StackOutputs) -> list[str]:
    problems = []
    taken = {p.name for p in host.slice_pools} | {c.name for c in host.slice_classes}
    node_pools = {n for p in host.slice_pools for n in p.node_pools} | {_SYSTEM_POOL}
    for i, pool in enumerate(parsed.slices):
        where = f"slices[{i}]"
        if pool.name in taken:
            problems.append(f"{where}.name: {show(pool.name)} is a pool or class of "
                            f"{cfg.host_stack} already (it has {one_of(sorted(taken))}); "
                            "give the pool a name of its own")
        clash = sorted(set(pool.node_pool_names()) & node_pools)
        if clash and pool.name not in taken:
            problems.append(f"{where}.name: node pool {clash[0]} exists on the cluster of "
                            f"{cfg.host_stack}; give the pool a name of its own")
        a = pool.accelerator
        # Each of these needs objects of the cluster's own (its GPU data networks, GKE
        # DRANET's claim templates, the ComputeDomain driver, the queued-provisioning
        # AdmissionCheck), which belong to the host stack.
        why = ("GPUDirect needs the cluster's data networks" if a.networking != "none" else
               "DRANET needs the cluster's claim templates" if pool.dranet else
               "its DRA devices need the cluster's drivers" if kueue_dra.devices_per_node(pool)
               else "queued provisioning needs the cluster's AdmissionCheck"
               if pool.capacity.mode == "queued" else
               "dynamic slicing needs the cluster's slice controller, Topology and "
               "AdmissionCheck" if pool.dynamic is not None else None)
        if why:
            problems.append(f"{where}: {a.name} ({pool.capacity.mode}) cannot be a pool of a "
                            f"pools stack: {why}; declare it in {cfg.host_stack}")
    for i, cls in enumerate(parsed.slice_classes):
        if cls.name in taken:
            problems.append(f"sliceClasses[{i}].name: {show(cls.name)} is a pool or class of "
                            f"{cfg.host_stack} already; give the class a name of its own")
    if parsed.slice_classes and needs_cluster_autoprovisioning(parsed.gke_version):
        # Below this version GKE creates a class's node pools only within the cluster's
        # auto-provisioning limits (infra/specs/slice_classes/autoscaling.py), which are
        # the host cluster's and which this stack cannot raise.
        problems.append(f"sliceClasses: the cluster of {cfg.host_stack} does not pin GKE "
                        f"{shown(MIN_VERSION_CLASS_ONLY_AUTOCREATION)} or later (it pins "
                        f"{parsed.gke_version or 'none'}); before it, a class's node pools "
                        "fit within the cluster's auto-provisioning limits, which a pools "
                        "stack cannot raise")
    return problems


def _kueue(cfg: PoolsConfig, parsed: StackConfig, host: StackOutputs,
           namespaces: list[str]) -> list[dict[str, Any]]:
    flavors = [dataclasses.replace(f, name=f"{cfg.name}-{f.name}")
               for f in kueue_spec.flavors(parsed)]
    # No TAS topology: a pools stack adds no Kueue Topology to its host.
    objs = [kueue_spec.resource_flavor(f, topology=False) for f in flavors]
    cq: dict[str, Any] = {
        "namespaceSelector": {"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "In", "values": namespaces}]},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": kueue_spec.resource_groups(flavors, {f.name: f.quota for f in flavors},
                                                     None, []),
        "preemption": {"withinClusterQueue": "LowerPriority"},
    }
    if host.cohort:
        cq["cohortName"] = host.cohort
    objs.append({"apiVersion": kueue_spec.API, "kind": "ClusterQueue",
                 "metadata": {"name": cfg.name}, "spec": cq})
    for ns in namespaces:
        objs.append({"apiVersion": kueue_spec.API, "kind": "LocalQueue",
                     "metadata": {"name": cfg.name, "namespace": ns},
                     "spec": {"clusterQueue": cfg.name}})
    return objs


def plan(cfg: PoolsConfig, raw_host: Any) -> PoolsPlan:
    """The plan from the host's raw ``accelstack`` output; ConfigError listing every
    problem (paths as in the pools stack's file) when the pools do not fit the host."""
    problems: list[str] = []
    host = _host(raw_host, cfg.host_stack, problems)
    if host is None:
        raise ConfigError(problems)
    have = sorted({q.namespace for q in host.local_queues} | {host.workload_namespace})
    namespaces = list(cfg.namespaces) or [host.workload_namespace]
    for i, ns in enumerate(cfg.namespaces):
        if ns not in have:
            problems.append(f"{ON_CLUSTER_KEY}.namespaces[{i}]: {show(ns)} is not a workload "
                            f"namespace of {cfg.host_stack} (it has {one_of(have)})")
    zones = _zones(cfg, host, problems)
    if problems:
        raise ConfigError(problems)
    try:
        parsed = config_mod.parse(_made_up(cfg, host, zones, namespaces[0]))
    except ConfigError as e:
        raise ConfigError([_reword(p, cfg.host_stack) for p in e.problems]) from None
    problems = _refusals(cfg, parsed, host)
    if problems:
        raise ConfigError(problems)
    parsed = replace(parsed, slices=tuple(
        replace(pool, pools_stack=cfg.stack) for pool in parsed.slices))
    sa = host.cluster.node_service_account
    assert sa is not None
    c = host.cluster
    contract = exports.build(parsed, cfg.stack, endpoint=c.endpoint,
                             ca_certificate=c.ca_certificate, kubeconfig=host.kubeconfig,
                             dns_endpoint=c.dns_endpoint, node_service_account=sa)
    contract = replace(
        contract, cluster=host.cluster,
        local_queues=tuple(LocalQueueInfo(cfg.name, ns, cfg.name) for ns in namespaces),
        priority_classes=host.priority_classes, jobset_version=host.jobset_version,
        kueue_version=host.kueue_version, image_repository=host.image_repository,
        storage=host.storage, cached_images=(), pathways=None, cohort=host.cohort,
        on_cluster=cfg.host_stack)
    return PoolsPlan(
        cfg=parsed,
        cluster_id=f"projects/{c.project}/locations/{c.location}/clusters/{c.name}",
        node_service_account=sa,
        compute_classes=tuple(computeclass.compute_class(k, service_account=sa)
                              for k in parsed.slice_classes),
        kueue_objects=tuple(_kueue(cfg, parsed, host, namespaces)),
        outputs=contract)
