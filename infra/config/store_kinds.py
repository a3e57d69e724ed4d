"""Config of each kind of store: the keys a Cloud Storage bucket, a Filestore, Parallelstore or
Managed Lustre instance takes, created by the stack or referenced, checked against the
products' published limits (sources beside each table), so that a stack with an impossible
instance stops before any resource is declared. Pure data; ``infra.config.storage`` reads a
store's common keys and hands the rest to ``parse_kind``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Mapping

from infra.config.errors import one_of, show
from infra.config.reader import Reader

KINDS = ("gcs", "filestore", "parallelstore", "lustre")
KIND_KEYS: dict[str, tuple[str, ...]] = {
    "gcs": ("bucket", "location", "hierarchicalNamespace", "softDeleteDays", "retentionDays",
            "storageClass"),
    "filestore": ("tier", "capacityGb", "share", "location", "instance", "ip"),
    "parallelstore": ("capacityGib", "deploymentType", "location", "instance", "accessPoints",
                      "network"),
    "lustre": ("capacityGib", "throughput", "filesystem", "location", "instance", "ip"),
}
CREATED_ONLY = {"filestore": ("tier",), "parallelstore": ("deploymentType",),
                "lustre": ("throughput",)}
REFERENCED_ONLY = {"filestore": ("ip",), "parallelstore": ("accessPoints", "network"),
                   "lustre": ("ip",)}

# Bucket names: 3-63 characters, lowercase letters, digits, '-', '_' and '.', starting
# and ending with a letter or digit (https://cloud.google.com/storage/docs/buckets#naming;
# dotted names up to 222 characters need domain verification, so they are not offered).
_BUCKET = re.compile(r"^[a-z0-9][-_.a-z0-9]{1,61}[a-z0-9]\Z")
_BUCKET_LOCATION = re.compile(r"^[A-Z]+[A-Z0-9]*(-[A-Z0-9]+)*\Z")
_LUSTRE_FS = re.compile(r"^[A-Za-z0-9]{1,8}\Z")  # "eight characters or less, letters and numbers"
_SHARE = re.compile(r"^[a-z]([_a-z0-9]{0,14})\Z")

# Filestore capacity per tier, in GiB (Filestore "Service tiers":
# https://cloud.google.com/filestore/docs/service-tiers; Zonal and Regional:
# https://cloud.google.com/filestore/docs/service-tiers-zonal, -regional). Basic tiers go to
# 63.9 TiB; Zonal 1-9.75 TiB or 10-100 TiB; Regional 100 GiB-10,239 GiB or 10-100 TiB;
# Enterprise 1-10 TiB. Step sizes within a range are not published in one place for every
# tier, so only the ranges are enforced; Filestore refuses a size off its step.
FILESTORE_TIERS: dict[str, tuple[tuple[int, int], ...]] = {
    "BASIC_HDD": ((1024, 65433),),
    "BASIC_SSD": ((2560, 65433),),
    "ZONAL": ((1024, 9984), (10240, 102400)),
    "REGIONAL": ((100, 10239), (10240, 102400)),
    "ENTERPRISE": ((1024, 10240),),
}
# Zonal tiers live in a zone; Regional and Enterprise instances in a region.
REGIONAL_FILESTORE_TIERS = ("REGIONAL", "ENTERPRISE")

# Parallelstore: 12,000 GiB to 100,000 GiB in multiples of 4,000 GiB (Parallelstore
# "Create an instance", capacity; GKE "Parallelstore CSI driver" PVC sizes).
PARALLELSTORE_MIN_GIB, PARALLELSTORE_MAX_GIB, PARALLELSTORE_STEP_GIB = 12000, 100000, 4000
PARALLELSTORE_DEPLOYMENTS = ("SCRATCH", "PERSISTENT")

# Managed Lustre performance tiers (MBps per TiB): (minimum GiB, maximum GiB, step GiB,
# threshold GiB above which the step is the larger one, larger step GiB).
# https://cloud.google.com/managed-lustre/docs/performance-tiers (the Dynamic tier is not
# offered here). Above the threshold, capacities must be multiples of the larger step.
LUSTRE_TIERS: dict[int, tuple[int, int, int, int, int]] = {
    1000: (9000, 10008000, 9000, 1530000, 72000),
    500: (18000, 20016000, 18000, 3060000, 144000),
    250: (36000, 40032000, 36000, 6120000, 288000),
    125: (72000, 12240000, 72000, 12240000, 72000),
}


def parse_kind(r: Reader, raw: Mapping[str, Any], path: str, kind: str, create: bool, *,
               project: str, cluster: str, name: str, region: str,
               zones: tuple[str, ...]) -> dict[str, Any]:
    """The ``Store`` fields of a store of ``kind`` (but its instance name, which
    ``infra.config.storage`` defaults and checks for every kind but gcs)."""
    if kind == "gcs":
        return _gcs(r, raw, path, create, project, cluster, name, region)
    if kind == "filestore":
        return _filestore(r, raw, path, create, zones, region)
    if kind == "parallelstore":
        return _parallelstore(r, raw, path, create, zones)
    return _lustre(r, raw, path, create, zones, name)


def _int(r: Reader, raw: Mapping[str, Any], key: str, path: str, required: bool = False,
         minimum: int = 0) -> int | None:
    value = r.get(raw, key, path, int, required=required)
    if value is not None and value < minimum:
        r.fail(f"{path}.{key}", f"{value} is below {minimum}")
        return None
    return value  # type: ignore[no-any-return]



def _location(r: Reader, raw: Mapping[str, Any], path: str, default: str,
              allowed: tuple[str, ...], what: str = "zone") -> str:
    value = r.get(raw, "location", path, str, default=default)
    if value not in allowed:
        r.fail(f"{path}.location", f"{show(value)} is not the stack's {what}; the store must "
               f"sit beside the nodes (allowed: {one_of(allowed)})")
    return str(value)


def _ip(r: Reader, value: Any, path: str) -> str | None:
    if value is None:
        return None
    try:
        return str(ipaddress.IPv4Address(str(value)))
    except ValueError:
        r.fail(path, f"{show(value)} is not an IPv4 address")
        return None


def _gcs(r: Reader, raw: Mapping[str, Any], path: str, create: bool, project: str,
         cluster: str, name: str, region: str) -> dict[str, Any]:
    default_bucket = f"{project}-{cluster}-{name}"[:63].strip("-") if create else None
    bucket = r.get(raw, "bucket", path, str, default=default_bucket, required=not create)
    if bucket is not None and not _BUCKET.match(bucket) or (
            bucket is not None and bucket.startswith("goog")):
        r.fail(f"{path}.bucket", f"{show(bucket)} is not a Cloud Storage bucket name (3-63 "
               "lowercase letters, digits, '-', '_' and '.', starting and ending with a "
               "letter or digit, not starting with 'goog')")
    out: dict[str, Any] = {"bucket": bucket}
    created_only = ("location", "hierarchicalNamespace", "softDeleteDays", "retentionDays",
                    "storageClass")
    if not create:
        for key in created_only:
            if key in raw:
                r.fail(f"{path}.{key}", "applies to buckets the stack creates (create: true);"
                       " a referenced bucket keeps its own settings")
        return out
    # A bucket in the cluster's region: reads and writes stay in the region, with no
    # inter-region transfer (GKE: "set the Location type to Region, and select a region
    # that matches your GKE cluster", cloud-storage-fuse-csi-driver-setup).
    out["location"] = str(r.get(raw, "location", path, str, default=region.upper())).upper()
    if not _BUCKET_LOCATION.match(out["location"]):
        r.fail(f"{path}.location", f"{show(raw.get('location'))} is not a Cloud Storage "
               "location (a region such as us-east5, a dual-region or a multi-region such "
               "as US)")
    hns = r.get(raw, "hierarchicalNamespace", path, bool, default=False)
    out["hierarchical_namespace"] = hns
    out["soft_delete_days"] = _int(r, raw, "softDeleteDays", path)
    if out["soft_delete_days"] is not None and not (
            out["soft_delete_days"] == 0 or 7 <= out["soft_delete_days"] <= 90):
        # Soft delete: 0 turns it off, else 7 to 90 days
        # (https://cloud.google.com/storage/docs/soft-delete#retention-duration).
        r.fail(f"{path}.softDeleteDays", f"{out['soft_delete_days']} is not 0 (off) or 7-90 "
               "days")
    out["retention_days"] = _int(r, raw, "retentionDays", path, minimum=1)
    storage_class = r.get(raw, "storageClass", path, str)
    classes = ("STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE")
    if storage_class is not None and storage_class not in classes:
        r.fail(f"{path}.storageClass", f"{show(storage_class)} is not one of {one_of(classes)}")
    out["storage_class"] = storage_class
    return out


def _filestore(r: Reader, raw: Mapping[str, Any], path: str, create: bool,
               zones: tuple[str, ...], region: str) -> dict[str, Any]:
    share = r.get(raw, "share", path, str, default="vol1")
    if not _SHARE.match(share):
        r.fail(f"{path}.share", f"{show(share)} is not a Filestore share name (a lowercase "
               "letter, then up to 15 lowercase letters, digits and '_')")
    out: dict[str, Any] = {"share": share}
    if not create:
        out["instance"] = r.get(raw, "instance", path, str, required=True)
        out["location"] = r.get(raw, "location", path, str, required=True)
        out["ip"] = _ip(r, r.get(raw, "ip", path, str, required=True), f"{path}.ip")
        out["capacity_gib"] = _int(r, raw, "capacityGb", path, required=True, minimum=1)
        return out
    tier = r.get(raw, "tier", path, str, required=True)
    capacity = _int(r, raw, "capacityGb", path, required=True, minimum=1)
    if tier is not None and tier not in FILESTORE_TIERS:
        r.fail(f"{path}.tier", f"{show(tier)} is not a Filestore tier; allowed: "
               f"{one_of(FILESTORE_TIERS)}")
    elif tier is not None and capacity is not None:
        ranges = FILESTORE_TIERS[tier]
        if not any(lo <= capacity <= hi for lo, hi in ranges):
            shown = " or ".join(f"{lo}-{hi}" for lo, hi in ranges)
            r.fail(f"{path}.capacityGb", f"{capacity} GiB is outside what a {tier} instance "
                   f"holds ({shown} GiB)")
    regional = tier in REGIONAL_FILESTORE_TIERS
    out["tier"] = tier
    out["capacity_gib"] = capacity
    out["location"] = (_location(r, raw, path, region, (region,), "region") if regional
                       else _location(r, raw, path, zones[0], zones))
    return out


def _parallelstore(r: Reader, raw: Mapping[str, Any], path: str, create: bool,
                   zones: tuple[str, ...]) -> dict[str, Any]:
    if not create:
        points = r.get(raw, "accessPoints", path, list, default=[], required=True)
        return {"instance": r.get(raw, "instance", path, str, required=True),
                "location": r.get(raw, "location", path, str, required=True),
                "access_points": tuple(p for i, p in enumerate(points)
                                       if _ip(r, p, f"{path}.accessPoints[{i}]")),
                "network": r.get(raw, "network", path, str),
                "capacity_gib": _int(r, raw, "capacityGib", path, required=True, minimum=1)}
    capacity = _int(r, raw, "capacityGib", path, required=True)
    if capacity is not None and not (
            PARALLELSTORE_MIN_GIB <= capacity <= PARALLELSTORE_MAX_GIB
            and capacity % PARALLELSTORE_STEP_GIB == 0):
        r.fail(f"{path}.capacityGib", f"{capacity} is not a Parallelstore capacity (12000 to "
               "100000 GiB in multiples of 4000)")
    deployment = r.get(raw, "deploymentType", path, str, default="SCRATCH")
    if deployment not in PARALLELSTORE_DEPLOYMENTS:
        r.fail(f"{path}.deploymentType", f"{show(deployment)} is not one of "
               f"{one_of(PARALLELSTORE_DEPLOYMENTS)}")
    return {"capacity_gib": capacity, "deployment_type": deployment,
            "location": _location(r, raw, path, zones[0], zones)}


def default_filesystem(store: str) -> str:
    """A created Lustre instance's file system name when the stack does not give one: the
    store's name, its letters and digits, cut to 8. GKE cannot mount volumes from two
    instances with the same file system name on one node ("Mounting multiple volumes from
    different Managed Lustre instances with the same filesystem name on a single node is
    not supported", GKE concepts/managed-lustre, Limitations), so one fixed default for
    every store would make two stores unusable from one node; infra.config.storage refuses
    duplicates that remain."""
    return re.sub(r"[^A-Za-z0-9]", "", store)[:8]


def _lustre(r: Reader, raw: Mapping[str, Any], path: str, create: bool,
            zones: tuple[str, ...], name: str) -> dict[str, Any]:
    filesystem = r.get(raw, "filesystem", path, str,
                       default=default_filesystem(name) if create else None,
                       required=not create)
    if filesystem is not None and not _LUSTRE_FS.match(filesystem):
        r.fail(f"{path}.filesystem", f"{show(filesystem)} is not a Lustre file system name "
               "(1-8 letters and digits)")
    if not create:
        return {"instance": r.get(raw, "instance", path, str, required=True),
                "location": r.get(raw, "location", path, str, required=True),
                "ip": _ip(r, r.get(raw, "ip", path, str, required=True), f"{path}.ip"),
                "filesystem": filesystem,
                "capacity_gib": _int(r, raw, "capacityGib", path, required=True, minimum=1)}
    throughput = r.get(raw, "throughput", path, int, default=1000)
    capacity = _int(r, raw, "capacityGib", path, required=True)
    if throughput not in LUSTRE_TIERS:
        r.fail(f"{path}.throughput", f"{show(throughput)} is not a Managed Lustre tier in MBps "
               f"per TiB; allowed: {one_of(str(t) for t in LUSTRE_TIERS)}")
    elif capacity is not None:
        lo, hi, step, threshold, big = LUSTRE_TIERS[throughput]
        step_ok = capacity % (step if capacity <= threshold else big) == 0
        if not (lo <= capacity <= hi and step_ok):
            r.fail(f"{path}.capacityGib", f"{capacity} is not a capacity of the {throughput} "
                   f"MBps/TiB tier ({lo} to {hi} GiB in steps of {step}"
                   + (f", {big} above {threshold}" if big != step else "") + ")")
    return {"capacity_gib": capacity, "throughput": throughput, "filesystem": filesystem,
            "location": _location(r, raw, path, zones[0], zones)}
