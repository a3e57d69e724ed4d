"""The ``network`` section of the stack config, and the arithmetic of its address ranges.

Below the other config layers: it checks CIDR blocks (private, disjoint, the control
plane's /28) and counts the /24 subnets the GPU data networks need, from accelerators and
zones alone, so both the parser (``infra.config.stack``) and the resource specs
(``infra.specs.network``) can use it without importing each other. Pure; no pulumi.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Iterable, Mapping

from infra.catalog.tables import Accelerator
from infra.config.fields import GKE_NAME
from infra.config.errors import one_of, show
from infra.config.reader import Reader
from infra.record import record

NETWORK_KEYS = ("create", "name", "subnetwork", "nodesCidr", "podsCidr", "servicesCidr",
                "podsRangeName", "servicesRangeName", "masterCidr", "mtu", "gpuNetworksCidr")

# Ranges GKE accepts for nodes, pods and services: RFC 1918 and RFC 6598 shared space.
PRIVATE_RANGES = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"))

# GPU data networks. A3 High (GPUDirect-TCPX) nodes take 4 extra single-subnet VPCs, A3
# Mega (GPUDirect-TCPXO) 8; A3 Ultra and A4 (GPUDirect-RDMA) one gVNIC VPC plus a RoCE
# VPC with one subnet per RDMA NIC (8; A4X has 4).
# networking kind -> (number of single-subnet VPCs, RDMA subnets per RoCE VPC)
LAYOUT = {"tcpx": (4, 0), "tcpxo": (8, 0), "rdma": (1, 8)}
RDMA_NICS = {"a4x": 4}


@record
class Network:
    create: bool
    name: str
    subnetwork: str
    nodes_cidr: str
    pods_cidr: str
    services_cidr: str
    pods_range_name: str
    services_range_name: str
    master_cidr: str
    mtu: int
    gpu_cidr: str  # carved into /24s for GPU data networks


def data_network_key(accel: Accelerator, zone: str) -> tuple[str, str, int]:
    """GPU pools with the same key share one set of data networks."""
    return (accel.networking, zone, RDMA_NICS.get(accel.family, 8))


def subnets_needed(pools: Iterable[tuple[Accelerator, str]]) -> int:
    """/24 subnets the data networks of these (accelerator, zone) pools take together."""
    total = 0
    seen: set[tuple[str, str, int]] = set()
    for accel, zone in pools:
        key = data_network_key(accel, zone)
        if accel.networking == "none" or key in seen:
            continue
        seen.add(key)
        vpcs, _ = LAYOUT[accel.networking]
        total += vpcs + (key[2] if accel.networking == "rdma" else 0)
    return total


def gpu_cidr_problem(network: Network, need: int) -> str | None:
    prefix = ipaddress.ip_network(network.gpu_cidr).prefixlen
    have = 2 ** (24 - prefix) if prefix <= 24 else 0
    if need > have:
        return (f"network.gpuNetworksCidr: {show(network.gpu_cidr)} holds {have} /24 "
                f"subnets; the stack's GPU data networks need {need}")
    return None


def _cidr(r: Reader, raw: Mapping[str, Any], key: str, path: str, default: str) -> str:
    value = r.get(raw, key, path, str, default=default)
    try:
        net = ipaddress.ip_network(value, strict=True)
    except ValueError:
        r.fail(f"{path}.{key}", f"{show(value)} is not a CIDR block such as 10.0.0.0/20")
        return default
    if not any(net.subnet_of(p) for p in PRIVATE_RANGES  # type: ignore[arg-type]
               if p.version == net.version):
        r.fail(f"{path}.{key}", f"{show(value)} is not inside a private range "
               f"({one_of(str(p) for p in PRIVATE_RANGES)})")
    return str(value)


def parse_network(r: Reader, value: Any, cluster: str) -> Network:
    path = "network"
    raw = r.obj(value, path, NETWORK_KEYS)
    create = r.get(raw, "create", path, bool, default=True)
    name = r.get(raw, "name", path, str, default=f"{cluster}-net" if create else None,
                 required=not create)
    subnet = r.get(raw, "subnetwork", path, str,
                   default=f"{cluster}-nodes" if create else None, required=not create)
    for key, val in (("name", name), ("subnetwork", subnet)):
        if val is not None and key in raw:  # defaults derive from the checked cluster name
            r.check(bool(GKE_NAME.match(val)) and len(val) <= 63, f"{path}.{key}",
                    f"{show(val)} is not a valid VPC resource name (1-63 lowercase letters, "
                    "digits and hyphens)")
    nodes = _cidr(r, raw, "nodesCidr", path, "10.0.0.0/20")
    pods = _cidr(r, raw, "podsCidr", path, "10.16.0.0/14")
    services = _cidr(r, raw, "servicesCidr", path, "10.20.0.0/20")
    master = _cidr(r, raw, "masterCidr", path, "172.16.0.0/28")
    gpu = _cidr(r, raw, "gpuNetworksCidr", path, "192.168.0.0/16")
    if not r.problems or all(not p.startswith("network.") for p in r.problems):
        nets = {k: ipaddress.ip_network(v) for k, v in
                (("nodesCidr", nodes), ("podsCidr", pods), ("servicesCidr", services),
                 ("masterCidr", master), ("gpuNetworksCidr", gpu))}
        keys = list(nets)
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                if nets[a].overlaps(nets[b]):
                    r.fail(f"{path}.{b}", f"{show(str(nets[b]))} overlaps {path}.{a} "
                           f"{show(str(nets[a]))}; the ranges must be disjoint")
        if nets["masterCidr"].prefixlen != 28:
            r.fail(f"{path}.masterCidr", f"{show(master)} must be a /28 (GKE's control-plane range)")
    mtu = r.get(raw, "mtu", path, int, default=8896)
    r.check(1300 <= mtu <= 8896, f"{path}.mtu", f"{mtu} is outside 1300-8896")
    return Network(
        create=create, name=name or "", subnetwork=subnet or "", nodes_cidr=nodes,
        pods_cidr=pods, services_cidr=services,
        pods_range_name=r.get(raw, "podsRangeName", path, str, default="pods"),
        services_range_name=r.get(raw, "servicesRangeName", path, str, default="services"),
        master_cidr=master, mtu=mtu, gpu_cidr=gpu,
    )


# GCP keeps four addresses of every subnet's primary range (network, gateway, the
# second-to-last and broadcast addresses): https://cloud.google.com/vpc/docs/subnets
RESERVED_PER_SUBNET = 4


def pods_range_size(max_pods: int) -> int:
    """Pod addresses GKE reserves for one node: the smallest power of two at least twice
    its max pods (8 pods: /28, 15: /27, 32: /26, 110: /24), per GKE's "Configure maximum
    Pods per node" (https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr)."""
    size = 1
    while size < 2 * max_pods:
        size *= 2
    return size


