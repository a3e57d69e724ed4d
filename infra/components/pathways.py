"""The Pathways component: the node service account's access to the scratch bucket.
The data is in ``infra.specs.pathways``; the head pool is declared with the slice pools."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from infra.specs import pathways as spec
from infra.config.stack import StackConfig


class PathwaysAccess(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig, *, node_service_account: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:pathways:PathwaysAccess", name, None, opts)
        member = pulumi.Output.from_input(node_service_account).apply(
            lambda e: f"serviceAccount:{e}")
        args = spec.scratch_grant_args(cfg, member)
        if args is not None:
            gcp.storage.BucketIAMMember(f"{name}-scratch", opts=pulumi.ResourceOptions(
                parent=self), **args)
        self.register_outputs({})
