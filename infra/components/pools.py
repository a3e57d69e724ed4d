"""The pools component: node pools, ComputeClasses and Kueue queues on a cluster another
stack owns.

The host is read through a Pulumi StackReference to its outputs contract; every resource is
declared from ``infra.specs.pools.plan``, run once the contract is read, so a pools stack the
checks refuse stops before anything is created. How many node pools there are, and their
names, depend on the host (its zones and version decide how ``slices`` parse), so the
resources are declared inside the plan's ``apply``: a StackReference's outputs are known at
preview as at update (the engine reads the other stack's state), so previews show them too.

Kubernetes objects go through a provider made from the host's kubeconfig that never adopts
an object that exists already (``upsert_existing_objects=False``: pulumi-kubernetes v4.29.0
creates with a client-side create, which the API server refuses with AlreadyExists
(https://github.com/pulumi/pulumi-kubernetes/releases/tag/v4.29.0, #2926), and "By default,
Pulumi will error if a resource already exists in the cluster"; pulumi_kubernetes Provider,
upsertExistingObjects), so a name taken on the host fails the update instead of
making this stack the owner of another's object, which its destroy would then delete.
"""

from __future__ import annotations

from typing import Any, Callable

import pulumi
import pulumi_kubernetes as k8s

from infra.components.node_pools import SliceNodePools
from infra.config.errors import ConfigError
from infra.config.pools import PoolsConfig
from infra.components.fleet import referenced
from infra.specs.pools import PoolsPlan, plan


class PoolsConfigError(pulumi.RunError):
    """The pools do not fit the host; one line per problem, no traceback."""

    def __init__(self, problems: list[str]) -> None:
        lines = "\n  ".join(problems)
        super().__init__(f"invalid pools stack ({len(problems)} problem"
                         f"{'s' if len(problems) != 1 else ''}):\n  {lines}")
        self.problems = problems


def resolve(cfg: PoolsConfig, raw: Any,
            locate: Callable[[str], str] | None = None) -> PoolsPlan:
    """The plan from the host's raw output; PoolsConfigError (``FILE:LINE: `` first when
    the stack file is known) when the pools do not fit."""
    try:
        return plan(cfg, raw)
    except ConfigError as e:
        raise PoolsConfigError([locate(p) if locate else p for p in e.problems]) from None


def _object_name(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    ns = f"{meta['namespace']}-" if meta.get("namespace") else ""
    return f"{obj['kind'].lower()}-{ns}{meta['name']}"


def _kubeconfig(raw: Any) -> str:
    return str(raw["kubeconfig"]) if isinstance(raw, dict) else ""


class Pools(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: PoolsConfig, *,
                 locate: Callable[[str], str] | None = None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:pools:Pools", name, None, opts)
        me = pulumi.ResourceOptions(parent=self)
        ref = pulumi.StackReference(f"{name}-host", stack_name=cfg.host_stack, opts=me)
        # The host's contract (or a fleet's, named as one: infra/components/fleet.py);
        # only the kubeconfig stays secret.
        raw: pulumi.Output[Any] = referenced(ref)
        text: pulumi.Output[str] = raw.apply(_kubeconfig)
        kubeconfig: pulumi.Output[str] = pulumi.Output.secret(text)
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig,
                                     enable_server_side_apply=True,
                                     upsert_existing_objects=False, opts=me)
        self.plan: pulumi.Output[PoolsPlan] = raw.apply(
            lambda value: self._declare(resolve(cfg, value, locate)))
        self.register_outputs({"host": cfg.host_stack})

    def _declare(self, p: PoolsPlan) -> PoolsPlan:
        me = pulumi.ResourceOptions(parent=self)
        on_host = pulumi.ResourceOptions(parent=self, provider=self.provider)
        for pool in p.cfg.slices:
            SliceNodePools(pool.name, p.cfg, pool, cluster=p.cluster_id,
                           service_account=p.node_service_account, opts=me)
        for obj in p.compute_classes:
            k8s.apiextensions.CustomResource(
                f"computeclass-{obj['metadata']['name']}", api_version=obj["apiVersion"],
                kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"], opts=on_host)
        # Created flavors, then the ClusterQueue, then its LocalQueues, and deleted the other
        # way round: Kueue keeps a flavor a ClusterQueue names, and a ClusterQueue that
        # holds admitted Workloads, until they let go (their resource-in-use finalizers:
        # kueue v0.19.2 pkg/controller/core/resourceflavor_controller.go adds it to a
        # flavor; site/content/en/docs/tasks/troubleshooting/
        # troubleshooting_delete_clusterqueue.md for a ClusterQueue).
        made: dict[str, list[pulumi.Resource]] = {"ResourceFlavor": [], "ClusterQueue": []}
        after = {"ResourceFlavor": [], "ClusterQueue": ["ResourceFlavor"],
                 "LocalQueue": ["ClusterQueue"]}
        for obj in p.kueue_objects:
            deps = [r for kind in after[obj["kind"]] for r in made[kind]]
            res = k8s.apiextensions.CustomResource(
                _object_name(obj), api_version=obj["apiVersion"], kind=obj["kind"],
                metadata=obj["metadata"], spec=obj["spec"],
                opts=pulumi.ResourceOptions.merge(on_host, pulumi.ResourceOptions(
                    depends_on=deps)))
            made.setdefault(obj["kind"], []).append(res)
        return p
