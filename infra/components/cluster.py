"""The GKE cluster component: node service account, its roles, the cluster, a kubeconfig."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from infra import cluster_spec as spec
from infra import registry_spec
from infra.config import StackConfig


class GkeCluster(pulumi.ComponentResource):
    cluster: gcp.container.Cluster
    service_account_email: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_certificate: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, cfg: StackConfig, *, network: pulumi.Input[str],
                 subnetwork: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:cluster:GkeCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        account = gcp.serviceaccount.Account(f"{name}-nodes", opts=child,
                                             **spec.service_account_args(cfg))
        member = account.email.apply(lambda e: f"serviceAccount:{e}")
        bindings = [
            gcp.projects.IAMMember(f"{name}-nodes-{role.split('/')[-1].replace('.', '-')}",
                                   opts=child, **spec.role_binding_args(cfg, role, member))
            for role in registry_spec.node_project_roles(cfg.registry, spec.NODE_ROLES)
        ]
        self.cluster = gcp.container.Cluster(
            name,
            opts=pulumi.ResourceOptions(parent=self, depends_on=bindings,
                                        ignore_changes=["nodeConfig", "initialNodeCount"]),
            **spec.cluster_args(cfg, network=network, subnetwork=subnetwork,
                                service_account=account.email),
        )
        self.service_account_email = account.email
        self.endpoint = self.cluster.endpoint
        self.ca_certificate = self.cluster.master_auth.cluster_ca_certificate.apply(
            lambda ca: ca or "")
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.endpoint, self.ca_certificate,
        ).apply(lambda a: spec.kubeconfig(a[0], a[1], a[2])))
        self.register_outputs({"endpoint": self.endpoint, "kubeconfig": self.kubeconfig})
