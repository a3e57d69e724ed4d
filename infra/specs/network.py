"""The networks a stack needs, as plain data: the cluster VPC and the GPU data networks.

A3 High (GPUDirect-TCPX) nodes take 4 extra NICs, A3 Mega (GPUDirect-TCPXO) 8, each in a
VPC of its own; A3 Ultra and A4 (GPUDirect-RDMA) take one extra gVNIC VPC plus a RoCE VPC
(network profile ``<zone>-vpc-roce``) with one subnet per RDMA NIC (8; A4X has 4). GKE
attaches them to nodes through the node pool's additional node networks, which needs
Dataplane V2 and multi-networking on the cluster. Subnets are carved in a fixed order from
``network.gpuNetworksCidr`` so a plan is stable across runs. Must not import pulumi.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from infra.catalog import gpudirect_release
from infra.config.stack import SlicePool, StackConfig
from infra.config.network import LAYOUT as _LAYOUT
from infra.config.network import data_network_key
from infra.record import record
from infra.specs.addons import node_count

TCPX_MTU = 8244  # GKE's GPUDirect-TCPX/TCPXO guides create their VPCs with this MTU
RDMA_MTU = 8896  # recommended (and the default) for RoCE VPCs
GVNIC_MTU = 8896



@record
class Subnet:
    name: str
    cidr: str


@record
class DataNetwork:
    name: str
    mtu: int
    subnets: tuple[Subnet, ...]
    network_profile: str | None = None  # RoCE VPCs only

    @property
    def rdma(self) -> bool:
        return self.network_profile is not None


@record
class NetworkGroup:
    """The data networks shared by GPU pools of one networking kind in one zone."""

    key: str
    networking: str
    zone: str
    networks: tuple[DataNetwork, ...]

    def node_networks(self) -> list[dict[str, str]]:
        """The pool's additional node networks, in NIC order."""
        return [{"network": n.name, "subnetwork": s.name}
                for n in self.networks for s in n.subnets]


def _group_key(pool: SlicePool) -> tuple[str, str, int]:
    return data_network_key(pool.accelerator, pool.zones[0])


def gpu_network_groups(cfg: StackConfig) -> list[NetworkGroup]:
    """One group per (networking kind, zone, NIC count) among the stack's GPU pools."""
    keys: list[tuple[str, str, int]] = []
    for pool in cfg.slices:
        if pool.accelerator.networking == "none":
            continue
        k = _group_key(pool)
        if k not in keys:
            keys.append(k)
    base = ipaddress.ip_network(cfg.network.gpu_cidr)
    cidrs = base.subnets(new_prefix=24)
    groups = []
    for kind, zone, nics in keys:
        short = f"{cfg.cluster_name}-{kind}-{zone.rsplit('-', 1)[1]}" + (
            f"{nics}" if kind == "rdma" and nics != 8 else "")
        networks: list[DataNetwork] = []
        vpcs, _ = _LAYOUT[kind]
        mtu = TCPX_MTU if kind in ("tcpx", "tcpxo") else GVNIC_MTU
        for i in range(vpcs):
            label = "gvnic" if kind == "rdma" else f"net-{i + 1}"
            networks.append(DataNetwork(f"{short}-{label}", mtu,
                                        (Subnet(f"{short}-{label}-sub", str(next(cidrs))),)))
        if kind == "rdma":
            subnets = tuple(Subnet(f"{short}-rdma-sub-{i}", str(next(cidrs))) for i in range(nics))
            networks.append(DataNetwork(f"{short}-rdma", RDMA_MTU, subnets,
                                        network_profile=f"{zone}-vpc-roce"))
        groups.append(NetworkGroup(short, kind, zone, tuple(networks)))
    return groups


def group_for(groups: list[NetworkGroup], pool: SlicePool) -> NetworkGroup | None:
    if pool.accelerator.networking == "none":
        return None
    kind, zone, nics = _group_key(pool)
    for g in groups:
        if g.networking == kind and g.zone == zone and (
                kind != "rdma" or len(g.networks[-1].subnets) == nics):
            return g
    raise AssertionError(f"no network group for {pool.name}")


def vpc_args(cfg: StackConfig) -> dict[str, Any]:
    return {
        "name": cfg.network.name,
        "project": cfg.project,
        "auto_create_subnetworks": False,
        "routing_mode": "REGIONAL",
        "mtu": cfg.network.mtu,
        "description": f"accelstack cluster {cfg.cluster_name}",
    }


def subnet_args(cfg: StackConfig, network: object) -> dict[str, Any]:
    n = cfg.network
    return {
        "name": n.subnetwork,
        "project": cfg.project,
        "region": cfg.region,
        "network": network,
        "ip_cidr_range": n.nodes_cidr,
        "private_ip_google_access": True,
        "secondary_ip_ranges": [
            {"range_name": n.pods_range_name, "ip_cidr_range": n.pods_cidr},
            {"range_name": n.services_range_name, "ip_cidr_range": n.services_cidr},
        ],
        "log_config": {"aggregation_interval": "INTERVAL_10_MIN", "flow_sampling": 0.5,
                       "metadata": "INCLUDE_ALL_METADATA"},
    }


def router_args(cfg: StackConfig, network: object) -> dict[str, Any]:
    return {"name": f"{cfg.cluster_name}-router", "project": cfg.project,
            "region": cfg.region, "network": network}


