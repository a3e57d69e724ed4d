"""The provider's ForceNew list for GKE clusters and node pools, read in one place.

A change to a ForceNew field makes pulumi-gcp replace the resource: for an adopted cluster
that is a new cluster, for a node pool a new slice. The list is extracted from
hashicorp/terraform-provider-google-beta (google-beta/services/container/, the provider
pulumi-gcp bridges) into ../shared/reference/upstream/terraform-provider-google-beta-
container-forcenew/ (its SOURCE.md says how and at which commit).

``load`` is the one reader of that list here. Another branch builds a loader for the same
file (the day-2 replacement report's, infra/replacements/); at merge ``load`` is meant to
be swapped for it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from infra.record import record

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
_DIR = "terraform-provider-google-beta-container-forcenew"
_FILE = "forcenew-93c65b2.json"  # the provider's main at 93c65b2 (SOURCE.md)


class ForceNewListMissing(FileNotFoundError):
    """The reference list is not on this machine."""


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


def reference_root() -> Path:
    """Where ../shared/reference/upstream is for this checkout."""
    return Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream"


@functools.lru_cache(maxsize=4)
def load(resource: str, root: str | None = None) -> tuple[Field, ...]:
    """The ForceNew fields (leaves and blocks) of ``resource`` (a pulumi type token)."""
    path = Path(root) if root else reference_root()
    file = path / _DIR / _FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ForceNewListMissing(
            f"{file}: the provider's ForceNew list is not here; the adoption check needs it "
            "(see docs/adopt.md)") from None
    out = []
    for row in data["resources"][resource]["paths"]:
        if not row.get("forceNew"):
            continue
        suppress = str(row.get("diffSuppress") or "")
        default = None
        if "EmptyOrDefaultStringSuppress" in suppress:
            default = suppress.split('"')[1] if '"' in suppress else None
        out.append(Field(
            path=row["pulumi"], force_new=True, block=bool(row.get("block")),
            computed=bool(row.get("computed")), set_typed=row.get("type") == "Set",
            by_name="CompareSelfLinkOrResourceName" in suppress, empty_default=default))
    return tuple(out)
