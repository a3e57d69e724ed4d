"""Config rules GKE documents for GPU machine families: capacity modes, minimum versions
and host maintenance on reservations.

Called by the slices layer for each GPU pool before anything is declared; every message
names the key path, the value and the page the rule comes from. Pure; no pulumi.
"""

from __future__ import annotations


from infra.catalog.gke_versions import GkeVersion, below, version_tuple
from infra.catalog.tables import Accelerator
from infra.config.errors import one_of, show
from infra.config.reader import Reader

AI_HYPERCOMPUTER_PAGE = "https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute"
SET_UP_DRA_PAGE = "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra"
TCPX_PAGE = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"
TCPXO_RELEASES = ("github.com/GoogleCloudPlatform/container-engine-accelerators "
                  "gpudirect-tcpxo/README.md")

HOST_MAINTENANCE_INTERVALS = ("PERIODIC", "AS_NEEDED")

# family -> (what, [(minor, minimum version on that minor and later minors)], source).
# A version on a minor below the first entry is refused; a full version is compared with
# the minimum of the newest entry at or below its minor.
MIN_VERSIONS: dict[str, tuple[str, tuple[tuple[tuple[int, int], str], ...], str]] = {
    # A4X runs its multi-node workloads in ComputeDomains of NVIDIA's DRA driver
    # (infra/specs/dra_driver.py), whose chart and claims use resource.k8s.io/v1: "To use
    # DRA, your GKE cluster must run version 1.34 or later" (SET_UP_DRA_PAGE; only TPUs are
    # told to turn on the beta DRA APIs instead). Older versions fail the chart's atomic
    # install. The AI Hypercomputer page's older A4X floors (1.32.8-gke.1108000,
    # 1.33.4-gke.1036000) are below this one.
    "a4x": ("A4X (GB200) with NVIDIA's DRA driver (ComputeDomains, resource.k8s.io/v1)",
            (((1, 34), "1.34"),), SET_UP_DRA_PAGE),
    # "To use GPUDirect RDMA ... A4: Use 1.32.2-gke.1475000 or later. A3 Ultra: Use
    # 1.31.4-gke.1183000 or later."
    "a4": ("GPUDirect-RDMA on A4", (((1, 32), "1.32.2-gke.1475000"),), AI_HYPERCOMPUTER_PAGE),
    "a3-ultra": ("GPUDirect-RDMA on A3 Ultra", (((1, 31), "1.31.4-gke.1183000"),),
                 AI_HYPERCOMPUTER_PAGE),
    # The TCPXO releases' GKE versions: "For 1.28 >= 1.28.10-gke.1141000, For 1.29 >=
    # 1.29.5-gke.1121000" (release of Jun 27, 2024, the first GKE 1.29 one).
    "a3-mega": ("GPUDirect-TCPXO on A3 Mega",
                (((1, 28), "1.28.10-gke.1141000"), ((1, 29), "1.29.5-gke.1121000")),
                TCPXO_RELEASES),
    # GPUDirect-TCPX on A3 High: GKE 1.27.7-gke.1121000 or later, as GKE's GPUDirect page
    # states it (read from secondary copies of that page; no newer floor found).
    "a3-high": ("GPUDirect-TCPX on A3 High", (((1, 27), "1.27.7-gke.1121000"),), TCPX_PAGE),
}


def minimum_for(family: str, version: str) -> str | None:
    """The documented minimum ``version`` misses for ``family``, or None if it is fine."""
    rule = MIN_VERSIONS.get(family)
    if rule is None:
        return None
    _, branches, _ = rule
    v = version_tuple(version)
    applicable = [m for minor, m in branches if minor <= v[:2]]
    if not applicable:
        return branches[0][1]
    minimum = applicable[-1]
    return minimum if below(version, minimum) else None


def check(r: Reader, path: str, accel: Accelerator, mode: str, version: GkeVersion | None,
          host_maintenance: str | None) -> None:
    """Record every GKE rule the GPU pool at ``path`` breaks."""
    if accel.family == "a4x" and mode != "reservation":
        r.fail(f"{path}.capacity.mode", f"{show(mode)}: A4X (GB200) is reservation-bound; "
               "use mode: reservation (GKE: \"You must use the reservation-bound provisioning "
               f"model ... with A4X ... Other provisioning models are not supported\", "
               f"{AI_HYPERCOMPUTER_PAGE})")
    if version is not None:
        missed = minimum_for(accel.family, version.text)
        if missed is not None:
            what, _, source = MIN_VERSIONS[accel.family]
            r.fail(f"{path}.accelerator", f"{what} needs GKE {missed} or later ({source}); "
                   f"{version.said()}")
    if host_maintenance is not None and host_maintenance not in HOST_MAINTENANCE_INTERVALS:
        r.fail(f"{path}.capacity.hostMaintenanceInterval", f"{show(host_maintenance)} is not a "
               f"host maintenance interval; allowed: {one_of(HOST_MAINTENANCE_INTERVALS)}")


def default_host_maintenance(accel: Accelerator, mode: str) -> str | None:
    """The host maintenance interval a GPU pool asks for when the stack does not say.

    A node pool that consumes a reservation must ask for the reservation's interval, or
    Compute Engine refuses the VMs ("is incorrect for the requested resources", xpk
    src/xpk/core/nodepool.py). xpk and Cluster Toolkit give A3 Mega reservation pools the
    reservation's interval, PERIODIC unless the reservation says otherwise
    (src/xpk/commands/cluster_gcluster.py, blueprint ``host_maintenance_interval``).
    Other families are left to GKE's default; ``capacity.hostMaintenanceInterval`` sets it.
    """
    if mode == "reservation" and accel.family == "a3-mega":
        return "PERIODIC"
    return None
