"""What a pod selects and tolerates to run on a slice class's nodes, and nothing else's.

- ``cloud.google.com/compute-class: NAME`` selects the class; GKE labels the nodes it
  creates for it so and taints them ``cloud.google.com/compute-class=NAME:NoSchedule``
  (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes,
  "Configure manually-created node pools for ComputeClass use" and "Node pool
  auto-creation and ComputeClasses"). No page found says whether GKE adds the matching
  toleration to pods itself, so pods carry it (harmless if GKE also adds it).
- TPU pods also select the TPU accelerator and topology labels, exactly as on a fixed
  pool: a class may make several shapes, and these are system labels GKE allows beside a
  class (the same page, "Node selectors for system node labels"). GPU pods do not select
  ``cloud.google.com/gke-accelerator``, which GKE rejects beside a class.
- ``accelstack.dev/capacity: class``: every priority rule of a class labels its nodes so
  (infra/specs/slice_classes/computeclass.py). The stack's Kueue flavors tell sources
  apart by this label (infra/specs/nodepool.py CAPACITY_LABEL), and Kueue matches a pod to
  a flavor only on the flavor's own label keys (v0.19.2 pkg/scheduler/flavorassigner/
  flavorassigner.go: ``flavorLabelKeys := sets.KeySet(flavor.Spec.NodeLabels)``): without
  it a class pod would also match a fixed pool's flavor of the same shape.
- ``cloud.google.com/gke-spot=true:NoSchedule``: a class with a Spot tier. GKE taints the
  Spot nodes that node pool auto-creation makes: "GKE auto-taints Spot nodes with
  cloud.google.com/gke-spot=true:NoSchedule. Pods targeting a Spot priority tier *must*
  tolerate this taint, or they will stay Pending / noScaleUp" (Google's ComputeClass
  guide, google/skills plugins/cloud/google-cloud-gke/skills/gke-compute-classes/SKILL.md,
  commit 1af77752; GKE's node auto-provisioning page says the same of auto-provisioned
  Spot pools). No page says GKE adds the toleration, so the class's pods carry it and its
  Kueue flavor adds it to pods it admits (harmless on the class's other tiers: a toleration
  lets a pod on, it does not send it there). Fixed Spot pools are tainted by the stack
  itself (infra/specs/nodepool.py SPOT_TAINT).
Must not import pulumi.
"""

from __future__ import annotations

from infra.catalog.tables import Accelerator, Taint
from infra.config.slice_classes import SliceClass
from infra.specs.nodepool import CAPACITY_LABEL, SPOT_TAINT

COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
CLASS_CAPACITY = "class"


def class_taint(cls: SliceClass) -> Taint:
    return Taint(COMPUTE_CLASS_LABEL, cls.name)


def class_labels(cls: SliceClass) -> dict[str, str]:
    """The labels every node of the class carries that tell it from other nodes."""
    return {COMPUTE_CLASS_LABEL: cls.name, CAPACITY_LABEL: CLASS_CAPACITY}


def node_selector(cls: SliceClass, shape: Accelerator) -> dict[str, str]:
    selector = class_labels(cls)
    if shape.kind == "tpu":
        selector.update(shape.node_selector)
    return selector


def own_tolerations(cls: SliceClass) -> list[dict[str, str]]:
    """The class's taint, the taints the class puts on its nodes and GKE's Spot taint for a
    class with a Spot tier (not GKE's accelerator taint, which the Kueue flavor declares
    as a node taint)."""
    taints = [class_taint(cls)] + [Taint(t.key, t.value, t.effect) for t in cls.taints]
    if any(c.mode == "spot" for c in cls.capacity):
        taints.append(SPOT_TAINT)
    return [t.toleration() for t in taints]


def tolerations(cls: SliceClass, shape: Accelerator) -> list[dict[str, str]]:
    """Tolerations for every taint the class's nodes of this shape carry."""
    return [t.toleration() for t in shape.taints] + own_tolerations(cls)
