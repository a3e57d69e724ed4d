"""Node pool arguments, built as plain data from the typed config and the catalog.

Each function returns the keyword arguments of a pulumi-gcp resource (snake_case, nested
dicts) with outside references (cluster id, service account, networks) passed in as
opaque values, so the arithmetic and the GKE rules are tested without an engine. The
labels, taints and tolerations here are also what the outputs contract tells the
submitter, so a pod's selectors always match the nodes the stack declares.
This module must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.catalog import boot_disks
from infra.specs import dranet as dranet_spec
from infra.specs import upgrades as upgrades_spec
from infra.catalog.tables import TPU_TOPOLOGY_LABEL, Taint, local_ssd_disks, needs_workload_policy
from infra.config.stack import SlicePool, StackConfig, SystemPool
from infra.specs import pool_settings as settings_spec

OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
IMAGE_TYPE = "COS_CONTAINERD"  # GPUDirect-RDMA, gVNIC and image streaming need COS

SPOT_LABEL = "cloud.google.com/gke-spot"
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
QUEUED_LABEL = "cloud.google.com/gke-queued"
POOL_LABEL = "accelstack.dev/slice-pool"
# Nodes of on-demand and reservation pools carry no GKE label that tells them apart, so the
# stack labels every slice node with its capacity mode; selectors (and so Kueue flavors)
# of different capacity never match the same nodes.
CAPACITY_LABEL = "accelstack.dev/capacity"

# GKE Standard labels Spot nodes but does not taint them; the stack taints them so that
# only work that asked for interruptible capacity lands there.
SPOT_TAINT = Taint(SPOT_LABEL, "true")
# Nodes from DWS queued provisioning carry this taint (GKE sets it); tolerated, not declared.
QUEUED_TAINT = Taint(QUEUED_LABEL, "true")
# The nodes a pools stack adds to another stack's cluster carry the pools stack's name in
# this taint: the host's flavors select nodes by slice type and capacity, which such nodes
# share, and only the pools stack's pods tolerate it.
POOLS_STACK_TAINT_KEY = "accelstack.dev/pools-stack"


def node_labels(pool: SlicePool) -> dict[str, str]:
    """Labels the stack puts on every node of the pool (GKE adds its own beside them)."""
    labels = {POOL_LABEL: pool.name, CAPACITY_LABEL: pool.capacity.mode, **pool.labels}
    if pool.dranet:
        labels[dranet_spec.NODE_LABEL] = "true"  # turns on GKE's networking DRA driver
    return labels


def declared_taints(pool: SlicePool) -> list[Taint]:
    """Taints declared in the node pool config. GKE adds the TPU and GPU taints itself."""
    taints = [SPOT_TAINT] if pool.capacity.mode == "spot" else []
    if pool.pools_stack is not None:
        taints.append(Taint(POOLS_STACK_TAINT_KEY, pool.pools_stack))
    taints += [Taint(t.key, t.value, t.effect) for t in pool.settings.taints]
    return taints


def node_selector(pool: SlicePool) -> dict[str, str]:
    """What a pod must select to land on this pool's nodes, and nothing else's."""
    selector = dict(pool.accelerator.node_selector)
    if pool.dynamic is not None:
        # Dynamic slicing: no TPU topology label (a sub-block's nodes are not a slice of a
        # fixed topology until GKE's slice controller joins them, infra/specs/
        # dynamic_slicing.py); the pool label keeps its pods off other TPU7x pools.
        selector.pop(TPU_TOPOLOGY_LABEL, None)
        selector[POOL_LABEL] = pool.name
    mode = pool.capacity.mode
    if not pool.foreign:  # another team's nodes carry GKE's labels only
        selector[CAPACITY_LABEL] = mode
    if mode == "spot":
        selector[SPOT_LABEL] = "true"
    elif mode == "flex-start":
        selector[FLEX_START_LABEL] = "true"
    elif mode == "queued":
        selector[QUEUED_LABEL] = "true"
    if (pool.accelerator.kind == "cpu" or pool.pools_stack is not None) and not pool.foreign:
        # A pools stack's pods select their own pool, never the host's of the same type.
        selector[POOL_LABEL] = pool.name
    return selector


def tolerations(pool: SlicePool) -> list[dict[str, str]]:
    """Tolerations for every taint the pool's nodes carry."""
    taints: list[Taint] = list(pool.accelerator.taints)  # GKE's: TPU, GPU, Arm
    taints += declared_taints(pool)
    if pool.capacity.mode == "queued":
        taints.append(QUEUED_TAINT)
    return [t.toleration() for t in taints]


