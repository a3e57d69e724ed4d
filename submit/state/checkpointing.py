"""`describe`'s view of a workload's multi-tier checkpointing: the three tiers its pods
use (RAM on each node, the peer slices' RAM, the backup bucket), read from the JobSet and
the pool's contract entry. Pure.
"""

from __future__ import annotations

from typing import Any

from submit.render.checkpointing import DRIVER


def local_dir(js: dict[str, Any]) -> str | None:
    """Where the JobSet's pods mount the checkpointing driver's volume (None: they do not)."""
    for rj in (js.get("spec") or {}).get("replicatedJobs") or []:
        job = ((rj.get("template") or {}).get("spec") or {}).get("template") or {}
        pod = job.get("spec") or {}
        names = {v["name"] for v in pod.get("volumes") or []
                 if (v.get("csi") or {}).get("driver") == DRIVER}
        for c in pod.get("containers") or []:
            for m in c.get("volumeMounts") or []:
                if m.get("name") in names:
                    return str(m["mountPath"])
    return None


def describe_lines(js: dict[str, Any], pool: Any) -> list[str]:
    """The tiers, or nothing for a workload without them."""
    path = local_dir(js)
    if path is None:
        return []
    tier = getattr(pool, "checkpointing", None)
    slices = sum(int(rj.get("replicas", 1)) for rj in js["spec"]["replicatedJobs"])
    lines = ["Checkpoint tiers (GKE multi-tier checkpointing):",
             f"  1 local RAM: {path} on every node"
             + (f", {tier.ram_disk_mi}Mi each (pool {pool.name})" if tier else ""),
             f"  2 peer RAM: replicated to the other slices ({slices} slices)"]
    if tier is not None:
        every = (f", every {tier.backup_interval_minutes} minutes"
                 if tier.backup_interval_minutes else "")
        lines.append(f"  3 backup: gs://{tier.bucket}{every}")
    else:
        lines.append("  3 backup: the pool's bucket (the stack's outputs no longer name it)")
    return lines
