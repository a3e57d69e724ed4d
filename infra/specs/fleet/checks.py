"""What the fleet's referenced stacks must satisfy, checked once their outputs are read.

Each problem names the config key it comes from (``fleet.workers[1]``) and what to change.
Pure: contracts in, messages out; must not import pulumi.
"""

from __future__ import annotations

import ipaddress
from typing import Mapping

from infra.config.fleet import FleetConfig
from infra.contract.fleet import fleet_pools, placement, pool_key
from infra.contract.outputs import StackOutputs
from infra.specs.fleet import access


def namespaces(cfg: FleetConfig, workers: Mapping[str, StackOutputs]) -> tuple[str, ...]:
    """The mirrored namespaces: ``fleet.namespaces``, or the workers' common workload
    namespace when the config names none."""
    if cfg.namespaces:
        return cfg.namespaces
    found = sorted({o.workload_namespace for o in workers.values()})
    return tuple(found[:1])


def queue_name(workers: Mapping[str, StackOutputs], namespace: str) -> str | None:
    """The LocalQueue every worker has in ``namespace`` (None when they differ or lack one)."""
    names = {o.local_queue(namespace).name if o.local_queue(namespace) else None  # type: ignore[union-attr]
             for o in workers.values()}
    return names.pop() if len(names) == 1 else None


def problems(cfg: FleetConfig, manager: StackOutputs,
             workers: Mapping[str, StackOutputs]) -> list[str]:
    out: list[str] = []
    if not manager.cluster.multikueue_origin:
        # Without an origin of its own, the manager's MultiKueue uses Kueue's default, and
        # its garbage collector deletes another manager's Workloads on a shared worker
        # (infra/specs/fleet/origin.py).
        out.append(f"fleet.manager.stack: stack {cfg.manager_stack!r} does not export its "
                   "Kueue's MultiKueue origin (cluster.multiKueueOrigin; outputs written by an "
                   "older accelstack): run `pulumi up` on it with this version first")
    where = {w.name: f"fleet.workers[{i}]" for i, w in enumerate(cfg.workers)}
    regions = {o.cluster.location for o in workers.values()}
    for w in cfg.workers:
        o = workers[w.name]
        at = where[w.name]
        # MultiKueue copies the Workload and the JobSet as the manager's Kueue and JobSet
        # read them; a worker of another version may read them otherwise (Kueue's
        # setup_multikueue.md installs one version everywhere).
        if o.kueue_version != manager.kueue_version:
            out.append(f"{at}: worker {w.name} ({w.stack}) runs Kueue {o.kueue_version}, the "
                       f"manager {manager.kueue_version}; set the same addons.kueueVersion in "
                       "both stacks")
        if o.jobset_version != manager.jobset_version:
            out.append(f"{at}: worker {w.name} ({w.stack}) runs JobSet {o.jobset_version}, the "
                       f"manager {manager.jobset_version}; set the same addons.jobsetVersion in "
                       "both stacks")
        if not fleet_pools(o):
            out.append(f"{at}: worker {w.name} ({w.stack}) has no TPU or GPU slice pool; a "
                       "fleet dispatches accelerator workloads only")
        if w.name in regions:
            out.append(f"{at}.name: {w.name!r} is also a region of the fleet; its queues would "
                       "share names with the region's: name the worker otherwise")
        out += _access(cfg, at, w.name, w.stack, o, manager)
    ns_list = namespaces(cfg, workers)
    if not cfg.namespaces and len({o.workload_namespace for o in workers.values()}) > 1:
        found = ", ".join(f"{n}: {o.workload_namespace}" for n, o in workers.items())
        out.append(f"fleet.namespaces: not given, and the workers' workload namespaces differ "
                   f"({found}); list the namespaces to mirror")
    for ns in ns_list:
        for w in cfg.workers:
            o = workers[w.name]
            if o.local_queue(ns) is None:
                have = ", ".join(sorted(q.namespace for q in o.local_queues)) or "none"
                out.append(f"{where[w.name]}: namespace {ns!r} is missing on worker {w.name} "
                           f"({w.stack}; its queue namespaces: {have}); MultiKueue needs every "
                           "mirrored namespace and its LocalQueue on every worker")
        if all(workers[w.name].local_queue(ns) for w in cfg.workers) and \
                queue_name(workers, ns) is None:
            names = ", ".join(f"{n}: {o.local_queue(ns).name}"  # type: ignore[union-attr]
                              for n, o in workers.items())
            out.append(f"fleet.namespaces: the LocalQueue of namespace {ns!r} differs between "
                       f"workers ({names}); MultiKueue keeps the queue name, so the queue is "
                       "missing on some: give every worker the same queues.localQueue")
        name = queue_name(workers, ns)
        longest = max([len(w) for w in workers] + [len(r) for r in regions])
        if name is not None and len(name) + 1 + longest > 63:
            # The scoped queues' names are the JobSets' kueue.x-k8s.io/queue-name label value,
            # at most 63 characters (Kubernetes label values).
            out.append(f"fleet.namespaces: the LocalQueue name {name!r} of namespace {ns!r} is "
                       f"too long for the fleet's scoped queues ({name}-<worker or region> "
                       "must fit a 63-character label value); give the workers a shorter "
                       "queues.localQueue")
        mine = manager.local_queue(ns)
        if name is not None and mine is not None:
            out.append(f"fleet.manager.stack: the manager stack already has LocalQueue "
                       f"{ns}/{mine.name} of its own; the fleet's queues take that namespace: "
                       "give the manager stack another queues.namespace")
    out += _placements(cfg, workers)
    if cfg.manager_egress and manager.cluster.nat_addresses:
        out.append(f"fleet.managerEgress: the manager stack exports the addresses its Cloud NAT "
                   f"sends from ({', '.join(manager.cluster.nat_addresses)}), which the fleet "
                   "reads; remove managerEgress")
    return out


