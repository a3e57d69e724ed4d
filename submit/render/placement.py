"""Where a GPU workload's pods go beyond their node selector: Kueue topology and NVLink.

Two things the stack's outputs contract decides and the renderer must carry out:

- Topology-aware scheduling. A pool whose Kueue flavor has a topology
  (``kueueTopologyLevel`` in the contract, see infra/specs/tas.py for when) only admits pod sets
  that ask for one, because the stack's queues also hold plain flavors. The pod template
  gets Kueue's pod-set annotation at that level.
- Multi-node NVLink on A4X (GB200 NVL72). GKE's A4X pages run multi-node workloads in a
  ``ComputeDomain`` of NVIDIA's DRA driver for GPUs (installed by the stack): the driver
  creates the domain's ResourceClaimTemplate, each pod claims its IMEX channel through
  ``resourceClaims`` and the container lists the claim, so IMEX spans the pods' nodes and
  GPU memory is shared over NVLink rather than the RDMA NICs
  (https://docs.cloud.google.com/kubernetes-engine/docs/add-on/ray-on-gke/how-to/ray-a4x;
  container-engine-accelerators gpudirect-rdma/nccl-test-imex-a4x.yaml).

Pure: builds dicts, no Kubernetes client.
"""

from __future__ import annotations

from typing import Any

from submit.render.spec import WorkloadSpec

PODSET_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1"
CHANNEL_CLAIM = "compute-domain-channel"


def needs_compute_domain(spec: WorkloadSpec) -> bool:
    """A4X workloads on more than one node share their NVL72 domain through IMEX."""
    return (spec.pool.kind == "gpu" and spec.pool.family == "a4x"
            and spec.parallelism * spec.replicas > 1)


def compute_domain_name(spec: WorkloadSpec) -> str:
    return f"{spec.name}-cd"


def channel_template_name(spec: WorkloadSpec) -> str:
    return f"{spec.name}-imex-channel"


def decorate(spec: WorkloadSpec, pod: dict[str, Any], pod_meta: dict[str, Any]) -> None:
    """Add the topology request and the IMEX channel claim to the pod template (in place)."""
    level = spec.pool.kueue_topology_level
    if level:
        pod_meta.setdefault("annotations", {})[PODSET_ANNOTATION] = level
    if needs_compute_domain(spec):
        pod["resourceClaims"] = [{"name": CHANNEL_CLAIM,
                                  "resourceClaimTemplateName": channel_template_name(spec)}]
        main = pod["containers"][0]
        main.setdefault("resources", {})["claims"] = [{"name": CHANNEL_CLAIM}]


def compute_domain(spec: WorkloadSpec) -> dict[str, Any] | None:
    """The workload's ComputeDomain, applied before its JobSet; None when not needed."""
    if not needs_compute_domain(spec):
        return None
    return {
        "apiVersion": COMPUTE_DOMAIN_API,
        "kind": "ComputeDomain",
        "metadata": {"name": compute_domain_name(spec), "namespace": spec.namespace,
                     "labels": {"app.kubernetes.io/managed-by": "accelstack",
                                "accelstack.dev/workload": spec.name}},
        "spec": {
            # Zero, as the pinned driver documents it (NVIDIA/k8s-dra-driver-gpu v25.12.0
            # api/nvidia.com/resource/v1beta1/computedomain.go): with its default feature
            # gate IMEXDaemonsWithDNSNames=true "this is recommended to be set to zero";
            # a non-zero value only drives the domain's Ready status, and the field is
            # deprecated (still required by the CRD). Nothing here waits on that status.
            "numNodes": 0,
            "channel": {"resourceClaimTemplate": {"name": channel_template_name(spec)}},
        },
    }
