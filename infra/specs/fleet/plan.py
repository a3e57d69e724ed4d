"""The fleet's plan: from its config and the contracts its StackReferences read, every
object of the manager and of each worker, and the fleet's outputs. A problem found in the
contracts raises ConfigError (every problem, one line each). Must not import pulumi."""

from __future__ import annotations

from typing import Any, Mapping

from infra.config.errors import ConfigError
from infra.config.fleet import FleetConfig
from infra.contract.fleet import FleetInfo, FleetQueue, FleetWorker
from infra.contract.outputs import StackOutputs
from infra.record import record
from infra.specs.fleet import access, checks, manager as manager_spec


@record
class FleetPlan:
    manager: StackOutputs
    manager_objects: list[dict[str, Any]]
    worker_queues: Mapping[str, list[dict[str, Any]]]  # worker -> its mirrored LocalQueues
    info: FleetInfo
    reach: Mapping[str, access.Reach]  # worker -> how the manager reaches it
    digest: str  # of everything the fleet declares from (access.declared_digest)


def plan(cfg: FleetConfig, stack: str, manager: StackOutputs,
         workers: Mapping[str, StackOutputs]) -> FleetPlan:
    problems = checks.problems(cfg, manager, workers)
    if problems:
        raise ConfigError(problems)
    namespaces = checks.namespaces(cfg, workers)
    # checks.problems refused workers whose queue names differ, so each namespace has one.
    queue_of = {ns: checks.queue_name(workers, ns) or "" for ns in namespaces}
    ordered = {w.name: workers[w.name] for w in cfg.workers}
    objs = manager_spec.objects(cfg.name, ordered, queue_of)
    scopes = manager_spec.scopes(ordered)
    fleet_queues = tuple(
        FleetQueue(ns, f"{queue_of[ns]}{s.suffix}", f"{cfg.name}{s.suffix}", s.workers, s.key)
        for ns in namespaces for s in scopes)
    worker_queues = {}
    for name, o in ordered.items():
        scoped = [(q.namespace, q.name) for q in fleet_queues
                  if q.scope != "all" and name in q.workers]
        cq_of = {ns: o.local_queue(ns).cluster_queue for ns in namespaces}  # type: ignore[union-attr]
        worker_queues[name] = access.mirrored_queues(scoped, cq_of)
    info = FleetInfo(
        name=cfg.name, stack=stack, manager_stack=cfg.manager_stack,
        workers=tuple(FleetWorker(w.name, w.stack, workers[w.name],
                                  access.reach(workers[w.name]).via) for w in cfg.workers),
        queues=fleet_queues, kueue_version=manager.kueue_version,
        jobset_version=manager.jobset_version)
    return FleetPlan(manager, objs, worker_queues, info,
                     {name: access.reach(o) for name, o in ordered.items()},
                     access.declared_digest(cfg, manager, ordered))