def vms_total(pool: SlicePool) -> int:
    return pool.count * pool.accelerator.vms_per_slice


# A4X (GB200 NVL72): GKE's A4X pages create a HIGH_THROUGHPUT workload policy with
# accelerator topology 1x72 (72 GPUs on one NVLink domain) and pass it to the node pool
# as its placement policy; a plain COMPACT placement is refused for A4X ("GPU placement
# policy must be provided"). https://docs.cloud.google.com/ai-hypercomputer/docs/create/
# gke-ai-hypercompute-custom-a4x and .../kubernetes-engine/docs/add-on/ray-on-gke/how-to/ray-a4x
# Pods select the pool by its accelerator and capacity labels only: xpk also selects
# cloud.google.com/placement-policy-name for machines with a workload policy (TPU7x,
# gb200-4: src/xpk/core/scheduling.py), but no GKE page found documents that node label.
A4X_ACCELERATOR_TOPOLOGY = "1x72"


def workload_policy_args(cfg: StackConfig, pool: SlicePool, index: int) -> dict[str, Any] | None:
    """TPU7x and TPU7 multi-host slices need a HIGH_THROUGHPUT workload policy with their
    topology; A4X pools one with the NVL72 domain's 1x72."""
    accel = pool.accelerator
    if accel.family == "a4x":
        topology = A4X_ACCELERATOR_TOPOLOGY
        what = f"A4X NVL72 domain ({topology}) for pool {pool.name}"
    elif needs_workload_policy(accel):
        assert accel.topology is not None
        topology = accel.topology
        what = (f"{accel.family.upper().replace('X', 'x')} {accel.topology} slice "
                f"{pool.node_pool_names()[index]}")
    else:
        return None
    policy: dict[str, Any] = {"type": "HIGH_THROUGHPUT", "accelerator_topology": topology}
    if pool.dynamic is not None:
        # A sub-block's chips stay unconnected until the slice controller joins them
        # (pulumi-gcp ResourcePolicyWorkloadPolicy.accelerator_topology_mode PROVISION_ONLY:
        # "the interconnected chips are connected on demand"; xpk creates super-slicing
        # pools' workload policies with --accelerator-topology-mode=PROVISION_ONLY).
        policy["accelerator_topology_mode"] = "PROVISION_ONLY"
        what = f"TPU7x sub-block {pool.node_pool_names()[index]} (dynamic slicing)"
    return {
        "name": f"{cfg.cluster_name}-{pool.node_pool_names()[index]}-wp"[:63],
        "project": cfg.project,
        "region": cfg.region,
        "description": what,
        "workload_policy": policy,
    }


def _reservation_affinity(pool: SlicePool, index: int = 0) -> dict[str, Any] | None:
    cap = pool.capacity
    if cap.mode == "on-demand":
        return None  # GKE's default: consume any matching reservation, else on-demand
    if cap.mode != "reservation":
        # GKE: flex-start and queued nodes are created with --reservation-affinity=none.
        # Spot: Compute Engine states that reserved capacity cannot be used to create Spot
        # VMs or preemptible instances (https://cloud.google.com/compute/docs/instances/
        # choose-reservation-type#limitations), so Spot pools say so explicitly rather
        # than leave GKE's default (consume any matching reservation), as xpk does.
        return {"consume_reservation_type": "NO_RESERVATION"}
    assert cap.reservation is not None
    value = cap.reservation
    if pool.dynamic is not None:
        # Node pool i is bound to sub-block i by its full path, RESERVATION/
        # reservationBlocks/BLOCK/reservationSubBlocks/SUB_BLOCK (xpk src/xpk/core/
        # reservation.py; Compute Engine reservationSubBlocks.get names the parent
        # reservations/R/reservationBlocks/B).
        value = pool.dynamic.sub_blocks[index].path(value)
    elif cap.block:
        value = f"{value}/reservationBlocks/{cap.block}"
    return {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": [value],
    }


def _gpu_reservation_maintenance(pool: SlicePool) -> str | None:
    # A GPU pool consuming a reservation asks for the reservation's host maintenance
    # interval (infra/config/gpu.py: default_host_maintenance has the rule and sources).
    if pool.accelerator.kind != "gpu":
        return None
    return pool.capacity.host_maintenance_interval


def _guest_accelerators(pool: SlicePool) -> list[dict[str, Any]] | None:
    accel = pool.accelerator
    if accel.kind != "gpu":
        return None
    return [{
        "type": accel.gke_accelerator,
        "count": accel.chips_per_vm,
        "gpu_driver_installation_config": {"gpu_driver_version": pool.gpu_driver_version},
    }]


