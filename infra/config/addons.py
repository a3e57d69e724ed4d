"""Config of the cluster add-ons: JobSet and Kueue versions, queues and the image cache.

Parsed with the rest of the stack config (``infra.config.stack.parse`` calls the ``parse_*``
functions), so a bad queue or image reference stops the stack before any resource is
declared. The layer above the slice pools, which the queues and the image cache name.
Pure data; this module must not import pulumi or ``infra.config.stack`` (which imports it).
"""

from __future__ import annotations

import re
from typing import Any, Collection, Mapping, Sequence

from infra.config.fields import DEFAULT_PODS_PER_NODE
from infra.config.slices import SlicePool
from infra.config.errors import did_you_mean, one_of, show
from infra.contract.images import image_problem
from infra.config.reader import Reader
from infra.record import record

DEFAULT_JOBSET_VERSION = "v0.12.0"
DEFAULT_KUEUE_VERSION = "v0.19.2"
PRIORITY_CLASSES = (("very-low", 100), ("low", 250), ("medium", 500), ("high", 750),
                    ("very-high", 1000))
TAS_MODES = ("auto", "on", "off")

_VERSION = re.compile(r"^v\d+\.\d+\.\d+\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z")
ADDON_KEYS = ("jobsetVersion", "kueueVersion")
QUEUE_KEYS = ("namespace", "localQueue", "clusterQueue", "cohort", "topologyAwareScheduling",
              "cpuQuota", "teams")
TEAM_KEYS = ("name", "namespace", "quota", "borrowingLimit")
CPU_QUOTA_KEYS = ("cpu", "memoryGi")
IMAGE_KEYS = ("name", "image", "slicePools")
MAX_IMAGE_NAME = 63 - len("image-cache-")
# Namespaces the stack's own add-ons use; workload queues may not take them.
RESERVED_NAMESPACES = ("accelstack-system", "kueue-system", "jobset-system", "kube-system",
                       "kube-public", "kube-node-lease")


@record
class Addons:
    jobset_version: str
    kueue_version: str


@record
class Team:
    name: str
    namespace: str
    quota: Mapping[str, int]  # slice pool name -> chips (vCPUs for CPU pools)
    borrowing_limit: Mapping[str, int] | None  # None: may borrow all the cohort lends


@record
class Queues:
    namespace: str
    local_queue: str
    cluster_queue: str
    cohort: str
    topology_aware: str  # auto, on, off
    cpu_quota: tuple[int, int] | None  # (vCPUs, memory GiB) overriding the derived quota
    teams: tuple[Team, ...]


@record
class CachedImage:
    name: str  # the DaemonSet's name suffix
    image: str
    slice_pools: tuple[str, ...]  # empty: every accelerator pool


def _name(r: Reader, raw: Mapping[str, Any], key: str, path: str, default: str,
          pattern: re.Pattern[str] = _DNS_LABEL, what: str = "a DNS-1123 label") -> str:
    value = r.get(raw, key, path, str, default=default)
    if not pattern.match(value):
        r.fail(f"{path}.{key}", f"{show(value)} is not {what} (lowercase letters, digits and "
               "'-', starting and ending with a letter or digit, at most 63 characters)")
    return str(value)


def parse_addons(r: Reader, value: Any) -> Addons:
    path = "addons"
    raw = r.obj(value, path, ADDON_KEYS)
    versions = []
    for key, default in (("jobsetVersion", DEFAULT_JOBSET_VERSION),
                         ("kueueVersion", DEFAULT_KUEUE_VERSION)):
        v = r.get(raw, key, path, str, default=default)
        if not _VERSION.match(v):
            r.fail(f"{path}.{key}", f"{show(v)} is not a release version such as {default}")
        versions.append(v)
    return Addons(versions[0], versions[1])


def _quota_map(r: Reader, value: Any, path: str, pools: Mapping[str, int],
               unresolved: Collection[str] = ()) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        r.fail(path, f"{show(value)} is not a mapping of slice pool names to chip counts")
        return {}
    out = {}
    for name, amount in value.items():
        where = f"{path}.{name}"
        if name in unresolved and name not in pools:
            continue  # the pool's own error is reported; do not repeat it here
        if name not in pools:
            r.fail(where, f"names no slice pool of this stack{did_you_mean(str(name), pools)} "
                   f"(pools: {one_of(pools) or 'none'})")
        elif isinstance(amount, bool) or not isinstance(amount, int):
            r.fail(where, f"{show(amount)} is not a whole number of chips")
        elif amount < 0:
            r.fail(where, f"{amount} is negative; a quota is 0 or more chips")
        elif amount > pools[name]:
            r.fail(where, f"{amount} is more than the {pools[name]} chips pool {name} declares")
        else:
            out[str(name)] = amount
    return out


