"""``--mount STORE[:PATH][:ro|:rw]``: the stack's stores in a workload's pods.

``parse`` checks each mount against the stack's storage contract before anything is sent
(the store exists, the namespace may use it, a write mount has a read-write grant, paths
do not collide); ``decorate`` adds the volumes, mounts, env variables, service account and
GCS FUSE annotations to the pod template the renderer built. Pure: no Click, no
Kubernetes client, no pulumi.

Cloud Storage buckets are CSI ephemeral volumes of the GCS FUSE CSI driver (GKE "Mount
Cloud Storage buckets as CSI ephemeral volumes"); Filestore, Parallelstore and Lustre
stores mount the claim the stack created in the namespace.
"""

from __future__ import annotations

import posixpath
from typing import Any, Sequence

from infra.catalog import gke_versions
from infra.contract.outputs import StorageInfo
from infra.lazy_re import later
from infra.record import record

MOUNT_ROOT = "/mnt"  # a store's default path: /mnt/STORE
ENV_PREFIX = "ACCELSTACK_MOUNT_"  # ACCELSTACK_MOUNT_<STORE> = its path in the container
GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
# Pod annotations of the GCS FUSE CSI driver's webhook
# (GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/mutatingwebhook.go): the first asks
# for the sidecar; "0" as a limit removes it (pkg/webhook/config.go: a zero quantity is
# left out of the limits, and the request falls back to the driver's default).
GCSFUSE_VOLUMES = "gke-gcsfuse/volumes"
# The Parallelstore CSI driver's sidecar, asked for per pod (GKE "Access existing
# Parallelstore instances": the workload's pod annotations; the Parallelstore CSI driver
# reference: mountLocality "pod", the default, mounts in the pod).
PARALLELSTORE_VOLUMES = "gke-parallelstore/volumes"
GCSFUSE_LIMITS = ("gke-gcsfuse/cpu-limit", "gke-gcsfuse/memory-limit",
                  "gke-gcsfuse/ephemeral-storage-limit")
# Pods on the hosts' network (multi-host and multislice TPU jobs) authenticate the sidecar
# with the pod's own service account only when the volume opts in with hostNetworkPodKSA
# (driver pkg/csi_driver/utils.go; docs/authentication.md), which GKE supports from
# 1.33.3-gke.1226000 on Standard clusters (driver docs/releases.md, "Host networking
# support"). Before that the sidecar of a host-network pod has no Workload Identity.
HOST_NETWORK_MIN_GKE_TEXT = gke_versions.GCSFUSE_HOST_NETWORK

# GCS FUSE mount options (Cloud Storage FUSE config-file keys, flattened as the CSI driver
# takes them; GKE "Optimize Cloud Storage FUSE CSI driver for GKE performance"):
# - implicit-dirs: objects uploaded by other tools have no directory placeholder
#   objects; without it their directories do not show up.
# - read-only mounts (datasets): metadata never goes stale while the job reads it, so
#   cache stat and type entries without expiry or size bound, and keep directory listings
#   in the kernel's cache (metadata-cache:ttl-secs:-1, stat-/type-cache-max-size-mb:-1,
#   file-system:kernel-list-cache-ttl-secs:-1).
# - read-write mounts (checkpoints): keep GCS FUSE's default 60 s metadata TTL so files
#   other hosts write show up, and cache no "not found" answers
#   (metadata-cache:negative-ttl-secs:0), so a checkpoint another host has just finished
#   is visible to a restore at once.
# The file cache (Cloud Storage FUSE's read cache of whole objects on local disk;
# GKE "Cloud Storage FUSE CSI driver volume attributes": fileCacheCapacity is translated
# to file-cache:max-size-mb, and mount options are the recommended way to set it):
# - on only for read-only mounts on pools whose nodes have Local SSD ephemeral storage
#   (the contract's localSsdGiB; infra/catalog/tables.py LOCAL_SSD_DISKS). The cache lives in
#   the sidecar's gke-gcsfuse-cache volume (driver pkg/webhook/sidecar_spec.go: an
#   emptyDir unless the pod declares a volume of that name; GKE "Configure the Cloud
#   Storage FUSE CSI driver sidecar container": custom read cache volume), and emptyDirs
#   live on the node's ephemeral storage, which is the Local SSD RAID on those pools.
#   Datasets are read again every epoch, so later epochs read from Local SSD instead of
#   Cloud Storage.
# - off for read-write mounts (checkpoints): a checkpoint is written once and read back
#   once at a restore, so a cache would only fill the disk, and a cached copy of an object
#   another host rewrites is only checked against the metadata TTL.
# - off where the ephemeral storage is the boot disk (TPU VMs, G2, A2, A4, A4X: see
#   infra/catalog/tables.py), where a cache would compete with image pulls and logs for a
#   persistent disk that is slower than Cloud Storage reads at training rates.
# Size rule: the pod declares gke-gcsfuse-cache as an emptyDir of half the node's Local
# SSD (its sizeLimit; the other half stays for images, logs, other emptyDirs and the write
# staging of read-write mounts); each read-only mount gets an equal share of 90% of it as
# file-cache:max-size-mb, so Cloud Storage FUSE evicts before the kubelet would evict the
# pod for passing the sizeLimit. Pods on GPU pools take all of a node's GPUs, so one pod
# has the node's disk to itself.
# cache-file-for-range-read: a first read at a non-zero offset (shuffled record readers,
# random access into shards) also fills the cache with the whole object; without it such
# readers never hit the cache (volume attribute fileCacheForRangeRead, same page).
CACHE_VOLUME = "gke-gcsfuse-cache"
CACHE_SHARE_OF_LOCAL_SSD = 0.5
CACHE_HEADROOM = 0.9
FILE_CACHE_OPTIONS = ("file-cache:cache-file-for-range-read:true",)
READ_ONLY_OPTIONS = ("implicit-dirs", "metadata-cache:ttl-secs:-1",
                     "metadata-cache:stat-cache-max-size-mb:-1",
                     "metadata-cache:type-cache-max-size-mb:-1",
                     "file-system:kernel-list-cache-ttl-secs:-1")
