"""GKE multi-tier checkpointing (MTC) as plain data: the cluster add-on, one
CheckpointConfiguration per pool, the backup bucket's grant to GKE's checkpointing
service account, and the contract entry that tells workloads the RAM left to them.

The config layer (infra/config/checkpointing.py) has checked every rule; this module only
shapes what it declared. Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import SlicePool, StackConfig
from infra.config import checkpointing as rules
from infra.contract.checkpointing import CheckpointTierInfo
from infra.specs.nodepool import POOL_LABEL, tolerations

API = "checkpointing.gke.io/v1"  # crd/checkpointconfiguration.yaml of the controller
KIND = "CheckpointConfiguration"
# pulumi-gcp container.Cluster addons_config.high_scale_checkpointing_config ("The status of
# the High Scale Checkpointing addon, which enables Multi-Tier Checkpointing"), the
# HighScaleCheckpointing add-on of `gcloud container clusters create --addons`.
ADDON = "high_scale_checkpointing_config"
# The MTC node driver runs as this Kubernetes service account; it needs
# roles/storage.objectUser on the backup bucket (GKE multi-tier-checkpointing page;
# MaxText's MTC guide step 4; the controller's deploy/multitier/README.md).
DRIVER_NAMESPACE = "gke-managed-checkpointing"
DRIVER_SERVICE_ACCOUNT = "gke-checkpointing-multitier-node"
BUCKET_ROLE = "roles/storage.objectUser"
# The GCS FUSE options the controller's README recommends for the backup mount ("GCS Fuse
# Options": "This requires at least 1.32.2-gke.1297001", below MTC's own floor).
GCSFUSE_MOUNT_OPTIONS = (
    "implicit-dirs",
    "metadata-cache:negative-ttl-secs:0",
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
    "file-cache:max-size-mb:-1",
    "file-cache:cache-file-for-range-read:true",
    "file-system:kernel-list-cache-ttl-secs:0",
    "file-cache:enable-parallel-downloads:true",
    "read_ahead_kb=1024",
    "write:enable-streaming-writes:true",
)


def addon(cfg: StackConfig) -> dict[str, Any]:
    """The cluster's addons_config entry (empty when the stack has no MTC). The GCS FUSE
    CSI driver and Workload Identity MTC also needs are on in every stack's cluster
    (infra/specs/cluster.py)."""
    return {ADDON: {"enabled": True}} if cfg.checkpointing else {}


def ram_disk_mi(cfg: StackConfig, pool: SlicePool) -> int:
    """The RAM disk on each node of ``pool`` (0 without MTC there)."""
    return cfg.checkpointing.ram_disk(pool.name) if cfg.checkpointing else 0


def configuration_name(pool: str) -> str:
    return f"accelstack-{pool}"


def configurations(cfg: StackConfig) -> list[dict[str, Any]]:
    """One cluster-scoped CheckpointConfiguration per pool. Each selects its pool's nodes by
    the pool label the stack puts on them, so no two overlap: the controller gives a node
    covered by a second configuration no driver ("CheckpointConfiguration %s overlaps with
    existing configuration", pkg/multitier-controller/controller.go)."""
    c = cfg.checkpointing
    if c is None:
        return []
    by_name = {p.name: p for p in cfg.slices}
    out = []
    for name in c.pools:
        pool = by_name[name]
        out.append({
            "apiVersion": API, "kind": KIND,
            "metadata": {"name": configuration_name(name),
                         "labels": {"app.kubernetes.io/managed-by": "accelstack"}},
            "spec": {
                "cloudStorageBucketName": c.bucket,  # a bucket name, without gs://
                "nodeSelector": {POOL_LABEL: name},
                "tolerations": tolerations(pool),
                "inMemoryVolumeSize": f"{c.ram_disk(name)}Mi",
                "gcsFuseMountOptions": list(GCSFUSE_MOUNT_OPTIONS),
            },
        })
    return out


def driver_member(project_number: str, project: str) -> str:
    """GKE's checkpointing node driver as an IAM principal (Workload Identity Federation)."""
    return (f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
            f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{DRIVER_NAMESPACE}/sa/"
            f"{DRIVER_SERVICE_ACCOUNT}")


def bucket_problem(bucket: str, hierarchical: bool) -> str | None:
    """Why an existing ``bucket`` cannot take the backups (None when it can), from what
    Cloud Storage says of it: the backups need hierarchical namespace ("otherwise backups
    will fail", GKE's multi-tier-checkpointing page), and a bucket cannot be given one
    after it is created ("You cannot enable hierarchical namespace in an existing bucket",
    Cloud Storage: storage/docs/create-hns-bucket)."""
    if hierarchical:
        return None
    return (f"checkpointing.store: bucket {bucket!r} has no hierarchical namespace, which "
            "multi-tier checkpointing's backups need and an existing bucket cannot be given; "
            "name a bucket created with one, or let the stack create the store (create: true, "
            "hierarchicalNamespace: true)")


def bucket_grant_args(cfg: StackConfig, bucket: Any, member: Any) -> dict[str, Any]:
    return {"bucket": bucket, "role": BUCKET_ROLE, "member": member}


def tier_info(cfg: StackConfig, pool: SlicePool) -> CheckpointTierInfo | None:
    """The pool's contract entry part (None without MTC on it)."""
    c = cfg.checkpointing
    if c is None or pool.name not in c.pools:
        return None
    mi = c.ram_disk(pool.name)
    return CheckpointTierInfo(c.bucket, mi, rules.pod_memory_left(pool, mi),
                              c.backup_interval_minutes)
