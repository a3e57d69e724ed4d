"""The multi-tier checkpointing component: GKE's checkpointing driver may use the backup
bucket, and one CheckpointConfiguration per pool tells the driver where to run and how much
RAM to take.

Thin over ``infra.specs.checkpointing``. The add-on itself is part of the cluster
(infra/specs/cluster.py); the bucket is a store of the stack (infra/components/storage.py).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components import child_options
from infra.config.stack import StackConfig
from infra.specs import checkpointing as spec


class CheckpointBucketError(pulumi.RunError):
    """An existing backup bucket without hierarchical namespace: the update stops with one
    line (a RunError is printed without a traceback)."""


def _checked(bucket: str, found: Any) -> str:
    """``bucket`` once Cloud Storage says it has hierarchical namespace; ``found`` is
    pulumi-gcp's storage.get_bucket result (``hierarchical_namespaces``: [{enabled}])."""
    hierarchical = any(ns.enabled for ns in found.hierarchical_namespaces or [])
    problem = spec.bucket_problem(bucket, hierarchical)
    if problem is not None:
        raise CheckpointBucketError(problem)
    return bucket


class MultiTierCheckpointing(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig, *, provider: k8s.Provider,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:checkpointing:MultiTierCheckpointing", name, None, opts)
        c = cfg.checkpointing
        assert c is not None
        child = child_options(self, opts)
        number: pulumi.Input[str] = cfg.storage.project_number or (
            gcp.organizations.get_project_output(
                project_id=cfg.project, opts=pulumi.InvokeOutputOptions(parent=self)).number)
        member = pulumi.Output.from_input(number).apply(
            lambda n: spec.driver_member(str(n), cfg.project))
        bucket: pulumi.Input[str] = c.bucket
        if c.existing_bucket:
            # Read the bucket (in a preview too) and stop before the grant and the
            # configurations when it has no hierarchical namespace.
            bucket = gcp.storage.get_bucket_output(
                name=c.bucket, opts=pulumi.InvokeOutputOptions(parent=self)).apply(
                lambda found: _checked(c.bucket, found))
        gcp.storage.BucketIAMMember(f"{name}-driver", opts=child,
                                    **spec.bucket_grant_args(cfg, bucket, member))
        on_cluster = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
            provider=provider))
        for obj in spec.configurations(cfg):
            k8s.apiextensions.CustomResource(
                obj["metadata"]["name"], api_version=obj["apiVersion"], kind=obj["kind"],
                metadata=obj["metadata"], spec={**obj["spec"], "cloudStorageBucketName": bucket},
                opts=on_cluster)
        self.register_outputs({"pools": list(c.pools)})
