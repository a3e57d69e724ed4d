"""Kueue objects derived from the declared slices (API kueue.x-k8s.io/v1beta2), as data.

Kueue's quota is exactly the capacity the stack declares: one ResourceFlavor per distinct
slice type (its node labels and tolerations are those of the outputs contract), and a
ClusterQueue whose nominal quota per flavor is the chips of the pools behind it (the NAP
limit for auto-provisioned accelerators, the chips limit for a slice class). Teams get ClusterQueues of their own in one
cohort; the shared queue keeps what the teams do not take and may borrow the rest.
Every pod accelstack renders requests CPU and memory too (infra/catalog/pod_resources.py), so
every flavor covers cpu and memory: accelerator flavors hold the pod share of their nodes
(the same figure the render requests), CPU flavors their VMs, ``queues.cpuQuota`` the
system pool. Kueue allows a resource in one resource group only (v0.19.2
pkg/webhooks/clusterqueue_webhook.go validateResourceGroups), so a ClusterQueue has one
group covering the accelerator resources, cpu and memory, and each flavor lists all of
them (0 where it has none). A pod gets one flavor for all its resources: a TPU or GPU pod
never gets a CPU flavor (no chips there), and a CPU-only pod never gets an accelerator
flavor, because those declare GKE's accelerator taint as ``nodeTaints`` and Kueue admits
to a flavor only pods that tolerate its taints (flavorassigner.go); accelstack's
accelerator pods carry the toleration. Devices the pods claim through DRA (A4X IMEX
channels, DRANET NICs) are quota too, in the same group, under their device class's name
(infra/specs/kueue_dra.py says why Kueue needs them mapped and counted).
Must not import pulumi.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from infra.catalog import tables as catalog
from infra.catalog import pod_resources
from infra.specs import dynamic_slicing as dynamic_spec
from infra.specs import kueue_dra, tas
from infra.specs import checkpointing as checkpointing_spec
from infra.config.addons import PRIORITY_CLASSES
from infra.specs.addons import MANAGED_NAMESPACE_LABEL
from infra.catalog.tables import GPU_RESOURCE, TPU_RESOURCE
from infra.config.stack import SliceClass, SlicePool, StackConfig
from infra.specs.nodepool import node_selector, tolerations, vms_total
from infra.specs.slice_classes import placement as class_placement

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
    cpu_milli: int = 0  # accelerator flavors: the pod share of CPU times their nodes
    memory_mi: int = 0  # accelerator flavors: the pod share of memory times their nodes
    node_taints: list[dict[str, str]] = field(default_factory=list)
    max_run_seconds: int | None = None  # queued flavors: the shortest of their pools
    devices: dict[str, int] = field(default_factory=dict)  # DRA device class -> devices
    slice_check: bool = False  # dynamic slicing: the slice controller's admission check

    def cpu_memory(self, share: float) -> tuple[str | int, str]:
        """The flavor's cpu and memory quota, scaled by ``share`` of its main quota."""
        if self.resource == "cpu":
            return int(self.quota * share), f"{int(self.memory_gi * share)}Gi"
        return (pod_resources.cpu_quantity(int(self.cpu_milli * share)),
                f"{int(self.memory_mi * share)}Mi")


