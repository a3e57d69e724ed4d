"""The workload image repository as resource arguments: the repository the stack owns (with
its cleanup policies), the nodes' read access to it, and the node account's project roles.
The config it reads is infra/config/registry.py.
"""

from __future__ import annotations

from typing import Any

from infra.config.registry import READER_ROLE, Cleanup, RegistryConfig


def cleanup_policies(cleanup: Cleanup) -> list[dict[str, Any]]:
    """pulumi-gcp ``artifactregistry.Repository`` ``cleanup_policies`` entries."""
    policies: list[dict[str, Any]] = []
    if cleanup.untagged_after_days is not None:
        policies.append({"id": "delete-untagged", "action": "DELETE", "condition": {
            "tag_state": "UNTAGGED", "older_than": f"{cleanup.untagged_after_days}d"}})
    if cleanup.older_than_days is not None:
        policies.append({"id": "delete-old", "action": "DELETE", "condition": {
            "tag_state": "ANY", "older_than": f"{cleanup.older_than_days}d"}})
    policies.append({"id": "keep-recent", "action": "KEEP",
                     "most_recent_versions": {"keep_count": cleanup.keep_count}})
    return policies


def repository_args(reg: RegistryConfig, labels: dict[str, str]) -> dict[str, Any]:
    """Arguments of ``gcp.artifactregistry.Repository`` for a repository the stack owns."""
    args: dict[str, Any] = {
        "repository_id": reg.name,
        "location": reg.location,
        "project": reg.project,
        "format": "DOCKER",
        "description": "Workload images built by `submit ... --script-dir` (accelstack)",
        "labels": dict(labels),
    }
    if reg.cleanup is not None:
        args["cleanup_policies"] = cleanup_policies(reg.cleanup)
        args["cleanup_policy_dry_run"] = reg.cleanup.dry_run
    return args


def reader_args(reg: RegistryConfig, member: Any) -> dict[str, Any]:
    """Arguments of ``gcp.artifactregistry.RepositoryIamMember``: the nodes read images."""
    return {"project": reg.project, "location": reg.location, "repository": reg.name,
            "role": READER_ROLE, "member": member}


def node_project_roles(reg: RegistryConfig | None, roles: tuple[str, ...]) -> tuple[str, ...]:
    """The node service account's project roles: without the project-wide registry read
    when the nodes read the stack's repository only."""
    if reg is None or reg.read_all_repositories:
        return roles
    return tuple(r for r in roles if r != READER_ROLE)
