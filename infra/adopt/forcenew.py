"""The provider's ForceNew fields of GKE clusters and node pools, as the adoption check
compares them.

A change to a ForceNew field makes pulumi-gcp replace the resource: for an adopted cluster
that is a new cluster, for a node pool a new slice. The list is the replacement report's
(infra/replacements/forcenew.json, extracted from hashicorp/terraform-provider-google-beta
by tools/forcenew_data.py, with each row's FILE:LINE), so both judge a change by one list
and `accelstack-adopt` needs nothing outside the package.
"""

from __future__ import annotations

import functools

from infra.record import record
from infra.replacements import forcenew as replacements_forcenew

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


@record
class Field:
    """One field of the provider's schema that matters for replacement."""

    path: str  # pulumi names, dotted (nodeConfig.reservationAffinity.values)
    force_new: bool  # its own change replaces the resource
    block: bool  # a nested block: adding or removing it replaces when force_new
    computed: bool  # the provider fills it when the program leaves it out
    set_typed: bool  # compared as a set
    by_name: bool  # compared by resource name (CompareSelfLinkOrResourceName)
    empty_default: str | None = None  # EmptyOrDefaultStringSuppress(VALUE)


@functools.lru_cache(maxsize=4)
def load(resource: str) -> tuple[Field, ...]:
    """The ForceNew fields (leaves and blocks) of ``resource`` (a pulumi type token)."""
    out = []
    for row in replacements_forcenew.forcenew_rows(resource):
        suppress = str(row.get("diffSuppress") or "")
        default = None
        if "EmptyOrDefaultStringSuppress" in suppress:
            default = suppress.split('"')[1] if '"' in suppress else None
        out.append(Field(
            path=row["path"], force_new=True, block=row["kind"] == "block",
            computed=bool(row.get("computed")), set_typed=row.get("type") == "Set",
            by_name="CompareSelfLinkOrResourceName" in suppress, empty_default=default))
    return tuple(out)
