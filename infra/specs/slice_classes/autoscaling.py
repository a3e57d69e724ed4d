"""The cluster-level node auto-provisioning limits a stack with slice classes needs.

GKE creates node pools for a ComputeClass without cluster-level node auto-provisioning
from 1.33.3-gke.1136000; before, "you must also enable cluster-level node
auto-provisioning" (https://cloud.google.com/kubernetes-engine/docs/concepts/
about-custom-compute-classes, "Node pool auto-creation and ComputeClasses"), and "any
resource limits that you set for the cluster when you enable node auto-provisioning also
apply to the node pools that GKE creates for ComputeClasses"
(https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning,
Limitations). pulumi-gcp's ``cluster_autoscaling.resource_limits`` "apply to node pool
autoscaling in addition to node auto-provisioning" (pulumi_gcp 10.2.0,
ClusterClusterAutoscalingArgs), so the limits cover every node the stack may run: the
system pool, the fixed pools, what ``nodeAutoProvisioning`` itself allows, and each
class at its limits. Must not import pulumi.
"""

from __future__ import annotations

import math

from infra.catalog.tables import vm_shape
from infra.config.slice_classes import needs_cluster_autoprovisioning
from infra.config.stack import StackConfig


def needs_autoprovisioning(cfg: StackConfig) -> bool:
    return bool(cfg.slice_classes) and needs_cluster_autoprovisioning(cfg.gke_version)


def _vm(machine_type: str) -> tuple[float, float]:
    shape = vm_shape(machine_type)
    return (shape.vcpus, shape.memory_gb) if shape else (0.0, 0.0)


def class_totals(cfg: StackConfig) -> tuple[int, int, dict[str, int]]:
    """(vCPUs, memory GB, chips per NAP accelerator type) of every class at its limits."""
    cpu = mem = 0.0
    chips: dict[str, int] = {}
    for cls in cfg.slice_classes:
        # The shape with the most vCPUs (and memory) per chip bounds the class's hosts.
        c, m = (max(_vm(a.machine_type)[i] / a.chips_per_vm * cls.max_chips
                    for a in cls.shapes) for i in (0, 1))
        cpu, mem = cpu + c, mem + m
        for gke_type in sorted({str(a.gke_accelerator) for a in cls.shapes}):
            chips[gke_type] = chips.get(gke_type, 0) + cls.max_chips
    return math.ceil(cpu), math.ceil(mem), chips


def fixed_totals(cfg: StackConfig) -> tuple[int, int, dict[str, int]]:
    """(vCPUs, memory GB, chips per accelerator type) of the system and fixed pools full."""
    c, m = _vm(cfg.system_pool.machine_type)
    nodes = cfg.system_pool.max_nodes * len(cfg.zones)
    cpu, mem = c * nodes, m * nodes
    chips: dict[str, int] = {}
    for pool in cfg.slices:
        a = pool.accelerator
        c, m = _vm(a.machine_type)
        cpu, mem = cpu + c * pool.nodes, mem + m * pool.nodes
        if a.gke_accelerator and a.kind != "cpu":
            chips[a.gke_accelerator] = chips.get(a.gke_accelerator, 0) + pool.chips
    return math.ceil(cpu), math.ceil(mem), chips


def limits(cfg: StackConfig) -> tuple[int, int, dict[str, int]]:
    """(cpu, memory GB, accelerator type -> chips) for the cluster's auto-provisioning:
    ``nodeAutoProvisioning`` as declared plus the classes, or, when the classes alone
    turn it on, every node the stack may run."""
    cpu, mem, chips = class_totals(cfg)
    nap = cfg.auto_provisioning
    if nap is not None:
        base_cpu, base_mem, base_chips = nap.cpu_max, nap.memory_gb_max, dict(nap.accelerators)
    else:
        base_cpu, base_mem, base_chips = fixed_totals(cfg)
    for key, value in base_chips.items():
        chips[key] = chips.get(key, 0) + value
    return base_cpu + cpu, base_mem + mem, dict(sorted(chips.items()))
