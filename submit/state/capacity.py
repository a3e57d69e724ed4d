"""Where a workload's slices come from, and which step a workload on a slice class waits
on: pure functions over the objects `list` and `describe` read (nodes, pods, events).

A slice class's nodes are made on demand by GKE's cluster autoscaler, so a pending
workload on a class waits on one of three things, each visible in what Kueue and GKE
publish:

- Kueue quota: the Workload has no QuotaReserved=True condition yet (the class's quota is
  its chips limit, infra/specs/kueue.py);
- GKE scaling up: the pods carry the cluster autoscaler's ``TriggeredScaleUp`` event ("pod
  triggered scale-up", kubernetes/autoscaler cluster-autoscaler/FAQ.md "What events are
  emitted by CA?"), or no autoscaler event yet;
- capacity not found: GKE's ``FailedScaleUp`` ("Node scale up in zones ... associated
  with this pod failed: GCE out of resources. Pod is at risk of not being scheduled.",
  GKE's autoscaler) or ``NotTriggerScaleUp`` ("pod didn't trigger scale-up", same FAQ)
  after every priority of the class was tried; the class says DoNotScaleUp, so the pods
  stay Pending until a priority can be met.

A node's capacity source is read from the labels GKE puts on it: cloud.google.com/gke-spot
and cloud.google.com/gke-flex-start ("true"), and cloud.google.com/reservation-name (the
labels GKE lists beside the ComputeClass fields spot and reservations.specific.name:
https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes,
"Node selectors for system node labels"). Must not import a Kubernetes client.
"""

from __future__ import annotations

from typing import Any

SPOT_LABEL = "cloud.google.com/gke-spot"
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
RESERVATION_LABEL = "cloud.google.com/reservation-name"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
AUTOSCALER_REASONS = ("TriggeredScaleUp", "NotTriggerScaleUp", "FailedScaleUp")
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
# Every node of every slice class carries it (infra/specs/slice_classes/placement.py).
CLASS_NODES = "accelstack.dev/capacity=class"


def node_source(node: dict[str, Any]) -> str:
    """spot, flex-start, reservation:NAME or on-demand, from the node's GKE labels."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if labels.get(RESERVATION_LABEL):
        return f"reservation:{labels[RESERVATION_LABEL]}"
    if labels.get(SPOT_LABEL) == "true":
        return "spot"
    if labels.get(FLEX_START_LABEL) == "true":
        return "flex-start"
    return "on-demand"


def slice_sources(pods: list[dict[str, Any]], nodes: list[dict[str, Any]] | None
                  ) -> dict[int, tuple[str, str]]:
    """slice index -> (node pool, capacity source) of the nodes its pods run on; nodes
    None (not readable) gives no sources."""
    by_name = {n["metadata"]["name"]: n for n in nodes or []}
    out: dict[int, tuple[str, str]] = {}
    for pod in pods:
        node = by_name.get((pod.get("spec") or {}).get("nodeName") or "")
        if node is None:
            continue
        meta = pod["metadata"]
        marks = {**(meta.get("labels") or {}), **(meta.get("annotations") or {})}
        index = int(marks.get(JOB_INDEX, 0))
        pool = ((node["metadata"].get("labels") or {}).get(NODE_POOL_LABEL)) or "-"
        out.setdefault(index, (pool, node_source(node)))
    return out


def sources_text(sources: dict[int, tuple[str, str]]) -> str:
    """The distinct sources of a workload's running slices, for `list`; '-' when none."""
    seen = sorted({s for _, s in sources.values()})
    return ",".join(seen) or "-"


def workload_source(js: dict[str, Any], outputs: Any, pods: list[dict[str, Any]],
                    nodes: list[dict[str, Any]] | None) -> str:
    """What `list` shows as a workload's SOURCE: a fixed pool's capacity mode; for a
    slice class, the sources of the nodes its running slices are on ('pending' while
    none runs, 'class' when the account may not read nodes)."""
    entry = pool_entry(js, outputs)
    if entry is None:
        return "-"
    if not entry.compute_class:
        return str(entry.capacity_mode)
    if nodes is None:
        return "class"
    text = sources_text(slice_sources(pods, nodes))
    return "pending" if text == "-" else text


def pool_entry(js: dict[str, Any], outputs: Any) -> Any:
    """The contract entry (pool, or class shape) a JobSet was rendered for, or None."""
    labels = js["metadata"].get("labels") or {}
    name, accel = labels.get("accelstack.dev/slice-pool"), labels.get("accelstack.dev/accelerator")
    for p in outputs.slice_pools:
        if p.name == name and p.accelerator == accel:
            return p
    return None


def describe_lines(info: Any, step: str, sources: dict[int, tuple[str, str]],
                   nodes_readable: bool = True) -> list[str]:
    """The `describe` section of a workload on a slice class."""
    lines = [f"Slice class: {info.name}: tries {' > '.join(info.capacity)}; at most "
             f"{info.max_chips} chips and {info.max_slices} slices at once",
             f"  waiting on: {step}"]
    if not nodes_readable:
        lines.append("  slices: their nodes are not readable (your account may not list "
                     "nodes), so their capacity source is not shown")
    for index, (pool, source) in sorted(sources.items()):
        lines.append(f"  slice {index}: node pool {pool} ({source})")
    return lines


def _latest(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = [e for e in events if e.get("reason") in AUTOSCALER_REASONS]
    found.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    return found[-1] if found else None


def class_step(class_name: str, priorities: tuple[str, ...], admitted: bool, running: bool,
               pod_events: list[dict[str, Any]]) -> str:
    """The step a workload on a slice class waits on, in one line."""
    order = " > ".join(priorities)
    if not admitted:
        return f"Kueue quota: class {class_name} has no free chips for it yet"
    if running:
        return f"running on nodes GKE created for class {class_name}"
    last = _latest(pod_events)
    if last is None:
        return (f"GKE scaling up: the pods are pending and GKE's autoscaler has not acted "
                f"yet (class {class_name} tries {order})")
    message = last.get("message") or ""
    if last.get("reason") == "TriggeredScaleUp":
        return (f"GKE scaling up: a node pool is being created for class {class_name} "
                f"({message}); a slice takes minutes to appear")
    return (f"capacity not found in any priority of class {class_name} ({order}): "
            f"{last.get('reason')}: {message}")
