"""The GKE Standard cluster and its node service account, as plain data.

The cluster removes its default node pool (the stack declares its own), runs Workload
Identity, Dataplane V2, image streaming, the Cloud Storage FUSE CSI driver and shielded
nodes, and sends system and workload logs and metrics to Cloud Logging and Monitoring.
Nodes run as a dedicated service account holding only the roles GKE documents for nodes.
Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

import yaml

from infra.specs.addons import (JOBSET_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT,
                               KUEUE_WEBHOOK_PORT)
from infra.specs import dynamic_slicing as dynamic_spec
from infra.specs import storage as storage_spec
from infra.specs import checkpointing as checkpointing_spec
from infra.specs.observability import packages as metric_packages
from infra.specs import upgrades as upgrades_spec
from infra.specs.slice_classes import autoscaling as class_autoscaling
from infra.config.stack import StackConfig
from infra.specs import pool_settings as settings_spec

# GKE's least-privilege node role, plus pulling images from Artifact Registry, plus the
# role image streaming needs when nodes run as a custom service account: "the custom
# service account must have the Service Usage Consumer (roles/serviceusage.
# serviceUsageConsumer) IAM role in the project that hosts the container image"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements).
# The stack's images live in its own project (Artifact Registry reader is granted there).
NODE_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader",
              "roles/serviceusage.serviceUsageConsumer")


def service_account_args(cfg: StackConfig) -> dict[str, Any]:
    account = f"{cfg.cluster_name}-nodes"[:30]
    return {
        "account_id": account,
        "project": cfg.project,
        "display_name": f"GKE nodes of {cfg.cluster_name} (accelstack)",
    }


def role_binding_args(cfg: StackConfig, role: str, email: Any) -> dict[str, Any]:
    return {"project": cfg.project, "role": role, "member": email}


def _nap(cfg: StackConfig, service_account: Any) -> dict[str, Any]:
    """Node auto-provisioning: as ``nodeAutoProvisioning`` declares it, widened by the slice
    classes, or turned on for them where the GKE version needs it
    (infra/specs/slice_classes/autoscaling.py has the rules and sources)."""
    if cfg.auto_provisioning is None and not class_autoscaling.needs_autoprovisioning(cfg):
        return {"enabled": False}
    cpu, memory, accelerators = class_autoscaling.limits(cfg)
    limits = [
        {"resource_type": "cpu", "minimum": 0, "maximum": cpu},
        {"resource_type": "memory", "minimum": 0, "maximum": memory},
    ]
    for resource_type, maximum in sorted(accelerators.items()):
        limits.append({"resource_type": resource_type, "minimum": 0, "maximum": maximum})
    return {
        "enabled": True,
        "autoscaling_profile": "OPTIMIZE_UTILIZATION",
        "resource_limits": limits,
        "auto_provisioning_defaults": {
            "service_account": service_account,
            "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            "image_type": "COS_CONTAINERD",
            "shielded_instance_config": {"enable_secure_boot": True,
                                         "enable_integrity_monitoring": True},
            "management": {"auto_repair": True, "auto_upgrade": True},
        },
    }


def cluster_args(cfg: StackConfig, *, network: Any, subnetwork: Any,
                 service_account: Any) -> dict[str, Any]:
    n = cfg.network
    args: dict[str, Any] = {
        "name": cfg.cluster_name,
        "project": cfg.project,
        "location": cfg.location,
        "node_locations": list(cfg.zones),
        "network": network,
        "subnetwork": subnetwork,
        "networking_mode": "VPC_NATIVE",
        "ip_allocation_policy": {"cluster_secondary_range_name": n.pods_range_name,
                                 "services_secondary_range_name": n.services_range_name},
        # The default pool exists only while the cluster is created; the stack's own pools
        # replace it. It still gets the node service account and shielded boot.
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        "node_config": {
            "service_account": service_account,
            "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            "shielded_instance_config": {"enable_secure_boot": True,
                                         "enable_integrity_monitoring": True},
            "workload_metadata_config": {"mode": "GKE_METADATA"},
        },
        "deletion_protection": cfg.deletion_protection,
        "resource_labels": dict(cfg.labels),
        "workload_identity_config": {"workload_pool": f"{cfg.project}.svc.id.goog"},
        "datapath_provider": "ADVANCED_DATAPATH",
        "enable_shielded_nodes": True,
        "enable_multi_networking": cfg.needs_multi_networking or None,
        "node_pool_defaults": {"node_config_defaults": {"gcfs_config": {"enabled": True}}},
        "addons_config": {
            "gcs_fuse_csi_driver_config": {"enabled": True},
            "gce_persistent_disk_csi_driver_config": {"enabled": True},
            "http_load_balancing": {"disabled": False},
            "horizontal_pod_autoscaling": {"disabled": False},
            # Filestore, Parallelstore and Lustre CSI drivers, for the stores declared.
            **storage_spec.csi_addons(cfg),
            # Multi-tier checkpointing, when the stack declares it.
            **checkpointing_spec.addon(cfg),
            # GKE's slice controller, for dynamic slicing pools (infra/specs/dynamic_slicing.py).
            **dynamic_spec.cluster_addons(cfg),
        },
        "logging_config": {"enable_components": ["SYSTEM_COMPONENTS", "WORKLOADS"]},
        "monitoring_config": {
            # GKE's managed metric packages (infra/specs/observability/packages.py).
            "enable_components": metric_packages.enable_components(cfg),
            "managed_prometheus": {"enabled": True},
        },
        "cluster_autoscaling": _nap(cfg, service_account),
        "private_cluster_config": {
            "enable_private_nodes": cfg.private_nodes,
            "enable_private_endpoint": cfg.private_endpoint,
            "master_ipv4_cidr_block": n.master_cidr if cfg.private_nodes else None,
        },
    }
    if cfg.release_channel:
        args["release_channel"] = {"channel": cfg.release_channel}
    if cfg.gke_version:
        args["min_master_version"] = cfg.gke_version
        if not cfg.release_channel:
            args["release_channel"] = {"channel": "UNSPECIFIED"}
    if cfg.authorized_networks:
        args["master_authorized_networks_config"] = {
            "cidr_blocks": [{"cidr_block": a.cidr, "display_name": a.name}
                            for a in cfg.authorized_networks],
        }
    if cfg.dns_endpoint:
        # pulumi-gcp container.Cluster controlPlaneEndpointsConfig.dnsEndpointConfig
        # (GKE API ControlPlaneEndpointsConfig.DNSEndpointConfig): allowExternalTraffic lets
        # user traffic reach the control plane at its DNS name (<uid>.<region>.gke.goog)
        # from any network that reaches Google APIs; IAM (container.clusters.connect)
        # authorises it, and master authorized networks apply only to the IP endpoints.
        dns: dict[str, Any] = {"allow_external_traffic": True}
        if cfg.dns_k8s_tokens:
            # enable_k8s_tokens_via_dns (pulumi-gcp 10.2.0
            # ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs; GKE API
            # DNSEndpointConfig.enableK8sTokensViaDns): requests carrying a Kubernetes
            # token, such as a fleet manager's ServiceAccount token, are let in here
            # (infra/config/cluster.py _dns_endpoint has the sources).
            dns["enable_k8s_tokens_via_dns"] = True
        args["control_plane_endpoints_config"] = {"dns_endpoint_config": dns}
    policy = upgrades_spec.maintenance_policy(cfg)  # window, exclusions
    if policy:
        args["maintenance_policy"] = policy
    args = settings_spec.cluster_args(cfg, args)  # an adopted cluster's keys
    return {k: v for k, v in args.items() if v is not None}


def webhook_ports(cfg: StackConfig) -> list[int]:
    """Ports on the nodes the control plane must reach for the add-ons' webhooks and
    aggregated APIs, beyond the 443 and 10250 GKE already opens."""
    return sorted({KUEUE_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT, JOBSET_WEBHOOK_PORT} - {443, 10250})


def webhook_firewall_args(cfg: StackConfig, *, network: Any,
                          service_account: Any) -> dict[str, Any] | None:
    """On a private cluster GKE's automatic firewall rule lets the control plane reach
    nodes on tcp 443 and 10250 only; admission webhooks and aggregated APIs served on other
    ports need a rule of their own from the control-plane range (GKE: "Add firewall rules
    for specific use cases", https://cloud.google.com/kubernetes-engine/docs/how-to/
    private-clusters#add_firewall_rules). Kueue's and JobSet's webhooks fail closed, so
    without it every Kueue object (and every Job in a managed namespace) is refused.
    Targets the nodes by their service account (every pool of the stack runs as it)."""
    if not cfg.private_nodes:
        return None
    return {
        "name": f"{cfg.cluster_name}-webhooks"[:63],
        "project": cfg.project,
        "network": network,
        "direction": "INGRESS",
        "source_ranges": [cfg.network.master_cidr],
        "target_service_accounts": [service_account],
        "allows": [{"protocol": "tcp", "ports": [str(p) for p in webhook_ports(cfg)]}],
        "description": "GKE control plane to the Kueue and JobSet webhooks (accelstack)",
    }


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str,
               dns_endpoint: str | None = None) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin (no static token).

    With ``dns_endpoint`` it talks to the control plane's DNS name instead of its IP. That
    name is served by Google's front end with a publicly trusted certificate, not the
    cluster CA, so the kubeconfig carries no certificate-authority-data and the client
    verifies against the system roots (as a kubeconfig from `gcloud container clusters
    get-credentials --dns-endpoint` does).
    """
    ctx = f"accelstack-{cluster_name}"
    server: dict[str, str] = (
        {"server": f"https://{dns_endpoint}"} if dns_endpoint else
        {"server": f"https://{endpoint}", "certificate-authority-data": ca_certificate})
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": ctx, "cluster": server}],
        "users": [{"name": ctx, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin",
            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install "
                           "gke-gcloud-auth-plugin",
            "provideClusterInfo": True,
            "interactiveMode": "IfAvailable",
        }}}],
        "contexts": [{"name": ctx, "context": {"cluster": ctx, "user": ctx}}],
        "current-context": ctx,
    }
    return str(yaml.safe_dump(doc, sort_keys=False))

