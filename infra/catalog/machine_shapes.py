"""The predefined shapes (vCPU counts) of the Compute Engine machine series the catalog
accepts for CPU pools and the system pool, so ``e2-standrd-8`` or ``n2-standard-30`` is
refused before GKE is asked, with the nearest real machine type.

Facts from Compute Engine's machine family pages (predefined machine types only: no
custom, shared-core, ``-lssd`` or ``-metal`` shapes):
https://cloud.google.com/compute/docs/general-purpose-machines (E2, N1, N2, N2D, N4, C3,
C3D, C4, C4A, C4D, Tau T2A, Tau T2D) and
https://cloud.google.com/compute/docs/compute-optimized-machines (C2, C2D).
Part of the catalog (``infra.catalog.tables`` reads it); pure data, no pulumi.
"""

from __future__ import annotations

from infra.lazy_re import later

_POW2_TO_32 = (2, 4, 8, 16, 32)
_N2 = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)
_N2D = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)
_N4 = (2, 4, 8, 16, 32, 48, 64, 80)
_C3 = (4, 8, 22, 44, 88, 176)
_C3D = (4, 8, 16, 30, 60, 90, 180, 360)
_C4 = (2, 4, 8, 16, 24, 32, 48, 96, 144, 192, 288)
_C4A = (1, 2, 4, 8, 16, 32, 48, 64, 72)
_C4D = (2, 4, 8, 16, 24, 32, 48, 64, 96, 192, 384)
_C2D = (2, 4, 8, 16, 32, 56, 112)

# "<series>-<shape>" -> the vCPU counts of its predefined machine types.
VCPUS: dict[str, tuple[int, ...]] = {
    "e2-standard": _POW2_TO_32, "e2-highmem": (2, 4, 8, 16), "e2-highcpu": _POW2_TO_32,
    "n1-standard": (1, 2, 4, 8, 16, 32, 64, 96), "n1-highmem": (2, 4, 8, 16, 32, 64, 96),
    "n1-highcpu": (2, 4, 8, 16, 32, 64, 96),
    "n2-standard": _N2, "n2-highmem": _N2, "n2-highcpu": _N2[:-1],
    "n2d-standard": _N2D, "n2d-highmem": _N2D[:-2], "n2d-highcpu": _N2D,
    "n4-standard": _N4, "n4-highmem": _N4, "n4-highcpu": _N4,
    "c2-standard": (4, 8, 16, 30, 60),
    "c2d-standard": _C2D, "c2d-highmem": _C2D, "c2d-highcpu": _C2D,
    "c3-standard": _C3, "c3-highmem": _C3, "c3-highcpu": _C3,
    "c3d-standard": _C3D, "c3d-highmem": _C3D, "c3d-highcpu": _C3D,
    "c4-standard": _C4, "c4-highmem": _C4, "c4-highcpu": _C4,
    "c4a-standard": _C4A, "c4a-highmem": _C4A, "c4a-highcpu": _C4A,
    "c4d-standard": _C4D, "c4d-highmem": _C4D, "c4d-highcpu": _C4D,
    "t2a-standard": (1, 2, 4, 8, 16, 32, 48),
    "t2d-standard": (1, 2, 4, 8, 16, 32, 48, 60),
}

_MACHINE = later(r"^(?P<series_shape>[a-z][a-z0-9]*-[a-z]+)-(?P<vcpus>\d+)\Z")


def exists(machine_type: str) -> bool:
    m = _MACHINE.match(machine_type)
    return m is not None and int(m.group("vcpus")) in VCPUS.get(m.group("series_shape"), ())


def problem(machine_type: str) -> str | None:
    """Why ``machine_type`` is not a predefined machine type this stack accepts, with the
    nearest ones; None when it is one."""
    if exists(machine_type):
        return None
    m = _MACHINE.match(machine_type)
    if m and m.group("series_shape") in VCPUS:
        series_shape, vcpus = m.group("series_shape"), int(m.group("vcpus"))
        sizes = VCPUS[series_shape]
        near = sorted(sizes, key=lambda s: (abs(s - vcpus), s))[:2]
        hint = " or ".join(f"{series_shape}-{s}" for s in sorted(near))
        return (f"{machine_type!r} is not a machine type: {series_shape} comes with "
                f"{', '.join(str(s) for s in sizes)} vCPUs; did you mean {hint}?")
    names = [f"{k}-{v}" for k, sizes in VCPUS.items() for v in sizes]
    import difflib  # late: only this error needs it

    close = difflib.get_close_matches(machine_type, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return (f"{machine_type!r} is not a predefined machine type{hint} (series known: "
            f"{', '.join(sorted({k.split('-')[0] for k in VCPUS}))})")