def _accelerator_taint(pool: SlicePool) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(nodeTaints, tolerations) of a pool's flavor: GKE's TPU/GPU taint is a node taint of
    the flavor (only pods that tolerate it are given the flavor); the other taints
    (Spot, queued provisioning) stay tolerations that Kueue adds to admitted pods."""
    taint = pool.accelerator.taint
    tols = tolerations(pool)
    if taint is None:
        return [], tols
    return [taint.to_dict()], [t for t in tols if t != taint.toleration()]


def _flavor_key(pool: SlicePool) -> str:
    a = pool.accelerator
    if pool.dynamic is not None:
        return dynamic_spec.flavor_name(pool)  # its own topology and admission check
    if a.kind == "cpu":
        return f"cpu-{pool.name}"  # accelerator flavors never start with "cpu-"
    if pool.pools_stack is not None:
        return f"{pool.name}-{a.name}-{pool.capacity.mode}"  # selects its pool's nodes only
    return f"{a.name}-{pool.capacity.mode}"


def _uses_tas(cfg: StackConfig, pool: SlicePool) -> bool:
    # Only where GKE labels the nodes with the topology (infra/specs/tas.py); the renderer
    # asks for a topology on these pools' workloads, so they share queues with plain flavors.
    return tas.uses_tas(cfg, pool)


def resource_flavor(f: Flavor, topology: bool = True) -> dict[str, Any]:
    """The ResourceFlavor of ``f``: its nodes' labels, taints and tolerations, and its TAS
    topology unless ``topology`` is False."""
    spec: dict[str, Any] = {"nodeLabels": dict(f.node_labels)}
    if f.node_taints:
        spec["nodeTaints"] = [dict(t) for t in f.node_taints]
    if f.tolerations:
        spec["tolerations"] = [dict(t) for t in f.tolerations]
    if f.topology and topology:
        spec["topologyName"] = f.topology
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": f.name},
            "spec": spec}


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
            taints, tols = _accelerator_taint(pool)
            f = out[key] = Flavor(key, a.resource_name, node_selector(pool), tols,
                                  0, queued=pool.capacity.mode == "queued",
                                  topology=TAS_TOPOLOGY if _uses_tas(cfg, pool) else None,
                                  node_taints=taints)
            if pool.dynamic is not None:
                f.topology, f.slice_check = dynamic_spec.TOPOLOGY, True
        f.quota += pool.chips
        run = pool.capacity.max_run_seconds
        if f.queued and run is not None:
            f.max_run_seconds = run if f.max_run_seconds is None else min(f.max_run_seconds, run)
        # Less a multi-tier checkpointing RAM disk: node memory outside any pod's request.
        share = pod_resources.pod_share(a.machine_type,
                                        checkpointing_spec.ram_disk_mi(cfg, pool))
        if share is not None:
            f.cpu_milli += share.cpu_milli * vms_total(pool)
            f.memory_mi += share.memory_mi * vms_total(pool)
        for device_class, per_node in kueue_dra.devices_per_node(pool).items():
            f.devices[device_class] = f.devices.get(device_class, 0) + per_node * vms_total(pool)
        f.pools.append(pool.name)
    for cls in cfg.slice_classes:
        f = _class_flavor(cls)
        out[f.name] = f
    nap = cfg.auto_provisioning
    if nap:
        tpu_labels = {g.gke_accelerator for g in catalog.TPU_GENERATIONS}
        for accel, limit in nap.accelerators.items():
            tpu = accel in tpu_labels
            label = catalog.TPU_ACCELERATOR_LABEL if tpu else catalog.GPU_ACCELERATOR_LABEL
            taint = catalog.TPU_TAINT if tpu else catalog.GPU_TAINT
            name = f"nap-{accel}"
            labels: dict[str, str] = {label: accel}
            nap_tols: list[dict[str, str]] = []
            if any(m.arm_host and m.gke_accelerator == accel for m in catalog.GPU_MODELS):
                # Arm hosts (A4X): GKE taints them kubernetes.io/arch=arm64:NoSchedule.
                labels[catalog.ARCH_LABEL] = catalog.ARM64
                nap_tols.append(catalog.ARM_TAINT.toleration())
            # GKE picks the machine type of auto-provisioned nodes, so their CPU and memory
            # quota is the cluster's auto-provisioning limit (an upper bound NAP enforces).
            out[name] = Flavor(name, TPU_RESOURCE if tpu else GPU_RESOURCE, labels,
                               nap_tols, limit, cpu_milli=nap.cpu_max * 1000,
                               memory_mi=int(nap.memory_gb_max * 1e9) // (1024 * 1024),
                               node_taints=[taint.to_dict()])
    if cfg.queues.cpu_quota is not None:
        cpu, mem = cfg.queues.cpu_quota
        out["system-cpu"] = Flavor("system-cpu", "cpu", {"accelstack.dev/slice-pool": "system"},
                                   [], cpu, mem)
    return list(out.values())


def _class_flavor(cls: SliceClass) -> Flavor:
    """A slice class's flavor: its nodes' class labels, GKE's accelerator taint and the
    class's own taint as node taints (only pods that tolerate them, the class's pods, get
    the flavor), and the class's chips limit as quota. One flavor for every shape of the
    class, so the chips limit is shared by all of them; pods pick their shape by their own
    TPU selectors (infra/specs/slice_classes/placement.py). CPU and memory: the pod share
    of the class's nodes at its limit, on the shape with the most per chip."""
    taints = [t.to_dict() for t in cls.shapes[0].taints]
    taints.append(class_placement.class_taint(cls).to_dict())
    user = [t for t in class_placement.own_tolerations(cls)
            if t["key"] != class_placement.COMPUTE_CLASS_LABEL]
    f = Flavor(f"class-{cls.name}", cls.resource_name, class_placement.class_labels(cls),
               user, cls.max_chips, pools=[cls.name], node_taints=taints)
    for a in cls.shapes:
        share = pod_resources.pod_share(a.machine_type)
        if share is not None:
            nodes = cls.max_chips // a.chips_per_vm
            f.cpu_milli = max(f.cpu_milli, share.cpu_milli * nodes)
            f.memory_mi = max(f.memory_mi, share.memory_mi * nodes)
    return f


