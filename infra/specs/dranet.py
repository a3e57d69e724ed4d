"""GKE managed DRANET on TPU pools: the extra NICs of a TPU VM, handed to pods through DRA.

A slice pool with ``dranet: true`` is created with GKE's accelerator network profile
``auto`` and the node label that turns on GKE's networking DRA driver, and every workload
namespace gets a ResourceClaimTemplate on GKE's ``netdev.google.com`` DeviceClass that the
submitter's pods on such pools claim. Pure data; no pulumi.

Sources (GKE, "Allocate network resources by using GKE managed DRANET",
https://cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra):
- a TPU slice node pool enables the driver with ``--accelerator-network-profile=auto`` and
  the node label ``cloud.google.com/gke-networking-dra-driver=true``;
- "In GKE versions 1.34.1-gke.1829001 and later, GKE automatically installs DeviceClass
  resources for networking": ``mrdma.google.com`` (RDMA devices) and ``netdev.google.com``
  (other network devices), the one the page checks for on TPU pools.
xpk gives v6e pools the same profile and label; no GKE page lists which TPU machine types
have NICs for DRANET, so the config (infra/config/slices.py) offers it on v6e only, and only
from GKE 1.34.1-gke.1829001 when a version is pinned.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from infra.contract.outputs import DRANET_CLAIM_TEMPLATE

NODE_LABEL = "cloud.google.com/gke-networking-dra-driver"
NETWORK_PROFILE = "auto"
DEVICE_CLASS = "netdev.google.com"
CLAIM_NAME = "netdev"
NICS_PER_POD = 1  # see claim_templates


def needed(dranet_pools: Iterable[bool]) -> bool:
    return any(dranet_pools)


def claim_templates(dranet_pools: Iterable[bool], namespaces: Sequence[str]
                    ) -> list[dict[str, Any]]:
    """One ResourceClaimTemplate per workload namespace (each pod gets its own claim from
    it) for ``NICS_PER_POD`` netdev.google.com device(s) of the node.

    Not ``allocationMode: All``: Kueue v0.19.2 refuses a workload whose claim templates ask
    for All ("AllocationMode 'All' is not supported", pkg/dra/claims.go
    countDevicesPerClass), and it admits claims only by count, which it charges to the
    ClusterQueue's quota (infra/specs/kueue_dra.py). GKE's page documents the DeviceClass,
    not a NIC count per machine type (google/dranet's v6e guide gives ct6e-standard-4t two
    physical NICs, site/content/docs/user/gke-tpu-performance.md), so the claim asks for one:
    a count every DRANET node can meet, where a larger guess would leave pods unschedulable."""
    if not needed(dranet_pools):
        return []
    return [{
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": DRANET_CLAIM_TEMPLATE, "namespace": ns,
                     "labels": {"app.kubernetes.io/managed-by": "accelstack"}},
        "spec": {"spec": {"devices": {"requests": [{
            "name": CLAIM_NAME,
            "exactly": {"deviceClassName": DEVICE_CLASS, "allocationMode": "ExactCount",
                        "count": NICS_PER_POD},
        }]}}},
    } for ns in dict.fromkeys(namespaces)]