READ_WRITE_OPTIONS = ("implicit-dirs", "metadata-cache:negative-ttl-secs:0")

_PATH = later(r"^/[-._/a-zA-Z0-9]*\Z")


class MountError(ValueError):
    """A --mount value that cannot work; the message names the value and what is allowed."""


@record
class Mount:
    store: str
    kind: str  # gcs, filestore, parallelstore, lustre
    source: str  # the bucket, or the claim in the namespace
    path: str
    read_only: bool

    @property
    def volume_name(self) -> str:
        return f"store-{self.store}"

    @property
    def env_name(self) -> str:
        return ENV_PREFIX + self.store.upper().replace("-", "_")


def uses_host_network(kind: str, vms_per_slice: int, replicas: int) -> bool:
    """Whether the renderer puts the pods on the hosts' network (multi-host or multislice
    TPU jobs; the rule of ``submit.render.jobset._pod_spec``)."""
    return kind == "tpu" and (vms_per_slice > 1 or replicas > 1)


def _version_said(storage: StorageInfo, node_version: str | None) -> str | None:
    """The version the job's nodes run, as a message says it: what the nodes report when
    the submitter could read it, else the version the stack pins (None: neither known)."""
    if node_version:
        return f"its nodes run {node_version.lstrip('v')}"
    if storage.gke_version:
        return f"the stack pins {storage.gke_version}"
    return None


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _split(item: str) -> tuple[str, str | None, str | None]:
    """STORE[:PATH][:ro|:rw] -> (store, path, mode)."""
    parts = item.split(":")
    store, rest = parts[0], parts[1:]
    mode = None
    if rest and rest[-1] in ("ro", "rw"):
        mode = rest.pop()
    if len(rest) > 1:
        raise MountError(f"{item!r} is not STORE[:PATH][:ro|:rw]")
    return store, (rest[0] if rest else None), mode


