"""The stack's Vertex AI TensorBoard instance and who may write to it, as data: what
``infra.components.tensorboard`` declares. Must not import pulumi.

Jobs reach Vertex AI as their namespace's Kubernetes service account (Workload Identity
Federation for GKE, as for the stores: infra/specs/storage.py), granted Vertex AI User on
the project: MaxText's uploader looks the instance up, creates the run's TensorBoard
experiment when it is missing and writes to it, and MaxText names that role ("Assign Vertex
AI User IAM role", AI-Hypercomputer/maxtext getting_started/Use_Vertex_AI_Tensorboard.md;
Vertex AI's TensorBoard setup grants roles/aiplatform.user to the training identity too,
https://cloud.google.com/vertex-ai/docs/experiments/tensorboard-setup).
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import StackConfig
from infra.contract.tensorboard import TensorboardInfo
from infra.record import record
from infra.specs import storage as storage_spec

ROLE = "roles/aiplatform.user"


@record
class Grant:
    namespace: str

    @property
    def resource_name(self) -> str:
        return f"tensorboard-{self.namespace}"


def instance_args(cfg: StackConfig) -> dict[str, Any]:
    board = cfg.tensorboard
    assert board is not None
    return {
        "project": cfg.project,
        "region": board.region,
        "display_name": board.display_name,
        "labels": dict(cfg.labels) or None,
        # The instance holds every run's uploaded logs: kept like the cluster when the
        # stack protects it from deletion (pulumi-gcp AiTensorboard deletion_policy).
        "deletion_policy": "PREVENT" if cfg.deletion_protection else "DELETE",
    }


def grants(cfg: StackConfig) -> list[Grant]:
    """One grant per workload namespace (its job service account)."""
    return [Grant(ns) for ns in storage_spec.namespaces(cfg)]


def grant_args(cfg: StackConfig, grant: Grant, project_number: str) -> dict[str, Any]:
    return {"project": cfg.project, "role": ROLE,
            "member": storage_spec.principal(project_number, cfg.project, grant.namespace,
                                             cfg.storage.service_account)}


def info(cfg: StackConfig, name: str) -> TensorboardInfo | None:
    board = cfg.tensorboard
    if board is None:
        return None
    return TensorboardInfo(cfg.project, board.region, board.display_name, name)
