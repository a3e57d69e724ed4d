"""The manager's MultiKueue objects (API kueue.x-k8s.io/v1beta2), as data.

MultiKueue picks a worker for a workload only among the clusters of the MultiKueueConfig
that its ClusterQueue's AdmissionCheck names (v0.19.2 site/content/en/docs/concepts/
multikueue.md, "Job Flow"; an External dispatcher would need a controller of our own). So a
workload is restricted to some workers by the queue it is submitted to: one *scope* per
set of workers, each with a MultiKueueConfig, an AdmissionCheck (controllerName
kueue.x-k8s.io/multikueue, parameters naming the config), a ClusterQueue using the check
(spec.admissionChecksStrategy) and a LocalQueue in every mirrored namespace:

    all workers       LocalQueue <queue>            ClusterQueue <fleet>
    one worker        LocalQueue <queue>-<worker>   ClusterQueue <fleet>-<worker>
    one region        LocalQueue <queue>-<region>   ClusterQueue <fleet>-<region>
                      (only when the workers are in more than one region)

Quota: Kueue's docs want the manager's quota equal to the workers' total ("Manager
Cluster"). The ClusterQueues share one cohort; each worker's ClusterQueue holds that
worker's chips (and their nodes' pod share of CPU and memory, as the worker's own flavors
do) with a borrowing limit of 0, so no more is admitted for one worker than it holds; the
all-workers and region ClusterQueues hold nothing and borrow from the cohort. The flavors
are the workers' flavor keys (accelerator and capacity mode) with the pools' node labels,
so a workload is admitted to the flavor its node selector names. The manager has no such
nodes: its flavors only count, and MultiKueue runs the pods on the worker.
Must not import pulumi.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.catalog import pod_resources
from infra.contract.fleet import fleet_pools, pool_key
from infra.contract.outputs import StackOutputs
from infra.record import record
from infra.specs.addons import MANAGED_NAMESPACE_LABEL
from infra.specs.fleet.access import MANAGED, kubeconfig_secret_name
from infra.specs.kueue import API, Flavor, resource_groups

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"  # v0.19.2 MultiKueueControllerName


@record
class Scope:
    """A set of workers a workload may be restricted to."""

    key: str  # "all", "worker:<name>", "region:<region>"
    suffix: str  # "" or "-<name>" / "-<region>": of queue and object names
    workers: tuple[str, ...]


def scopes(workers: Mapping[str, StackOutputs]) -> list[Scope]:
    names = tuple(workers)
    out = [Scope("all", "", names)]
    out += [Scope(f"worker:{n}", f"-{n}", (n,)) for n in names]
    regions: dict[str, list[str]] = {}
    for n, o in workers.items():
        regions.setdefault(o.cluster.location, []).append(n)
    if len(regions) > 1:
        out += [Scope(f"region:{r}", f"-{r}", tuple(ws)) for r, ws in sorted(regions.items())]
    return out


def flavors(workers: Mapping[str, StackOutputs]) -> list[Flavor]:
    """One counting flavor per key, its quota the workers' total."""
    out: dict[str, Flavor] = {}
    for o in workers.values():
        for p in fleet_pools(o):
            assert p.resource_name is not None
            key = pool_key(p)
            f = out.setdefault(key, Flavor(key, p.resource_name, dict(p.node_selector), [], 0))
            f.quota += p.chips_per_slice * p.slice_count
            # Less a multi-tier checkpointing RAM disk, as the worker's own quota counts it.
            reserved = p.checkpointing.ram_disk_mi if p.checkpointing else 0
            share = pod_resources.pod_share(p.machine_type, reserved)
            if share is not None:
                f.cpu_milli += share.cpu_milli * p.vms_per_slice * p.slice_count
                f.memory_mi += share.memory_mi * p.vms_per_slice * p.slice_count
    return list(out.values())


def _worker_quota(o: StackOutputs) -> dict[str, int]:
    quota: dict[str, int] = {}
    for p in fleet_pools(o):
        quota[pool_key(p)] = quota.get(pool_key(p), 0) + p.chips_per_slice * p.slice_count
    return quota


def objects(fleet: str, workers: Mapping[str, StackOutputs], queues: Mapping[str, str]
            ) -> list[dict[str, Any]]:
    """Every MultiKueue and Kueue object of the manager, in the order they may be created;
    ``queues`` maps each mirrored namespace to its LocalQueue's name on the workers."""
    namespaces = tuple(queues)
    objs: list[dict[str, Any]] = []
    for ns in namespaces:
        # The label opts the namespace into the manager's Kueue (infra/specs/addons.py).
        objs.append({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": ns, "labels": {**MANAGED,
                                                         MANAGED_NAMESPACE_LABEL: "true"}}})
    flavor_list = flavors(workers)
    for f in flavor_list:
        objs.append({"apiVersion": API, "kind": "ResourceFlavor",
                     "metadata": {"name": f.name, "labels": dict(MANAGED)},
                     "spec": {"nodeLabels": dict(f.node_labels)}})
    for name in workers:
        objs.append({"apiVersion": API, "kind": "MultiKueueCluster",
                     "metadata": {"name": name, "labels": dict(MANAGED)},
                     "spec": {"clusterSource": {"kubeConfig": {
                         "locationType": "Secret",
                         "location": kubeconfig_secret_name(name)}}}})
    for scope in scopes(workers):
        name = f"{fleet}{scope.suffix}"
        objs.append({"apiVersion": API, "kind": "MultiKueueConfig",
                     "metadata": {"name": name, "labels": dict(MANAGED)},
                     "spec": {"clusters": list(scope.workers)}})
        objs.append({"apiVersion": API, "kind": "AdmissionCheck",
                     "metadata": {"name": name, "labels": dict(MANAGED)},
                     "spec": {"controllerName": MULTIKUEUE_CONTROLLER,
                              "parameters": {"apiGroup": "kueue.x-k8s.io",
                                             "kind": "MultiKueueConfig", "name": name}}})
        if scope.key.startswith("worker:"):
            quota = _worker_quota(workers[scope.workers[0]])
            borrow: dict[str, int] | None = {}
        else:
            quota, borrow = {}, None
        objs.append({"apiVersion": API, "kind": "ClusterQueue",
                     "metadata": {"name": name, "labels": dict(MANAGED)},
                     "spec": {
                         "namespaceSelector": {"matchExpressions": [{
                             "key": "kubernetes.io/metadata.name", "operator": "In",
                             "values": list(namespaces)}]},
                         "cohortName": fleet,
                         "queueingStrategy": "BestEffortFIFO",
                         "resourceGroups": resource_groups(flavor_list, quota, borrow, []),
                         "admissionChecksStrategy": {"admissionChecks": [{"name": name}]},
                     }})
        for ns in namespaces:
            objs.append({"apiVersion": API, "kind": "LocalQueue",
                         "metadata": {"name": f"{queues[ns]}{scope.suffix}", "namespace": ns,
                                      "labels": dict(MANAGED)},
                         "spec": {"clusterQueue": name}})
    return objs
