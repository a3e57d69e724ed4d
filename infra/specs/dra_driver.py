"""NVIDIA's DRA driver for GPUs, for A4X multi-node NVLink (ComputeDomains), as data.

GKE's A4X pages install the driver with Helm from NVIDIA's repository into its own
namespace, with values that keep its kubelet plugin on the arm64 GB200 nodes and its
controller off GPU nodes, and with GPU allocation through DRA turned off (GKE's device
plugin keeps serving ``nvidia.com/gpu``); only ComputeDomains (IMEX channels) come from the
driver. Its pods run at the system-node-critical and system-cluster-critical priorities,
which GKE admits outside kube-system only under a ResourceQuota for those classes: "twice
the number of A4X nodes in the cluster, plus one" pods.
Source: https://docs.cloud.google.com/kubernetes-engine/docs/add-on/ray-on-gke/how-to/ray-a4x
(the driver section of GKE's "Create a custom AI-optimized GKE cluster which uses A4X").

The chart is pinned. GKE's page names 25.3.0-rc.3, whose templates hard-code the
resource.k8s.io/v1beta1 API that GKE 1.32 served behind a flag; GKE 1.34 and later serve
resource.k8s.io/v1. Charts from 25.3.2 pick v1, v1beta2 or v1beta1 from what the cluster
serves (templates/_helpers.tpl), and 25.12.0 (NVIDIA/k8s-dra-driver-gpu tag v25.12.0,
Feb 2026; kubeVersion >=1.32) is the newest release. Its ComputeDomain CRD
(resource.nvidia.com/v1beta1) is the one committed under tests/schemas/.
Only stacks with A4X pools get the driver. Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.catalog.tables import GPU_ACCELERATOR_LABEL, GPU_TAINT
from infra.config.stack import StackConfig

FAMILY = "a4x"  # the GB200 NVL72 machines whose workloads run in ComputeDomains
# The DeviceClass of a ComputeDomain's IMEX channel, which every pod of a multi-node A4X
# workload claims (v25.12.0 cmd/compute-domain-controller/computedomain.go and the chart's
# templates/deviceclass-compute-domain-default-channel.yaml).
CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
CHART = "nvidia-dra-driver-gpu"
VERSION = "25.12.0"
NAMESPACE = "nvidia-dra-driver-gpu"
QUOTA_NAME = "nvidia-dra-driver-gpu-quota"
ARCH_LABEL = "kubernetes.io/arch"
# GKE taints arm64 nodes in clusters that also run amd64 nodes; the plugin tolerates it.
ARM_TAINT_TOLERATION = {"key": ARCH_LABEL, "operator": "Equal", "value": "arm64",
                        "effect": "NoSchedule"}


def a4x_nodes(cfg: StackConfig) -> int:
    return sum(p.count * p.accelerator.vms_per_slice for p in cfg.slices
               if p.accelerator.family == FAMILY)


def needed(cfg: StackConfig) -> bool:
    return a4x_nodes(cfg) > 0


def _a4x_accelerators(cfg: StackConfig) -> list[str]:
    out: list[str] = []
    for p in cfg.slices:
        label = p.accelerator.gke_accelerator
        if p.accelerator.family == FAMILY and label and label not in out:
            out.append(label)
    return out


def values(cfg: StackConfig) -> dict[str, Any]:
    """The chart values of GKE's A4X page, plus the system-pool selector every accelstack
    controller gets."""
    return {
        "nvidiaDriverRoot": "/home/kubernetes/bin/nvidia",  # where GKE installs the driver
        "resources": {"gpus": {"enabled": False}},
        "controller": {
            "nodeSelector": {"accelstack.dev/slice-pool": "system"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "nvidia.com/gpu", "operator": "DoesNotExist"}]}]}}},
        },
        "kubeletPlugin": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": GPU_ACCELERATOR_LABEL, "operator": "In",
                     "values": _a4x_accelerators(cfg)},
                    {"key": ARCH_LABEL, "operator": "In", "values": ["arm64"]}]}]}}},
            "tolerations": [GPU_TAINT.toleration(), dict(ARM_TAINT_TOLERATION)],
        },
    }


def namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": NAMESPACE,
                         "labels": {"app.kubernetes.io/managed-by": "accelstack"}}}


def resource_quota(cfg: StackConfig) -> dict[str, Any]:
    """Room for the driver's critical-priority pods: two per A4X node plus the controller."""
    return {
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": QUOTA_NAME, "namespace": NAMESPACE},
        "spec": {
            "hard": {"pods": str(2 * a4x_nodes(cfg) + 1)},
            "scopeSelector": {"matchExpressions": [{
                "operator": "In", "scopeName": "PriorityClass",
                "values": ["system-node-critical", "system-cluster-critical"]}]},
        },
    }


def release_args(cfg: StackConfig) -> dict[str, Any]:
    """Arguments of the pulumi-kubernetes Helm Release (snake_case)."""
    return {
        "name": CHART,
        "chart": CHART,
        "version": VERSION,
        "repository_opts": {"repo": REPOSITORY},
        "namespace": NAMESPACE,
        "create_namespace": False,  # declared with its ResourceQuota before the release
        "atomic": True,
        "timeout": 600,
        "values": values(cfg),
    }
