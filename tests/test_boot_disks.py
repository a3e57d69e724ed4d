"""Every pool boots from a disk type its machine series takes (infra/catalog/boot_disks.py):
the default follows the series, and a configured ``diskType`` the series cannot use is
refused with the types it can."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conftest import MINIMAL
from infra.catalog import boot_disks, machine_shapes
from infra.catalog import tables as catalog
from infra.config import stack as config
from infra.config.errors import ConfigError
from infra.preview import harness
from infra.specs import nodepool

RES = {"mode": "reservation", "reservation": "r"}
NODE_POOL = "gcp:container/nodePool:NodePool"


def _raw(accel: str, **pool: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["gkeVersion"] = "1.34"
    capacity = RES if accel.startswith(("gb200", "b200", "h200")) else "on-demand"
    raw["slices"] = [{"accelerator": accel, "capacity": capacity, **pool}]
    return raw


def test_every_machine_of_the_catalog_has_a_row() -> None:
    machines = {a.machine_type for a in catalog.all_accelerators()}
    machines |= {f"{series}-{sizes[0]}" for series, sizes in machine_shapes.VCPUS.items()}
    for m in catalog.GPU_MODELS:
        machines |= set(m.machines.values()) | {v for _, v in m.variants}
    missing = sorted(m for m in machines if boot_disks.allowed(m) is None)
    assert not missing
    for m in machines:
        types = boot_disks.allowed(m)
        assert types and set(types) <= set(boot_disks.ALL_TYPES), (m, types)


@pytest.mark.parametrize("accel, expected", [
    ("gb200-4", "hyperdisk-balanced"),  # A4X: Hyperdisk only
    ("gb200-4-nolssd", "hyperdisk-balanced"),
    ("b200-8", "hyperdisk-balanced"),  # A4
    ("h200-141gb-8", "hyperdisk-balanced"),  # A3 Ultra
    ("v6e-8-1vm", "hyperdisk-balanced"),  # ct6e
    ("tpu7x-8", "hyperdisk-balanced"),
    ("h100-mega-80gb-8", "pd-balanced"),  # A3 Mega keeps Persistent Disk
    ("v5litepod-16", "pd-balanced"),
    ("n2-standard-32-1", "pd-balanced"),
    ("c4a-standard-8-1", "hyperdisk-balanced"),
])
def test_default_boot_disk_follows_the_series(accel: str, expected: str) -> None:
    pool = config.parse(_raw(accel)).slices[0]
    assert pool.disk_type == expected


def test_a4x_node_pool_boots_from_hyperdisk() -> None:
    ev = harness.evaluate(_raw("gb200-4", count=2), "a4x-disk")
    [np] = [r for r in ev.of_type(NODE_POOL) if r.name != "system"]
    assert harness._plain(np.inputs)["nodeConfig"]["diskType"] == "hyperdisk-balanced"


@pytest.mark.parametrize("accel, disk, allowed", [
    ("gb200-4", "pd-balanced", "hyperdisk-balanced"),
    ("v6e-8-1vm", "pd-ssd", "hyperdisk-balanced"),
    ("c4-standard-8-1", "pd-balanced", "hyperdisk-balanced"),
    ("h100-mega-80gb-8", "pd-standard", "pd-balanced, pd-ssd, hyperdisk-balanced"),
    ("t2a-standard-8-1", "hyperdisk-balanced", "pd-balanced, pd-ssd, pd-standard"),
])
def test_a_disk_type_the_machine_cannot_boot_from_is_refused(accel: str, disk: str,
                                                              allowed: str) -> None:
    with pytest.raises(ConfigError) as info:
        config.parse(_raw(accel, diskType=disk))
    machine = catalog.resolve(accel).machine_type
    assert info.value.problems == [
        f"slices[0].diskType: '{disk}': {machine} ({catalog.resolve(accel).name}) cannot boot "
        f"from it; allowed: {allowed} (Compute Engine's supported disk types for the machine "
        "series)"]


def test_system_pool_boots_from_its_series_disk() -> None:
    raw = _raw("v5litepod-16")
    raw["systemPool"] = {"machineType": "n4-standard-8"}
    cfg = config.parse(raw)
    args = nodepool.system_node_pool_args(cfg, cfg.system_pool, cluster="c",
                                          service_account="sa")
    assert args["node_config"]["disk_type"] == "hyperdisk-balanced"
    raw["systemPool"] = {"machineType": "e2-standard-8"}
    cfg = config.parse(raw)
    args = nodepool.system_node_pool_args(cfg, cfg.system_pool, cluster="c",
                                          service_account="sa")
    assert args["node_config"]["disk_type"] == "pd-balanced"