def parse(items: Sequence[str], storage: StorageInfo, namespace: str, *,
          host_network: bool, reserved: Sequence[str], pool_kind: str = "",
          arm: bool = False, node_version: str | None = None) -> tuple[Mount, ...]:
    """Check every --mount value; ``reserved`` are the paths the pod already mounts.
    ``pool_kind`` (tpu, gpu, cpu) and ``arm``: the pool the job runs on; ``node_version``:
    the version its nodes report (submit/cluster/kube.py), when the submitter read it."""
    version = (node_version or storage.gke_version or "").lstrip("v") or None
    said = _version_said(storage, node_version)
    out: list[Mount] = []
    names = ", ".join(s.name for s in storage.stores) or "none"
    for item in items:
        store_name, path, mode = _split(item)
        store = storage.store(store_name)
        if store is None:
            raise MountError(f"{store_name!r} is not a store of the stack; its stores: {names}")
        grant = store.access.get(namespace)
        if grant is None:
            allowed = ", ".join(sorted(store.access)) or "none"
            raise MountError(f"store {store.name!r} grants namespace {namespace!r} no access; "
                             f"namespaces with access: {allowed}")
        read_only = mode == "ro"
        if not read_only and grant == "read-only":
            raise MountError(f"{item!r} mounts store {store.name!r} read-write, but namespace "
                             f"{namespace!r} may only read it; add :ro")
        if path is None:
            path = f"{MOUNT_ROOT}/{store.name}"
        norm = posixpath.normpath(path) if path.startswith("/") else path
        if not _PATH.match(path) or norm != path.rstrip("/") or norm == "/" or ".." in \
                path.split("/"):
            raise MountError(f"{path!r} is not an absolute path such as /mnt/{store.name} "
                             "(letters, digits, '-', '_', '.' and '/'; not / itself)")
        for used in reserved:
            if _overlaps(norm, used):
                raise MountError(f"{item!r}: {norm} overlaps {used}, which accelstack "
                                 "already mounts there; choose another path")
        for other in out:
            if other.store == store.name:
                raise MountError(f"store {store.name!r} is mounted twice; mount it once")
            if other.path == norm:
                raise MountError(f"{item!r}: {norm} is already where store {other.store!r} "
                                 "is mounted; give each mount its own path")
        if store.kind == "gcs" and host_network and version is not None and \
                gke_versions.below(version, HOST_NETWORK_MIN_GKE_TEXT):
            raise MountError(
                f"{item!r}: this job runs on the hosts' network (multi-host TPU), where "
                f"Cloud Storage FUSE needs GKE {HOST_NETWORK_MIN_GKE_TEXT} or later; {said}; "
                "use a single-host job or a Filestore, Parallelstore or Lustre store")
        if store.kind == "lustre":
            _check_lustre(item, pool_kind, arm, version, said)
        out.append(Mount(store.name, store.kind, store.source, norm, read_only))
    return tuple(out)


def _check_lustre(item: str, pool_kind: str, arm: bool, version: str | None,
                  said: str | None) -> None:
    """Managed Lustre mounts on Secure Boot nodes of GPU machine types only (every accelstack
    pool has Secure Boot on), on Arm nodes from their own minimum, and on nodes new enough
    for Lustre's own port (infra/catalog/gke_versions.py; infra/config/storage.py has the
    page these come from)."""
    if pool_kind and pool_kind != "gpu":
        raise MountError(f"{item!r}: Managed Lustre cannot be mounted on this job's {pool_kind.upper()} "
                         "nodes: GKE mounts it on Secure Boot nodes (every accelstack pool) of "
                         "GPU machine types only; use a GPU pool, or a Parallelstore, Filestore "
                         "or Cloud Storage store")
    floor = gke_versions.LUSTRE_ARM if arm else gke_versions.LUSTRE
    if version is not None and gke_versions.below(version, floor):
        raise MountError(f"{item!r}: Managed Lustre needs GKE {floor} or later on "
                         f"{'Arm' if arm else 'these'} nodes; {said}")


def cache_volume_mib(local_ssd_gib: int) -> int:
    """The gke-gcsfuse-cache volume's size on a node with this much Local SSD (0: none)."""
    return int(local_ssd_gib * 1024 * CACHE_SHARE_OF_LOCAL_SSD)


def file_cache_mib(mounts: Sequence[Mount], local_ssd_gib: int) -> int:
    """file-cache:max-size-mb of each cached mount (0: no file cache); see the size rule."""
    cached = [m for m in mounts if m.kind == "gcs" and m.read_only]
    if not cached or local_ssd_gib <= 0:
        return 0
    return int(cache_volume_mib(local_ssd_gib) * CACHE_HEADROOM) // len(cached)


def _volume(mount: Mount, host_network: bool, cache_mib: int = 0) -> dict[str, Any]:
    if mount.kind != "gcs":
        claim: dict[str, Any] = {"claimName": mount.source}
        if mount.read_only:
            claim["readOnly"] = True
        return {"name": mount.volume_name, "persistentVolumeClaim": claim}
    options: tuple[str, ...] = READ_ONLY_OPTIONS if mount.read_only else READ_WRITE_OPTIONS
    if mount.read_only and cache_mib > 0:
        options += (f"file-cache:max-size-mb:{cache_mib}",) + FILE_CACHE_OPTIONS
    attrs = {"bucketName": mount.source, "mountOptions": ",".join(options)}
    if host_network:
        attrs["hostNetworkPodKSA"] = "true"
    return {"name": mount.volume_name,
            "csi": {"driver": GCSFUSE_DRIVER, "readOnly": mount.read_only,
                    "volumeAttributes": attrs}}


