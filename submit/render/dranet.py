"""Pods on a GKE managed DRANET pool claim the node's extra NICs.

A pool with ``dranet`` in the outputs contract runs GKE's networking DRA driver; the stack
creates the ResourceClaimTemplate ``accelstack-netdev`` (GKE's ``netdev.google.com``
DeviceClass) in every workload namespace. Each pod gets its own claim from it through
``resourceClaims`` and the main container lists the claim, as Kubernetes DRA requires for a
container to be given the devices (GKE, "Allocate network resources by using GKE managed
DRANET", https://cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra).

Never on a pod on the host's network (multi-host and multislice TPU pods, see
``submit.render.jobset._pod_spec``): DRANET's NRI hook refuses to start such a pod's sandbox
when it claims devices ("RunPodSandbox pod ... using host network can not claim host
devices", google/dranet pkg/driver/nri_hooks.go), and a host-network pod already sees every
NIC of its node. xpk does the same: its TPU pods run on the host network and claim nothing
(AI-Hypercomputer/xpk src/xpk/commands/workload.py) on node pools it creates with GKE's
DRANET profile (src/xpk/core/nodepool.py). So the claim goes to pods in their own network
namespace only: single-host jobs of a single slice.
Pure: builds dicts, no Kubernetes client.
"""

from __future__ import annotations

from typing import Any

from infra.contract.outputs import DRANET_CLAIM_TEMPLATE
from submit.render.spec import WorkloadSpec

CLAIM = "netdev"


def decorate(spec: WorkloadSpec, pod: dict[str, Any]) -> None:
    """Add the NIC claim to the pod template (in place) when the pool runs DRANET."""
    if not spec.pool.dranet or pod.get("hostNetwork"):
        return
    pod.setdefault("resourceClaims", []).append(
        {"name": CLAIM, "resourceClaimTemplateName": DRANET_CLAIM_TEMPLATE})
    main = pod["containers"][0]
    main.setdefault("resources", {}).setdefault("claims", []).append({"name": CLAIM})
