"""Which boot disk types each Compute Engine machine series takes, and the default we use.

Compute Engine refuses a VM whose boot disk type its machine series does not support, and
GKE passes a node pool's ``diskType`` straight to Compute Engine, so a wrong type fails the
node pool at creation. The newest series boot from Hyperdisk only: A4X, A4 and A3 Ultra,
the TPU v6e and TPU7x hosts, and the C4-generation CPU series (N4, C4, C4A, C4D). The
Persistent Disk series keep ``pd-balanced``, GKE's default boot disk since 1.24
(https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks).

Sources: each series' "Supported disk types" section on Compute Engine's machine family
pages: https://cloud.google.com/compute/docs/accelerator-optimized-machines (A4X, A4, A3,
A2, G2), https://cloud.google.com/compute/docs/general-purpose-machines (E2, N1, N2, N2D,
N4, C3, C3D, C4, C4A, C4D, T2A, T2D), https://cloud.google.com/compute/docs/compute-optimized-machines
(C2, C2D) and the Cloud TPU pages (https://cloud.google.com/tpu/docs/v6e-intro asks for
Hyperdisk Balanced quota for v6e; https://cloud.google.com/tpu/docs/tpu7x). Cross-checks
from Google's own tooling: Cluster Toolkit's A4X blueprint boots its GB200 nodes from
``hyperdisk-balanced`` (examples/gke-a4x/gke-a4x.yaml), its instance validations refuse
Hyperdisk boot disks on C2 and ``pd-ssd`` on C4 (modules/internal/instance_validations/
main.tf); Vertex AI boots A3 Ultra from ``hyperdisk-balanced`` by default (DiskSpec
bootDiskType). Where a series' support of a type could not be confirmed from a source, the
type is left out: refusing a type Compute Engine would take costs a config edit, accepting
one it refuses costs a failed node pool mid-``pulumi up``.
Pure data; no pulumi.
"""

from __future__ import annotations

PD = ("pd-balanced", "pd-ssd", "pd-standard")
HYPERDISK = ("hyperdisk-balanced",)

# Machine type prefix -> boot disk types, the default first. The longest matching prefix
# wins (a3-ultragpu before a3-).
BOOT_DISK_TYPES: dict[str, tuple[str, ...]] = {
    # Accelerator-optimized (GPU) series.
    "a4x-": HYPERDISK,  # A4X (GB200): Hyperdisk only
    "a4-": HYPERDISK,  # A4 (B200): Hyperdisk only
    "a3-ultragpu-": HYPERDISK,  # A3 Ultra (H200): Hyperdisk only
    "a3-megagpu-": ("pd-balanced", "pd-ssd", "hyperdisk-balanced"),  # A3 Mega: no pd-standard
    "a3-highgpu-": ("pd-balanced", "pd-ssd", "hyperdisk-balanced"),  # A3 High: no pd-standard
    "a2-": PD,  # A2 (A100): Persistent Disk
    "g2-": ("pd-balanced", "pd-ssd"),  # G2 (L4): no pd-standard
    # Cloud TPU hosts.
    "ct4p-": ("pd-balanced",),  # v4
    "ct5lp-": ("pd-balanced",),  # v5e
    "ct5p-": ("pd-balanced",),  # v5p
    "ct6e-": HYPERDISK,  # v6e (Trillium): Hyperdisk Balanced
    "tpu7x-": HYPERDISK,  # TPU7x (Ironwood)
    "tpu7-": HYPERDISK,  # TPU7: the TPU7x hosts' generation; no Persistent Disk found
    # CPU series (the catalog's CPU pools, the system pool and the Pathways head pool).
    "e2-": PD,
    "n1-": PD,
    "n2-": PD,
    "n2d-": PD,
    "c2-": PD,  # no Hyperdisk boot disk (Cluster Toolkit instance_validations)
    "c2d-": PD,
    "t2d-": PD,
    "t2a-": PD,  # Tau T2A (Ampere Altra, Arm)
    "c3-": ("pd-balanced", "pd-ssd", "hyperdisk-balanced"),  # no pd-standard
    "c3d-": ("pd-balanced", "pd-ssd", "hyperdisk-balanced"),  # no pd-standard
    "n4-": HYPERDISK,
    "c4-": HYPERDISK,
    "c4a-": HYPERDISK,  # Axion (Arm)
    "c4d-": HYPERDISK,
}
# Every type a stack may name at all (the union above), in the order messages list them.
ALL_TYPES = ("pd-balanced", "pd-ssd", "pd-standard", "hyperdisk-balanced")


def allowed(machine_type: str) -> tuple[str, ...] | None:
    """The boot disk types of ``machine_type``'s series, default first; None if unknown."""
    best = ""
    for prefix in BOOT_DISK_TYPES:
        if machine_type.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return BOOT_DISK_TYPES[best] if best else None


def default(machine_type: str) -> str:
    """The boot disk type a pool of this machine type gets when the stack names none:
    ``pd-balanced`` (GKE's own default) where the series takes it, else Hyperdisk Balanced."""
    types = allowed(machine_type)
    return types[0] if types else "pd-balanced"
