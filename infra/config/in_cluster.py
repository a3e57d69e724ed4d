"""An in-cluster stack's config: ``accelstack:inCluster`` plus the in-cluster layer's keys.

An in-cluster stack declares no GCP cluster or node pool: it references a cluster another
team owns (by PROJECT/LOCATION/CLUSTER, read through the GKE API) and declares only Kueue,
JobSet, queues, the image cache and the job service accounts on it, as ``xpk cluster
adapt`` installs its layer on a cluster it did not make (docs/adopt.md). Its queues follow
the live node pools' accelerators: read from the GKE API at preview time when it answers,
else from the recorded description (``description``: a Cluster JSON that `accelstack-adopt
--record` writes). Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import ConfigError, did_you_mean, one_of, show
from infra.config.fields import check_gke_name
from infra.config.reader import Reader
from infra.record import field, record

IN_CLUSTER_KEY = "inCluster"
IN_CLUSTER_KEYS = ("cluster", "description", "controllerPool")
# What an in-cluster stack declares besides its reference; everything else belongs to the
# cluster's owner.
KEYS = (IN_CLUSTER_KEY, "queues", "imageCache", "addons", "labels")
DEFAULT_CONTROLLER_POOL = "default-pool"
_TARGET = re.compile(r"^(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/(?P<location>[a-z]+-[a-z]+"
                     r"[0-9]+(-[a-z])?)/(?P<cluster>[a-z]([-a-z0-9]*[a-z0-9])?)\Z")


@record
class InClusterConfig:
    stack: str
    project: str
    location: str
    cluster_name: str
    description: str  # the recorded Cluster JSON, relative to the stack file's folder
    controller_pool: str  # the node pool Kueue's and JobSet's controllers run on
    layer: Mapping[str, Any] = field(default_factory=dict)  # queues, imageCache, addons, labels


def is_in_cluster(raw: Mapping[str, Any]) -> bool:
    return IN_CLUSTER_KEY in raw


def parse_in_cluster(raw: Mapping[str, Any], stack: str) -> InClusterConfig:
    r = Reader()
    for key in raw:
        if key not in KEYS:
            r.fail(str(key), f"unknown key{did_you_mean(str(key), KEYS)} (an in-cluster stack "
                   f"declares only its cluster's in-cluster layer: {one_of(KEYS)})")
    p = IN_CLUSTER_KEY
    top = r.obj(raw.get(IN_CLUSTER_KEY), p, IN_CLUSTER_KEYS)
    target = r.get(top, "cluster", p, str, required=True)
    m = _TARGET.match(target) if target else None
    if target is not None and not m:
        r.fail(f"{p}.cluster", f"{show(target)} is not PROJECT/LOCATION/CLUSTER such as "
               "my-project/us-central2/my-cluster")
    description = r.get(top, "description", p, str, required=True)
    pool = r.get(top, "controllerPool", p, str, default=DEFAULT_CONTROLLER_POOL)
    check_gke_name(r, f"{p}.controllerPool", pool)
    if r.problems or m is None or description is None:
        raise ConfigError(r.problems)
    return InClusterConfig(stack, m.group("project"), m.group("location"), m.group("cluster"),
                           description, pool,
                           {k: v for k, v in raw.items() if k != IN_CLUSTER_KEY})
