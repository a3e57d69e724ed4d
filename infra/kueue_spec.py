"""Kueue objects derived from the declared slices (API kueue.x-k8s.io/v1beta2), as data.

Kueue's quota is exactly the capacity the stack declares: one ResourceFlavor per distinct
slice type (its node labels and tolerations are those of the outputs contract), and a
ClusterQueue whose nominal quota per flavor is the chips of the pools behind it (the NAP
limit for auto-provisioned accelerators). Teams get ClusterQueues of their own in one
cohort; the shared queue keeps what the teams do not take and may borrow the rest.
Accelerator flavors count only their accelerator resource: accelstack's workloads on
accelerator nodes request the accelerator alone, so CPU and memory quota (from CPU slice
pools, or ``queues.cpuQuota`` for the system pool) are for CPU workloads.
Must not import pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infra import catalog, tas
from infra.addons_config import PRIORITY_CLASSES
from infra.catalog import GPU_RESOURCE, TPU_RESOURCE
from infra.config import SlicePool, StackConfig
from infra.nodepool_spec import node_selector, tolerations

API = "kueue.x-k8s.io/v1beta2"
TAS_TOPOLOGY = tas.TOPOLOGY
TAS_LEVELS = tas.LEVELS
QUEUED_CHECK = "dws-prov"
QUEUED_CONFIG = "dws-config"
QUEUED_CLASS = "queued-provisioning.gke.io"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"


@dataclass
class Flavor:
    name: str
    resource: str  # google.com/tpu, nvidia.com/gpu or cpu
    node_labels: dict[str, str]
    tolerations: list[dict[str, str]]
    quota: int  # chips, or vCPUs for CPU flavors
    memory_gi: int = 0  # CPU flavors
    pools: list[str] = field(default_factory=list)
    queued: bool = False
    topology: str | None = None


def _flavor_key(pool: SlicePool) -> str:
    a = pool.accelerator
    if a.kind == "cpu":
        return f"cpu-{pool.name}"  # accelerator flavors never start with "cpu-"
    return f"{a.name}-{pool.capacity.mode}"


def _uses_tas(cfg: StackConfig, pool: SlicePool) -> bool:
    # Only where GKE labels the nodes with the topology (infra/tas.py); the renderer
    # asks for a topology on these pools' workloads, so they share queues with plain flavors.
    return tas.uses_tas(cfg, pool)


def flavors(cfg: StackConfig) -> list[Flavor]:
    """The flavors, in declaration order; pools of the same slice type share one."""
    out: dict[str, Flavor] = {}
    for pool in cfg.slices:
        a = pool.accelerator
        key = _flavor_key(pool)
        if a.kind == "cpu":
            vcpus = pool.count * a.chips
            mem = int(pool.count * a.vms_per_slice * catalog.memory_gb(a))
            out[key] = Flavor(key, "cpu", node_selector(pool), tolerations(pool), vcpus, mem,
                              [pool.name])
            continue
        f = out.get(key)
        if f is None:
            assert a.resource_name is not None
            f = out[key] = Flavor(key, a.resource_name, node_selector(pool), tolerations(pool),
                                  0, queued=pool.capacity.mode == "queued",
                                  topology=TAS_TOPOLOGY if _uses_tas(cfg, pool) else None)
        f.quota += pool.chips
        f.pools.append(pool.name)
    nap = cfg.auto_provisioning
    if nap:
        tpu_labels = {g.gke_accelerator for g in catalog.TPU_GENERATIONS}
        for accel, limit in nap.accelerators.items():
            tpu = accel in tpu_labels
            label = catalog.TPU_ACCELERATOR_LABEL if tpu else catalog.GPU_ACCELERATOR_LABEL
            taint = catalog.TPU_TAINT if tpu else catalog.GPU_TAINT
            name = f"nap-{accel}"
            out[name] = Flavor(name, TPU_RESOURCE if tpu else GPU_RESOURCE, {label: accel},
                               [taint.toleration()], limit)
    if cfg.queues.cpu_quota is not None:
        cpu, mem = cfg.queues.cpu_quota
        out["system-cpu"] = Flavor("system-cpu", "cpu", {"accelstack.dev/slice-pool": "system"},
                                   [], cpu, mem)
    return list(out.values())


def _resource_groups(flavor_list: list[Flavor], quota: dict[str, int],
                     borrow: dict[str, int] | None) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = []
    for resource in (TPU_RESOURCE, GPU_RESOURCE, "cpu"):
        members = [f for f in flavor_list if f.resource == resource]
        if not members:
            continue
        covered = ["cpu", "memory"] if resource == "cpu" else [resource]
        entries = []
        for f in members:
            share = quota.get(f.name, 0) / f.quota if f.quota else 0
            resources: list[dict[str, Any]] = [{"name": resource,
                                                "nominalQuota": quota.get(f.name, 0)}]
            if resource == "cpu":
                resources.append({"name": "memory",
                                  "nominalQuota": f"{int(f.memory_gi * share)}Gi"})
            if borrow is not None:
                resources[0]["borrowingLimit"] = borrow.get(f.name, 0)
                if resource == "cpu":
                    limit = borrow.get(f.name, 0) / f.quota if f.quota else 0
                    resources[1]["borrowingLimit"] = f"{int(f.memory_gi * limit)}Gi"
            entries.append({"name": f.name, "resources": resources})
        groups.append({"coveredResources": covered, "flavors": entries})
    return groups


def _per_flavor(cfg: StackConfig, flavor_list: list[Flavor], by_pool: dict[str, int]
                ) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in flavor_list:
        for pool in f.pools:
            if pool in by_pool:
                out[f.name] = out.get(f.name, 0) + by_pool[pool]
    return out


def _cluster_queue(cfg: StackConfig, name: str, namespace: str, flavor_list: list[Flavor],
                   quota: dict[str, int], borrow: dict[str, int] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": _resource_groups(flavor_list, quota, borrow),
        "preemption": {"withinClusterQueue": "LowerPriority"},
    }
    if cfg.queues.teams:
        spec["cohortName"] = cfg.queues.cohort
        spec["preemption"]["reclaimWithinCohort"] = "Any"
        spec["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority"}
    queued = [f.name for f in flavor_list if f.queued]
    if queued:
        spec["admissionChecksStrategy"] = {"admissionChecks": [
            {"name": QUEUED_CHECK, "onFlavors": queued}]}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _local_queue(name: str, namespace: str, cluster_queue: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue}}


def kueue_objects(cfg: StackConfig) -> list[dict[str, Any]]:
    """Every Kueue object of the stack, in the order they may be created."""
    q = cfg.queues
    flavor_list = flavors(cfg)
    objs: list[dict[str, Any]] = []
    if any(f.topology for f in flavor_list):
        objs.append({"apiVersion": API, "kind": "Topology", "metadata": {"name": TAS_TOPOLOGY},
                     "spec": {"levels": [{"nodeLabel": label} for label in TAS_LEVELS]}})
    for f in flavor_list:
        spec: dict[str, Any] = {"nodeLabels": dict(f.node_labels)}
        if f.tolerations:
            spec["tolerations"] = [dict(t) for t in f.tolerations]
        if f.topology:
            spec["topologyName"] = f.topology
        objs.append({"apiVersion": API, "kind": "ResourceFlavor",
                     "metadata": {"name": f.name}, "spec": spec})
    queued = [f for f in flavor_list if f.queued]
    if queued:
        objs.append({
            "apiVersion": API, "kind": "ProvisioningRequestConfig",
            "metadata": {"name": QUEUED_CONFIG},
            "spec": {
                "provisioningClassName": QUEUED_CLASS,
                "managedResources": sorted({f.resource for f in queued}),
                # Pods land only on the nodes provisioned for their own request.
                "podSetUpdates": {"nodeSelector": [{
                    "key": "autoscaling.gke.io/provisioning-request",
                    "valueFromProvisioningClassDetail": "ResizeRequestName"}]},
            },
        })
        objs.append({
            "apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": QUEUED_CHECK},
            "spec": {"controllerName": PROVISIONING_CONTROLLER,
                     "parameters": {"apiGroup": "kueue.x-k8s.io",
                                    "kind": "ProvisioningRequestConfig",
                                    "name": QUEUED_CONFIG}},
        })
    for name, value in PRIORITY_CLASSES:
        objs.append({"apiVersion": API, "kind": "WorkloadPriorityClass",
                     "metadata": {"name": name}, "value": value,
                     "description": f"accelstack priority {name}"})
    totals = {f.name: f.quota for f in flavor_list}
    team_quotas = [_per_flavor(cfg, flavor_list, dict(t.quota)) for t in q.teams]
    shared = {k: v - sum(tq.get(k, 0) for tq in team_quotas) for k, v in totals.items()}
    objs.append(_cluster_queue(cfg, q.cluster_queue, q.namespace, flavor_list, shared, None))
    for team, tq in zip(q.teams, team_quotas):
        borrow = (_per_flavor(cfg, flavor_list, dict(team.borrowing_limit))
                  if team.borrowing_limit is not None else None)
        objs.append(_cluster_queue(cfg, team.name, team.namespace, flavor_list, tq, borrow))
    objs.append(_local_queue(q.local_queue, q.namespace, q.cluster_queue))
    for team in q.teams:
        objs.append(_local_queue(q.local_queue, team.namespace, team.name))
    return objs


def namespaces(cfg: StackConfig) -> list[dict[str, Any]]:
    names = [cfg.queues.namespace] + [t.namespace for t in cfg.queues.teams]
    return [{"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": n, "labels": {"app.kubernetes.io/managed-by": "accelstack"}}}
            for n in names]