# Cloud NAT sends from addresses the stack reserves (MANUAL_ONLY), not ones it allocates
# itself (AUTO_ONLY), which "cannot be predicted" and change as it adds and removes them
# (https://cloud.google.com/nat/docs/ports-and-addresses, "Public NAT IP addresses"): a
# fleet lets its manager into workers' authorized networks by these addresses, read from
# the contract (cluster.natAddresses). Each address has 64,512 source ports and each VM
# gets at least 64 by default (same page, "Ports"): enough addresses for every node the
# stack declares at full size (node auto-provisioning's are not counted: docs/limits.md).
NAT_PORTS_PER_ADDRESS = 64512
NAT_MIN_PORTS_PER_VM = 64


def nat_address_count(cfg: StackConfig) -> int:
    nodes = node_count(cfg) + sum(c.max_nodes for c in cfg.slice_classes)
    return max(1, math.ceil(nodes * NAT_MIN_PORTS_PER_VM / NAT_PORTS_PER_ADDRESS))


def nat_address_args(cfg: StackConfig, index: int) -> dict[str, Any]:
    return {"name": f"{cfg.cluster_name}-nat-{index}", "project": cfg.project,
            "region": cfg.region, "address_type": "EXTERNAL",
            "description": f"accelstack Cloud NAT address of {cfg.cluster_name}"}


def nat_args(cfg: StackConfig, router: object, addresses: list[Any]) -> dict[str, Any]:
    # Private nodes reach registries outside Google (Docker Hub, ghcr.io) through Cloud NAT.
    return {
        "name": f"{cfg.cluster_name}-nat",
        "project": cfg.project,
        "region": cfg.region,
        "router": router,
        "nat_ip_allocate_option": "MANUAL_ONLY",
        "nat_ips": addresses,
        "source_subnetwork_ip_ranges_to_nat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
        "log_config": {"enable": True, "filter": "ERRORS_ONLY"},
    }


def data_network_args(cfg: StackConfig, net: DataNetwork) -> dict[str, Any]:
    args: dict[str, Any] = {
        "name": net.name,
        "project": cfg.project,
        "auto_create_subnetworks": False,
        "routing_mode": "REGIONAL",
        "mtu": net.mtu,
        "description": f"accelstack GPU data network for {cfg.cluster_name}",
    }
    if net.network_profile:
        args["network_profile"] = network_profile_url(cfg.project, net.network_profile)
    return args


def network_profile_url(project: str, profile: str) -> str:
    """The partial URL the Compute API takes for a network profile: networkProfile is "a
    full or partial URL of the network profile to apply to this network", e.g.
    projects/{projectId}/global/networkProfiles/{network_profile_name} (pulumi-gcp
    compute.Network input, after the Compute API's Network resource). The provider passes
    the value through verbatim, so a bare profile name is refused at `pulumi up`."""
    return f"projects/{project}/global/networkProfiles/{profile}"


def data_subnet_args(cfg: StackConfig, subnet: Subnet, network: object) -> dict[str, Any]:
    return {"name": subnet.name, "project": cfg.project, "region": cfg.region,
            "network": network, "ip_cidr_range": subnet.cidr}


def data_firewall_args(cfg: StackConfig, net: DataNetwork, network: object) -> dict[str, Any]:
    """GPU-to-GPU traffic inside a data VPC (RoCE VPCs take no firewall rules)."""
    return {
        "name": f"{net.name}-internal",
        "project": cfg.project,
        "network": network,
        "direction": "INGRESS",
        "source_ranges": [s.cidr for s in net.subnets],
        "allows": [{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
    }


# ----------------------------------------------------------------------------------
# The Kubernetes side of GPU data networks: one GKE Network (and its parameter set) per
# data subnet, named after the subnet, which pods name in networking.gke.io/interfaces;
# and the NCCL plugin installers GKE documents for each GPUDirect kind, from the one
# pinned upstream release (infra/catalog/gpudirect_release.py).

def k8s_network_objects(cfg: StackConfig) -> list[dict[str, object]]:
    objs: list[dict[str, object]] = []
    for group in gpu_network_groups(cfg):
        for net in group.networks:
            for sub in net.subnets:
                objs.append({
                    "apiVersion": "networking.gke.io/v1", "kind": "GKENetworkParamSet",
                    "metadata": {"name": sub.name},
                    "spec": {"vpc": net.name, "vpcSubnet": sub.name,
                             "deviceMode": "RDMA" if net.rdma else "NetDevice"},
                })
                objs.append({
                    "apiVersion": "networking.gke.io/v1", "kind": "Network",
                    "metadata": {"name": sub.name},
                    "spec": {"type": "Device", "parametersRef": {
                        "group": "networking.gke.io", "kind": "GKENetworkParamSet",
                        "name": sub.name}},
                })
    return objs


def nccl_installer_urls(cfg: StackConfig) -> list[str]:
    """The installer manifests of the pinned GPUDirect release the stack's pools need."""
    urls: list[str] = []
    for pool in cfg.slices:
        kind = pool.accelerator.networking
        if kind == "none":
            continue
        key = gpudirect_release.installer_key(kind, pool.accelerator.family)
        for component in gpudirect_release.INSTALLERS[key]:
            if component.url not in urls:
                urls.append(component.url)
    return urls
