"""The ML Diagnostics component: cert-manager, Google's injection webhook and connection
operator, and the roles each workload namespace's jobs need. Thin over
``infra.specs.ml_diagnostics``."""

from __future__ import annotations

import functools
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components import child_options
from infra.config.stack import StackConfig
from infra.specs import ml_diagnostics as spec


def _member(cfg: StackConfig, grant: spec.Grant, number: Any) -> str:
    return str(spec.grant_args(cfg, grant, str(number))["member"])


class MlDiagnostics(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig, *, provider: k8s.Provider,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:mldiagnostics:MlDiagnostics", name, None, opts)
        base = child_options(self, opts)
        child = pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(provider=provider))
        cert_manager = k8s.helm.v3.Release("cert-manager", opts=child,
                                           **spec.cert_manager_release_args())
        # cert-manager first: the webhook's serving certificate is a cert-manager resource.
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
            depends_on=[cert_manager]))
        k8s.helm.v3.Release("mldiagnostics-injection-webhook", opts=after,
                            **spec.webhook_release_args())
        k8s.helm.v3.Release("mldiagnostics-connection-operator", opts=after,
                            **spec.operator_release_args())
        number: pulumi.Input[str] = cfg.storage.project_number or (
            gcp.organizations.get_project_output(
                project_id=cfg.project, opts=pulumi.InvokeOutputOptions(parent=self)).number)
        for grant in spec.grants(cfg):
            gcp.projects.IAMMember(grant.resource_name, opts=base,
                                   project=cfg.project, role=grant.role,
                                   member=pulumi.Output.from_input(number).apply(
                                       functools.partial(_member, cfg, grant)))
        self.register_outputs({})
