"""Node pool components: the system pool and one component per declared slice pool."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from infra.specs import nodepool as spec
from infra.components.adopted import node_pool_options
from infra.config.stack import SlicePool, StackConfig


class SystemNodePool(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig, *, cluster: pulumi.Input[str],
                 service_account: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:nodepool:SystemNodePool", name, None, opts)
        self.pool = gcp.container.NodePool(
            name, opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self),
                                                    node_pool_options(cfg, name)),
            **spec.system_node_pool_args(cfg, cfg.system_pool, cluster=cluster,
                                         service_account=service_account))
        self.register_outputs({"name": self.pool.name})


class SliceNodePools(pulumi.ComponentResource):
    """The node pools of one slice pool: one per multi-host TPU slice, else one shared."""

    def __init__(self, name: str, cfg: StackConfig, pool: SlicePool, *,
                 cluster: pulumi.Input[str], service_account: pulumi.Input[str],
                 additional_networks: list[dict[str, Any]] | None = None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:nodepool:SliceNodePools", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.pools: list[gcp.container.NodePool] = []
        for i, np_name in enumerate(pool.node_pool_names()):
            policy_name = None
            wp_args = spec.workload_policy_args(cfg, pool, i)
            if wp_args is not None:
                policy = gcp.compute.ResourcePolicy(f"{np_name}-wp", opts=child, **wp_args)
                policy_name = policy.name
            self.pools.append(gcp.container.NodePool(
                np_name, opts=pulumi.ResourceOptions.merge(
                    child, node_pool_options(cfg, np_name)),
                **spec.slice_node_pool_args(cfg, pool, i, cluster=cluster,
                                            service_account=service_account,
                                            additional_networks=additional_networks,
                                            workload_policy=policy_name)))
        self.register_outputs({"nodePools": [p.name for p in self.pools]})
