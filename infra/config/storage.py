"""Config of the stack's storage: named stores, the identity jobs run as, and who may use what.

A training job reads a dataset and writes checkpoints. The ``storage`` section lists the
stores (Cloud Storage buckets, Filestore, Parallelstore and Managed Lustre instances, each
created by the stack or referenced), the Kubernetes service account jobs run as in every
workload namespace, and per store which namespaces (named by namespace or by team) may
read it or read and write it. The layer above the queues, whose namespaces and teams it
names. Pure data; must not import pulumi or ``infra.config.stack`` (which imports it).

Each kind's own keys, and their sizes against the products' published limits, are checked in
``infra.config.store_kinds``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Mapping, Sequence

from infra.catalog import gke_versions
from infra.catalog.gke_versions import GkeVersion, below
from infra.config.addons import Queues
from infra.config.slices import SlicePool
from infra.config.fields import parse_labels
from infra.config.errors import did_you_mean, one_of, show
from infra.config.reader import Reader
from infra.config.store_kinds import CREATED_ONLY, KIND_KEYS, KINDS, REFERENCED_ONLY, parse_kind
from infra.record import field, record

ACCESS = ("read-only", "read-write")
STORAGE_KEYS = ("serviceAccount", "projectNumber", "privateServiceAccess", "stores")
PSA_KEYS = ("prefixLength", "address")
COMMON_KEYS = ("name", "kind", "create", "access", "labels")
DEFAULT_SERVICE_ACCOUNT = "accelstack-workload"

# Store names become Kubernetes object names (PVCs, PVs, volume names) and env variable
# suffixes: DNS-1123 labels, short enough for "store-<name>" volume names.
MAX_STORE_NAME = 40
_STORE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
# Instance IDs of Filestore, Parallelstore and Lustre: lowercase letters, digits and
# hyphens, starting with a letter, ending with a letter or digit, 1-63 characters
# (pulumi-gcp parallelstore.Instance / lustre.Instance instance_id).
_INSTANCE = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_PROJECT_NUMBER = re.compile(r"^[1-9][0-9]{5,19}\Z")

# Managed Lustre's version floors: infra/catalog/gke_versions.py.
MIN_VERSION_LUSTRE = gke_versions.LUSTRE



@record
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


@record
class PrivateServiceAccess:
    prefix_length: int
    address: str | None  # None: Google picks a free range of that size


@record
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
    valid = name if name and _STORE_NAME.match(name) else "store"
    extra = parse_kind(r, raw, path, kind, create, project=project, cluster=cluster,
                       name=valid, region=region, zones=zones)
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
                  gke_version: GkeVersion | None = None,
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
    number = _project_number(r, raw.get("projectNumber"), f"{path}.projectNumber")
    psa = _private_service_access(r, raw.get("privateServiceAccess"),
                                  f"{path}.privateServiceAccess", taken or {})
    stores: list[Store] = []
    items = r.get(raw, "stores", path, list, default=[])
    for i, item in enumerate(items):
        store = _store(r, item, f"{path}.stores[{i}]", queues, project or "project",
                       cluster or "cluster", region or "region", zones or ("zone",))
        if store is not None and _fits(r, store, stores, f"{path}.stores[{i}]", gke_version):
            stores.append(store)
    return Storage(ksa, number, psa, tuple(stores))


def _project_number(r: Reader, number: Any, path: str) -> str | None:
    if isinstance(number, int) and not isinstance(number, bool):
        number = str(number)  # YAML reads an unquoted number as an integer
    if number is not None and (not isinstance(number, str) or not _PROJECT_NUMBER.match(number)):
        r.fail(path, f"{show(number)} is not a project number (the digits "
               "`gcloud projects describe PROJECT --format='value(projectNumber)'` prints)")
        return None
    return number


def _private_service_access(r: Reader, value: Any, path: str, taken: Mapping[str, str]
                            ) -> PrivateServiceAccess:
    psa_raw = r.obj(value, path, PSA_KEYS)
    prefix = r.get(psa_raw, "prefixLength", path, int, default=20)
    # Private services access ranges: /24 or larger blocks (Service Networking; Parallelstore
    # and Managed Lustre ask for at least a /24 of their own).
    if not 8 <= prefix <= 24:
        r.fail(f"{path}.prefixLength", f"{prefix} is not 8-24 (a range of at least /24)")
    address = r.get(psa_raw, "address", path, str)
    if address is not None:
        try:
            psa_net = ipaddress.IPv4Network(f"{address}/{prefix}")
        except ValueError:
            r.fail(f"{path}.address", f"{show(address)} is not the first address of a "
                   f"/{prefix} range")
        else:
            for key, cidr in taken.items():
                try:
                    clash = psa_net.overlaps(ipaddress.IPv4Network(cidr, strict=False))
                except ValueError:
                    continue  # reported by the network layer
                if clash:
                    r.fail(f"{path}.address", f"{psa_net} overlaps {key} ({cidr}); choose a "
                           "free range")
    return PrivateServiceAccess(prefix, address)


def _fits(r: Reader, store: Store, stores: list[Store], path: str,
          gke_version: GkeVersion | None) -> bool:
    """Whether the store may join the ``stores`` before it (reported if not)."""
    if any(s.name == store.name for s in stores):
        r.fail(f"{path}.name", f"{show(store.name)} is already the name of a store")
        return False
    if store.kind == "lustre" and gke_version is not None and below(gke_version.text,
                                                                     MIN_VERSION_LUSTRE):
        r.fail(f"{path}.kind", f"Managed Lustre needs GKE {MIN_VERSION_LUSTRE} or later "
               f"(nodes use Lustre's own port); {gke_version.said()}")
        return False
    same_fs = [s for s in stores if s.kind == "lustre" and store.kind == "lustre"
               and s.filesystem == store.filesystem]
    if same_fs:
        r.fail(f"{path}.filesystem", f"{show(store.filesystem)} is already the file system "
               f"name of store {same_fs[0].name!r}; GKE cannot mount volumes from two Managed "
               "Lustre instances with the same file system name on one node (GKE "
               "concepts/managed-lustre, Limitations): give each store its own (1-8 letters "
               "and digits)")
        return False
    if store.kind == "gcs" and any(s.bucket == store.bucket for s in stores):
        r.fail(f"{path}.bucket", f"{show(store.bucket)} is already another store's bucket")
        return False
    return True


# Managed Lustre from GKE nodes. "Node pools with Secure boot enabled are supported only if
# the machine type of the node pool is a GPU machine type"
# (https://cloud.google.com/managed-lustre/docs/connect-from-kubernetes-engine-existing-instance,
# Limitations), and every accelstack pool has Secure Boot on (infra/specs/nodepool.py; policy
# rule shielded-nodes), so TPU and CPU pools cannot mount it; turning Secure Boot off for
# them is not done (it is the rule the policy enforces). Arm nodes (A4X) mount it from
# 1.34.1-gke.2541000, x86 nodes from 1.33.2-gke.1111000, below MIN_VERSION_LUSTRE (GKE
# concepts/managed-lustre, Limitations). submit/render/mounts.py refuses a mount from such a
# pool; here a grant is refused to a namespace none of whose pools can mount it.
MIN_VERSION_LUSTRE_ARM = gke_versions.LUSTRE_ARM
LUSTRE_PAGE = ("https://cloud.google.com/managed-lustre/docs/"
               "connect-from-kubernetes-engine-existing-instance")


def mounts_lustre(pool: SlicePool, version: GkeVersion | None) -> bool:
    """Whether the pool's nodes can mount a Managed Lustre volume."""
    accel = pool.accelerator
    if accel.kind != "gpu":
        return False
    return accel.arch != "arm64" or version is None or not below(version.text,
                                                                  MIN_VERSION_LUSTRE_ARM)


