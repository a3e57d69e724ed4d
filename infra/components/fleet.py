"""The fleet component: MultiKueue on a manager cluster, access on each worker cluster.

The manager and the workers are other stacks, read through Pulumi StackReferences to their
outputs contract (``accelstack``). Everything this component declares comes from
``infra.specs.fleet.plan``, run once the contracts are read; every resource takes an input
from that plan, so a contract the checks refuse stops the update before anything is
created (nothing half-applied). Each worker gets a ServiceAccount, its ClusterRole and a
long-lived token (infra/specs/fleet/access.py). The token's Secret is named after the
rotation window and the digest of what the fleet declares, so an update that changes the
fleet, or the first one in a new window, replaces it. Pulumi replaces a renamed resource by
creating the new one first and deleting the old one after the resources that read it are
updated: the new token Secret, then the manager's kubeconfig Secret (its text holds the new
Secret's token, so the engine orders it after), then the old Secret is deleted, which
revokes the old token. Kueue rebuilds its client for a worker when that kubeconfig Secret
changes (v0.19.2 multikueuecluster.go watches Secrets, secretHandler).
"""

from __future__ import annotations

import base64
from typing import Any, Callable, Mapping

import pulumi
import pulumi_kubernetes as k8s

from infra.config.errors import ConfigError
from infra.config.fleet import FleetConfig
from infra.contract.fleet import FLEET_OUTPUT_NAME, from_engine, is_fleet
from infra.contract.outputs import OUTPUT_NAME, ContractError, StackOutputs, load
from infra.specs.fleet import access
from infra.specs.fleet.plan import FleetPlan, plan


class FleetConfigError(pulumi.RunError):
    """The referenced stacks do not make a fleet; one line per problem, no traceback."""

    def __init__(self, problems: list[str]) -> None:
        lines = "\n  ".join(problems)
        super().__init__(f"invalid fleet ({len(problems)} problem"
                         f"{'s' if len(problems) != 1 else ''}):\n  {lines}")
        self.problems = problems


def _contract(raw: Any, stack: str, path: str, problems: list[str]) -> StackOutputs | None:
    """The cluster stack's contract; ``raw`` is its ``accelstack`` output, or a fleet's
    ``accelstackFleet`` output when it has none (see ``referenced``)."""
    if is_fleet(raw):
        problems.append(f"{path}: stack {stack!r} is a fleet, not a cluster stack (a fleet "
                        "cannot be the manager or a worker of a fleet: that would be a cycle)")
        return None
    if not isinstance(raw, Mapping):
        problems.append(f"{path}: stack {stack!r} has no '{OUTPUT_NAME}' output: it is not an "
                        "accelstack cluster stack, or not deployed yet")
        return None
    try:
        outputs = load(from_engine(raw))
    except ContractError as e:
        problems.append(f"{path}: stack {stack!r}: {e}")
        return None
    if outputs.on_cluster is not None:
        # A pools stack's contract is its host's cluster: as a worker it would be a second
        # MultiKueueCluster for that cluster, as the manager a cluster it does not own.
        problems.append(f"{path}: stack {stack!r} is a pools stack (on the cluster of "
                        f"{outputs.on_cluster!r}), not a cluster stack; name the cluster stack")
        return None
    return outputs


def referenced(ref: pulumi.StackReference) -> pulumi.Output[Any]:
    """What ``_contract`` reads of a referenced stack: its ``accelstack`` output, or, when it
    has none, its ``accelstackFleet`` output, so that a fleet is named as one. The contract
    holds the kubeconfig, so the engine may mark the whole output secret; only the
    kubeconfigs stay secret (the component marks them)."""
    pair = pulumi.Output.all(ref.get_output(OUTPUT_NAME), ref.get_output(FLEET_OUTPUT_NAME))
    return pulumi.Output.unsecret(pair.apply(lambda v: v[0] if v[0] is not None else v[1]))


def resolve(cfg: FleetConfig, stack: str, raws: list[Any],
            locate: Callable[[str], str] | None = None) -> FleetPlan:
    """The plan from the referenced stacks' raw outputs (manager first, then the workers
    in config order); FleetConfigError when they do not make a fleet, each problem
    prefixed by ``locate`` (``FILE:LINE: ``) when the stack file is known."""
    try:
        return _resolve(cfg, stack, raws)
    except FleetConfigError as e:
        if locate is None:
            raise
        raise FleetConfigError([locate(p) for p in e.problems]) from None


def _resolve(cfg: FleetConfig, stack: str, raws: list[Any]) -> FleetPlan:
    problems: list[str] = []
    manager = _contract(raws[0], cfg.manager_stack, "fleet.manager.stack", problems)
    workers = {w.name: _contract(raw, w.stack, f"fleet.workers[{i}].stack", problems)
               for i, (w, raw) in enumerate(zip(cfg.workers, raws[1:]))}
    if problems or manager is None:
        raise FleetConfigError(problems)
    try:
        return plan(cfg, stack, manager, {k: v for k, v in workers.items() if v is not None})
    except ConfigError as e:
        raise FleetConfigError(e.problems) from None


def _meta(obj: dict[str, Any], labels: pulumi.Output[dict[str, str]]) -> Any:
    """An object's metadata with labels that wait for the plan (see the module's doc)."""
    return {**obj["metadata"], "labels": labels}


def _token(data: Any) -> str:
    return base64.b64decode((data or {}).get("token", "")).decode()


def _kubeconfig_text(worker: str) -> Callable[[list[Any]], str]:
    def text(args: list[Any]) -> str:
        planned, token = args
        return access.kubeconfig(worker, planned.reach[worker], token)
    return text


