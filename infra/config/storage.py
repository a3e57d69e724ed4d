"""Config of the stack's storage: named stores, the identity jobs run as, and who may use what.

A training job reads a dataset and writes checkpoints. The ``storage`` section lists the
stores (Cloud Storage buckets, Filestore, Parallelstore and Managed Lustre instances, each
created by the stack or referenced), the Kubernetes service account jobs run as in every
workload namespace, and per store which namespaces (named by namespace or by team) may
read it or read and write it. The layer above the queues, whose namespaces and teams it
names. Pure data; must not import pulumi or ``infra.config.stack`` (which imports it).

Sizes are checked against the products' published limits (sources beside each table), so
a stack with an impossible instance stops before any resource is declared.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from infra.config.addons import Queues
from infra.config.fields import parse_labels
from infra.config.errors import did_you_mean, one_of, show
from infra.config.reader import Reader

KINDS = ("gcs", "filestore", "parallelstore", "lustre")
ACCESS = ("read-only", "read-write")
STORAGE_KEYS = ("serviceAccount", "projectNumber", "privateServiceAccess", "stores")
PSA_KEYS = ("prefixLength", "address")
COMMON_KEYS = ("name", "kind", "create", "access", "labels")
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
DEFAULT_SERVICE_ACCOUNT = "accelstack-workload"

# Store names become Kubernetes object names (PVCs, PVs, volume names) and env variable
# suffixes: DNS-1123 labels, short enough for "store-<name>" volume names.
MAX_STORE_NAME = 40
_STORE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
# Bucket names: 3-63 characters, lowercase letters, digits, '-', '_' and '.', starting
# and ending with a letter or digit (https://cloud.google.com/storage/docs/buckets#naming;
# dotted names up to 222 characters need domain verification, so they are not offered).
_BUCKET = re.compile(r"^[a-z0-9][-_.a-z0-9]{1,61}[a-z0-9]\Z")
# Instance IDs of Filestore, Parallelstore and Lustre: lowercase letters, digits and
# hyphens, starting with a letter, ending with a letter or digit, 1-63 characters
# (pulumi-gcp parallelstore.Instance / lustre.Instance instance_id).
_INSTANCE = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_BUCKET_LOCATION = re.compile(r"^[A-Z]+[A-Z0-9]*(-[A-Z0-9]+)*\Z")
_PROJECT_NUMBER = re.compile(r"^[1-9][0-9]{5,19}\Z")
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


# Lustre instances are created without gke-support-enabled, so GKE nodes must be new
# enough to use Lustre's own port: "no longer required as of GKE node version
# 1.33.2-gke.4655000" (GKE API LustreCsiDriverConfig.enable_legacy_lustre_port).
MIN_VERSION_LUSTRE = (1, 33, 2, 4655000)


def _version_tuple(version: str) -> tuple[int, ...]:
    nums = [int(x) for x in re.findall(r"\d+", version)]
    return tuple(nums + [0] * (4 - len(nums)))


@dataclass(frozen=True)
class Store:
    name: str
    kind: str  # gcs, filestore, parallelstore, lustre
    create: bool
    access: Mapping[str, str]  # namespace -> read-only | read-write
    labels: Mapping[str, str] = field(default_factory=dict)
    # gcs
    bucket: str | None = None
    location: str | None = None  # bucket location, or the instance's zone/region
    hierarchical_namespace: bool = False
    soft_delete_days: int | None = None  # None: Cloud Storage's default (7 days)
    retention_days: int | None = None
    storage_class: str | None = None
    # filestore, parallelstore, lustre
    instance: str | None = None
    capacity_gib: int | None = None
    tier: str | None = None  # Filestore tier
    share: str | None = None  # Filestore file share
    deployment_type: str | None = None  # Parallelstore
    throughput: int | None = None  # Lustre MBps per TiB
    filesystem: str | None = None  # Lustre file system name
    ip: str | None = None  # referenced Filestore/Lustre: the instance's address
    access_points: tuple[str, ...] = ()  # referenced Parallelstore
    network: str | None = None  # referenced Parallelstore: the VPC's name

    @property
    def on_vpc(self) -> bool:
        """Stores reached over the VPC (their instances need private services access)."""
        return self.kind != "gcs"


@dataclass(frozen=True)
class PrivateServiceAccess:
    prefix_length: int
    address: str | None  # None: Google picks a free range of that size


@dataclass(frozen=True)
class Storage:
    service_account: str = DEFAULT_SERVICE_ACCOUNT
    project_number: str | None = None  # None: looked up from the project at deploy time
    private_service_access: PrivateServiceAccess = PrivateServiceAccess(20, None)
    stores: tuple[Store, ...] = ()

    def store(self, name: str) -> Store | None:
        return next((s for s in self.stores if s.name == name), None)

    @property
    def needs_private_service_access(self) -> bool:
        return any(s.on_vpc and s.create for s in self.stores)


def _int(r: Reader, raw: Mapping[str, Any], key: str, path: str, required: bool = False,
         minimum: int = 0) -> int | None:
    value = r.get(raw, key, path, int, required=required)
    if value is not None and value < minimum:
        r.fail(f"{path}.{key}", f"{value} is below {minimum}")
        return None
    return value  # type: ignore[no-any-return]


def _access(r: Reader, value: Any, path: str, queues: Queues) -> dict[str, str]:
    """``access`` keys name a workload namespace or a team (meaning its namespace)."""
    namespaces = [queues.namespace] + [t.namespace for t in queues.teams]
    teams = {t.name: t.namespace for t in queues.teams}
    known = list(dict.fromkeys(namespaces + list(teams)))
    if value is None:
        r.fail(path, "is required: map each namespace or team that may use the store to "
               f"{' or '.join(ACCESS)} (namespaces and teams: {one_of(known)})")
        return {}
    if not isinstance(value, Mapping) or not value:
        r.fail(path, f"{show(value)} is not a mapping of namespaces or teams to "
               f"{' or '.join(ACCESS)}")
        return {}
    out: dict[str, str] = {}
    for key, level in value.items():
        where = f"{path}.{key}"
        key = str(key)
        ns = key if key in namespaces else teams.get(key)
        if ns is None:
            r.fail(where, f"names no workload namespace or team of this stack"
                   f"{did_you_mean(key, known)} (namespaces and teams: {one_of(known)})")
            continue
        if level not in ACCESS:
            r.fail(where, f"{show(level)} is not one of {one_of(ACCESS)}")
            continue
        if ns in out and out[ns] != level:
            r.fail(where, f"namespace {ns!r} is given both {out[ns]} and {level}")
            continue
        out[ns] = str(level)
    return out


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


def _lustre(r: Reader, raw: Mapping[str, Any], path: str, create: bool,
            zones: tuple[str, ...]) -> dict[str, Any]:
    filesystem = r.get(raw, "filesystem", path, str, default="lustre" if create else None,
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


def _store(r: Reader, item: Any, path: str, queues: Queues, project: str, cluster: str,
           region: str, zones: tuple[str, ...]) -> Store | None:
    if not isinstance(item, Mapping):
        r.fail(path, f"{show(item)} is not a mapping with name, kind and access")
        return None
    kind = item.get("kind")
    if kind not in KINDS:
        r.fail(f"{path}.kind", f"{show(kind)} is not a store kind; allowed: {one_of(KINDS)}")
        return None
    raw = r.obj(item, path, COMMON_KEYS + KIND_KEYS[kind])
    before = len(r.problems)
    name = r.get(raw, "name", path, str, required=True)
    if name is not None and (not _STORE_NAME.match(name) or len(name) > MAX_STORE_NAME):
        r.fail(f"{path}.name", f"{show(name)} is not a store name (1-{MAX_STORE_NAME} lowercase "
               "letters, digits and '-', starting with a letter and ending with a letter or "
               "digit)")
    create = r.get(raw, "create", path, bool, default=True)
    access = _access(r, raw.get("access"), f"{path}.access", queues)
    labels = parse_labels(r, raw.get("labels"), f"{path}.labels")
    if labels and not create:
        r.fail(f"{path}.labels", "applies to stores the stack creates (create: true)")
    if kind == "gcs":
        valid = name if name and _STORE_NAME.match(name) else "store"
        extra = _gcs(r, raw, path, create, project, cluster, valid, region)
    elif kind == "filestore":
        extra = _filestore(r, raw, path, create, zones, region)
    elif kind == "parallelstore":
        extra = _parallelstore(r, raw, path, create, zones)
    else:
        extra = _lustre(r, raw, path, create, zones)
    for key in (CREATED_ONLY.get(kind, ()) if not create else REFERENCED_ONLY.get(kind, ())):
        if key in raw:
            r.fail(f"{path}.{key}", "applies to stores the stack creates (create: true)"
                   if not create else "describes an existing instance (create: false); the "
                   "stack reads it from the instance it creates")
    if kind != "gcs" and create:
        default_instance = f"{cluster}-{name}"[:63].strip("-") if name else None
        instance = r.get(raw, "instance", path, str, default=default_instance)
        extra["instance"] = instance
    instance = extra.get("instance")
    if kind != "gcs" and instance is not None and not _INSTANCE.match(instance):
        r.fail(f"{path}.instance", f"{show(instance)} is not an instance name (1-63 "
               "lowercase letters, digits and '-', starting with a letter)")
    if len(r.problems) > before or name is None:
        return None
    return Store(name=name, kind=kind, create=create, access=access, labels=labels, **extra)


def parse_storage(r: Reader, value: Any, queues: Queues, *, project: str | None,
                  cluster: str | None, region: str | None, zones: tuple[str, ...],
                  gke_version: str | None = None,
                  taken: Mapping[str, str] | None = None) -> Storage:
    """``taken`` maps the config keys of the network's ranges to their CIDRs: a private
    services range given by address must not overlap them."""
    path = "storage"
    if value is None:
        return Storage()
    raw = r.obj(value, path, STORAGE_KEYS)
    ksa = r.get(raw, "serviceAccount", path, str, default=DEFAULT_SERVICE_ACCOUNT)
    if not _DNS_LABEL.match(ksa) or ksa == "default":
        r.fail(f"{path}.serviceAccount", f"{show(ksa)} is not a service account name for jobs "
               "(a DNS-1123 label other than 'default', which every namespace already has)")
    number = raw.get("projectNumber")
    if isinstance(number, int) and not isinstance(number, bool):
        number = str(number)  # YAML reads an unquoted number as an integer
    if number is not None and (not isinstance(number, str) or not _PROJECT_NUMBER.match(number)):
        r.fail(f"{path}.projectNumber", f"{show(number)} is not a project number (the digits "
               "`gcloud projects describe PROJECT --format='value(projectNumber)'` prints)")
        number = None
    psa_raw = r.obj(raw.get("privateServiceAccess"), f"{path}.privateServiceAccess", PSA_KEYS)
    prefix = r.get(psa_raw, "prefixLength", f"{path}.privateServiceAccess", int, default=20)
    # Private services access ranges: /24 or larger blocks (Service Networking; Parallelstore
    # and Managed Lustre ask for at least a /24 of their own).
    if not 8 <= prefix <= 24:
        r.fail(f"{path}.privateServiceAccess.prefixLength", f"{prefix} is not 8-24 (a range of "
               "at least /24)")
    address = r.get(psa_raw, "address", f"{path}.privateServiceAccess", str)
    if address is not None:
        try:
            psa_net = ipaddress.IPv4Network(f"{address}/{prefix}")
        except ValueError:
            r.fail(f"{path}.privateServiceAccess.address", f"{show(address)} is not the first "
                   f"address of a /{prefix} range")
        else:
            for key, cidr in (taken or {}).items():
                try:
                    clash = psa_net.overlaps(ipaddress.IPv4Network(cidr, strict=False))
                except ValueError:
                    continue  # reported by the network layer
                if clash:
                    r.fail(f"{path}.privateServiceAccess.address", f"{psa_net} overlaps "
                           f"{key} ({cidr}); choose a free range")
    stores: list[Store] = []
    items = r.get(raw, "stores", path, list, default=[])
    for i, item in enumerate(items):
        store = _store(r, item, f"{path}.stores[{i}]", queues, project or "project",
                       cluster or "cluster", region or "region", zones or ("zone",))
        if store is None:
            continue
        if any(s.name == store.name for s in stores):
            r.fail(f"{path}.stores[{i}].name", f"{show(store.name)} is already the name of a "
                   "store")
            continue
        if store.kind == "lustre" and gke_version is not None and (
                _version_tuple(gke_version)[:len(gke_version.split("."))] <
                MIN_VERSION_LUSTRE[:len(gke_version.split("."))]):
            r.fail(f"{path}.stores[{i}].kind", f"Managed Lustre needs GKE 1.33.2-gke.4655000 "
                   f"or later (nodes use Lustre's own port); gkeVersion is {gke_version}")
            continue
        if store.kind == "gcs" and any(s.bucket == store.bucket for s in stores):
            r.fail(f"{path}.stores[{i}].bucket", f"{show(store.bucket)} is already another "
                   "store's bucket")
            continue
        stores.append(store)
    return Storage(ksa, number, PrivateServiceAccess(prefix, address), tuple(stores))
