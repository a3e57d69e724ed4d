"""The provider ID of a resource whose create a killed `pulumi` left pending, from its inputs
in the exported state, for the billed types the stacks make. Pure: teardown.py imports the
resources by these IDs (`pulumi import TYPE NAME ID`) and destroys them.

A pending create's resource in `pulumi stack export` (apitype ResourceV3 inside OperationV2,
sdk/go/common/apitype/core.go) has its URN, type and ``inputs`` (the checked inputs, names as
the Pulumi schema spells them) and no ID: the create never returned one. The ID pulumi-gcp
gives a resource is the one its Terraform resource sets (hashicorp/terraform-provider-google):
- gcp:container/cluster:Cluster: ``projects/{project}/locations/{location}/clusters/{name}``
  (resource_container_cluster.go, containerClusterFullName, set on create and on import).
- gcp:container/nodePool:NodePool:
  ``projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}``
  (resource_container_node_pool.go, the state importer's ReplaceVars), ``cluster`` being the
  cluster's short name; the stacks pass the cluster's ID (infra/components/node_pools.py),
  whose last segment is that name.
A type not listed, or inputs without one of the fields (a project left to the provider's
default, say), has no known ID: the pending create is left to the user (teardown.py).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from infra.record import record

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


@record
class PendingCreate:
    urn: str
    type: str
    inputs: Mapping[str, Any]


def pending_creates(deployment: Mapping[str, Any] | None) -> list[PendingCreate]:
    """The pending creates of an exported state's ``deployment``, with their inputs."""
    out = []
    for op in (deployment or {}).get("pending_operations") or []:
        res = op.get("resource")
        if op.get("type") == "creating" and isinstance(res, Mapping):
            out.append(PendingCreate(res["urn"], str(res.get("type", "")),
                                     dict(res.get("inputs") or {})))
    return out


def _fields(inputs: Mapping[str, Any], *names: str) -> list[str] | None:
    values = [inputs.get(n) for n in names]
    if not all(isinstance(v, str) and v for v in values):
        return None
    return [str(v) for v in values]


def _cluster_id(inputs: Mapping[str, Any]) -> str | None:
    got = _fields(inputs, "project", "location", "name")
    return None if got is None else "projects/{}/locations/{}/clusters/{}".format(*got)


def _node_pool_id(inputs: Mapping[str, Any]) -> str | None:
    got = _fields(inputs, "project", "location", "cluster", "name")
    if got is None:
        return None
    project, location, cluster, name = got
    cluster = cluster.rstrip("/").rsplit("/", 1)[-1]
    return f"projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}"


_RULES: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    CLUSTER: _cluster_id, NODE_POOL: _node_pool_id}


def provider_id(create: PendingCreate) -> str | None:
    """The ID pulumi-gcp would have given the resource; None when no rule is known."""
    rule = _RULES.get(create.type)
    return rule(create.inputs) if rule is not None else None
