"""The Google Cloud APIs a stack needs, declared so that `pulumi up` enables them first.

Each service is a ``gcp:projects/service:Service`` with ``disable_on_destroy`` false: a
stack that goes away must never switch off an API other workloads of the project use.
Every API a declared feature calls is here, checked against the feature's own page (the
sources are beside each table); the program orders every resource that needs one after
them. Must not import pulumi.

One API cannot be enabled this way: Cloud Resource Manager
(``cloudresourcemanager.googleapis.com``). The provider reads the project through it to
enable any service, enabling it through itself fails (hashicorp/terraform-provider-google
#6101 and #11435; pulumi-gcp is bridged from that provider), and it is not among the APIs a
new project has on (https://cloud.google.com/service-usage/docs/enabled-service, "Services
enabled by default"). It is a one-time step before the first `pulumi up`
(docs/fresh-project.md); the stack's project IAM grants need it as well.
"""

from __future__ import annotations

from typing import Any

from infra.record import record
from infra.specs import ml_diagnostics as ml_diagnostics_spec
from infra.specs import storage as storage_spec
from infra.config.stack import StackConfig

# container: the GKE cluster and node pools; compute: VPCs, subnets, firewall rules,
# routers and workload policies; iam: the node service account (creating a service
# account needs the IAM API); containerfilesystem: image streaming, which every node pool
# turns on (gcfs_config), and secondary boot disks, which need image streaming. GKE:
# "You must enable the Container File System API"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements).
BASE_SERVICES = ("compute.googleapis.com", "container.googleapis.com", "iam.googleapis.com",
                 "containerfilesystem.googleapis.com")
# The workload repository (gcp.artifactregistry.Repository and its IAM member) is an
# Artifact Registry resource: its API must be on in the repository's project before the
# stack creates it there. A repository the stack only references already exists, so its
# project has the API; it is enabled here too when that project is the stack's own.
ARTIFACT_REGISTRY = "artifactregistry.googleapis.com"
# The Pathways scratch grant (gcp.storage.BucketIAMMember) is a Cloud Storage call.
STORAGE = "storage.googleapis.com"
# The stack's Vertex AI TensorBoard instance (gcp.vertex.AiTensorboard) is a Vertex AI
# resource: "Enable Vertex AI API" is MaxText's first prerequisite for uploading to it
# (AI-Hypercomputer/maxtext getting_started/Use_Vertex_AI_Tensorboard.md).
VERTEX_AI = "aiplatform.googleapis.com"
# The dashboard, alert policies and notification channels (gcp.monitoring.*) are Cloud
# Monitoring API resources (infra/specs/observability/).
MONITORING = "monitoring.googleapis.com"


@record
class Api:
    """One API to enable, in one project."""

    project: str
    service: str
    own_project: bool = True  # False: another project (a registry's), named in the resource

    @property
    def resource_name(self) -> str:
        base = f"api-{self.service.split('.', 1)[0]}"
        return base if self.own_project else f"{base}-{self.project}"


def apis(cfg: StackConfig) -> list[Api]:
    """The APIs the stack's features use, in a stable order, each in its project."""
    names = list(BASE_SERVICES)
    reg = cfg.registry
    other: list[Api] = []
    if reg is not None:
        if reg.project == cfg.project:
            names.append(ARTIFACT_REGISTRY)
        elif reg.create:
            other.append(Api(reg.project, ARTIFACT_REGISTRY, own_project=False))
    names += storage_spec.services(cfg)
    if cfg.pathways is not None:
        names.append(STORAGE)
    if cfg.tensorboard is not None:
        names.append(VERTEX_AI)
    if cfg.observability.dashboard or cfg.observability.alerts.enabled:
        names.append(MONITORING)
    # ML Diagnostics' runs are Cluster Director resources (infra/specs/ml_diagnostics.py).
    names += ml_diagnostics_spec.services(cfg)
    unique = list(dict.fromkeys(names))
    return [Api(cfg.project, s) for s in unique] + other


def services(cfg: StackConfig) -> list[str]:
    """The API names the stack enables in its own project."""
    return [a.service for a in apis(cfg) if a.own_project]


def service_args(api: Api) -> dict[str, Any]:
    return {"project": api.project, "service": api.service, "disable_on_destroy": False}
