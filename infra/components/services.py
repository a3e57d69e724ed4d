"""The project services (APIs) component: every other component depends on it."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from infra.specs import services as spec
from infra.config.stack import StackConfig


class ProjectServices(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:services:ProjectServices", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        apis = spec.apis(cfg)
        self.services = [gcp.projects.Service(a.resource_name, opts=child,
                                              **spec.service_args(a))
                         for a in apis]
        self.register_outputs({"services": spec.services(cfg)})
