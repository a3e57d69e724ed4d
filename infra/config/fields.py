"""Field parsers shared by every layer of the stack config: GKE names and label maps.

The bottom of the config layers (with ``infra.config.reader`` and ``infra.config.errors``): it knows no
section of the stack file, only the rules GKE and GCP apply to a name or a label wherever
it appears. Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import show
from infra.config.reader import Reader

# GKE names: a lowercase letter first, then lowercase letters, digits and hyphens, ending
# in a letter or digit; clusters and node pools at most 40 characters.
GKE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
LABEL_KEY = re.compile(r"^[a-z][-_a-z0-9]{0,62}\Z")
LABEL_VALUE = re.compile(r"^[-_a-z0-9]{0,63}\Z")


def check_gke_name(r: Reader, path: str, name: str, limit: int = 40) -> None:
    r.check(bool(GKE_NAME.match(name)) and len(name) <= limit, path,
            f"{show(name)} is not a valid GKE name (1-{limit} lowercase letters, digits and "
            "hyphens, starting with a letter and ending with a letter or digit)")


def parse_labels(r: Reader, value: Any, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        r.fail(path, f"{show(value)} is not a mapping of label keys to values")
        return {}
    out = {}
    for k, v in value.items():
        if not LABEL_KEY.match(str(k)):
            r.fail(f"{path}.{k}", "is not a GCP label key (lowercase letters, digits, '-' and "
                   "'_', starting with a letter, at most 63 characters)")
        elif not isinstance(v, str) or not LABEL_VALUE.match(v):
            r.fail(f"{path}.{k}", f"{show(v)} is not a GCP label value (at most 63 lowercase "
                   "letters, digits, '-' and '_')")
        else:
            out[str(k)] = v
    return out


# GKE's limits on node counts (https://cloud.google.com/kubernetes-engine/quotas, "Limits
# per cluster"): 1,000 nodes per node pool per zone, and 15,000 nodes per Standard
# cluster. GKE 1.31+ lifts the cluster limit to 65,000 nodes only for clusters that do not
# use the cluster autoscaler or multi-networking
# (https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters);
# every accelstack cluster autoscales its system pool, so 15,000 applies.
MAX_NODES_PER_POOL_ZONE = 1000
MAX_NODES_PER_CLUSTER = 15000

# Pods per node on GKE Standard: 8 to 110 (the quotas page above; the flexible pod CIDR
# page, https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr, gives
# the per-node ranges). 110 is GKE's default.
MIN_PODS_PER_NODE = 8
MAX_PODS_PER_NODE = 110
DEFAULT_PODS_PER_NODE = 110


def check_max_pods(r: Reader, raw: Mapping[str, Any], path: str) -> int | None:
    value = r.get(raw, "maxPodsPerNode", path, int)
    if value is not None and not MIN_PODS_PER_NODE <= value <= MAX_PODS_PER_NODE:
        r.fail(f"{path}.maxPodsPerNode", f"{value} is outside {MIN_PODS_PER_NODE}-"
               f"{MAX_PODS_PER_NODE} (GKE Standard runs 8 to 110 pods per node)")
        return None
    return int(value) if value is not None else None
