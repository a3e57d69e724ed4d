"""What every node pool GKE creates for a slice class gets (``sliceClasses[].nodes``):
Secure Boot, max pods, labels, taints, the secondary boot disk image cache, and its
maintenance and idle behaviour, each checked against the ComputeClass reference. Pure; no
pulumi.
"""

from __future__ import annotations

import re
from typing import Any

from infra.catalog.tables import Accelerator
from infra.catalog import gke_versions
from infra.catalog.gke_versions import GkeVersion, shown
from infra.config.class_capacity import CRD_PAGE, below
from infra.config.errors import did_you_mean, one_of, show
from infra.config.fields import parse_labels
from infra.config.reader import Reader
from infra.record import record

NODE_KEYS = ("secureBoot", "maxPodsPerNode", "labels", "taints", "secondaryBootDisk",
             "autoUpgrade", "autoRepair", "idleMinutes")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# "About custom ComputeClasses": secondary boot disks in a priority from 1.31.2-gke.1105000;
# taints set in a priority rule from 1.33.4-gke.1350000.
MIN_VERSION_BOOT_DISKS = (1, 31, 2, 1105000)
MIN_VERSION_PRIORITY_TAINTS = (1, 33, 4, 1350000)
# nodePoolAutoCreation.shieldedInstanceConfig (Secure Boot and integrity monitoring on the
# pools GKE creates for a class) is taken from GKE 1.36.3-gke.1244000 on: Google's
# ComputeClass field reference (google/skills, plugins/cloud/google-cloud-gke/skills/
# gke-compute-classes/references/compute-class-crd-fields.md, commit 1af77752, "Shielded GKE
# Nodes ... (GKE 1.36.3-gke.1244000+)"); the served CRD published earlier (datreeio/
# CRDs-catalog cloud.google.com/computeclass_v1.json) has only `enabled` there. On an older
# control plane server-side apply drops the field or refuses the object.
MIN_VERSION_SHIELDED = (1, 36, 3, 1244000)
# ComputeClass priority maxPodsPerNode: 8 to 256 (CRD_PAGE); TPU hosts default to 15 as in
# fixed pools (infra/config/slices.py DEFAULT_MAX_PODS has the sources), GPU VMs to 32.
DEFAULT_MAX_PODS = {"tpu": 15, "gpu": 32}
# autoscalingPolicy.consolidationDelayMinutes: 1 to 1440 (CRD_PAGE).
MAX_IDLE_MINUTES = 1440

_DISK_IMAGE = re.compile(r"^(projects/(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/)?global/"
                         r"images/(?P<image>[a-z]([-a-z0-9]{0,61}[a-z0-9])?)\Z")
_TAINT_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*"
                        r"[A-Za-z0-9])?\Z")
_TAINT_VALUE = re.compile(r"^([a-z0-9][-A-Za-z0-9_.]{1,61})?[A-Za-z0-9]\Z")  # CRD_PAGE
_RESERVED_KEY_PREFIXES = ("cloud.google.com/", "google.com/", "nvidia.com/",
                          "kubernetes.io/", "node.kubernetes.io/", "accelstack.dev/")


@record
class NodeTaint:
    key: str
    value: str
    effect: str


def parse_nodes(r: Reader, value: Any, path: str, shapes: list[Accelerator],
                version: str | None, nodes_version: GkeVersion | None = None
                ) -> dict[str, Any] | None:
    raw = r.obj(value, path, NODE_KEYS)
    before = len(r.problems)
    kind = shapes[0].kind if shapes else "tpu"
    out: dict[str, Any] = {
        "secure_boot": _secure_boot(r, raw, path, nodes_version),
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
               f"{shown(MIN_VERSION_PRIORITY_TAINTS)} or later; gkeVersion is {version}")
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
                       f"need GKE {shown(MIN_VERSION_BOOT_DISKS)} or later; gkeVersion is "
                       f"{version}")
    idle = r.get(raw, "idleMinutes", path, int)
    if idle is not None and not 1 <= idle <= MAX_IDLE_MINUTES:
        r.fail(f"{path}.idleMinutes", f"{idle} is outside 1-{MAX_IDLE_MINUTES} (ComputeClass "
               f"autoscalingPolicy.consolidationDelayMinutes, {CRD_PAGE})")
    out["idle_minutes"] = idle
    return out if len(r.problems) == before else None


def _secure_boot(r: Reader, raw: dict[str, Any], path: str,
                 nodes_version: GkeVersion | None) -> bool:
    """Secure Boot on the class's pools: on by default where GKE takes the field (checked,
    as every floor, against the pinned version or the release channel's default). Below
    it, asking for it is refused, and by default it is left off the ComputeClass: the
    created pools then get what GKE gives pools without it (docs/slice-classes.md)."""
    old = nodes_version is not None and gke_versions.below(nodes_version.text,
                                                            shown(MIN_VERSION_SHIELDED))
    if "secureBoot" not in raw:
        return not old
    wanted = r.get(raw, "secureBoot", path, bool, default=True)
    if wanted and old:
        assert nodes_version is not None
        r.fail(f"{path}.secureBoot", "Secure Boot on a class's pools (ComputeClass "
               "nodePoolAutoCreation.shieldedInstanceConfig) needs GKE "
               f"{shown(MIN_VERSION_SHIELDED)} or later; {nodes_version.said()}: pin a newer "
               "gkeVersion (or use a channel whose default is newer), or set "
               "secureBoot: false")
    return bool(wanted)


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
