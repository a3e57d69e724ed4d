"""The ``sliceClasses`` section of the stack config: slices made on demand.

A slice class is a GKE custom ComputeClass with node pool auto-creation: it declares the
accelerator shapes GKE may create for it, the capacity to try in order (named
reservations, Spot, flex-start, on-demand; any subset), its limits (chips, and slices at
once) and what every created node pool gets. Nothing exists while no job runs: GKE creates
a node pool when a pod that selects the class is pending, and deletes it once it is empty
(https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning).
Each rule GKE would refuse is checked here first, with its source. Sits beside
``infra.config.slices`` (it reuses its capacity vocabulary) and below the add-ons, whose
team quotas may name a class. Pure; no pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from infra.catalog import tables as catalog
from infra.catalog.tables import Accelerator
from infra.config.errors import did_you_mean, one_of, show
from infra.config.fields import parse_labels
from infra.config.reader import Reader
from infra.config.slices import FLEX_START_PAGE, FLEX_START_TPU, MAX_RUN_SECONDS

CLASS_KEYS = ("name", "shapes", "capacity", "limits", "zones", "nodes")
LIMIT_KEYS = ("chips", "slices")
NODE_KEYS = ("secureBoot", "maxPodsPerNode", "labels", "taints", "secondaryBootDisk",
             "autoUpgrade", "autoRepair", "idleMinutes")
CAPACITY_ENTRY_KEYS = ("mode", "reservation", "block", "zone", "maxRunDuration")
CLASS_MODES = ("reservation", "spot", "flex-start", "on-demand")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

CRD_PAGE = "https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass"
ABOUT_PAGE = ("https://cloud.google.com/kubernetes-engine/docs/concepts/"
              "about-custom-compute-classes")

# GKE versions from "About custom ComputeClasses" (ABOUT_PAGE), checked when a stack pins
# its version: custom ComputeClasses; TPU priority rules; reservations in a class; node
# selectors on system labels (the TPU accelerator and topology labels) beside a class;
# secondary boot disks in a priority; node labels and taints set in a priority rule. Every
# rule of a class labels its nodes accelstack.dev/capacity=class (infra/specs/slice_classes),
# the label the stack's Kueue flavors tell pools and classes apart by, so every class needs
# priority node labels.
MIN_VERSION_TPU = (1, 31, 2, 1518000)
MIN_VERSION_RESERVATIONS = (1, 31, 1, 2105000)
MIN_VERSION_SYSTEM_LABELS = (1, 32, 3, 1499000)
MIN_VERSION_BOOT_DISKS = (1, 31, 2, 1105000)
MIN_VERSION_PRIORITY_LABELS = (1, 33, 2, 1111000)
MIN_VERSION_PRIORITY_TAINTS = (1, 33, 4, 1350000)
# "If your cluster is running a version earlier than GKE version 1.33.3-gke.1136000, you
# must also enable cluster-level node auto-provisioning" (ABOUT_PAGE, "Node pool
# auto-creation and ComputeClasses"). A stack that does not pin a version at or above it
# gets cluster-level auto-provisioning with limits that cover its classes (the safe side).
MIN_VERSION_CLASS_ONLY_AUTOCREATION = (1, 33, 3, 1136000)
# Flex-start: TPUs from 1.33.0-gke.1712000, GPUs from 1.32.2-gke.1652000 (FLEX_START_PAGE,
# Requirements), in these zones for TPUs (same page, read 2026-11-25; GPUs: no zone list).
MIN_VERSION_FLEX_TPU = (1, 33, 0, 1712000)
MIN_VERSION_FLEX_GPU = (1, 32, 2, 1652000)
FLEX_START_TPU_ZONES = {
    "v6e": ("asia-northeast1-b", "us-east5-a", "us-east5-b"),
    "v5e": ("us-west4-a",),
    "v5p": ("us-east5-a",),
}
# ComputeClass priority maxPodsPerNode: 8 to 256 (CRD_PAGE); TPU hosts default to 15 as in
# fixed pools (infra/config/slices.py DEFAULT_MAX_PODS has the sources), GPU VMs to 32.
DEFAULT_MAX_PODS = {"tpu": 15, "gpu": 32}
# autoscalingPolicy.consolidationDelayMinutes: 1 to 1440 (CRD_PAGE).
MAX_IDLE_MINUTES = 1440

_DISK_IMAGE = re.compile(r"^(projects/(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/)?global/"
                         r"images/(?P<image>[a-z]([-a-z0-9]{0,61}[a-z0-9])?)\Z")
_RESERVATION = re.compile(r"^(projects/(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/"
                          r"reservations/)?(?P<name>[a-z]([-a-z0-9]{0,61}[a-z0-9])?)\Z")
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?\Z")
_TAINT_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*"
                        r"[A-Za-z0-9])?\Z")
_TAINT_VALUE = re.compile(r"^([a-z0-9][-A-Za-z0-9_.]{1,61})?[A-Za-z0-9]\Z")  # CRD_PAGE
_DURATION = re.compile(r"^(\d+)([smhd])\Z")
_RESERVED_KEY_PREFIXES = ("cloud.google.com/", "google.com/", "nvidia.com/",
                          "kubernetes.io/", "node.kubernetes.io/", "accelstack.dev/")


@dataclass(frozen=True)
class ClassCapacity:
    """One priority of a class, in the order GKE tries them."""

    mode: str  # reservation, spot, flex-start, on-demand
    reservation: str | None = None  # the reservation's name
    project: str | None = None  # the project that owns a shared reservation
    block: str | None = None
    zone: str | None = None  # where the reservation is consumed
    max_run_seconds: int | None = None  # flex-start


@dataclass(frozen=True)
class NodeTaint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class SliceClass:
    """One entry of ``sliceClasses``."""

    name: str
    shapes: tuple[Accelerator, ...]
    capacity: tuple[ClassCapacity, ...]
    max_chips: int  # chips of all its slices at once: the Kueue quota
    max_slices: int  # slices at once
    zones: tuple[str, ...]
    secure_boot: bool = True
    max_pods_per_node: int = 15
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[NodeTaint, ...] = ()
    boot_disk_image: str | None = None
    boot_disk_project: str | None = None
    auto_upgrade: bool = True
    auto_repair: bool = True
    idle_minutes: int | None = None

    @property
    def kind(self) -> str:
        return self.shapes[0].kind

    @property
    def resource_name(self) -> str:
        name = self.shapes[0].resource_name
        assert name is not None
        return name

    @property
    def max_nodes(self) -> int:
        """Nodes the class may hold at once: its chips over the smallest VM it makes."""
        return max(self.max_chips // a.chips_per_vm for a in self.shapes)


def version_tuple(version: str) -> tuple[int, ...]:
    nums = [int(x) for x in re.findall(r"\d+", version)]
    return tuple(nums + [0] * (4 - len(nums)))


def below(version: str | None, least: tuple[int, ...]) -> bool:
    """Whether a pinned version is known to be older than ``least`` (False when unpinned).
    A minor version (1.33) is compared by its minor only, as GKE resolves it to a patch."""
    if version is None:
        return False
    v = version_tuple(version)
    full = len(version.split(".")) > 2
    return v[:2] < least[:2] or full and v < least


def needs_cluster_autoprovisioning(version: str | None) -> bool:
    """Whether auto-creation for classes needs cluster-level node auto-provisioning: unless
    the stack pins a version from MIN_VERSION_CLASS_ONLY_AUTOCREATION, the safe side."""
    if version is None or below(version, MIN_VERSION_CLASS_ONLY_AUTOCREATION):
        return True
    # A minor-only pin (1.33) may resolve to a patch below the one that lifted the need.
    least = MIN_VERSION_CLASS_ONLY_AUTOCREATION
    return len(version.split(".")) <= 2 and version_tuple(version)[:2] == least[:2]


def _shown(least: tuple[int, ...]) -> str:
    return "{}.{}.{}-gke.{}".format(*least)


def parse_slice_classes(r: Reader, items: Any, zones: Sequence[str], version: str | None,
                        pool_names: Sequence[str]) -> list[SliceClass]:
    """The classes of ``sliceClasses``; every name is unique among classes and pools."""
    if items is None:
        return []
    if not isinstance(items, list):
        r.fail("sliceClasses", f"{show(items)} is not a list of slice classes")
        return []
    if items and below(version, MIN_VERSION_PRIORITY_LABELS):
        r.fail("gkeVersion", f"{version}: slice classes need GKE "
               f"{_shown(MIN_VERSION_PRIORITY_LABELS)} or later (custom ComputeClasses whose "
               f"priority rules label their nodes; {ABOUT_PAGE})")
    out: list[SliceClass] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        path = f"sliceClasses[{i}]"
        cls = _slice_class(r, item, path, list(zones), version)
        if cls is None:
            continue
        if cls.name in pool_names:
            r.fail(f"{path}.name", f"{show(cls.name)} is already the name of a slice pool; "
                   "give the class another name (--pool and team quotas name pools and "
                   "classes alike)")
        elif cls.name in seen:
            r.fail(f"{path}.name", f"{show(cls.name)} is already the name of "
                   f"sliceClasses[{seen[cls.name]}]")
        else:
            seen[cls.name] = i
            out.append(cls)
    return out


def _slice_class(r: Reader, item: Any, path: str, zones: list[str],
                 version: str | None) -> SliceClass | None:
    before = len(r.problems)
    raw = r.obj(item, path, CLASS_KEYS)
    if not raw:
        if item is not None and before == len(r.problems):
            r.fail(path, "is empty; a slice class needs a name, shapes, capacity and limits")
        return None
    name = r.get(raw, "name", path, str, required=True)
    if name is not None:
        if not _NAME.match(name):
            r.fail(f"{path}.name", f"{show(name)} is not a class name (1-40 lowercase letters, "
                   "digits and hyphens, starting with a letter and ending with a letter or "
                   "digit)")
        elif name.startswith(("gke", "autopilot")):
            r.fail(f"{path}.name", f"{show(name)}: a ComputeClass name cannot begin with 'gke' "
                   f"or 'autopilot' ({ABOUT_PAGE}, Limitations)")
    class_zones = tuple(r.get(raw, "zones", path, list, default=list(zones)))
    for j, z in enumerate(class_zones):
        if z not in zones:
            r.fail(f"{path}.zones[{j}]", f"{show(z)} is not one of the stack's zones "
                   f"({one_of(zones)}){did_you_mean(str(z), zones)}")
    if "zones" in raw and not class_zones:
        r.fail(f"{path}.zones", "must list at least one zone")
    shapes = _shapes(r, raw, path, version)
    capacity = _capacity(r, raw.get("capacity"), f"{path}.capacity", shapes, class_zones,
                         version)
    limits = _limits(r, raw.get("limits"), f"{path}.limits", shapes)
    nodes = _nodes(r, raw.get("nodes"), f"{path}.nodes", shapes, version)
    if name is None or not shapes or capacity is None or limits is None or nodes is None \
            or len(r.problems) > before:
        return None
    return SliceClass(name=name, shapes=tuple(shapes), capacity=tuple(capacity),
                      max_chips=limits[0], max_slices=limits[1], zones=class_zones, **nodes)


def _shapes(r: Reader, raw: Mapping[str, Any], path: str,
            version: str | None) -> list[Accelerator]:
    names = r.get(raw, "shapes", path, list, required=True)
    if names is None:
        return []
    if not names:
        r.fail(f"{path}.shapes", "lists no accelerator; a class creates at least one shape")
        return []
    shapes: list[Accelerator] = []
    for j, name in enumerate(names):
        where = f"{path}.shapes[{j}]"
        if not isinstance(name, str):
            r.fail(where, f"{show(name)} is not an accelerator name")
            continue
        try:
            accel = catalog.resolve(name)
        except catalog.UnknownAccelerator as e:
            r.fail(where, str(e))
            continue
        if _shape_problem(r, where, accel):
            continue
        if any(s.name == accel.name for s in shapes):
            r.fail(where, f"{show(name)} ({accel.name}) is already listed")
            continue
        shapes.append(accel)
    kinds = {s.kind for s in shapes}
    if len(kinds) > 1:
        r.fail(f"{path}.shapes", f"mixes {one_of(sorted(kinds))} shapes; a class makes TPU "
               "slices or GPU nodes (its Kueue flavor holds one accelerator resource); "
               "declare one class of each")
        return []
    if shapes and shapes[0].kind == "gpu" and len(shapes) > 1:
        # GKE rejects Pods that select a ComputeClass and the GPU label
        # cloud.google.com/gke-accelerator (ABOUT_PAGE, "Node selectors for system node
        # labels"), so a pod could not say which of several GPU shapes it wants.
        r.fail(f"{path}.shapes", f"lists {len(shapes)} GPU shapes; a GPU class offers one "
               "(GKE rejects pods that select a ComputeClass together with "
               "cloud.google.com/gke-accelerator, so a pod cannot choose among GPU shapes)")
        return []
    if shapes and shapes[0].kind == "tpu":
        if below(version, MIN_VERSION_TPU):
            r.fail(f"{path}.shapes", f"TPU shapes in a ComputeClass need GKE "
                   f"{_shown(MIN_VERSION_TPU)} or later; gkeVersion is {version}")
        if below(version, MIN_VERSION_SYSTEM_LABELS):
            r.fail(f"{path}.shapes", f"pods on a TPU class select the TPU accelerator and "
                   f"topology labels beside the class, which GKE allows from "
                   f"{_shown(MIN_VERSION_SYSTEM_LABELS)}; gkeVersion is {version}")
    return shapes


def _shape_problem(r: Reader, where: str, accel: Accelerator) -> bool:
    if accel.kind == "cpu":
        r.fail(where, f"{accel.name} is a CPU shape; slice classes create TPU slices and GPU "
               "nodes (CPU work runs on the system pool or a CPU slice pool)")
        return True
    if catalog.needs_workload_policy(accel) or accel.family == "a4x":
        r.fail(where, f"{accel.name} is placed by a workload policy the stack creates per "
               "node pool; a class cannot create it before GKE makes the pool. Declare a "
               "fixed pool (slices) for it")
        return True
    if accel.networking != "none":
        r.fail(where, f"{accel.name} needs GPUDirect data networks on its nodes, and a "
               f"ComputeClass has no field for additional node networks ({CRD_PAGE}); "
               "declare a fixed pool (slices) for it")
        return True
    if catalog.vm_shape(accel.machine_type) is None:
        r.fail(where, f"{accel.name}: no published vCPU and memory for "
               f"{accel.machine_type}, so its auto-provisioning limits and Kueue quota "
               "cannot be derived; declare a fixed pool (slices) for it")
        return True
    return False


def _duration(r: Reader, value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        m = _DURATION.match(str(value))
        if not m:
            r.fail(path, f"{show(value)} is not a duration such as 86400s, 72h or 7d")
            return None
        seconds = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if not 0 < seconds <= MAX_RUN_SECONDS:
        r.fail(path, f"{show(value)} is outside 1s-7d (GKE: flex-start VMs run at most seven "
               "days)")
        return None
    return seconds


def _capacity(r: Reader, value: Any, path: str, shapes: list[Accelerator],
              zones: Sequence[str], version: str | None) -> list[ClassCapacity] | None:
    if value is None:
        r.fail(path, f"is required: the capacity to try, in order ({one_of(CLASS_MODES)})")
        return None
    if not isinstance(value, list) or not value:
        r.fail(path, f"{show(value)} is not a list of capacity modes ({one_of(CLASS_MODES)})")
        return None
    out: list[ClassCapacity] = []
    for j, entry in enumerate(value):
        where = f"{path}[{j}]"
        cap = _capacity_entry(r, entry, where, shapes, zones, version)
        if cap is None:
            continue
        if cap in out or cap.mode != "reservation" and any(c.mode == cap.mode for c in out):
            r.fail(where, f"{cap.mode}{' ' + str(cap.reservation) if cap.reservation else ''} "
                   "is already listed; each capacity source is tried once")
            continue
        out.append(cap)
    return out


def _capacity_entry(r: Reader, entry: Any, where: str, shapes: list[Accelerator],
                    zones: Sequence[str], version: str | None) -> ClassCapacity | None:
    if isinstance(entry, str):
        entry = {"mode": entry}
    raw = r.obj(entry, where, CAPACITY_ENTRY_KEYS)
    mode = r.get(raw, "mode", where, str, required=True)
    if mode is None:
        return None
    if mode == "queued":
        r.fail(f"{where}.mode", "queued provisioning is a fixed-pool mode (a "
               "ProvisioningRequest per workload); a class gets the same DWS capacity with "
               "flex-start")
        return None
    if mode not in CLASS_MODES:
        r.fail(f"{where}.mode", f"{show(mode)} is not a capacity mode of a class"
               f"{did_you_mean(mode, CLASS_MODES)} (allowed: {one_of(CLASS_MODES)})")
        return None
    for key in ("reservation", "block", "zone"):
        if key in raw and mode != "reservation":
            r.fail(f"{where}.{key}", f"applies to reservation entries only, not {mode}")
    if "maxRunDuration" in raw and mode != "flex-start":
        r.fail(f"{where}.maxRunDuration", f"applies to flex-start entries only, not {mode}")
    if mode == "reservation":
        return _reservation(r, raw, where, zones, version)
    if mode == "flex-start":
        seconds = _duration(r, raw.get("maxRunDuration"), f"{where}.maxRunDuration")
        _check_flex_start(r, where, shapes, zones, version)
        return ClassCapacity("flex-start", max_run_seconds=seconds)
    return ClassCapacity(mode)


def _reservation(r: Reader, raw: Mapping[str, Any], where: str, zones: Sequence[str],
                 version: str | None) -> ClassCapacity | None:
    value = r.get(raw, "reservation", where, str, required=True)
    block = r.get(raw, "block", where, str)
    zone = r.get(raw, "zone", where, str)
    if value is None:
        return None
    m = _RESERVATION.match(value)
    if not m:
        r.fail(f"{where}.reservation", f"{show(value)} is not a reservation name or "
               "projects/PROJECT/reservations/NAME")
        return None
    if block is not None and not re.match(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z", block):
        r.fail(f"{where}.block", f"{show(block)} is not a reservation block name")
    if zone is not None and zone not in zones:
        r.fail(f"{where}.zone", f"{show(zone)} is not one of the class's zones "
               f"({one_of(zones)}); a reservation is consumed in its own zone")
    if below(version, MIN_VERSION_RESERVATIONS):
        r.fail(f"{where}.mode", f"reservations in a ComputeClass need GKE "
               f"{_shown(MIN_VERSION_RESERVATIONS)} or later; gkeVersion is {version}")
    return ClassCapacity("reservation", reservation=m.group("name"), project=m.group("project"),
                         block=block, zone=zone)


def _check_flex_start(r: Reader, where: str, shapes: list[Accelerator], zones: Sequence[str],
                      version: str | None) -> None:
    for a in shapes:
        if a.kind != "tpu":
            continue
        if a.family not in FLEX_START_TPU:
            r.fail(f"{where}.mode", f"flex-start does not support {a.name} (GKE supports "
                   f"flex-start on TPU {one_of(FLEX_START_TPU)} only: {FLEX_START_PAGE})")
        elif a.multi_host:
            # GKE's flex-start page recommends it for "TPU resources that run in single-host
            # TPU slice node pools"; no page found documents multi-host TPU slices on
            # flex-start, so they are refused (the safe side).
            r.fail(f"{where}.mode", f"{a.name} is a multi-host slice; GKE documents "
                   f"flex-start for single-host TPU slices only ({FLEX_START_PAGE})")
        elif not set(zones) & set(FLEX_START_TPU_ZONES[a.family]):
            r.fail(f"{where}.mode", f"flex-start {a.family} is offered in "
                   f"{one_of(FLEX_START_TPU_ZONES[a.family])}, none of the class's zones "
                   f"({one_of(zones)}) ({FLEX_START_PAGE})")
    if shapes:
        least = MIN_VERSION_FLEX_TPU if shapes[0].kind == "tpu" else MIN_VERSION_FLEX_GPU
        if below(version, least):
            r.fail(f"{where}.mode", f"flex-start needs GKE {_shown(least)} or later; "
                   f"gkeVersion is {version}")


def _limits(r: Reader, value: Any, path: str,
            shapes: list[Accelerator]) -> tuple[int, int] | None:
    if value is None:
        r.fail(path, "is required: chips and/or slices the class may hold at once (the "
               "Kueue quota and the auto-provisioning limit)")
        return None
    raw = r.obj(value, path, LIMIT_KEYS)
    chips = r.get(raw, "chips", path, int)
    slices = r.get(raw, "slices", path, int)
    if chips is None and slices is None:
        r.fail(path, "sets neither chips nor slices")
        return None
    if not shapes:
        return None
    biggest = max(shapes, key=lambda a: a.chips)
    if slices is not None and slices < 1:
        r.fail(f"{path}.slices", f"{slices} is below one slice")
        return None
    if chips is not None and chips < biggest.chips:
        r.fail(f"{path}.chips", f"{chips} is below one slice of {biggest.name} "
               f"({biggest.chips} chips); the class could never create it")
        return None
    smallest = min(a.chips for a in shapes)
    if chips is None:
        assert slices is not None
        chips = slices * biggest.chips
    if slices is None:
        slices = chips // smallest
    return chips, slices


def _nodes(r: Reader, value: Any, path: str, shapes: list[Accelerator],
           version: str | None) -> dict[str, Any] | None:
    raw = r.obj(value, path, NODE_KEYS)
    before = len(r.problems)
    kind = shapes[0].kind if shapes else "tpu"
    out: dict[str, Any] = {
        "secure_boot": r.get(raw, "secureBoot", path, bool, default=True),
        "auto_upgrade": r.get(raw, "autoUpgrade", path, bool, default=True),
        "auto_repair": r.get(raw, "autoRepair", path, bool, default=True),
    }
    pods = r.get(raw, "maxPodsPerNode", path, int, default=DEFAULT_MAX_PODS.get(kind, 15))
    if not 8 <= pods <= 256:
        r.fail(f"{path}.maxPodsPerNode", f"{pods} is outside 8-256 (ComputeClass "
               f"maxPodsPerNode, {CRD_PAGE})")
    out["max_pods_per_node"] = pods
    labels = parse_labels(r, raw.get("labels"), f"{path}.labels")
    out["labels"] = labels
    out["taints"] = _taints(r, raw.get("taints"), f"{path}.taints")
    if out["taints"] and below(version, MIN_VERSION_PRIORITY_TAINTS):
        r.fail(f"{path}.taints", "taints set by a ComputeClass priority rule need GKE "
               f"{_shown(MIN_VERSION_PRIORITY_TAINTS)} or later; gkeVersion is {version}")
    disk = r.get(raw, "secondaryBootDisk", path, str)
    out["boot_disk_image"] = out["boot_disk_project"] = None
    if disk is not None:
        m = _DISK_IMAGE.match(disk)
        if not m:
            r.fail(f"{path}.secondaryBootDisk", f"{show(disk)} is not a disk image "
                   "(global/images/NAME or projects/PROJECT/global/images/NAME)")
        else:
            out["boot_disk_image"], out["boot_disk_project"] = m.group("image"), \
                m.group("project")
            if below(version, MIN_VERSION_BOOT_DISKS):
                r.fail(f"{path}.secondaryBootDisk", "secondary boot disks in a ComputeClass "
                       f"need GKE {_shown(MIN_VERSION_BOOT_DISKS)} or later; gkeVersion is "
                       f"{version}")
    idle = r.get(raw, "idleMinutes", path, int)
    if idle is not None and not 1 <= idle <= MAX_IDLE_MINUTES:
        r.fail(f"{path}.idleMinutes", f"{idle} is outside 1-{MAX_IDLE_MINUTES} (ComputeClass "
               f"autoscalingPolicy.consolidationDelayMinutes, {CRD_PAGE})")
    out["idle_minutes"] = idle
    return out if len(r.problems) == before else None


def _taints(r: Reader, value: Any, path: str) -> tuple[NodeTaint, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        r.fail(path, f"{show(value)} is not a list of taints (key, value, effect)")
        return ()
    out = []
    for j, item in enumerate(value):
        where = f"{path}[{j}]"
        raw = r.obj(item, where, ("key", "value", "effect"))
        key = r.get(raw, "key", where, str, required=True)
        val = r.get(raw, "value", where, str, required=True)
        effect = r.get(raw, "effect", where, str, default="NoSchedule")
        if key is None or val is None:
            continue
        if not _TAINT_KEY.match(key) or len(key) > 320:
            r.fail(f"{where}.key", f"{show(key)} is not a taint key")
        elif key.startswith(_RESERVED_KEY_PREFIXES):
            r.fail(f"{where}.key", f"{show(key)} belongs to GKE, Kubernetes or accelstack; "
                   "a class's own taints use a key of your domain")
        if not _TAINT_VALUE.match(val):
            r.fail(f"{where}.value", f"{show(val)} is not a taint value a ComputeClass accepts "
                   f"(2-63 characters: letters, digits, '-', '_', '.'; {CRD_PAGE})")
        if effect not in TAINT_EFFECTS:
            r.fail(f"{where}.effect", f"{show(effect)} is not a taint effect"
                   f"{did_you_mean(str(effect), TAINT_EFFECTS)} (allowed: {one_of(TAINT_EFFECTS)})")
        out.append(NodeTaint(key, val, str(effect)))
    return tuple(out)
