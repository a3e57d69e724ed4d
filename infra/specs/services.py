"""The Google Cloud APIs a stack needs, declared so that `pulumi up` enables them first.

Each service is a ``gcp:projects/service:Service`` with ``disable_on_destroy`` false: a
stack that goes away must never switch off an API other workloads of the project use.
Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

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


def services(cfg: StackConfig) -> list[str]:
    """The APIs the stack's features use, in a stable order."""
    return list(BASE_SERVICES) + [s for s in storage_spec.services(cfg)
                                  if s not in BASE_SERVICES]


def service_args(cfg: StackConfig, service: str) -> dict[str, Any]:
    return {"project": cfg.project, "service": service, "disable_on_destroy": False}


def resource_name(service: str) -> str:
    return f"api-{service.split('.', 1)[0]}"