def decorate(pod: dict[str, Any], pod_meta: dict[str, Any], mounts: Sequence[Mount],
             service_account: str | None, local_ssd_gib: int = 0) -> None:
    """Add the mounts and the job identity to a rendered pod template, in place.
    ``local_ssd_gib``: the pool's Local SSD ephemeral storage per node (file cache)."""
    if service_account:
        # The namespace's job account carries the stores' grants (Workload Identity
        # Federation). Its token needs no mounting (the render leaves it off unless
        # --mount-service-account-token): the GKE metadata server hands out the pod's
        # Google tokens, and the CSI drivers get theirs from the kubelet (the GCS FUSE
        # webhook adds a token volume of its own to host-network pods' sidecars).
        pod["serviceAccountName"] = service_account
    if not mounts:
        return
    host_network = bool(pod.get("hostNetwork"))
    main = pod["containers"][0]
    cache_mib = file_cache_mib(mounts, local_ssd_gib)
    for m in mounts:
        pod["volumes"].append(_volume(m, host_network, cache_mib))
        entry: dict[str, Any] = {"name": m.volume_name, "mountPath": m.path}
        if m.read_only:
            entry["readOnly"] = True
        main["volumeMounts"].append(entry)
        main["env"].append({"name": m.env_name, "value": m.path})
    if cache_mib:
        # Bounded, and on the node's ephemeral storage (the Local SSD): the sidecar mounts
        # a pod volume of this name instead of injecting its own unbounded emptyDir.
        pod["volumes"].append({"name": CACHE_VOLUME,
                               "emptyDir": {"sizeLimit": f"{cache_volume_mib(local_ssd_gib)}Mi"}})
    if any(m.kind == "gcs" for m in mounts):
        annotations = pod_meta.setdefault("annotations", {})
        annotations[GCSFUSE_VOLUMES] = "true"
        # No limits on the sidecar: a training job's reads are bounded by the node, and a
        # sidecar killed at a memory limit fails the job. Requests stay the driver's
        # defaults, within the node headroom infra/catalog/pod_resources.py leaves.
        for key in GCSFUSE_LIMITS:
            annotations[key] = "0"
    if any(m.kind == "parallelstore" for m in mounts):
        # The stack's Parallelstore volumes mount in "pod" mode (their PVs say
        # mountLocality: pod, infra/specs/storage.py), through the driver's sidecar, which
        # the pod asks for with this annotation as the GKE guides' workloads do. Its
        # requests stay the driver's defaults, within the node headroom.
        pod_meta.setdefault("annotations", {})[PARALLELSTORE_VOLUMES] = "true"


def mounts_of(pod_spec: dict[str, Any]) -> list[dict[str, str]]:
    """The store mounts of a live pod template, read back from its volumes."""
    volumes = {v.get("name"): v for v in pod_spec.get("volumes") or []}
    containers = pod_spec.get("containers") or [{}]
    out = []
    for vm in containers[0].get("volumeMounts") or []:
        name = str(vm.get("name", ""))
        vol = volumes.get(name)
        if not name.startswith("store-") or vol is None:
            continue
        if "csi" in vol:
            bucket = (vol["csi"].get("volumeAttributes") or {}).get("bucketName", "")
            source = f"gs://{bucket}"
        else:
            source = f"claim {(vol.get('persistentVolumeClaim') or {}).get('claimName', '')}"
        out.append({"path": str(vm.get("mountPath", "")), "store": name[len("store-"):],
                    "source": source,
                    "mode": "read-only" if vm.get("readOnly") else "read-write"})
    return out


def describe_lines(jobset: dict[str, Any]) -> list[str]:
    """``describe``: the stores a workload mounts, read from its live JobSet."""
    jobs = (jobset.get("spec") or {}).get("replicatedJobs") or [{}]
    pod = ((((jobs[0].get("template") or {}).get("spec") or {}).get("template") or {})
           .get("spec") or {})
    found = mounts_of(pod)
    if not found:
        return []
    return ["Mounts:"] + [f"  {m['path']}: {m['store']} ({m['source']}, {m['mode']})"
                          for m in found]


def store_volume(mount: Mount, host_network: bool, name: str) -> dict[str, Any]:
    """The pod volume of a store mount under another name (a sidecar's own mount of a
    store, such as the XLA dump upload's: submit/render/diagnostics/pod.py)."""
    return {**_volume(mount, host_network), "name": name}
