"""What GKE puts on accelerator nodes: node labels, extended resource names and taints.

Pure data; every other catalog module and the renderers read these names from here.
"""

from __future__ import annotations

from infra.record import record

TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
GPU_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
MACHINE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ARCH_LABEL = "kubernetes.io/arch"  # set by the kubelet on every node: amd64 or arm64
TPU_RESOURCE = "google.com/tpu"
GPU_RESOURCE = "nvidia.com/gpu"

SINGLE_VM_SUFFIX = "-1vm"


@record
class Taint:
    """A node taint as GKE writes it on accelerator nodes."""

    key: str
    value: str
    effect: str = "NoSchedule"

    def toleration(self) -> dict[str, str]:
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "effect": self.effect}


# GKE taints every TPU node and every GPU node (in clusters that also have non-accelerator
# pools) so that only pods that ask for the accelerator land there.
TPU_TAINT = Taint("google.com/tpu", "present")
GPU_TAINT = Taint("nvidia.com/gpu", "present")
# GKE taints every Arm node kubernetes.io/arch=arm64:NoSchedule so that x86 images never
# land there (https://cloud.google.com/kubernetes-engine/docs/how-to/prepare-arm-workloads-for-deployment).
# GKE adds the matching toleration only to pods that select arm64 themselves; Kueue
# flavors and DaemonSets must state it.
ARM64 = "arm64"
ARM_TAINT = Taint(ARCH_LABEL, ARM64)
# Arm CPU series: Axion (C4A) and Ampere Altra (T2A).
ARM_CPU_SERIES = ("c4a", "t2a")
