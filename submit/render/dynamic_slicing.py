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
- The name. GKE's slice controller names each Slice ``<namespace>-<Kueue workload>-<pod
  set>`` (its source, Go module tpu-slice-controller, internal/core ``SliceName``:
  ``fmt.Sprintf("%s-%s-%s", ns, workloadName, podSetName)``). Kueue names a JobSet's
  Workload ``jobset-<JobSet name>-<5 hex>`` (kubernetes-sigs/kueue
  pkg/controller/jobs/jobset/jobset_controller.go ``GetWorkloadNameForJobSet`` ->
  pkg/controller/jobframework ``GetWorkloadNameForOwnerWithGVK``: lower-case kind, "-",
  name, "-", hashLength 5) and each pod set after its replicated job (``PodSets``: ``Name:
  replicatedJob.Name``). A Slice's name may have at most 49 characters (GKE's Slice
  reference, https://docs.cloud.google.com/kubernetes-engine/docs/reference/crds/slice:
  "the controller appends a hyphen and an 8-character cluster hash to create Compute Engine
  resource names, which have a 63-character limit"; one stored copy of that page says 54,
  the smaller is enforced). So the longest workload name is 49 minus the namespace, the
  replicated job and 15 characters of separators, prefix and hash: 22 in ``default``, 18
  in ``pretraining``. (xpk 1.13 caps super-slicing names at 28 whatever the namespace,
  _SUPER_SLICING_WORKLOAD_NAME_LIMIT; xpk 1.16's namespace-counting budget is reported,
  not read here.)

Pure: builds dicts, no Kubernetes client.
"""

from __future__ import annotations

from typing import Any

from submit.render.spec import REPLICATED_JOB, SpecError, WorkloadSpec

SLICE_TOPOLOGY = "cloud.google.com/gke-tpu-slice-topology"
SLICE_NAME_MAX = 49  # GKE's Slice reference (above)
# "<namespace>-" + "jobset-" + "<workload>" + "-<5 hex>" + "-<replicated job>"
_KUEUE_PREFIX = "jobset-"
_KUEUE_HASH = 5
SLICE_REFERENCE = "https://docs.cloud.google.com/kubernetes-engine/docs/reference/crds/slice"


def slice_name_length(namespace: str, workload: str, replicated_job: str) -> int:
    """The length of the Slice name GKE's slice controller derives for this workload."""
    return (len(namespace) + 1 + len(_KUEUE_PREFIX) + len(workload) + 1 + _KUEUE_HASH
            + 1 + len(replicated_job))


def max_name(namespace: str, replicated_job: str) -> int:
    """The longest workload name whose Slice name fits GKE's limit in ``namespace``."""
    return SLICE_NAME_MAX - slice_name_length(namespace, "", replicated_job)


def check(workload: str, slice_topology: str, pathways: bool, namespace: str,
          kind: str) -> None:
    """Refuse what a dynamic slice cannot carry: a long name (namespace counted), Pathways."""
    replicated_job = REPLICATED_JOB[kind]
    limit = max_name(namespace, replicated_job)
    if len(workload) > limit:
        raise SpecError("--workload", f"{workload!r} is {len(workload)} characters; a workload "
                        f"on a dynamic slice ({slice_topology}) in namespace {namespace!r} may "
                        f"have at most {max(limit, 0)}: GKE names its Slice <namespace>-jobset-"
                        f"<workload>-<hash>-{replicated_job} "
                        f"({slice_name_length(namespace, workload, replicated_job)} characters "
                        f"here), and a Slice's name has at most {SLICE_NAME_MAX} "
                        f"({SLICE_REFERENCE})")
    if pathways:
        raise SpecError("--pathways", f"is not offered on dynamic slices ({slice_topology}): "
                        "no GKE page runs Pathways on them; use a fixed slice pool")


def decorate(spec: WorkloadSpec, pod_meta: dict[str, Any]) -> None:
    """Ask the slice controller for the entry's slice shape (in place)."""
    topology = spec.pool.slice_topology
    if topology:
        pod_meta.setdefault("annotations", {})[SLICE_TOPOLOGY] = topology
