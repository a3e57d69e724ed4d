"""The pod sizing rule (infra/catalog/pod_resources.py), pinned with figures worked out by hand
from GKE's documented reservations and the machine table of the catalog."""

from __future__ import annotations

import pytest

from infra.catalog import tables as catalog
from infra.catalog import pod_resources
from infra.catalog.pod_resources import PodShare


@pytest.mark.parametrize("machine, share", [
    # 180 vCPUs: reserve 60+10+10+176*2.5 = 520m -> 179480m; less 10% -> 161532 -> 161500m.
    # 720 GB = 686645.5 MiB: reserve 1024+819.2+819.2+6881.28+2% of 555573.5 = 20655.1,
    # less 100 MiB eviction -> 665890; less 10% -> 599301 -> 599296Mi (64 MiB steps).
    ("ct6e-standard-4t", PodShare(161500, 599296)),
    # 112 vCPUs: 350m reserved -> 111650; 100485 -> 100400m. 192 GB = 183105.5 MiB:
    # reserve 9543.7 + 2% of 52033.5 = 10584.3, -100 -> 172421; 155179 -> 155136Mi.
    ("ct5lp-hightpu-4t", PodShare(100400, 155136)),
    # 12 vCPUs: 100m reserved -> 11900; headroom 1190 -> 10710 -> 10700m.
    # 48 GB = 45776.4 MiB: reserve 2662.4 + 6% of 29392.4 = 4425.9, -100 -> 41250;
    # headroom 4125 -> 37125 -> 37120Mi.
    ("g2-standard-12", PodShare(10700, 37120)),
    # 4 vCPUs, 16 GB (a predefined CPU shape): 80m reserved -> 3920; the 1 vCPU floor ->
    # 2920 -> 2900m. 15258.8 MiB: reserve 1024+819.2+10% of 7066.8 = 2549.9, -100 -> 12608;
    # the 2 GiB floor -> 10560Mi.
    ("n2-standard-4", PodShare(2900, 10560)),
])
def test_pod_share(machine: str, share: PodShare) -> None:
    assert pod_resources.pod_share(machine) == share


def test_every_accelerator_machine_has_a_size_or_is_documented_unknown() -> None:
    unknown = {"tpu7x-standard-1t", "tpu7-standard-1t", "tpu7-standard-4t"}
    for accel in catalog.all_accelerators():
        shape = catalog.vm_shape(accel.machine_type)
        assert (shape is None) == (accel.machine_type in unknown), accel.machine_type
        if shape is not None:
            share = pod_resources.pod_share(accel.machine_type)
            assert share is not None and 0 < share.cpu_milli < shape.vcpus * 1000


def test_quantities() -> None:
    assert pod_resources.cpu_milli("2.5") == 2500
    assert pod_resources.cpu_milli("3500m") == 3500
    assert pod_resources.memory_mi("1Gi") == 1024
    assert pod_resources.memory_mi("1G") == pytest.approx(953.67, abs=0.01)
    assert pod_resources.cpu_quantity(161500) == "161500m"
    assert pod_resources.cpu_quantity(8000) == "8"


def test_check_request() -> None:
    assert pod_resources.check_request("ct6e-standard-4t", "161.5", "599296Mi") is None
    assert pod_resources.check_request("ct6e-standard-4t", "161.6", None) == (
        "--cpu", "'161.6' is more than a pod on ct6e-standard-4t can have: at most 161500m "
        "(node allocatable less 10% for DaemonSets)")
    option, message = pod_resources.check_request("tpu7x-standard-1t", None, "1Gi") or ("", "")
    assert option == "--memory" and "not published" in message


@pytest.mark.parametrize("value", ["1", "30", "2.5", "0.125", "3500m", "100m", "64G", "100Gi",
                                   "1.5Gi", "512Mi", "2Ti", "1000k", "3M", "128974848", "1T",
                                   "16Ki"])
def test_our_quantities_read_as_kubernetes_parse_quantity_does(value: str) -> None:
    """The render path's own parsing (it may not load the Kubernetes client) agrees with the
    client's parse_quantity on every quantity it accepts."""
    from decimal import Decimal

    from kubernetes.utils.quantity import parse_quantity

    expected = parse_quantity(value)
    cpu, mem = pod_resources.cpu_milli(value), pod_resources.memory_mi(value)
    assert cpu is not None or mem is not None
    if cpu is not None:
        assert Decimal(cpu) / 1000 == expected
    if mem is not None:
        assert Decimal(str(mem)) * 2**20 == pytest.approx(expected)


@pytest.mark.parametrize("value", ["1e3", "2Pi", "1E", "-1", "+5", ".5"])
def test_quantities_outside_our_subset_are_refused(value: str) -> None:
    """Valid for Kubernetes or not, the render path refuses what it does not read."""
    assert pod_resources.cpu_milli(value) is None and pod_resources.memory_mi(value) is None
