"""The Pathways set-up beyond the head pool, as data: who may use the scratch location.

The head pool itself is an ordinary CPU slice pool (infra/config/pathways.py), so its node
pool, Kueue flavor and quota come from the code every pool goes through. What is left is
access to the scratch bucket. The Pathways pods run on the hosts' network (the workers for
DCN traffic between slices, the head so that workers reach it by its host name; Google's
Pathways JobSet, mirrored in submit/render/pathways.py), and GKE's Workload Identity Federation
does not serve pods on the host network ("Workload Identity Federation for GKE can't be
used with Pods that run on the host network", cloud.google.com/kubernetes-engine/docs/
concepts/workload-identity, Limitations): they act as the node service account, which
therefore gets read and write access to the scratch bucket's objects. Must not import
pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import StackConfig

# Object read, write, list and delete without bucket administration
# (cloud.google.com/storage/docs/access-control/iam-roles).
SCRATCH_ROLE = "roles/storage.objectUser"


def scratch_grant_args(cfg: StackConfig, member: Any) -> dict[str, Any] | None:
    """Arguments of ``gcp.storage.BucketIAMMember`` for the nodes' scratch access, or None
    when the stack has no Pathways."""
    if cfg.pathways is None:
        return None
    return {"bucket": cfg.pathways.scratch_bucket, "role": SCRATCH_ROLE, "member": member}
