"""The fleet stack's config: ``accelstack:fleet``, parsed into a frozen FleetConfig.

A fleet stack declares no cluster of its own: it names a manager stack (a small CPU-only
cluster stack, or any existing cluster stack) and worker cluster stacks, and configures
MultiKueue between them (infra/specs/fleet/, docs/fleets.md). What can be checked from the
config alone is checked here (names, duplicates, the manager among its workers, the fleet
among its own references); what needs the referenced stacks' outputs (versions, namespaces,
queues, access) is checked by infra/specs/fleet/checks.py once they are read.
Must not import pulumi.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Mapping

from infra.config.errors import ConfigError, show
from infra.config import stack_refs
from infra.config.reader import Reader
from infra.record import record

FLEET_KEY = "fleet"
FLEET_KEYS = ("name", "manager", "workers", "namespaces", "managerEgress",
              "tokenRotationDays")
MANAGER_KEYS = ("stack",)
WORKER_KEYS = ("name", "stack")
DEFAULT_ROTATION_DAYS = 30
MAX_WORKERS = 20  # MultiKueueConfig.spec.clusters: MaxItems=20 (Kueue v0.19.2 multikueue_types.go)
# Worker names become MultiKueueCluster names and parts of queue names and queue-name label
# values (63 characters at most): short DNS labels.
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,18}[a-z0-9])?\Z")


@record
class WorkerRef:
    name: str
    stack: str


@record
class FleetConfig:
    name: str
    manager_stack: str
    workers: tuple[WorkerRef, ...]
    namespaces: tuple[str, ...]  # mirrored on the manager; every worker must have them
    manager_egress: tuple[str, ...]  # CIDRs the manager's requests leave from
    token_rotation_days: int


def is_fleet(raw: Mapping[str, Any]) -> bool:
    return FLEET_KEY in raw


def parse_fleet(raw: Mapping[str, Any], stack: str) -> FleetConfig:
    """Parse a fleet stack's config (keys without the ``accelstack:`` prefix) for the stack
    named ``stack``. Raises ConfigError listing every problem."""
    r = Reader()
    r.obj(raw, "", (FLEET_KEY,))
    top = r.obj(raw.get(FLEET_KEY), FLEET_KEY, FLEET_KEYS)
    p = FLEET_KEY
    name = r.get(top, "name", p, str, required=True) or ""
    if name and not _NAME.match(name):
        r.fail(f"{p}.name", f"{show(name)} is not a short DNS label (lower-case letters, "
               "digits and '-', starting with a letter, at most 20 characters)")
    mgr = r.obj(top.get("manager"), f"{p}.manager", MANAGER_KEYS)
    if "manager" not in top:
        r.fail(f"{p}.manager", "is required: the cluster stack that holds the queues "
               "(a small CPU-only stack is enough)")
    manager = r.get(mgr, "stack", f"{p}.manager", str, required="manager" in top) or ""
    if not stack_refs.check_stack_name(r, f"{p}.manager.stack", manager):
        manager = ""

    workers: list[WorkerRef] = []
    raw_workers = r.get(top, "workers", p, list, required=True) or []
    if "workers" in top and isinstance(top["workers"], list) and not raw_workers:
        r.fail(f"{p}.workers", "is empty; a fleet needs at least one worker stack")
    if len(raw_workers) > MAX_WORKERS:
        r.fail(f"{p}.workers", f"{len(raw_workers)} workers; MultiKueue takes at most "
               f"{MAX_WORKERS} clusters in one MultiKueueConfig")
    # Every comparison of stacks is on references normalised (stack_refs.ref): one stack
    # written two ways (v5e-spot, my-org/accelstack/v5e-spot) is one cluster, and two
    # workers on it would be two MultiKueueClusters dispatching to one cluster (Kueue
    # v0.19.2 pkg/controller/admissionchecks/multikueue/workload.go remoteClientsForAC
    # dispatches to every cluster of the config) and two fleets of access objects writing
    # the same ServiceAccount and bindings.
    me = stack_refs.ref(stack)
    manager_ref = stack_refs.ref(manager) if manager else None
    seen_names: dict[str, int] = {}
    seen_stacks: list[tuple[stack_refs.StackRef, int, str]] = []
    for i, w in enumerate(raw_workers):
        q = f"{p}.workers[{i}]"
        item = r.obj(w, q, WORKER_KEYS)
        wname = r.get(item, "name", q, str, required=True) or ""
        wstack = r.get(item, "stack", q, str, required=True) or ""
        if wname and not _NAME.match(wname):
            r.fail(f"{q}.name", f"{show(wname)} is not a short DNS label (lower-case "
                   "letters, digits and '-', starting with a letter, at most 20 characters)")
        valid = stack_refs.check_stack_name(r, f"{q}.stack", wstack) and bool(wstack)
        wref = stack_refs.ref(wstack) if valid else None
        if wname in seen_names:
            r.fail(f"{q}.name", f"{show(wname)} is a duplicate worker: workers[{seen_names[wname]}] "
                   "has that name")
        twin = next(((j, text) for other, j, text in seen_stacks
                     if wref is not None and other.same(wref)), None)
        if twin is not None:
            spelt = "" if twin[1] == wstack else f" (written {show(twin[1])} there)"
            r.fail(f"{q}.stack", f"{show(wstack)} is a duplicate worker: "
                   f"workers[{twin[0]}] is that stack{spelt}")
        if wref is not None and manager_ref is not None and wref.same(manager_ref):
            # Kueue: "We do not currently support running the manager cluster as one of the
            # workers for itself" (v0.19.2 site/content/en/docs/concepts/multikueue.md).
            r.fail(f"{q}.stack", f"{show(wstack)} is the manager stack: the manager cannot be "
                   "one of its own workers (a cycle MultiKueue does not support)")
        if wref is not None and wref.same(me):
            r.fail(f"{q}.stack", f"{show(wstack)} is this fleet stack itself (a cycle)")
        seen_names.setdefault(wname, i)
        if wref is not None and twin is None:
            seen_stacks.append((wref, i, wstack))
        if wname and wstack:
            workers.append(WorkerRef(wname, wstack))
    if manager_ref is not None and manager_ref.same(me):
        r.fail(f"{p}.manager.stack", f"{show(manager)} is this fleet stack itself (a cycle)")

    namespaces = stack_refs.namespaces(r, top, p)
    egress: list[str] = []
    for i, cidr in enumerate(r.get(top, "managerEgress", p, list, default=[]) or []):
        try:
            egress.append(str(ipaddress.ip_network(str(cidr), strict=True)))
        except ValueError:
            r.fail(f"{p}.managerEgress[{i}]", f"{show(cidr)} is not a CIDR block such as "
                   "203.0.113.4/32")
    days = r.get(top, "tokenRotationDays", p, int, default=DEFAULT_ROTATION_DAYS)
    if isinstance(days, int) and not 1 <= days <= 365:
        r.fail(f"{p}.tokenRotationDays", f"{days} is not between 1 and 365")
    if r.problems:
        raise ConfigError(r.problems)
    return FleetConfig(name, manager, tuple(workers), tuple(namespaces), tuple(egress),
                       days)