def _devices(f: Flavor, classes: list[str], share: float) -> dict[str, int]:
    # Rounded up: devices come with nodes, so chips (not devices) stay the binding limit.
    return {c: math.ceil(f.devices.get(c, 0) * share - 1e-9) for c in classes}


def resource_groups(flavor_list: list[Flavor], quota: dict[str, int],
                     borrow: dict[str, int] | None, classes: list[str]
                     ) -> list[dict[str, Any]]:
    """One group covering every resource of the stack (Kueue forbids a resource in two
    groups); each flavor lists them all, with 0 for the chips it does not have."""
    accelerators = [r for r in (TPU_RESOURCE, GPU_RESOURCE)
                    if any(f.resource == r for f in flavor_list)]
    covered = accelerators + classes + ["cpu", "memory"]
    order = ([f for f in flavor_list if f.resource == "cpu"]
             + [f for r in accelerators for f in flavor_list if f.resource == r])
    entries = []
    for f in order:
        share = quota.get(f.name, 0) / f.quota if f.quota else 0
        cpu, memory = f.cpu_memory(share)
        amounts: dict[str, Any] = {r: 0 for r in accelerators}
        if f.resource != "cpu":
            amounts[f.resource] = quota.get(f.name, 0)
        amounts.update(_devices(f, classes, share))
        amounts.update(cpu=cpu, memory=memory)
        resources: list[dict[str, Any]] = [{"name": r, "nominalQuota": amounts[r]}
                                           for r in covered]
        if borrow is not None:
            limit = borrow.get(f.name, 0) / f.quota if f.quota else 0
            b_cpu, b_memory = f.cpu_memory(limit)
            limits: dict[str, Any] = {r: 0 for r in accelerators}
            if f.resource != "cpu":
                limits[f.resource] = borrow.get(f.name, 0)
            limits.update(_devices(f, classes, limit))
            limits.update(cpu=b_cpu, memory=b_memory)
            for res in resources:
                res["borrowingLimit"] = limits[res["name"]]
        entries.append({"name": f.name, "resources": resources})
    return [{"coveredResources": covered, "flavors": entries}] if entries else []


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
        "resourceGroups": resource_groups(flavor_list, quota, borrow,
                                           kueue_dra.device_classes(cfg)),
        "preemption": {"withinClusterQueue": "LowerPriority"},
    }
    if cfg.queues.teams:
        spec["cohortName"] = cfg.queues.cohort
        spec["preemption"]["reclaimWithinCohort"] = "Any"
        spec["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority"}
    checks = _queued_checks(flavor_list)
    strategy = [{"name": check, "onFlavors": [f.name for f in members]}
                for check, (_, _, members) in checks.items()]
    sliced = [f.name for f in flavor_list if f.slice_check]
    if sliced:  # every ClusterQueue offers every flavor, so each gets the slice check
        strategy.append({"name": dynamic_spec.ADMISSION_CHECK, "onFlavors": sliced})
    if strategy:
        spec["admissionChecksStrategy"] = {"admissionChecks": strategy}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _queued_checks(flavor_list: list[Flavor]
                   ) -> dict[str, tuple[str, int | None, list[Flavor]]]:
    """check name -> (ProvisioningRequestConfig name, max run seconds, flavors).

    A queued pool's maximum run time is a parameter of its ProvisioningRequest
    (maxRunDurationSeconds, GKE: "Deploy GPU batch and AI workloads with queued
    provisioning", ProvisioningRequest parameters; default and maximum seven days), not
    a node pool setting: Kueue copies a ProvisioningRequestConfig's parameters into the
    requests it creates, so each distinct duration gets a config and check of its own."""
    out: dict[str, tuple[str, int | None, list[Flavor]]] = {}
    for f in flavor_list:
        if not f.queued:
            continue
        suffix = "" if f.max_run_seconds is None else f"-{f.max_run_seconds}s"
        entry = out.setdefault(QUEUED_CHECK + suffix,
                               (QUEUED_CONFIG + suffix, f.max_run_seconds, []))
        entry[2].append(f)
    return out