def _prefix_for(addresses: int) -> int:
    bits = max(0, addresses - 1).bit_length()
    return 32 - bits


def address_problems(network: Network, demands: Iterable[tuple[str, int, int]]) -> list[str]:
    """Whether the node subnet and the pods range hold every node. ``demands`` lists
    (what, nodes, max pods per node); a problem says how large the range must be."""
    demands = [d for d in demands if d[1] > 0]
    problems = []
    nodes = sum(n for _, n, _ in demands)
    subnet = ipaddress.ip_network(network.nodes_cidr)
    if nodes > subnet.num_addresses - RESERVED_PER_SUBNET:
        problems.append(
            f"network.nodesCidr: {show(network.nodes_cidr)} holds "
            f"{subnet.num_addresses - RESERVED_PER_SUBNET:,} node addresses; the stack declares "
            f"{nodes:,} nodes; use a /{_prefix_for(nodes + RESERVED_PER_SUBNET)} or larger")
    need = sum(n * pods_range_size(p) for _, n, p in demands)
    pods = ipaddress.ip_network(network.pods_cidr)
    if need > pods.num_addresses:
        parts = ", ".join(f"{what}: {n:,} x /{_prefix_for(pods_range_size(p))}"
                          for what, n, p in demands)
        problems.append(
            f"network.podsCidr: {show(network.pods_cidr)} holds {pods.num_addresses:,} pod "
            f"addresses; the stack's nodes reserve {need:,} ({parts}); use a "
            f"/{_prefix_for(need)} or larger, or lower maxPodsPerNode")
    return problems
