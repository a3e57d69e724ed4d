"""Dynamic slicing (TPU7x sub-blocks joined into slices): what the cluster, Kueue and the
outputs contract hold for a pool with ``dynamicSlicing`` (infra/config/dynamic_slicing.py).

- The cluster runs GKE's slice controller (addonsConfig.sliceControllerConfig, pulumi-gcp
  ``slice_controller_config``; ``gcloud container clusters update --enable-slice-
  controller`` in GKE's "Configure TPUs with GKE dynamic slicing").
- Each sub-block is a node pool of 16 VMs whose workload policy has accelerator topology
  4x4x4 in PROVISION_ONLY mode, bound to its sub-block (infra/specs/nodepool.py).
- Kueue: a Topology whose levels are the reservation block, the 4x4x4 partition (one per
  sub-block) and the host; the pool's flavor on it; an AdmissionCheck of the slice
  controller (controllerName accelerator.gke.io/slice) on every ClusterQueue, for that
  flavor, so a workload is admitted only once its Slice is formed. The levels and the
  controller name: AI-Hypercomputer/xpk src/xpk/templates/
  kueue_super_slicing_topology.yaml.j2 and kueue_config.yaml.j2 (ss-kueue-operator), and
  the slice controller's own SliceControllerName. The slice controller's JobSet webhook
  adds the pod sets' topology requests itself (required: block, slice: 4x4x4 partition,
  slice size: pods per sub-block), so the renderer adds none (submit/render/
  dynamic_slicing.py).
- xpk also patches Kueue's controller to 3 replicas at 16 CPU / 64 GiB for super-slicing
  (src/xpk/core/kueue_manager.py, commit "Set big controller resources for
  Super-slicing", #1007); no GKE or Kueue page states that sizing, so the stack does not
  copy it (docs/limits.md).

Pure; must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.catalog import tables as catalog
from infra.catalog.topology import sub_blocks
from infra.config import dynamic_slicing as config_dynamic
from infra.config.stack import SlicePool, StackConfig
from infra.contract.outputs import SlicePoolInfo

API = "kueue.x-k8s.io/v1beta2"
TOPOLOGY = "tpu-sub-blocks"
LEVELS = ("cloud.google.com/gce-topology-block", "cloud.google.com/gke-tpu-partition-4x4x4-id",
          "kubernetes.io/hostname")
ADMISSION_CHECK = "tpu-slice"
CONTROLLER = "accelerator.gke.io/slice"


def pools(cfg: StackConfig) -> list[SlicePool]:
    return [p for p in cfg.slices if p.dynamic is not None]


def cluster_addons(cfg: StackConfig) -> dict[str, Any]:
    """The cluster's addonsConfig entry turning the slice controller on, when needed."""
    return {"slice_controller_config": {"enabled": True}} if pools(cfg) else {}


def flavor_name(pool: SlicePool) -> str:
    return f"{pool.name}-sub-blocks"


def kueue_objects(cfg: StackConfig) -> list[dict[str, Any]]:
    """The Topology and the AdmissionCheck, when the stack has a dynamic slicing pool."""
    if not pools(cfg):
        return []
    return [
        {"apiVersion": API, "kind": "Topology", "metadata": {"name": TOPOLOGY},
         "spec": {"levels": [{"nodeLabel": label} for label in LEVELS]}},
        {"apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": ADMISSION_CHECK},
         "spec": {"controllerName": CONTROLLER}},
    ]


def _per_block(pool: SlicePool, topology: str) -> list[int]:
    """How many slices of ``topology`` each reservation block's sub-blocks make: a slice
    is made of the sub-blocks of one block (infra/config/dynamic_slicing.py)."""
    assert pool.dynamic is not None
    gen = catalog.generation(pool.accelerator.family)
    need = sub_blocks(gen, topology) or 1
    per_block = config_dynamic.sub_blocks_per_block(pool.dynamic.sub_blocks)
    return [n // need for n in per_block.values()]


def slices_of(pool: SlicePool, topology: str) -> int:
    """How many slices of ``topology`` the pool's sub-blocks make at once."""
    return sum(_per_block(pool, topology))


def block_slices_of(pool: SlicePool, topology: str) -> int:
    """The most slices of ``topology`` one workload may have: all of a workload's slices
    share one block (the slice controller's JobSet webhook asks Kueue for every pod of
    the replicated job in one cloud.google.com/gce-topology-block, and Kueue's JobSet pod
    set is replicas x pods: kubernetes-sigs/kueue pkg/controller/jobs/jobset podsCount)."""
    return max(_per_block(pool, topology), default=0)


def contract_entries(pool: SlicePool, base: SlicePoolInfo) -> list[SlicePoolInfo]:
    """One contract entry per shape the pool offers, from the pool's own entry ``base``
    (its node pools, selector, tolerations): the shape's catalog facts and how many."""
    assert pool.dynamic is not None
    out = []
    for topology in pool.dynamic.shapes:
        a = catalog.resolve(f"{catalog.generation(pool.accelerator.family).prefixes[0]}-"
                            f"{topology}")
        out.append(SlicePoolInfo(
            name=base.name, accelerator=a.name, kind=a.kind, family=a.family,
            topology=a.topology, machine_type=a.machine_type, chips_per_vm=a.chips_per_vm,
            vms_per_slice=a.vms_per_slice, slice_count=slices_of(pool, topology),
            capacity_mode=base.capacity_mode, node_pools=base.node_pools, zones=base.zones,
            node_selector=base.node_selector, tolerations=base.tolerations,
            resource_name=a.resource_name, networking=a.networking,
            local_ssd_gib=base.local_ssd_gib, slice_topology=topology,
            block_slice_count=block_slices_of(pool, topology)))
    return out
