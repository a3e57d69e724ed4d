"""The ComputeClass object of a slice class (cloud.google.com/v1), as data.

Field names and rules are GKE's ComputeClass reference
(https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass) and "About
custom ComputeClasses" (https://cloud.google.com/kubernetes-engine/docs/concepts/
about-custom-compute-classes); tests/schemas/cloud.google.com_computeclasses.yaml is the
schema the tests hold every object to. The priorities are the class's capacity entries in
order, each tried for every shape in the order declared: "GKE processes the priorities
field in order" and falls back to the next rule when it cannot create nodes for one.
Must not import pulumi; the node service account is passed in as an opaque value.
"""

from __future__ import annotations

from typing import Any

from infra.catalog import boot_disks
from infra.catalog.tables import Accelerator
from infra.config.slice_classes import ClassCapacity, SliceClass
from infra.specs.slice_classes import placement

API_VERSION = "cloud.google.com/v1"
KIND = "ComputeClass"
# A pod that no rule can place stays Pending rather than landing on a default E2 node
# (whenUnsatisfiable: "DoNotScaleUp: Leave the Pod in the Pending status until a node that
# meets the ComputeClass requirements is available"); GKE's default for an omitted field
# depends on the version, so it is written out, as the page advises.
WHEN_UNSATISFIABLE = "DoNotScaleUp"
# Container-Optimized OS, as on the stack's fixed pools (infra/specs/nodepool.py IMAGE_TYPE).
IMAGE_TYPE = "cos_containerd"
# secondaryBootDisks mode that makes the disk a container image cache (the reference's
# storage.secondaryBootDisks.mode).
IMAGE_CACHE_MODE = "CONTAINER_IMAGE_CACHE"


def _shape_rule(shape: Accelerator) -> dict[str, Any]:
    if shape.kind == "tpu":
        # tpu.type, tpu.count (chips per node) and tpu.topology are required together
        # ("TPU configuration" on the About page: 16 nodes of 4 chips for a 4x4x4 v5p).
        return {"tpu": {"type": shape.gke_accelerator, "count": shape.chips_per_vm,
                        "topology": shape.topology}}
    # GPUs: the type and count, and the machine type, which "Non-TPU reservations can be
    # used only when either the machineType or machineFamily is defined" requires and which
    # pins the exact machine of the catalog entry.
    return {"machineType": shape.machine_type,
            "gpu": {"type": shape.gke_accelerator, "count": shape.chips_per_vm}}


def _capacity_rule(cap: ClassCapacity) -> dict[str, Any]:
    if cap.mode == "spot":
        return {"spot": True}
    if cap.mode == "flex-start":
        rule: dict[str, Any] = {"flexStart": {"enabled": True}}
        if cap.max_run_seconds is not None:
            rule["maxRunDurationSeconds"] = cap.max_run_seconds
        return rule
    if cap.mode == "reservation":
        # "TPU reservations require Specific affinity"; a shared reservation names its
        # project; a block of a reservation is reservationBlock.name.
        assert cap.reservation is not None
        specific: dict[str, Any] = {"name": cap.reservation}
        if cap.project:
            specific["project"] = cap.project
        if cap.block:
            specific["reservationBlock"] = {"name": cap.block}
        # A specific reservation's zone goes here, never in the rule's location.zones:
        # GKE puts a class whose rule has both into an error state ("contains priorities
        # using location config with specific reservations enabled"; Google's ComputeClass
        # field reference and debug guide, google/skills plugins/cloud/google-cloud-gke/
        # skills/gke-compute-classes/references/compute-class-crd-fields.md and
        # compute-class-debug.md, commit 1af77752). Without a zone GKE looks the named
        # reservation up itself.
        if cap.zone:
            specific["zones"] = [cap.zone]
        return {"reservations": {"affinity": "Specific", "specific": [specific]}}
    return {"spot": False}  # on-demand


def priorities(cls: SliceClass) -> list[dict[str, Any]]:
    rules = []
    labels = dict(cls.labels)
    labels.update(placement.class_labels(cls))
    labels.pop(placement.COMPUTE_CLASS_LABEL)  # GKE sets it on every node of the class
    for cap in cls.capacity:
        for shape in cls.shapes:
            rule = {**_shape_rule(shape), **_capacity_rule(cap),
                    "maxPodsPerNode": cls.max_pods_per_node,
                    "nodeLabels": dict(labels)}
            if cap.mode != "reservation":  # see _capacity_rule: zones of a reservation
                rule["location"] = {"zones": list(cls.zones)}
            if cls.taints:
                rule["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect}
                                  for t in cls.taints]
            # The boot disk type the machine series takes (infra/catalog/boot_disks.py):
            # left to GKE, a created pool would get pd-balanced, which Compute Engine
            # refuses on Hyperdisk-only series such as v6e (storage.bootDiskType, GKE >=
            # 1.31.2-gke.1105000, below the TPU-in-a-class floor; About custom compute classes).
            storage: dict[str, Any] = {"bootDiskType": boot_disks.default(shape.machine_type)}
            if cls.boot_disk_image:
                disk: dict[str, Any] = {"diskImageName": cls.boot_disk_image,
                                        "mode": IMAGE_CACHE_MODE}
                if cls.boot_disk_project:
                    disk["project"] = cls.boot_disk_project
                storage["secondaryBootDisks"] = [disk]
            rule["storage"] = storage
            rules.append(rule)
    return rules


def compute_class(cls: SliceClass, *, service_account: Any) -> dict[str, Any]:
    """The class's ComputeClass; ``service_account`` is the nodes' service account email."""
    auto_creation: dict[str, Any] = {"enabled": True}
    if cls.secure_boot:
        auto_creation["shieldedInstanceConfig"] = {"enableSecureBoot": True,
                                                   "enableIntegrityMonitoring": True}
    spec: dict[str, Any] = {
        "description": _description(cls),
        "priorities": priorities(cls),
        "nodePoolAutoCreation": auto_creation,
        "nodePoolConfig": {"serviceAccount": service_account, "imageType": IMAGE_TYPE,
                           "autoUpgrade": cls.auto_upgrade, "autoRepair": cls.auto_repair},
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
        # A running slice is never moved to a higher priority by GKE: a training job on it
        # would be evicted (activeMigration.optimizeRulePriority, About page).
        "activeMigration": {"optimizeRulePriority": False},
    }
    if cls.idle_minutes is not None:
        spec["autoscalingPolicy"] = {"consolidationDelayMinutes": cls.idle_minutes}
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": cls.name,
                         "labels": {"app.kubernetes.io/managed-by": "accelstack"}},
            "spec": spec}


def _description(cls: SliceClass) -> str:
    modes = ", ".join(c.mode if c.mode != "reservation" else f"reservation {c.reservation}"
                      for c in cls.capacity)
    shapes = ", ".join(s.name for s in cls.shapes)
    return (f"accelstack slice class: {shapes}; capacity in order: {modes}; at most "
            f"{cls.max_chips} chips and {cls.max_slices} slices at once")
