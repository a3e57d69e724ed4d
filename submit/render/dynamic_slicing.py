"""The render rule of a dynamic slicing pool (TPU7x sub-blocks, infra/specs/
dynamic_slicing.py): the workload asks GKE's slice controller for its slice shape and
pins itself to nothing the controller decides.

- The pod template carries ``cloud.google.com/gke-tpu-slice-topology: <shape>``; its
  pods ask for 4 chips each, so a slice of N chips is N/4 pods (the contract entry's
  VMs per slice), 16 per sub-block: the slice controller's JobSet webhook refuses a pod
  set that does not fill each 64-chip cube ("must be exactly 64 TPUs (full
  utilization)") and adds Kueue's topology requests itself, so none is rendered here.
- None of the selectors that would pin the pods to one node pool: the contract's
  selector for these entries has no ``cloud.google.com/gke-tpu-topology`` (a sub-block's
  nodes are not a fixed slice), the JobSet gets no
  ``alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool`` (a
  slice spans node pools) and no ``cloud.google.com/placement-policy-name`` selector.
  xpk renders super-slicing workloads the same way (AI-Hypercomputer/xpk
  src/xpk/commands/workload.py: no machine label, no exclusive-topology annotation, no
  placement policy label; the slice-topology annotation).
- The name: GKE names each Slice after the workload (Slice reference: a name of at most
  49 characters, https://docs.cloud.google.com/kubernetes-engine/docs/reference/crds/
  slice); xpk caps super-slicing workload names at 28 characters
  (_SUPER_SLICING_WORKLOAD_NAME_LIMIT) for those limits, and so does this rule.

Pure: builds dicts, no Kubernetes client.
"""

from __future__ import annotations

from typing import Any

from submit.render.spec import SpecError, WorkloadSpec

SLICE_TOPOLOGY = "cloud.google.com/gke-tpu-slice-topology"
MAX_NAME = 28
SLICE_REFERENCE = "https://docs.cloud.google.com/kubernetes-engine/docs/reference/crds/slice"


def check(workload: str, slice_topology: str, pathways: bool) -> None:
    """Refuse what a dynamic slice cannot carry: a long name, Pathways."""
    if len(workload) > MAX_NAME:
        raise SpecError("--workload", f"{workload!r} is {len(workload)} characters; a workload "
                        f"on a dynamic slice ({slice_topology}) may have at most {MAX_NAME}, "
                        f"so that the Slice GKE names after it stays within its limit "
                        f"({SLICE_REFERENCE})")
    if pathways:
        raise SpecError("--pathways", f"is not offered on dynamic slices ({slice_topology}): "
                        "no GKE page runs Pathways on them; use a fixed slice pool")


def decorate(spec: WorkloadSpec, pod_meta: dict[str, Any]) -> None:
    """Ask the slice controller for the entry's slice shape (in place)."""
    topology = spec.pool.slice_topology
    if topology:
        pod_meta.setdefault("annotations", {})[SLICE_TOPOLOGY] = topology
