"""Image-cache DaemonSets, as data: pre-pull each listed image on its slice pools' nodes.

Each DaemonSet pulls its image on every node of the pools it selects and then idles in a
pause container. The image must run without a shell or any utility (distroless and
scratch images included), so its init container executes a static no-op binary that an
earlier init container copies into a shared emptyDir: a static busybox invoked as
``true`` exits 0 in any filesystem. Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.addons import CachedImage
from infra.config.stack import StackConfig
from infra.config.slices import SlicePool
from infra.specs.nodepool import POOL_LABEL

NAMESPACE = "accelstack-system"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# The musl build of busybox is statically linked, so it runs inside any image.
NOOP_IMAGE = "docker.io/library/busybox:1.37.0-musl"
NOOP_DIR = "/accelstack-noop"

# Every taint accelerator, Arm (A4X, C4A, T2A), Spot and queued-provisioning nodes carry.
TOLERATIONS = [
    {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"},
    {"key": "cloud.google.com/gke-spot", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
]
# Every container only copies a 1 MB binary, exits at once or sleeps in pause: the
# sizing rule is a fixed floor, not a share of the node (1m CPU and 8Mi requested, at
# most 100m CPU and 32Mi, whatever the machine type).
_REQUESTS = {"cpu": "1m", "memory": "8Mi"}
_LIMITS = {"cpu": "100m", "memory": "32Mi"}
# Nothing here needs root, a capability or a writable root filesystem; the image's own
# user is overridden too (it only runs the static no-op). 65534 is "nobody".
_UID = 65534


def _tiny() -> dict[str, dict[str, str]]:
    return {"requests": dict(_REQUESTS), "limits": dict(_LIMITS)}


def _hardened() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]}}


def _pod_security() -> dict[str, Any]:
    return {"runAsNonRoot": True, "runAsUser": _UID, "runAsGroup": _UID,
            "seccompProfile": {"type": "RuntimeDefault"}}


def daemonset_name(image: CachedImage) -> str:
    return f"image-cache-{image.name}"[:63].rstrip("-")


def daemonset(image: CachedImage) -> dict[str, Any]:
    name = daemonset_name(image)
    labels = {"app.kubernetes.io/name": "image-cache", "app.kubernetes.io/instance": name,
              "app.kubernetes.io/managed-by": "accelstack"}
    volume_mount = [{"name": "noop", "mountPath": NOOP_DIR}]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"maxUnavailable": "100%"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{
                            "key": POOL_LABEL, "operator": "In",
                            "values": list(image.slice_pools)}]}]}}},
                    "tolerations": [dict(t) for t in TOLERATIONS],
                    "terminationGracePeriodSeconds": 1,
                    "automountServiceAccountToken": False,
                    "securityContext": _pod_security(),
                    "volumes": [{"name": "noop", "emptyDir": {"sizeLimit": "16Mi"}}],
                    "initContainers": [
                        {"name": "noop", "image": NOOP_IMAGE,
                         "command": ["/bin/cp", "/bin/busybox", f"{NOOP_DIR}/true"],
                         "resources": _tiny(), "securityContext": _hardened(),
                         "volumeMounts": [dict(m) for m in volume_mount]},
                        {"name": "pull", "image": image.image, "imagePullPolicy": "IfNotPresent",
                         "command": [f"{NOOP_DIR}/true"],
                         "resources": _tiny(), "securityContext": _hardened(),
                         "volumeMounts": [dict(m) for m in volume_mount]},
                    ],
                    "containers": [{"name": "idle", "image": PAUSE_IMAGE,
                                    "resources": _tiny(), "securityContext": _hardened()}],
                },
            },
        },
    }


def daemonsets(cfg: StackConfig) -> list[dict[str, Any]]:
    return [daemonset(image) for image in cfg.image_cache]


def namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": NAMESPACE,
                         "labels": {"app.kubernetes.io/managed-by": "accelstack"}}}



def starts_empty(pool: SlicePool) -> bool:
    """Whether the pool has no node until a job asks for one: flex-start and queued pools,
    and single-host pools autoscaling from minCount 0 (infra/specs/nodepool.py)."""
    return pool.capacity.autoscales_from_zero or (not pool.one_pool_per_slice
                                                  and pool.min_count == 0)


def warnings(cfg: StackConfig) -> list[str]:
    """Image caches that cannot pull ahead: a DaemonSet pod on a node created for a job
    starts with the job's pod. GKE's documented preloading there is a secondary boot disk
    (CONTAINER_IMAGE_CACHE: GKE attaches it while it creates the node,
    https://cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading)."""
    pools = {p.name: p for p in cfg.slices}
    out = []
    for i, image in enumerate(cfg.image_cache):
        chosen = [pools[n] for n in image.slice_pools if n in pools]
        if chosen and all(starts_empty(p) for p in chosen):
            out.append(f"imageCache[{i}] ({image.name}): every pool it selects "
                       f"({', '.join(p.name for p in chosen)}) starts empty and creates nodes "
                       "for the jobs, where the DaemonSet starts with the job's pod and pulls "
                       "nothing ahead; preload the image with slices[].secondaryBootDisk "
                       "(GKE's CONTAINER_IMAGE_CACHE) instead")
    return out
