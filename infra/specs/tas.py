"""Topology-aware scheduling (TAS): which GPU pools get a Kueue flavor with a topology.

Kueue's TAS places a workload's pods by the node labels of a Topology; GKE's
``gke-default`` topology has the levels below, and Kueue ignores nodes that lack them
(a TAS flavor over unlabelled nodes has no capacity, so its workloads never start). GKE
labels the nodes of its AI-optimized GPU machines with their physical topology only for
some capacity modes:

- A3 High and A3 Mega: only with flex-start or a reservation
  (xpk ``src/xpk/commands/common.py`` ``is_GPU_TAS_possible``).
- A3 Ultra and later (A3 Ultra, A4, A4X): with flex-start, or with compact placement
  whatever the capacity ("Flex-start uses best-effort compact placement", "You can only
  get topology information when using Spot VMs if you configure compact placement":
  https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute; the
  same rule in xpk ``is_GPU_TAS_possible``). A4X pools are placed by their workload
  policy, a compact placement.
- Queued provisioning is not listed for either, so it gets no TAS flavor.

A workload on a TAS flavor must ask for a topology: Kueue v0.19.2 applies TAS implicitly
only when every flavor of the ClusterQueue is a TAS flavor
(``pkg/scheduler/flavorassigner/tas_flavorassigner.go``: ``isTASImplied`` uses
``ClusterQueueSnapshot.IsTASOnly``); otherwise a pod set without a topology request is
refused the TAS flavor ("Flavor ... supports only TopologyAwareScheduling"). The stack's
queues mix TAS flavors with plain ones (the system CPU flavor, NAP flavors, other pools),
so the renderer puts the pod-set annotation below on every workload of a TAS pool
(``PODSET_ANNOTATION``) rather than splitting queues: one queue keeps one quota, one
cohort and one LocalQueue per namespace, and the annotation is what xpk renders too
(``podset-preferred-topology``). Preferred, not required: Kueue packs the pods into one
block when they fit and spreads them over blocks when they do not, so a job larger than
a block still runs. Pure; must not import pulumi.
"""

from __future__ import annotations

from infra.config.stack import SlicePool, StackConfig

TOPOLOGY = "gke-default"
# GKE's documented levels for topology-aware scheduling on AI-optimized GPU clusters.
LEVELS = ("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
          "cloud.google.com/gce-topology-host", "kubernetes.io/hostname")
PODSET_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
PODSET_LEVEL = LEVELS[0]
# A4X: GKE labels each GB200 NVL72 domain as a sub-block, and Google's A4X blueprint asks
# Kueue to place a job's pods within one (GoogleCloudPlatform/cluster-toolkit
# examples/gke-a4x: its Topology lists gce-topology-subblock under the block, and its
# example JobSet annotates kueue.x-k8s.io/podset-required-topology:
# cloud.google.com/gce-topology-subblock). Preferred here, so a job that fits one NVL72
# domain gets one, and a larger job still runs across domains.
NVLINK_DOMAIN_LEVEL = LEVELS[1]
_NVLINK_DOMAIN_FAMILIES = ("a4x",)

_A3_FIRST = ("a3-high", "a3-mega")  # H100: flex-start or reservation only
_A3_ULTRA_AND_LATER = ("a3-ultra", "a4", "a4x")  # flex-start, or compact placement


def gke_labels_topology(pool: SlicePool) -> bool:
    """Whether GKE puts the gke-default topology labels on this pool's nodes."""
    family, mode = pool.accelerator.family, pool.capacity.mode
    if family in _A3_FIRST:
        return mode in ("flex-start", "reservation")
    if family in _A3_ULTRA_AND_LATER:
        return mode == "flex-start" or (mode != "queued" and (
            pool.placement == "compact" or family == "a4x"))
    return False


def uses_tas(cfg: StackConfig, pool: SlicePool) -> bool:
    """``queues.topologyAwareScheduling``: auto follows GKE's labelling rules above; on
    asks TAS for every GPU pool (the user vouches for the labels); off for none."""
    mode = cfg.queues.topology_aware
    if pool.accelerator.kind != "gpu" or mode == "off":
        return False
    return mode == "on" or gke_labels_topology(pool)


def podset_level(cfg: StackConfig, pool: SlicePool) -> str | None:
    """The topology level a workload on this pool asks for, or None without TAS."""
    if not uses_tas(cfg, pool):
        return None
    if pool.accelerator.family in _NVLINK_DOMAIN_FAMILIES:
        return NVLINK_DOMAIN_LEVEL
    return PODSET_LEVEL
