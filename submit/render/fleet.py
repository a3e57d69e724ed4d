"""A workload for a fleet (docs/fleets.md): which of the manager's queues it goes to, and
which workers can run it.

MultiKueue sends a workload only to the workers of its ClusterQueue's MultiKueueConfig, so
``--fleet-worker`` and ``--fleet-region`` pick the manager's LocalQueue of that scope
(infra/specs/fleet/manager.py). The shape is accepted when at least one worker of the scope
has a pool of the flavor it selects with room for it; the others never admit it.
The JobSet is marked ``spec.managedBy: kueue.x-k8s.io/multikueue`` (the value Kueue's
webhook would default it to for a MultiKueue queue, v0.19.2
site/content/en/docs/tasks/run/multikueue/jobsets.md), so the manager's JobSet controller
leaves it to MultiKueue. Pure: no Click, no Kubernetes client.
"""

from __future__ import annotations

from infra.contract.fleet import FleetInfo, offering, pool_key
from infra.contract.outputs import SlicePoolInfo
from submit.render.values import SpecError

MULTIKUEUE = "kueue.x-k8s.io/multikueue"  # v0.19.2 MultiKueueControllerName


def _hint(word: str, names: list[str]) -> str:
    import difflib  # late: only a mistyped name needs it

    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def no_pool(fleet: FleetInfo, accelerator: str) -> SpecError:
    """The --accelerator error of a fleet: what each worker offers."""
    offers = "; ".join(
        f"{w.name} ({w.region}): "
        + (", ".join(sorted({p.accelerator for p in w.accelerator_pools()})) or "none")
        for w in fleet.workers)
    return SpecError("--accelerator", f"{accelerator!r}: no worker of fleet {fleet.name!r} "
                     f"offers it; its workers offer: {offers}")


def _fits(pool: SlicePoolInfo, replicas: int, parallelism: int) -> bool:
    if pool.capacity_mode in ("flex-start", "queued"):
        return True
    if pool.kind == "tpu":
        return replicas <= pool.slice_count
    return parallelism <= pool.slice_count * pool.vms_per_slice


def route(fleet: FleetInfo, chosen: SlicePoolInfo, namespace: str, queue: str | None,
          replicas: int, parallelism: int, worker: str | None, region: str | None
          ) -> tuple[str, tuple[str, ...]]:
    """(the manager's LocalQueue, the workers that can run the workload), or SpecError."""
    key = chosen.name  # the manager view's pools are named by flavor key
    if worker is not None:
        names = [w.name for w in fleet.workers]
        if worker not in names:
            raise SpecError("--fleet-worker", f"{worker!r} is not a worker of fleet "
                            f"{fleet.name!r}{_hint(worker, names)}; its workers: "
                            f"{', '.join(names)}")
        scope = f"worker:{worker}"
    elif region is not None:
        regions = list(fleet.regions())
        if region not in regions:
            raise SpecError("--fleet-region", f"{region!r} is not a region of fleet "
                            f"{fleet.name!r}{_hint(region, regions)}; its regions: "
                            f"{', '.join(regions)}")
        scope = f"region:{region}" if len(regions) > 1 else "all"
    else:
        scope = ""
    if scope:
        found = fleet.queue_for(namespace, scope)
        if found is None:  # the namespace itself was checked against the view's queues
            raise SpecError("--namespace", f"{namespace!r} is not a namespace of fleet "
                            f"{fleet.name!r}")
        if queue is not None and queue != found.name:
            raise SpecError("--queue", f"{queue!r} and --fleet-worker/--fleet-region name "
                            f"different queues (that restriction is queue {found.name!r}); "
                            "give one of them")
        queue = found.name
    if queue is None:
        every = fleet.queue_for(namespace, "all")
        if every is None:
            raise SpecError("--namespace", f"{namespace!r} is not a namespace of fleet "
                            f"{fleet.name!r}")
        queue = every.name
    target = next((q for q in fleet.queues if q.namespace == namespace and q.name == queue),
                  None)
    allowed = target.workers if target else tuple(w.name for w in fleet.workers)
    offer = [w for w in offering(fleet, key) if w.name in allowed]
    able = tuple(w.name for w in offer
                 if any(pool_key(p) == key and _fits(p, replicas, parallelism)
                        for p in w.accelerator_pools()))
    if not able:
        who = (f"worker {worker} has" if worker else f"no worker of region {region} has"
               if region else f"no worker of queue {queue} has")
        anywhere = [w.name for w in offering(fleet, key)]
        raise SpecError("--fleet-worker" if worker else "--fleet-region" if region
                        else "--num-slices" if chosen.kind == "tpu" else "--num-nodes",
                        f"{who} {'no ' if worker else ''}{key} pools with room for "
                        f"{replicas} x {parallelism} pods; {key} is offered by: "
                        f"{', '.join(anywhere) or 'none'}")
    assert queue is not None
    return queue, able
