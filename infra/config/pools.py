"""A pools stack's config: ``accelstack:onCluster`` plus slices and slice classes.

A pools stack declares no cluster: it adds node pools (``slices``) and ComputeClasses
(``sliceClasses``) to the cluster of a standing cluster stack that another stack owns, read
through a StackReference (``onCluster.stack``), with Kueue queues of its own beside the
host's (infra/specs/pools.py, docs/ephemeral.md). ``slices`` and ``sliceClasses`` are
written exactly as in a cluster stack; they are parsed by the cluster stack's parser once
the host's outputs are read (its zones, location and GKE version are the host's), so here
only what the config alone shows is checked: the keys, the host's name, the namespaces.
Must not import pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import ConfigError, did_you_mean, one_of, show
from infra.config import stack_refs
from infra.config.reader import Reader
from infra.config.stack import TOP_LEVEL_KEYS
from infra.record import field, record

ON_CLUSTER_KEY = "onCluster"
POOLS_KEYS = (ON_CLUSTER_KEY, "slices", "sliceClasses", "labels")
ON_CLUSTER_KEYS = ("stack", "namespaces")
# Kueue object names are "pools-<stack>" (a LocalQueue's name is a label value on every
# Workload: at most 63 characters).
NAME_PREFIX = "pools-"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,55}[a-z0-9])?\Z")  # 57 + len("pools-") = 63


@record
class PoolsConfig:
    stack: str  # this stack's name
    host_stack: str  # the cluster stack whose cluster gets the pools
    namespaces: tuple[str, ...]  # where its LocalQueues go; () is the host's workload namespace
    slices: tuple[Any, ...] = ()  # as written; parsed against the host (infra/specs/pools.py)
    slice_classes: tuple[Any, ...] = ()
    labels: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The name of this stack's Kueue objects on the host (its ClusterQueue and
        LocalQueues; its ResourceFlavors start with it)."""
        return NAME_PREFIX + self.stack


def is_pools(raw: Mapping[str, Any]) -> bool:
    return ON_CLUSTER_KEY in raw


def parse_pools(raw: Mapping[str, Any], stack: str) -> PoolsConfig:
    """Parse a pools stack's config (keys without ``accelstack:``) for the stack named
    ``stack``; ConfigError listing every problem."""
    r = Reader()
    for key in raw:
        if key in POOLS_KEYS:
            continue
        if key in TOP_LEVEL_KEYS:
            r.fail(str(key), f"is a setting of the cluster, which belongs to the stack "
                   f"{ON_CLUSTER_KEY}.stack names; a pools stack allows only "
                   f"{one_of(POOLS_KEYS)}")
        else:
            r.fail(str(key), f"unknown key{did_you_mean(str(key), POOLS_KEYS)} (a pools stack "
                   f"allows: {one_of(POOLS_KEYS)})")
    p = ON_CLUSTER_KEY
    top = r.obj(raw.get(ON_CLUSTER_KEY), p, ON_CLUSTER_KEYS)
    host = r.get(top, "stack", p, str, required=True) or ""
    if stack_refs.check_stack_name(r, f"{p}.stack", host) and host \
            and stack_refs.ref(host).same(stack_refs.ref(stack)):
        r.fail(f"{p}.stack", f"{show(host)} is this pools stack itself")
    namespaces = stack_refs.namespaces(r, top, p)
    slices = r.get(raw, "slices", "", list, default=[]) or []
    classes = r.get(raw, "sliceClasses", "", list, default=[]) or []
    labels = r.get(raw, "labels", "", dict, default={}) or {}
    if not slices and not classes and "slices" not in raw and "sliceClasses" not in raw:
        r.fail("slices", "a pools stack declares slices, sliceClasses or both: the pools it "
               "adds to the cluster of " + (show(host) if host else f"{p}.stack"))
    elif not slices and not classes:
        r.fail("slices", "is empty and so is sliceClasses: a pools stack adds at least one "
               "pool or class")
    if not _NAME.match(stack):
        r.fail(f"{p}.stack", f"this stack's name {show(stack)} names its Kueue objects on the "
               f"host ({NAME_PREFIX}{stack}); name a pools stack with at most 57 lowercase "
               "letters, digits and '-'")
    if r.problems:
        raise ConfigError(r.problems)
    return PoolsConfig(stack, host, tuple(namespaces), tuple(slices), tuple(classes),
                       dict(labels))
