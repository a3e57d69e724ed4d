"""What Kueue does with the DRA claims accelstack's pods make: it maps their device classes
and counts the devices as quota.

Kueue v0.19.2 turns its DRA integration on by default (pkg/features/kube_features.go:
KueueDRAIntegration and KueueDRARejectWorkloadsWhenDRADisabled, both Beta, default true
since 0.18). With it on, a pending workload whose pods name a ResourceClaimTemplate is
admitted only if every request of the template asks for an exact count of devices of a
device class that Kueue's Configuration maps to a quota resource
(``resources.deviceClassMappings``); any other request (``allocationMode: All``,
``firstAvailable``, ``adminAccess``) or an unmapped class makes the workload inadmissible
(pkg/dra/claims.go countDevicesPerClass and GetResourceRequestsForResourceClaimTemplates;
pkg/controller/core/workload_controller.go). A pod that names a ResourceClaim directly is
refused outright. Turning the gate off is no way out: the second gate then rejects every
workload with claims.

So the stack maps each class its pods claim to a quota resource of the same name and gives
each flavor the devices its nodes hold (one workload pod per node, infra/catalog/
pod_resources.py), so queues see and account them like chips:

- ``compute-domain-default-channel.nvidia.com``: the IMEX channel of an A4X ComputeDomain.
  NVIDIA's controller writes the claim template (NVIDIA/k8s-dra-driver-gpu v25.12.0
  templates/compute-domain-workload-claim-template.tmpl.yaml: one request with just the
  device class, so the API's default ExactCount of 1), one per pod.
- ``netdev.google.com``: GKE managed DRANET's NICs, ``dranet.NICS_PER_POD`` per pod
  (infra/specs/dranet.py).

Pure; must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import SlicePool, StackConfig
from infra.specs import dra_driver, dranet


def devices_per_node(pool: SlicePool) -> dict[str, int]:
    """Device class -> devices a workload pod on one of the pool's nodes claims at most."""
    out: dict[str, int] = {}
    if pool.accelerator.family == dra_driver.FAMILY:
        out[dra_driver.CHANNEL_DEVICE_CLASS] = 1
    if pool.dranet:
        out[dranet.DEVICE_CLASS] = dranet.NICS_PER_POD
    return out


def device_classes(cfg: StackConfig) -> list[str]:
    """The device classes the stack's pods may claim, in a stable order."""
    found: dict[str, None] = {}
    for pool in cfg.slices:
        for cls in devices_per_node(pool):
            found[cls] = None
    return sorted(found)


def device_class_mappings(cfg: StackConfig) -> list[dict[str, Any]]:
    """Kueue's ``resources.deviceClassMappings``: each class is its own quota resource
    (config.kueue.x-k8s.io/v1beta2 DeviceClassMapping: name, deviceClassNames)."""
    return [{"name": cls, "deviceClassNames": [cls]} for cls in device_classes(cfg)]