def _local_queue(name: str, namespace: str, cluster_queue: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue}}


def kueue_objects(cfg: StackConfig) -> list[dict[str, Any]]:
    """Every Kueue object of the stack, in the order they may be created."""
    q = cfg.queues
    flavor_list = flavors(cfg)
    objs: list[dict[str, Any]] = []
    objs += dynamic_spec.kueue_objects(cfg)
    if any(f.topology == TAS_TOPOLOGY for f in flavor_list):
        objs.append({"apiVersion": API, "kind": "Topology", "metadata": {"name": TAS_TOPOLOGY},
                     "spec": {"levels": [{"nodeLabel": label} for label in TAS_LEVELS]}})
    objs += [resource_flavor(f) for f in flavor_list]
    for check, (config, seconds, members) in _queued_checks(flavor_list).items():
        prc: dict[str, Any] = {
            "provisioningClassName": QUEUED_CLASS,
            "managedResources": sorted({f.resource for f in members}),
            # Pods land only on the nodes provisioned for their own request.
            "podSetUpdates": {"nodeSelector": [{
                "key": "autoscaling.gke.io/provisioning-request",
                "valueFromProvisioningClassDetail": "ResizeRequestName"}]},
        }
        if seconds is not None:
            prc["parameters"] = {"maxRunDurationSeconds": str(seconds)}
        objs.append({"apiVersion": API, "kind": "ProvisioningRequestConfig",
                     "metadata": {"name": config}, "spec": prc})
        objs.append({
            "apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": check},
            "spec": {"controllerName": PROVISIONING_CONTROLLER,
                     "parameters": {"apiGroup": "kueue.x-k8s.io",
                                    "kind": "ProvisioningRequestConfig",
                                    "name": config}},
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
    # The label opts the namespace into Kueue's management (addons_spec.kueue_manager_config).
    return [{"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": n, "labels": {"app.kubernetes.io/managed-by": "accelstack",
                                                MANAGED_NAMESPACE_LABEL: "true"}}}
            for n in names]
