"""The workload image repository component: the repository (or a reference to it) and the
nodes' read access to it. The data is in ``infra.config.registry``."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from infra.components import child_options
from infra.specs import registry as spec
from infra.config.registry import RegistryConfig


class WorkloadRegistry(pulumi.ComponentResource):
    url: str

    def __init__(self, name: str, reg: RegistryConfig, *, labels: dict[str, str],
                 node_service_account: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:registry:WorkloadRegistry", name, None, opts)
        child = child_options(self, opts)
        deps: list[pulumi.Resource] = []
        if reg.create:
            repo = gcp.artifactregistry.Repository(name, opts=child,
                                                   **spec.repository_args(reg, labels))
            deps.append(repo)
        member = pulumi.Output.from_input(node_service_account).apply(
            lambda e: f"serviceAccount:{e}")
        gcp.artifactregistry.RepositoryIamMember(
            f"{name}-nodes-reader",
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=deps)),
            **spec.reader_args(reg, member))
        self.url = reg.url
        self.register_outputs({"url": reg.url})