# Host maintenance (node_config.host_maintenance_policy) is left to GKE's default on
# purpose. The field is in GKE's v1beta1 API only; its AS_NEEDED value (what xpk asks for TPU
# pools) "may result in more maintenance operations (live migrations or terminations) for
# the node than the PERIODIC option" (https://cloud.google.com/kubernetes-engine/docs/
# reference/rest/v1beta1/HostMaintenancePolicy), and we found no GKE page asking TPU slices
# to opt into it. A multi-host slice is restarted whole by any maintenance of one host, so
# the stack does not ask for more of it.


def _base_node_config(cfg: StackConfig, machine_type: str, disk_size_gb: int, disk_type: str,
                      service_account: Any, labels: dict[str, str]) -> dict[str, Any]:
    """What every node of the stack runs with: COS, the node service account, shielded
    boot, the GKE metadata server (Workload Identity), image streaming and gVNIC."""
    return {
        "machine_type": machine_type,
        "image_type": IMAGE_TYPE,
        "disk_size_gb": disk_size_gb,
        "disk_type": disk_type,
        "service_account": service_account,
        "oauth_scopes": OAUTH_SCOPES,
        "labels": labels,
        "resource_labels": dict(cfg.labels),
        "metadata": {"disable-legacy-endpoints": "true"},
        "shielded_instance_config": {"enable_secure_boot": True,
                                     "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "gcfs_config": {"enabled": True},
        "gvnic": {"enabled": True},
    }


def slice_node_config(cfg: StackConfig, pool: SlicePool, service_account: Any,
                      index: int = 0) -> dict[str, Any]:
    accel = pool.accelerator
    mode = pool.capacity.mode
    node_config = _base_node_config(cfg, accel.machine_type, pool.disk_size_gb, pool.disk_type,
                                    service_account, node_labels(pool))
    affinity = _reservation_affinity(pool, index)
    if affinity is not None:
        node_config["reservation_affinity"] = affinity
    taints = declared_taints(pool)
    if taints:
        node_config["taints"] = [{"key": t.key, "value": t.value, "effect": _effect(t.effect)}
                                 for t in taints]
    if mode == "spot":
        node_config["spot"] = True
    if mode in ("flex-start", "queued"):
        node_config["flex_start"] = True
        if mode == "flex-start" and pool.capacity.max_run_seconds is not None:
            # Flex-start nodes take their run limit from the node pool; queued
            # provisioning takes it from the ProvisioningRequest (kueue_spec._queued_checks).
            node_config["max_run_duration"] = f"{pool.capacity.max_run_seconds}s"
    guest = _guest_accelerators(pool)
    if guest:
        node_config["guest_accelerators"] = guest
    interval = _gpu_reservation_maintenance(pool)
    if interval is not None:
        node_config["host_maintenance_policy"] = {"maintenance_interval": interval}
    disks = local_ssd_disks(accel.machine_type)
    if disks:
        # The machine's Local SSDs back the node's ephemeral storage (emptyDirs, images,
        # logs; the GCS FUSE file cache of submit/render/mounts.py lives there), as GKE's A3
        # node pools are created (--ephemeral-storage-local-ssd=count=N). Stated with the
        # machine's own count, never left unset: Compute Engine attaches the disks either
        # way, GKE then reports a Local SSD setting of its own choosing, and a pool whose
        # declared field differs from it is replaced on every update
        # (hashicorp/terraform-provider-google#17068, "read only field for lssd machine
        # types"; GoogleCloudPlatform/cluster-toolkit PR #2968 pins these counts for it).
        node_config["ephemeral_storage_local_ssd_config"] = {"local_ssd_count": disks}
    if pool.secondary_boot_disk:
        # GKE's container image cache on a secondary boot disk (needs image streaming,
        # which every pool has through gcfs_config).
        node_config["secondary_boot_disks"] = [{"disk_image": pool.secondary_boot_disk,
                                                "mode": "CONTAINER_IMAGE_CACHE"}]
    return node_config


def _effect(effect: str) -> str:
    return {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE",
            "PreferNoSchedule": "PREFER_NO_SCHEDULE"}[effect]


def slice_node_pool_args(
    cfg: StackConfig,
    pool: SlicePool,
    index: int,
    *,
    cluster: Any,
    service_account: Any,
    additional_networks: list[dict[str, Any]] | None = None,
    workload_policy: Any = None,
) -> dict[str, Any]:
    """Arguments of the ``index``-th node pool of a slice pool."""
    accel = pool.accelerator
    mode = pool.capacity.mode
    name = pool.node_pool_names()[index]
    args: dict[str, Any] = {
        "name": name,
        "cluster": cluster,
        "project": cfg.project,
        "location": cfg.location,
        "node_locations": list(pool.zones),
        "node_config": slice_node_config(cfg, pool, service_account, index),
        "management": upgrades_spec.management(pool),
        "upgrade_settings": upgrades_spec.upgrade_settings(pool),
    }
    if pool.one_pool_per_slice:
        # One node pool per multi-host slice: GKE creates, repairs and scales the slice as a
        # unit, so its node count is the slice's VM count (or 0..VMs for DWS capacity).
        vms = accel.vms_per_slice
        if pool.capacity.autoscales_from_zero:
            args["initial_node_count"] = 0
            args["autoscaling"] = {"total_min_node_count": 0, "total_max_node_count": vms,
                                   "location_policy": "ANY"}
        else:
            args["node_count"] = vms
        if workload_policy is not None:
            # TPU7x: the workload policy replaces the topology and is applied alone, as
            # gcloud's --placement-policy does (GKE: "You create a workload policy and then
            # apply it by using the --placement-policy flag. This policy replaces the
            # --tpu-topology flag", https://cloud.google.com/kubernetes-engine/docs/concepts/
            # tpu-ironwood). xpk's gcloud call sends only the policy (group placement and a
            # workload policy are mutually exclusive there), but pulumi-gcp's (and
            # Terraform's) NodePool placementPolicy requires `type`, whose one value is
            # COMPACT, so it goes beside the policy name; no tpuTopology.
            args["placement_policy"] = {"type": "COMPACT", "policy_name": workload_policy}
        else:
            args["placement_policy"] = {"type": "COMPACT", "tpu_topology": accel.topology}
    else:
        # Single-host TPU, GPU and CPU pools autoscale between minCount and count VMs.
        total = vms_total(pool)
        args["initial_node_count"] = pool.min_count
        args["autoscaling"] = {
            "total_min_node_count": pool.min_count,
            "total_max_node_count": total,
            # ANY favours unused reservations and cuts Spot preemptions; GKE requires it for
            # flex-start and queued pools.
            "location_policy": "ANY" if mode != "on-demand" else "BALANCED",
        }
        if workload_policy is not None:
            # The API's type is required beside the policy name (pulumi-gcp NodePool
            # placementPolicy.type); GKE places the nodes by the workload policy.
            args["placement_policy"] = {"type": "COMPACT", "policy_name": workload_policy}
        elif pool.placement == "compact":
            args["placement_policy"] = {"type": "COMPACT"}
    if mode == "queued":
        args["queued_provisioning"] = {"enabled": True}
    if pool.max_pods_per_node is not None:
        # Each node reserves a pods range of twice this, rounded up to a power of two.
        args["max_pods_per_node"] = pool.max_pods_per_node
    if additional_networks:
        args["network_config"] = {"additional_node_network_configs": additional_networks}
    if pool.dranet:
        # GKE creates and attaches the extra NICs' networks itself (dranet_spec.py).
        args.setdefault("network_config", {})["accelerator_network_profile"] = (
            dranet_spec.NETWORK_PROFILE)
    return settings_spec.slice_args(cfg, pool, args)


def system_node_pool_args(cfg: StackConfig, pool: SystemPool, *, cluster: Any,
                          service_account: Any) -> dict[str, Any]:
    """The CPU pool for kube-system, Kueue, JobSet and other controllers."""
    args: dict[str, Any] = {
        "name": "system",
        "cluster": cluster,
        "project": cfg.project,
        "location": cfg.location,
        "node_locations": list(cfg.zones),
        "initial_node_count": pool.min_nodes,
        "autoscaling": {"min_node_count": pool.min_nodes, "max_node_count": pool.max_nodes,
                        "location_policy": "BALANCED"},
        "management": {"auto_repair": True, "auto_upgrade": True},
        "upgrade_settings": {"strategy": "SURGE", "max_surge": 1, "max_unavailable": 0},
        # The series' boot disk type (pd-balanced, or Hyperdisk on N4/C4-class machines).
        "node_config": _base_node_config(cfg, pool.machine_type, pool.disk_size_gb,
                                         boot_disks.default(pool.machine_type),
                                         service_account, {POOL_LABEL: "system"}),
    }
    if pool.max_pods_per_node is not None:
        args["max_pods_per_node"] = pool.max_pods_per_node
    scopes = settings_spec.node_scopes(cfg)
    if scopes is not None:
        args["node_config"]["oauth_scopes"] = scopes
    return args

