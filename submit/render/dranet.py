"""Pods on a GKE managed DRANET pool claim the node's extra NICs.

A pool with ``dranet`` in the outputs contract runs GKE's networking DRA driver; the stack
creates the ResourceClaimTemplate ``accelstack-netdev`` (GKE's ``netdev.google.com``
DeviceClass) in every workload namespace. Each pod gets its own claim from it through
``resourceClaims`` and the main container lists the claim, as Kubernetes DRA requires for a
container to be given the devices (GKE, "Allocate network resources by using GKE managed
DRANET", https://cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra).
Pure: builds dicts, no Kubernetes client.
"""

from __future__ import annotations

from typing import Any

from infra.contract.outputs import DRANET_CLAIM_TEMPLATE
from submit.render.spec import WorkloadSpec

CLAIM = "netdev"


def decorate(spec: WorkloadSpec, pod: dict[str, Any]) -> None:
    """Add the NIC claim to the pod template (in place) when the pool runs DRANET."""
    if not spec.pool.dranet:
        return
    pod.setdefault("resourceClaims", []).append(
        {"name": CLAIM, "resourceClaimTemplateName": DRANET_CLAIM_TEMPLATE})
    main = pod["containers"][0]
    main.setdefault("resources", {}).setdefault("claims", []).append({"name": CLAIM})
