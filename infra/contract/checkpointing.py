"""The multi-tier checkpointing part of a slice pool's contract entry: what a workload on
the pool needs to use GKE's RAM tier (infra/config/checkpointing.py declares it).

Optional and additive (no contract version change): a pool without the key has no
checkpointing, so older outputs load unchanged. Pure data.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.record import record


@record
class CheckpointTierInfo:
    """On every node of the pool: a RAM disk of ``ram_disk_mi`` MiB (outside any pod's
    request) backed up to ``bucket``; a workload pod there keeps ``pod_memory_mi``."""

    bucket: str
    ram_disk_mi: int
    pod_memory_mi: int | None  # None: the machine's memory is not published
    backup_interval_minutes: int | None = None  # None: the training code's own default

    def to_dict(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "ramDiskMi": self.ram_disk_mi,
                "podMemoryMi": self.pod_memory_mi,
                "backupIntervalMinutes": self.backup_interval_minutes}


def load(data: Any, path: str, error: type[Exception]) -> CheckpointTierInfo | None:
    """Read the entry's ``checkpointing`` value (None when absent); ``error`` is raised
    naming ``path`` and the bad field."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise error(f"{path}: not an object")
    bucket = data.get("bucket")
    if not isinstance(bucket, str) or not bucket:
        raise error(f"{path}.bucket: {bucket!r} is not a bucket name")
    out: dict[str, int | None] = {}
    for key, nullable in (("ramDiskMi", False), ("podMemoryMi", True),
                          ("backupIntervalMinutes", True)):
        value = data.get(key)
        if value is None and nullable:
            out[key] = None
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise error(f"{path}.{key}: {value!r} is not a non-negative integer")
        else:
            out[key] = value
    ram = out["ramDiskMi"]
    assert ram is not None
    return CheckpointTierInfo(bucket, ram, out["podMemoryMi"], out["backupIntervalMinutes"])
