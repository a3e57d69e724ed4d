"""``--local-checkpoint-dir``: a workload's RAM tier of GKE multi-tier checkpointing.

The stack declares which pools have it (infra/config/checkpointing.py; the contract's
``slicePools[].checkpointing``). Here a workload on such a pool gets the checkpointing CSI
driver's ephemeral volume at the directory it names, the variables its training code reads,
and a selector that keeps its pods on that pool's nodes (the only ones the driver runs on).
``check`` refuses what cannot work; ``decorate`` changes a rendered pod in place.
Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations

import posixpath
from typing import Any, Sequence

from infra.contract.outputs import SlicePoolInfo, StackOutputs
from infra.record import record
from submit.render.values import SpecError

# The CSI driver of GKE's multi-tier checkpointing; pods mount it as an inline ephemeral
# volume with no attributes (high-scale-checkpointing-controller example/multitier-jobset.yaml).
DRIVER = "multitier-checkpoint.csi.storage.gke.io"
VOLUME = "local-checkpoint"
POOL_LABEL = "accelstack.dev/slice-pool"  # infra/specs/nodepool.py POOL_LABEL
# What the training code reads (docs/checkpointing.md): MaxText's local_checkpoint_directory
# and multi_tier_checkpointing_backup_interval_minutes take them as they are.
DIR_ENV = "ACCELSTACK_LOCAL_CHECKPOINT_DIR"
INTERVAL_ENV = "ACCELSTACK_CHECKPOINT_BACKUP_INTERVAL_MINUTES"
MIN_SLICES = 2  # replication is across slices (MaxText: a multi-slice workload)
OPTION = "--local-checkpoint-dir"
# On Pathways the RAM tier is written by Orbax in the colocated Python sidecar of each worker
# (docs/checkpointing.md, "On Pathways"), so the volume goes there.
SIDECAR = "colocated-python-sidecar"  # submit/render/pathways.py SIDECAR
NEEDS_SIDECAR = ("with --pathways, add --pathways-colocated-python: on Pathways, Orbax "
                 "writes the checkpoints from the colocated Python sidecar of each worker")


@record
class LocalCheckpoint:
    path: str
    backup_interval_minutes: int | None = None


def check(path: str, outputs: StackOutputs, pool: SlicePoolInfo, replicas: int, *,
          pathways: bool, taken: Sequence[str], colocated_python: bool = False
          ) -> LocalCheckpoint:
    """The checked directory for a workload of ``replicas`` slices on ``pool``; ``taken``:
    paths other volumes of the pod mount. Raises SpecError naming the option."""
    clean = posixpath.normpath(path) if path else ""
    if not path.startswith("/") or clean in ("/", "//"):
        raise SpecError(OPTION, f"{path!r} is not an absolute directory below /")
    for other in taken:
        if clean == other or clean.startswith(other.rstrip("/") + "/") \
                or other.startswith(clean + "/"):
            raise SpecError(OPTION, f"{path!r} overlaps {other}, which another volume "
                            "of the pod mounts")
    if pathways and not colocated_python:
        raise SpecError(OPTION, NEEDS_SIDECAR)
    tier = pool.checkpointing
    if tier is None:
        have = [p.name for p in outputs.slice_pools if p.checkpointing] or ["none"]
        raise SpecError(OPTION, f"pool {pool.name!r} has no multi-tier checkpointing "
                        f"(pools with it: {', '.join(have)}); the stack turns it on with "
                        "accelstack:checkpointing (docs/checkpointing.md)")
    if replicas < MIN_SLICES:
        raise SpecError("--num-slices", f"{replicas}: multi-tier checkpointing replicates "
                        f"checkpoints across slices, so it needs --num-slices {MIN_SLICES} "
                        "or more")
    return LocalCheckpoint(clean, tier.backup_interval_minutes)


def env(local: LocalCheckpoint) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"name": DIR_ENV, "value": local.path}]
    if local.backup_interval_minutes is not None:
        out.append({"name": INTERVAL_ENV, "value": str(local.backup_interval_minutes)})
    return out


def decorate(pod: dict[str, Any], pool: SlicePoolInfo, local: LocalCheckpoint) -> None:
    """Mount the RAM tier into the main container and keep the pods on the pool's nodes."""
    pod["volumes"].append({"name": VOLUME, "csi": {"driver": DRIVER}})
    main = pod["containers"][0]
    main["volumeMounts"].append({"name": VOLUME, "mountPath": local.path})
    main["env"] = main["env"] + env(local)
    # Pools of one slice type and capacity share a selector; the driver runs only on this
    # pool's nodes (its CheckpointConfiguration selects them by this label).
    pod["nodeSelector"][POOL_LABEL] = pool.name


def decorate_pathways_worker(pod: dict[str, Any], pool: SlicePoolInfo,
                             local: LocalCheckpoint) -> None:
    """Mount the RAM tier into a Pathways worker pod's colocated Python sidecar, the process
    that writes it (Orbax: multi_tier_checkpointing/initialization.py writes replicator.yaml
    there, sidecar_worker_checkpoint_manager.py saves and restores there), at the path the
    controller names; the pathways-worker container does no checkpoint I/O and gets none."""
    pod["volumes"] = pod.get("volumes", []) + [{"name": VOLUME, "csi": {"driver": DRIVER}}]
    [sidecar] = [c for c in pod["initContainers"] if c["name"] == SIDECAR]
    sidecar["volumeMounts"] = sidecar.get("volumeMounts", []) + [
        {"name": VOLUME, "mountPath": local.path}]
    pod["nodeSelector"][POOL_LABEL] = pool.name
