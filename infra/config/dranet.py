"""The ``dranet`` key of a ``slices`` entry: GKE managed DRANET on a TPU slice pool.

Offered on the TPU generations and from the GKE version below; the node pool label and the
pods' claims are rendered in infra/specs/dranet.py, which has the sources. Sits below
``infra.config.slices``, which calls ``parse`` for every entry. Pure; no pulumi.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.catalog.gke_versions import GkeVersion, below, shown
from infra.catalog.tables import Accelerator
from infra.config.errors import one_of
from infra.config.reader import Reader

# GKE managed DRANET (infra/specs/dranet.py has the sources): offered on v6e (what xpk turns
# it on for; no GKE page lists the TPU machine types), and from the GKE version that
# installs the networking DeviceClasses the pods' claims name.
DRANET_FAMILIES = ("v6e",)
MIN_VERSION_DRANET = (1, 34, 1, 1829001)
DRANET_PAGE = ("https://cloud.google.com/kubernetes-engine/docs/how-to/"
               "allocate-network-resources-dra")


def parse(r: Reader, raw: Mapping[str, Any], path: str, accel: Accelerator,
          version: GkeVersion | None) -> bool:
    """GKE managed DRANET: off unless asked for (GKE turns it on per node pool by label)."""
    on = r.get(raw, "dranet", path, bool, default=False)
    if not on:
        return False
    if accel.kind != "tpu" or accel.family not in DRANET_FAMILIES:
        r.fail(f"{path}.dranet", f"GKE managed DRANET is offered for TPU "
               f"{one_of(DRANET_FAMILIES)} pools only, not {accel.name}")
        return False
    least = shown(MIN_VERSION_DRANET)
    if version is not None and below(version.text, least):
        r.fail(f"{path}.dranet", f"GKE managed DRANET needs GKE {least} or later (GKE "
               f"installs the netdev.google.com DeviceClass from there: {DRANET_PAGE}); "
               f"{version.said()}")
        return False
    return True
