"""The MultiKueue origin of a cluster's Kueue: the value of the
``kueue.x-k8s.io/multikueue-origin`` label its MultiKueue puts on the Workloads it creates
on workers.

Kueue defaults it to ``multikueue`` (v0.19.2 apis/config/v1beta2/defaults.go,
``DefaultMultiKueueOrigin``), and each manager's garbage collector deletes the remote
Workloads that carry its origin and have no local owner (v0.19.2
pkg/controller/admissionchecks/multikueue/multikueuecluster.go, ``runGC``): two managers
with the default origin and a worker in common would delete each other's jobs. So every
cluster stack gives its Kueue an origin of its own (``multiKueue.origin`` in Kueue's
Configuration, config.kueue.x-k8s.io/v1beta2, which must be a label value: v0.19.2
pkg/config/validation.go), exports it in its contract (``cluster.multiKueueOrigin``), and a
fleet checks its manager has one. Pure; must not import pulumi.
"""

from __future__ import annotations

import hashlib

PREFIX = "accelstack"
ORIGIN_LABEL = "kueue.x-k8s.io/multikueue-origin"  # v0.19.2 kueue.MultiKueueOriginLabel


def origin(project: str, location: str, cluster: str) -> str:
    """Unique per cluster (the name alone is unique only within a project and location),
    and a label value: at most 63 characters (11 + 40, GKE's longest cluster name, + 11),
    beginning and ending with a letter or digit."""
    digest = hashlib.sha256(f"{project}/{location}/{cluster}".encode()).hexdigest()[:10]
    return f"{PREFIX}-{cluster[:40].rstrip('-')}-{digest}"