def manager_egress(cfg: FleetConfig, manager: StackOutputs) -> tuple[str, ...]:
    """Where the manager's requests come from: the addresses its Cloud NAT sends from, which
    the manager stack reserves and exports (cluster.natAddresses; infra/specs/network.py),
    else ``fleet.managerEgress`` (a manager without NAT: its nodes' own addresses)."""
    return manager.cluster.nat_addresses or cfg.manager_egress


def _access(cfg: FleetConfig, at: str, name: str, stack: str, o: StackOutputs,
            manager: StackOutputs) -> list[str]:
    """Can the manager reach the worker's control plane? MultiKueue's kubeconfig must carry
    a bearer token (Kueue v0.19.2 multikueuecluster.go validateKubeconfig: exec plugins,
    token files and CA file paths are refused), so the way in is the one a ServiceAccount
    token opens (access.reach picks it):

    - the DNS endpoint, when the worker lets Kubernetes tokens in there
      (``dnsEndpoint: {k8sTokens: true}``): reachable from any network that reaches Google
      APIs, and master authorized networks do not apply to it (GKE "About network
      isolation": they restrict the IP-based endpoints; the DNS-based endpoint is
      reached from any such network, https://cloud.google.com/kubernetes-engine/docs/
      concepts/network-isolation), so nothing more is checked;
    - otherwise the IP endpoint, which a private endpoint keeps inside the worker's VPC
      network, and which master authorized networks restrict (GKE: "Add authorized
      networks for control plane access")."""
    c = o.cluster
    if access.over_dns(o):
        return []
    if c.private_endpoint:
        # A contract written before cluster.dnsK8sTokens existed reads as unknown (None):
        # the stack may already take tokens there, and only re-exporting shows it.
        older = ("" if c.dns_k8s_tokens is not None else
                 f" (if it already does, run pulumi up on {stack}: its outputs predate "
                 "cluster.dnsK8sTokens and do not say so)")
        return [f"{at}: worker {name} has privateEndpoint on: its IP endpoint answers only "
                "inside its own VPC network, which the manager is not in, and the manager "
                "authenticates with a ServiceAccount token (Kueue takes no gcloud plugin); "
                f"set dnsEndpoint: {{k8sTokens: true}} in the worker stack ({stack}) so the "
                f"manager comes in through its DNS endpoint with that token{older}, or turn "
                "privateEndpoint off there and let the manager in through "
                "masterAuthorizedNetworks"]
    if c.authorized_networks is None:
        return []
    egress = manager_egress(cfg, manager)
    source = ("the manager's Cloud NAT address" if manager.cluster.nat_addresses
              else "fleet.managerEgress")
    if not egress:
        return [f"{at}: worker {name} limits its control plane to masterAuthorizedNetworks, "
                f"and the manager stack ({cfg.manager_stack}) exports no Cloud NAT addresses "
                "(cluster.natAddresses: run `pulumi up` on it with this version, or give it "
                "privateNodes, which sends through Cloud NAT); without NAT, give "
                "fleet.managerEgress (its nodes' addresses) so the fleet can check that the "
                "manager is let in"]
    allowed = [ipaddress.ip_network(a) for a in c.authorized_networks]
    out = []
    for cidr in egress:
        net = ipaddress.ip_network(cidr)
        if not any(net.version == a.version and net.subnet_of(a)  # type: ignore[arg-type]
                   for a in allowed):
            out.append(f"{at}: worker {name}'s masterAuthorizedNetworks do not let the manager "
                       f"in from {cidr} ({source}); add it to the worker stack's "
                       "masterAuthorizedNetworks")
    return out


def _placements(cfg: FleetConfig, workers: Mapping[str, StackOutputs]) -> list[str]:
    """Pools of one flavor key on two workers must place pods alike: the manager admits a
    workload to the key, and MultiKueue may run it on either."""
    seen: dict[str, tuple[str, tuple[object, ...]]] = {}
    out = []
    for w in cfg.workers:
        for p in fleet_pools(workers[w.name]):
            key = pool_key(p)
            first = seen.setdefault(key, (w.name, placement(p)))
            if first[1] != placement(p):
                out.append(f"fleet.workers: workers {first[0]} and {w.name} both have "
                           f"{key} pools, but their nodes differ (labels, taints or "
                           "networking); one workload cannot run on both")
    return out