def parse_queues(r: Reader, value: Any, slice_pools: Sequence[SlicePool],
                 unresolved: Collection[str] = (),
                 classes: Mapping[str, int] | None = None) -> Queues:
    """``classes`` maps each slice class to its chips limit: team quotas name pools and
    classes alike."""
    path = "queues"
    raw = r.obj(value, path, QUEUE_KEYS)
    namespace = _name(r, raw, "namespace", path, "training")
    if namespace in RESERVED_NAMESPACES:
        r.fail(f"{path}.namespace", f"{show(namespace)} is reserved for the cluster's system "
               f"components ({one_of(RESERVED_NAMESPACES)}); choose another")
    local = _name(r, raw, "localQueue", path, "main", _DNS_SUBDOMAIN, "a DNS-1123 subdomain")
    cluster = _name(r, raw, "clusterQueue", path, "cluster-queue", _DNS_SUBDOMAIN,
                    "a DNS-1123 subdomain")
    cohort = _name(r, raw, "cohort", path, "accelstack", _DNS_SUBDOMAIN, "a DNS-1123 subdomain")
    if isinstance(raw.get("topologyAwareScheduling"), bool):
        # YAML 1.1 (and so a stack file) reads an unquoted on/off as a boolean.
        raw["topologyAwareScheduling"] = "on" if raw["topologyAwareScheduling"] else "off"
    tas = r.get(raw, "topologyAwareScheduling", path, str, default="auto")
    if tas not in TAS_MODES:
        r.fail(f"{path}.topologyAwareScheduling", f"{show(tas)} is not one of {one_of(TAS_MODES)}")
    cpu_quota = None
    if "cpuQuota" in raw:
        q = r.obj(raw["cpuQuota"], f"{path}.cpuQuota", CPU_QUOTA_KEYS)
        cpu = r.get(q, "cpu", f"{path}.cpuQuota", int, required=True)
        mem = r.get(q, "memoryGi", f"{path}.cpuQuota", int, required=True)
        for key, val in (("cpu", cpu), ("memoryGi", mem)):
            if val is not None and val < 0:
                r.fail(f"{path}.cpuQuota.{key}", f"{val} is negative")
        if cpu is not None and mem is not None:
            cpu_quota = (cpu, mem)
    pools = {p.name: p.chips if p.accelerator.kind != "cpu" else
             p.count * p.accelerator.chips for p in slice_pools}
    pools.update(classes or {})
    teams: list[Team] = []
    used = {namespace}
    teams_raw = r.get(raw, "teams", path, list, default=[])
    for i, item in enumerate(teams_raw):
        tpath = f"{path}.teams[{i}]"
        t = r.obj(item, tpath, TEAM_KEYS)
        name = r.get(t, "name", tpath, str, required=True)
        if name is None:
            continue
        if not _DNS_LABEL.match(name):
            r.fail(f"{tpath}.name", f"{show(name)} is not a DNS-1123 label")
        if name in (cluster,) or any(x.name == name for x in teams):
            r.fail(f"{tpath}.name", f"{show(name)} is already the name of a queue")
        ns = _name(r, t, "namespace", tpath, name)
        if ns in RESERVED_NAMESPACES:
            r.fail(f"{tpath}.namespace", f"{show(ns)} is reserved for the cluster's system "
                   f"components ({one_of(RESERVED_NAMESPACES)}); choose another")
        elif ns in used:
            r.fail(f"{tpath}.namespace", f"{show(ns)} already holds another queue's LocalQueue;"
                   " give each team its own namespace")
        used.add(ns)
        quota = _quota_map(r, t.get("quota"), f"{tpath}.quota", pools, unresolved)
        borrow = (_quota_map(r, t["borrowingLimit"], f"{tpath}.borrowingLimit", pools,
                             unresolved)
                  if "borrowingLimit" in t else None)
        teams.append(Team(name, ns, quota, borrow))
    for pool_name, total in pools.items():
        given = sum(t.quota.get(pool_name, 0) for t in teams)
        if given > total:
            r.fail(f"{path}.teams", f"the teams' quotas for {pool_name} add up to {given} chips, "
                   f"more than the {total} the pool declares; the shared queue's quota would be "
                   "negative")
    return Queues(namespace, local, cluster, cohort, tas, cpu_quota, tuple(teams))


