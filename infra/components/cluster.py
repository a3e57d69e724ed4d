"""The GKE cluster component: node service account, its roles, the cluster, a kubeconfig."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from infra.specs import cluster as spec
from infra.components import child_options
from infra.components.adopted import cluster_options
from infra.specs import registry as registry_spec
from infra.config.stack import StackConfig


def _deps(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    deps = opts.depends_on if opts is not None else None
    if deps is None:
        return []
    return list(deps) if isinstance(deps, (list, tuple)) else [deps]  # type: ignore[list-item]


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
        child = child_options(self, opts)
        existing = cfg.adopt.node_service_account
        bindings: list[pulumi.Resource] = []
        if existing is not None:
            # An existing node service account (an adopted cluster's): used as it is; its
            # roles are its owner's.
            email: pulumi.Output[str] = pulumi.Output.from_input(existing.email)
        else:
            account = gcp.serviceaccount.Account(f"{name}-nodes", opts=child,
                                                 **spec.service_account_args(cfg))
            email = account.email
            member = account.email.apply(lambda e: f"serviceAccount:{e}")
            bindings = [
                gcp.projects.IAMMember(f"{name}-nodes-{role.split('/')[-1].replace('.', '-')}",
                                       opts=child, **spec.role_binding_args(cfg, role, member))
                for role in registry_spec.node_project_roles(cfg.registry, spec.NODE_ROLES)
            ]
        args = spec.cluster_args(cfg, network=network, subnetwork=subnetwork,
                                 service_account=email)
        if "masterAuthorizedNetworks" in cfg.secret_keys and \
                "master_authorized_networks_config" in args:
            # Given as a Pulumi secret: the addresses stay secret in state and previews.
            blocks = args["master_authorized_networks_config"]["cidr_blocks"]
            args["master_authorized_networks_config"] = {
                "cidr_blocks": pulumi.Output.secret(blocks)}
        self.cluster = gcp.container.Cluster(
            name,
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(
                parent=self, depends_on=[*bindings, *_deps(opts)],
                ignore_changes=["nodeConfig", "initialNodeCount"]), cluster_options(cfg)),
            **args,
        )
        fw = spec.webhook_firewall_args(cfg, network=network, service_account=email)
        if fw is not None:
            gcp.compute.Firewall(f"{name}-webhooks", opts=child, **fw)
        self.service_account_email = email
        self.endpoint = self.cluster.endpoint
        self.ca_certificate = self.cluster.master_auth.cluster_ca_certificate.apply(
            lambda ca: ca or "")
        # The DNS name GKE gives the control plane (an output), when the stack enables it.
        self.dns_endpoint: pulumi.Output[str | None] = (
            self.cluster.control_plane_endpoints_config.apply(
                lambda c: c.dns_endpoint_config.endpoint
                if c and c.dns_endpoint_config else None)
            if cfg.dns_endpoint else pulumi.Output.from_input(None))
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.endpoint, self.ca_certificate, self.dns_endpoint,
        ).apply(lambda a: spec.kubeconfig(a[0], a[1], a[2], a[3])))
        self.register_outputs({"endpoint": self.endpoint, "kubeconfig": self.kubeconfig})
