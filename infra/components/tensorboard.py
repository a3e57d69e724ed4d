"""The Vertex AI TensorBoard component: the stack's instance and the grants that let each
workload namespace's jobs upload to it. Thin over ``infra.specs.tensorboard``."""

from __future__ import annotations

import functools
from typing import Any

import pulumi
import pulumi_gcp as gcp

from infra.components import child_options
from infra.config.stack import StackConfig
from infra.specs import tensorboard as spec


def _member(cfg: StackConfig, grant: spec.Grant, number: Any) -> str:
    return str(spec.grant_args(cfg, grant, str(number))["member"])


class VertexTensorboard(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:tensorboard:VertexTensorboard", name, None, opts)
        child = child_options(self, opts)
        instance = gcp.vertex.AiTensorboard(name, opts=child, **spec.instance_args(cfg))
        number: pulumi.Input[str] = cfg.storage.project_number or (
            gcp.organizations.get_project_output(
                project_id=cfg.project, opts=pulumi.InvokeOutputOptions(parent=self)).number)
        for grant in spec.grants(cfg):
            gcp.projects.IAMMember(grant.resource_name, opts=child, project=cfg.project,
                                   role=spec.ROLE,
                                   member=pulumi.Output.from_input(number).apply(
                                       functools.partial(_member, cfg, grant)))
        self.resource_name: pulumi.Output[str] = instance.name
        self.register_outputs({"name": instance.name})
