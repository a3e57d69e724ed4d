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
from typing import Any, Mapping, Sequence

from infra.catalog import tables as catalog
from infra.catalog.tables import Accelerator
from infra.catalog.gke_versions import GkeVersion, shown, version_tuple
from infra.config.class_capacity import (ABOUT_PAGE, CRD_PAGE, ClassCapacity, below,
                                         parse_capacity)
from infra.config.class_nodes import NodeTaint, parse_nodes
from infra.config.errors import did_you_mean, one_of, show
from infra.config.reader import Reader
from infra.record import field, record

__all__ = ["ClassCapacity", "NodeTaint", "SliceClass", "below", "needs_cluster_autoprovisioning",
           "parse_slice_classes"]

CLASS_KEYS = ("name", "shapes", "capacity", "limits", "zones", "nodes")
LIMIT_KEYS = ("chips", "slices")

# GKE versions from "About custom ComputeClasses" (ABOUT_PAGE), checked when a stack pins
# its version: TPU priority rules; node selectors on system labels (the TPU accelerator and
# topology labels) beside a class; node labels set in a priority rule. Every rule of a
# class labels its nodes accelstack.dev/capacity=class (infra/specs/slice_classes), the
# label the stack's Kueue flavors tell pools and classes apart by, so every class needs
# priority node labels.
MIN_VERSION_TPU = (1, 31, 2, 1518000)
MIN_VERSION_SYSTEM_LABELS = (1, 32, 3, 1499000)
MIN_VERSION_PRIORITY_LABELS = (1, 33, 2, 1111000)
# "If your cluster is running a version earlier than GKE version 1.33.3-gke.1136000, you
# must also enable cluster-level node auto-provisioning" (ABOUT_PAGE, "Node pool
# auto-creation and ComputeClasses"). A stack that does not pin a version at or above it
# gets cluster-level auto-provisioning with limits that cover its classes (the safe side).
MIN_VERSION_CLASS_ONLY_AUTOCREATION = (1, 33, 3, 1136000)

_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?\Z")


@record
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


def needs_cluster_autoprovisioning(version: str | None) -> bool:
    """Whether auto-creation for classes needs cluster-level node auto-provisioning: unless
    the stack pins a version from MIN_VERSION_CLASS_ONLY_AUTOCREATION, the safe side."""
    if version is None or below(version, MIN_VERSION_CLASS_ONLY_AUTOCREATION):
        return True
    # A minor-only pin (1.33) may resolve to a patch below the one that lifted the need.
    least = MIN_VERSION_CLASS_ONLY_AUTOCREATION
    return len(version.split(".")) <= 2 and version_tuple(version)[:2] == least[:2]


def parse_slice_classes(r: Reader, items: Any, zones: Sequence[str], version: str | None,
                        pool_names: Sequence[str],
                        nodes_version: GkeVersion | None = None) -> list[SliceClass]:
    """The classes of ``sliceClasses``; every name is unique among classes and pools.
    ``version`` is the pinned gkeVersion; ``nodes_version`` the version the nodes run (the
    pinned one, else the release channel's default), for the floors checked against it."""
    if items is None:
        return []
    if not isinstance(items, list):
        r.fail("sliceClasses", f"{show(items)} is not a list of slice classes")
        return []
    if items and below(version, MIN_VERSION_PRIORITY_LABELS):
        r.fail("gkeVersion", f"{version}: slice classes need GKE "
               f"{shown(MIN_VERSION_PRIORITY_LABELS)} or later (custom ComputeClasses whose "
               f"priority rules label their nodes; {ABOUT_PAGE})")
    out: list[SliceClass] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        path = f"sliceClasses[{i}]"
        cls = _slice_class(r, item, path, list(zones), version, nodes_version)
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
                 version: str | None, nodes_version: GkeVersion | None) -> SliceClass | None:
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
    capacity = parse_capacity(r, raw.get("capacity"), f"{path}.capacity", shapes, class_zones,
                         version)
    limits = _limits(r, raw.get("limits"), f"{path}.limits", shapes)
    nodes = parse_nodes(r, raw.get("nodes"), f"{path}.nodes", shapes, version, nodes_version)
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
                   f"{shown(MIN_VERSION_TPU)} or later; gkeVersion is {version}")
        if below(version, MIN_VERSION_SYSTEM_LABELS):
            r.fail(f"{path}.shapes", f"pods on a TPU class select the TPU accelerator and "
                   f"topology labels beside the class, which GKE allows from "
                   f"{shown(MIN_VERSION_SYSTEM_LABELS)}; gkeVersion is {version}")
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