def _queues_of(worker: str) -> Callable[[FleetPlan], Any]:
    return lambda p: p.worker_queues[worker]


class Fleet(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: FleetConfig, stack: str, *, now: float,
                 locate: Callable[[str], str] | None = None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:fleet:Fleet", name, None, opts)
        me = pulumi.ResourceOptions(parent=self)
        refs = [pulumi.StackReference(f"{name}-manager", stack_name=cfg.manager_stack, opts=me)]
        refs += [pulumi.StackReference(f"{name}-{w.name}", stack_name=w.stack, opts=me)
                 for w in cfg.workers]
        raws = [referenced(r) for r in refs]
        planned: pulumi.Output[FleetPlan] = pulumi.Output.all(*raws).apply(
            lambda values: resolve(cfg, stack, list(values), locate))
        self.plan = planned
        labels: pulumi.Output[dict[str, str]] = planned.apply(lambda _: dict(access.MANAGED))

        def kubeconfig_of(index: int) -> pulumi.Output[str]:
            return pulumi.Output.secret(raws[index].apply(lambda raw: str(raw["kubeconfig"])))

        manager = k8s.Provider(f"{name}-manager-k8s", kubeconfig=kubeconfig_of(0),
                               enable_server_side_apply=True, opts=me)
        on_manager = pulumi.ResourceOptions(parent=self, provider=manager)
        window = access.rotation_window(now, cfg.token_rotation_days)
        kubeconfig_secrets = []
        for i, w in enumerate(cfg.workers, start=1):
            # The claim (access.claim): created, never adopted (upsertExistingObjects false:
            # pulumi-kubernetes creates it with a plain create, which the API server refuses
            # with AlreadyExists when another fleet holds the worker; see
            # infra/components/pools.py), and everything else on the worker waits for it.
            claiming = k8s.Provider(f"{name}-{w.name}-claim-k8s", kubeconfig=kubeconfig_of(i),
                                    enable_server_side_apply=True,
                                    upsert_existing_objects=False, opts=me)
            held = access.claim(cfg.name, stack)
            claim = k8s.core.v1.ConfigMap(
                f"{name}-{w.name}-claim", metadata=_meta(held, labels), data=held["data"],
                opts=pulumi.ResourceOptions(parent=self, provider=claiming))
            provider = k8s.Provider(f"{name}-{w.name}-k8s", kubeconfig=kubeconfig_of(i),
                                    enable_server_side_apply=True, opts=me)
            on_worker = pulumi.ResourceOptions(parent=self, provider=provider,
                                               depends_on=[claim])
            sa = access.service_account(cfg.name)
            account = k8s.core.v1.ServiceAccount(
                f"{name}-{w.name}-account", opts=on_worker,
                metadata=_meta(sa, labels),
                automount_service_account_token=False)
            role = access.cluster_role(cfg.name)
            k8s.rbac.v1.ClusterRole(f"{name}-{w.name}-role", opts=on_worker,
                                    metadata=_meta(role, labels),
                                    rules=role["rules"])
            binding = access.cluster_role_binding(cfg.name)
            k8s.rbac.v1.ClusterRoleBinding(f"{name}-{w.name}-binding", opts=on_worker,
                                           metadata=_meta(binding, labels),
                                           role_ref=binding["roleRef"],
                                           subjects=binding["subjects"])
            # Named after the window and the plan's digest: pulumi-kubernetes replaces a
            # resource whose metadata.name changes (provider/pkg/provider/diff.go,
            # metadataForceNewProperties), creating the new one before deleting the old
            # (Pulumi's default; https://www.pulumi.com/docs/iac/concepts/options/
            # deletebeforereplace/), and the engine deletes replaced resources at the end
            # of the update (pulumi/pulumi#9979), after the kubeconfig Secret below,
            # which reads the new token, is rewritten.
            token_meta: pulumi.Output[Any] = planned.apply(
                lambda p: access.token_secret(cfg.name, window, p.digest)["metadata"])
            # pulumi-kubernetes waits until the token controller has filled the Secret
            # (provider/pkg/await/awaiters.go untilCoreV1SecretInitialized).
            token_secret = k8s.core.v1.Secret(
                f"{name}-{w.name}-token", type=access.TOKEN_TYPE, metadata=token_meta,
                opts=pulumi.ResourceOptions(parent=self, provider=provider,
                                            depends_on=[claim, account]))
            token_data: pulumi.Output[str] = token_secret.data.apply(_token)
            token: pulumi.Output[str] = pulumi.Output.secret(token_data)
            text: pulumi.Output[Any] = pulumi.Output.all(planned, token).apply(
                _kubeconfig_text(w.name))
            secret = access.kubeconfig_secret(w.name, "")
            kubeconfig_secrets.append(k8s.core.v1.Secret(
                f"{name}-{w.name}-kubeconfig", type=secret["type"], opts=on_manager,
                metadata=_meta(secret, labels),
                string_data={access.KUBECONFIG_KEY: pulumi.Output.secret(text)}))
            k8s.yaml.v2.ConfigGroup(
                f"{name}-{w.name}-queues", opts=on_worker,
                objs=planned.apply(_queues_of(w.name)))
        k8s.yaml.v2.ConfigGroup(
            f"{name}-manager-objects",
            opts=pulumi.ResourceOptions(parent=self, provider=manager,
                                        depends_on=kubeconfig_secrets),
            objs=planned.apply(lambda p: p.manager_objects))
        self.register_outputs({"name": cfg.name})
