"""Network components: the cluster's VPC and the GPU data networks.

Thin wrappers: every argument comes from ``infra.specs.network``; these classes only turn
those dicts into pulumi-gcp resources parented under one component each.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from infra.specs import network as spec
from infra.components import child_options
from infra.config.stack import StackConfig


class ClusterNetwork(pulumi.ComponentResource):
    """The VPC and node subnet (created, or existing ones by name) and Cloud NAT."""

    network: pulumi.Output[str]
    subnetwork: pulumi.Output[str]

    def __init__(self, name: str, cfg: StackConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:network:ClusterNetwork", name, None, opts)
        child = child_options(self, opts)
        n = cfg.network
        if n.create:
            vpc = gcp.compute.Network(f"{name}-vpc", opts=child, **spec.vpc_args(cfg))
            subnet = gcp.compute.Subnetwork(f"{name}-subnet", opts=child,
                                            **spec.subnet_args(cfg, vpc.id))
            network_ref: Any = vpc.id
            self.network = vpc.name
            self.subnetwork = subnet.name
        else:
            network_ref = n.name
            self.network = pulumi.Output.from_input(n.name)
            self.subnetwork = pulumi.Output.from_input(n.subnetwork)
        # The addresses Cloud NAT sends from (None: no NAT); CIDRs, /32.
        self.nat_addresses: pulumi.Output[list[str]] | None = None
        if cfg.private_nodes and n.create:
            router = gcp.compute.Router(f"{name}-router", opts=child,
                                        **spec.router_args(cfg, network_ref))
            addresses = [gcp.compute.Address(f"{name}-nat-{i}", opts=child,
                                             **spec.nat_address_args(cfg, i))
                         for i in range(spec.nat_address_count(cfg))]
            gcp.compute.RouterNat(f"{name}-nat", opts=child, **spec.nat_args(
                cfg, router.name, [a.self_link for a in addresses]))
            self.nat_addresses = pulumi.Output.all(*[a.address for a in addresses]).apply(
                lambda ips: [f"{ip}/32" for ip in ips])
        self.register_outputs({"network": self.network, "subnetwork": self.subnetwork})


class GpuDataNetworks(pulumi.ComponentResource):
    """The extra VPCs and subnets that GPUDirect machines of one kind need in one zone."""

    def __init__(self, name: str, cfg: StackConfig, group: spec.NetworkGroup,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:network:GpuDataNetworks", name, None, opts)
        child = child_options(self, opts)
        self.subnets: list[gcp.compute.Subnetwork] = []
        for net in group.networks:
            vpc = gcp.compute.Network(net.name, opts=child, **spec.data_network_args(cfg, net))
            for sub in net.subnets:
                self.subnets.append(gcp.compute.Subnetwork(
                    sub.name, opts=child, **spec.data_subnet_args(cfg, sub, vpc.id)))
            if not net.rdma:
                gcp.compute.Firewall(f"{net.name}-internal", opts=child,
                                     **spec.data_firewall_args(cfg, net, vpc.id))
        self.register_outputs({"subnets": [s.name for s in self.subnets]})