def parse_image_cache(r: Reader, value: Any, slice_pools: Sequence[SlicePool],
                      unresolved: Collection[str] = ()) -> tuple[CachedImage, ...]:
    path = "imageCache"
    if value is None:
        return ()
    if not isinstance(value, list):
        r.fail(path, f"{show(value)} is not a list of images to pre-pull")
        return ()
    accel_pools = [p.name for p in slice_pools if p.accelerator.kind != "cpu"]
    out: list[CachedImage] = []
    for i, item in enumerate(value):
        ipath = f"{path}[{i}]"
        raw = r.obj({"image": item} if isinstance(item, str) else item, ipath, IMAGE_KEYS)
        image = r.get(raw, "image", ipath, str, required=True)
        if image is None:
            continue
        problem = image_problem(image)
        if problem:
            r.fail(f"{ipath}.image", problem)
            continue
        repository = image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
        default_name = re.sub(r"[^a-z0-9-]", "-", repository)[:40].strip("-") or f"image-{i}"
        name = _name(r, raw, "name", ipath, default_name)
        if len(name) > MAX_IMAGE_NAME:
            r.fail(f"{ipath}.name", f"{show(name)} is {len(name)} characters; at most "
                   f"{MAX_IMAGE_NAME} (the DaemonSet is named image-cache-<name>)")
        if any(c.name == name for c in out):
            r.fail(f"{ipath}.name", f"{show(name)} is used by another cached image; give one "
                   "a name")
        pools = r.get(raw, "slicePools", ipath, list, default=list(accel_pools))
        for j, p in enumerate(pools):
            if p in unresolved and p not in accel_pools:
                continue  # the pool's own error is reported; do not repeat it here
            if p not in accel_pools:
                r.fail(f"{ipath}.slicePools[{j}]", f"{show(p)} is not an accelerator slice pool "
                       f"of this stack{did_you_mean(str(p), accel_pools)} "
                       f"(pools: {one_of(accel_pools) or 'none'})")
        if not pools and not ("slicePools" not in raw and unresolved):
            # (Without slicePools the image goes on every accelerator pool; when pools did
            # not parse, that is why there are none, and their own errors say so.)
            r.fail(f"{ipath}.slicePools", "selects no slice pool; the stack has no accelerator "
                   "pools to cache images on" if not accel_pools else "is empty")
        out.append(CachedImage(name, image, tuple(pools)))
    _check_pods_per_node(r, out, slice_pools)
    return tuple(out)


# Pods a node's slots must hold besides accelstack's: GKE's own system pods (kube-proxy,
# logging, metrics, device plugins, the CSI drivers' node pods). GKE asks to "consider both
# workload pods and system pods" when lowering maxPodsPerNode
# (https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr, Limitations)
# but publishes no count, so half of a node's slots are left to them: a choice of ours, on
# the safe side (TPU pools' default of 15 was sized for one workload pod beside them,
# infra/config/slices.py DEFAULT_MAX_PODS).
SYSTEM_SHARE_OF_PODS = 0.5


def _check_pods_per_node(r: Reader, images: Sequence[CachedImage],
                         pools: Sequence[SlicePool]) -> None:
    """Every image-cache DaemonSet runs a pod on each node of the pools it selects; with the
    job's own pod they must fit the accelstack share of the pool's maxPodsPerNode."""
    for pool in pools:
        cached = [i.name for i in images if pool.name in i.slice_pools]
        if not cached:
            continue
        slots = pool.max_pods_per_node or DEFAULT_PODS_PER_NODE
        ours = 1 + len(cached)  # the job's pod and one pod per DaemonSet
        room = int(slots * (1 - SYSTEM_SHARE_OF_PODS))
        if ours > room:
            r.fail("imageCache", f"{len(cached)} image-cache DaemonSets ({', '.join(cached)}) "
                   f"and the job's pod make {ours} pods on every node of pool {pool.name!r}, "
                   f"more than the {room} of its maxPodsPerNode ({slots}) not left to GKE's "
                   "own system pods; cache fewer images there, or raise the pool's "
                   "maxPodsPerNode")
