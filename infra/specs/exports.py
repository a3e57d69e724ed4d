"""Build the outputs contract from a parsed stack config (the program's side of it).

Kept apart from ``infra.contract.outputs`` so the submitter, which only loads the contract, never
imports the stack config machinery. Must not import pulumi.
"""

from __future__ import annotations

from typing import Mapping

from infra.specs import dynamic_slicing as dynamic_spec
from infra.specs import tas
from infra.catalog.tables import local_ssd_gib
from infra.config.addons import PRIORITY_CLASSES
from infra.config.stack import SliceClass, SlicePool, StackConfig
from infra.specs import storage as storage_spec
from infra.specs import checkpointing as checkpointing_spec
from infra.specs import tensorboard as tensorboard_spec
from infra.contract.maintenance import MaintenanceInfo
from infra.contract.checkpointing import CheckpointTierInfo
from infra.contract.outputs import (ClusterInfo, LocalQueueInfo, PathwaysInfo, SliceClassInfo,
                                   SlicePoolInfo, StackOutputs, StorageInfo, StoreInfo)
from infra.specs.nodepool import node_selector, tolerations
from infra.specs.slice_classes import placement as class_placement
from infra.specs.fleet import origin as fleet_origin


def pool_info(pool: SlicePool, additional_networks: list[dict[str, str]] | None = None,
              kueue_topology_level: str | None = None,
              checkpointing: CheckpointTierInfo | None = None) -> SlicePoolInfo:
    a = pool.accelerator
    return SlicePoolInfo(
        name=pool.name, accelerator=a.name, kind=a.kind, family=a.family,
        topology=a.topology, machine_type=a.machine_type, chips_per_vm=a.chips_per_vm,
        vms_per_slice=a.vms_per_slice, slice_count=pool.count,
        capacity_mode=pool.capacity.mode, node_pools=tuple(pool.node_pool_names()),
        zones=pool.zones, node_selector=node_selector(pool),
        tolerations=tuple(tolerations(pool)), resource_name=a.resource_name,
        networking=a.networking, additional_networks=tuple(additional_networks or ()),
        kueue_topology_level=kueue_topology_level,
        local_ssd_gib=local_ssd_gib(a.machine_type), dranet=pool.dranet,
        checkpointing=checkpointing,
    )


def _entries(pool: SlicePool, info: SlicePoolInfo) -> list[SlicePoolInfo]:
    """A pool's contract entries: itself, or one per shape of a dynamic slicing pool."""
    if pool.dynamic is None:
        return [info]
    return dynamic_spec.contract_entries(pool, info)


def class_entries(cls: SliceClass) -> list[SlicePoolInfo]:
    """One contract entry per shape a slice class makes; pods select and tolerate what
    infra/specs/slice_classes/placement.py states, exactly as for a fixed pool."""
    out = []
    for a in cls.shapes:
        out.append(SlicePoolInfo(
            name=cls.name, accelerator=a.name, kind=a.kind, family=a.family,
            topology=a.topology, machine_type=a.machine_type, chips_per_vm=a.chips_per_vm,
            vms_per_slice=a.vms_per_slice,
            slice_count=min(cls.max_slices, cls.max_chips // a.chips),
            capacity_mode=class_placement.CLASS_CAPACITY, node_pools=(), zones=cls.zones,
            node_selector=class_placement.node_selector(cls, a),
            tolerations=tuple(class_placement.tolerations(cls, a)),
            resource_name=a.resource_name, networking=a.networking,
            local_ssd_gib=local_ssd_gib(a.machine_type), compute_class=cls.name))
    return out


def class_info(cls: SliceClass) -> SliceClassInfo:
    capacity = tuple(f"reservation:{c.reservation}" if c.mode == "reservation" else c.mode
                     for c in cls.capacity)
    return SliceClassInfo(cls.name, tuple(a.name for a in cls.shapes), capacity,
                          cls.max_chips, cls.max_slices, cls.zones)


def storage_info(cfg: StackConfig) -> StorageInfo:
    return StorageInfo(
        stores=tuple(StoreInfo(s.name, s.kind, storage_spec.mount_source(s), dict(s.access))
                     for s in cfg.storage.stores),
        service_accounts={ns: cfg.storage.service_account
                          for ns in storage_spec.namespaces(cfg)},
        gke_version=cfg.gke_version,
    )


def _authorized_networks(cfg: StackConfig) -> tuple[str, ...] | None:
    """The CIDRs a fleet checks its manager against; none when the stack holds them as a
    Pulumi secret (the outputs are read in plain text), so a fleet cannot check them."""
    if not cfg.authorized_networks or "masterAuthorizedNetworks" in cfg.secret_keys:
        return None
    return tuple(str(a.cidr) for a in cfg.authorized_networks)


def build(cfg: StackConfig, stack: str, *, endpoint: str, ca_certificate: str,
          kubeconfig: str, networks: Mapping[str, list[dict[str, str]]] | None = None,
          dns_endpoint: str | None = None,
          node_service_account: str | None = None) -> StackOutputs:
    """The contract for a parsed stack; ``networks`` maps pool name to its node networks."""
    networks = networks or {}
    q = cfg.queues
    queues = [LocalQueueInfo(q.local_queue, q.namespace, q.cluster_queue)] + [
        LocalQueueInfo(q.local_queue, t.namespace, t.name) for t in q.teams]
    return StackOutputs(
        stack=stack,
        cluster=ClusterInfo(cfg.project, cfg.location, cfg.cluster_name, endpoint,
                            ca_certificate, cfg.zones, dns_endpoint,
                            private_endpoint=cfg.private_endpoint,
                            authorized_networks=_authorized_networks(cfg),
                            dns_k8s_tokens=cfg.dns_endpoint and cfg.dns_k8s_tokens,
                            release_channel=cfg.release_channel,
                            node_service_account=node_service_account,
                            multikueue_origin=fleet_origin.origin(
                                cfg.project, cfg.location, cfg.cluster_name)),
        kubeconfig=kubeconfig,
        slice_pools=tuple(e for p in cfg.slices for e in _entries(
            p, pool_info(p, networks.get(p.name), tas.podset_level(cfg, p),
                         checkpointing_spec.tier_info(cfg, p))))
        + tuple(e for c in cfg.slice_classes for e in class_entries(c)),
        auto_provisioning=dict(cfg.auto_provisioning.accelerators)
        if cfg.auto_provisioning else {},
        workload_namespace=q.namespace,
        local_queues=tuple(queues),
        priority_classes=tuple(name for name, _ in PRIORITY_CLASSES),
        jobset_version=cfg.addons.jobset_version,
        kueue_version=cfg.addons.kueue_version,
        cached_images=tuple(i.image for i in cfg.image_cache),
        image_repository=cfg.registry.url if cfg.registry else None,
        storage=storage_info(cfg),
        pathways=PathwaysInfo(cfg.pathways.head_pool, cfg.pathways.scratch,
                              cfg.pathways.server_image, cfg.pathways.proxy_image,
                              cfg.pathways.colocated_python_image)
        if cfg.pathways else None,
        slice_classes=tuple(class_info(c) for c in cfg.slice_classes),
        # The ClusterQueues are in the cohort only when there are teams (specs/kueue.py).
        cohort=q.cohort if q.teams else None,
        # The instance's resource name is known once it exists: the program fills it in.
        tensorboard=tensorboard_spec.info(cfg, name=""),
        ml_diagnostics=cfg.ml_diagnostics,
        maintenance=(MaintenanceInfo(cfg.maintenance, cfg.maintenance_exclusions)
                     if cfg.maintenance else None),
    )