def _namespace_pools(queues: Queues, pools: Sequence[SlicePool]) -> dict[str, list[SlicePool]]:
    """The pools each namespace's workloads may run on: the shared namespace's ClusterQueue
    lists every pool; a team's has its quota pools and borrows from the cohort on every pool
    (or those its borrowingLimit names)."""
    out = {queues.namespace: list(pools)}
    for team in queues.teams:
        names = set(team.quota) | (set(team.borrowing_limit) if team.borrowing_limit
                                   is not None else {p.name for p in pools})
        out[team.namespace] = [p for p in pools if p.name in names]
    return out


def check_lustre_grants(r: Reader, storage: Storage, raw_stores: Any, queues: Queues,
                        pools: Sequence[SlicePool], version: GkeVersion | None) -> None:
    """Refuse a Lustre store's grant to a namespace whose pools cannot mount it."""
    index = {item.get("name"): i for i, item in enumerate(raw_stores or [])
             if isinstance(item, Mapping)}
    by_ns = _namespace_pools(queues, pools)
    for store in storage.stores:
        if store.kind != "lustre":
            continue
        for ns in sorted(store.access):
            if any(mounts_lustre(p, version) for p in by_ns.get(ns, [])):
                continue
            arm = [p.name for p in by_ns.get(ns, []) if p.accelerator.kind == "gpu"]
            why = (f"its GPU pools are Arm nodes, which mount it from GKE "
                   f"{MIN_VERSION_LUSTRE_ARM}; {version.said()}" if arm and version else
                   "none of its pools is a GPU pool, and GKE mounts Managed Lustre on Secure "
                   "Boot nodes (every accelstack pool) of GPU machine types only")
            r.fail(f"storage.stores[{index.get(store.name, 0)}].access", f"namespace {ns!r} "
                   f"cannot mount Managed Lustre store {store.name!r}: {why} ({LUSTRE_PAGE}); "
                   "grant it to a namespace that runs on GPU pools, or use Parallelstore, "
                   "Filestore or Cloud Storage for TPU and CPU pools")
