"""Applying rendered objects to a cluster, for submit.api (which re-exports every name
here): the held-workload marks, the one error the cluster's answers become, and ``submit``,
which applies a workload without ever leaving it half-applied. Kept apart from api.py so
that each reads in one sitting; importing it loads no Kubernetes client (the first call
that talks to a cluster does).
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Sequence

from infra.record import record

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# A held workload (--after, or an experiment's trial beyond its --max-running): the JobSet
# is created suspended and WITHOUT the queue-name label, its queue kept in HELD_QUEUE.
# Kueue manages only jobs that carry the label (manageJobsWithoutQueueName is false, the
# default, in the Configuration infra/specs/addons.py renders; "jobs without the
# kueue.x-k8s.io/queue-name label are ignored", Red Hat build of Kueue docs, "Configuring
# label policies for jobs"), so Kueue neither admits nor unsuspends it; `release` adds the
# label while the JobSet is still suspended (Kueue's jobframework.ValidateJobOnUpdate
# checks the queue name's immutability only for a job that is not suspended; review of
# kubernetes-sigs/kueue PR #13293) and Kueue queues it as any other workload. Not tried on
# a live cluster here.
AFTER = "accelstack.dev/after"
HELD_QUEUE = "accelstack.dev/held-queue"
OWNED_KINDS = ("ConfigMap", "ComputeDomain")  # applied before the JobSet, then owned by it
DONE_STATES = ("Completed", "Failed")

class ClusterError(Exception):
    """What the cluster answered (or did not); the message says what to do."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)



@record
class Submitted:
    name: str
    namespace: str
    queue: str | None
    held: bool = False  # created suspended, waiting for `release`



def _call(fn: Callable[[], Any]) -> Any:
    from submit.cluster.kube import KubeError

    try:
        return fn()
    except KubeError as e:
        raise ClusterError(str(e)) from None


def _env_values(node: Any, under_env: bool = False) -> list[str]:
    """The env values in rendered objects (user data that may be secret)."""
    if isinstance(node, dict):
        if under_env and isinstance(node.get("value"), str) and len(node["value"]) >= 4:
            return [node["value"]]
        return [v for k, child in node.items() for v in _env_values(child, k == "env")]
    if isinstance(node, list):
        return [v for child in node for v in _env_values(child, under_env)]
    return []


def _jobset(objs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objs if o["kind"] == "JobSet")


def hold(objs: list[dict[str, Any]], after: str | None = None) -> list[dict[str, Any]]:
    """The objects with the JobSet held: suspended, out of Kueue until ``release``.

    Kueue v0.19.2 has no workload dependencies (kubernetes-sigs/kueue issue #11024 and its
    KEP, PR #11064, are still open), so accelstack holds the JobSet itself (see AFTER)."""
    out: list[dict[str, Any]] = json.loads(json.dumps(objs))
    js = _jobset(out)
    labels = js["metadata"].setdefault("labels", {})
    annotations = js["metadata"].setdefault("annotations", {})
    annotations[HELD_QUEUE] = labels.pop(QUEUE_LABEL)
    if after:
        annotations[AFTER] = after
    js["spec"]["suspend"] = True
    return out


def submit(cluster: Any, objs: list[dict[str, Any]], replace: bool = False,
           waiting: Callable[[float], None] = time.sleep) -> Submitted:
    """Apply rendered objects; refuse to overwrite a live workload unless ``replace``
    (``waiting`` sleeps while the old one is deleted: a CLI shows progress there).

    Nothing is half-applied: a JobSet the cluster refuses leaves no ConfigMap or
    ComputeDomain behind. No message quotes an env value."""
    values = sorted(_env_values(objs), key=len, reverse=True)
    try:
        return _submit(cluster, objs, replace, waiting)
    except ClusterError as e:
        message = e.message
        for value in values:
            message = message.replace(value, "[redacted]")
        if message == e.message:
            raise
        raise ClusterError(message) from None


def _submit(cluster: Any, objs: list[dict[str, Any]], replace: bool,
            waiting: Callable[[float], None]) -> Submitted:
    js = _jobset(objs)
    ns, name = js["metadata"]["namespace"], js["metadata"]["name"]
    existing = _call(lambda: cluster.get_jobset(ns, name))
    if existing is not None:
        if not replace:
            raise ClusterError(
                f"workload {name} already exists in namespace {ns}; delete it with `submit "
                f"workload delete {name}`, or pass --replace to delete and recreate it")
        _call(lambda: cluster.delete_jobset(ns, name))
        for _ in range(120):  # foreground deletion: wait until it is gone
            if _call(lambda: cluster.get_jobset(ns, name)) is None:
                break
            waiting(1)
        for cm in (o for o in objs if o["kind"] == "ConfigMap"):
            # Its owner is gone; do not apply onto an object being garbage-collected.
            cm_name = cm["metadata"]["name"]
            _call(lambda: cluster.delete_config_map(ns, cm_name))
        for cd in (o for o in objs if o["kind"] == "ComputeDomain"):
            # A ComputeDomain's spec is immutable; the new workload gets a new one.
            cd_name = cd["metadata"]["name"]
            _call(lambda: cluster.delete_compute_domain(ns, cd_name))
    applied_owned: list[tuple[str, str]] = []
    created: str | None = None  # the JobSet, once the cluster took it
    for obj in objs:
        try:
            applied = _call(lambda obj=obj: cluster.apply(obj))  # type: ignore[misc]
            if obj["kind"] in OWNED_KINDS:
                applied_owned.append((obj["kind"], obj["metadata"]["name"]))
            if obj["kind"] == "JobSet":
                created = name
                uid = (applied.get("metadata") or {}).get("uid")
                for cm in (o for o in objs if o["kind"] in OWNED_KINDS):
                    # The ConfigMap (and an A4X ComputeDomain) go when the JobSet goes.
                    owned = json.loads(json.dumps(cm))
                    owned["metadata"]["ownerReferences"] = [{
                        "apiVersion": obj["apiVersion"], "kind": "JobSet", "name": name,
                        "uid": uid, "blockOwnerDeletion": False}]
                    _call(lambda owned=owned: cluster.apply(owned))  # type: ignore[misc]
        except ClusterError:
            # Nothing half-applied: a refused JobSet, or one whose ConfigMap could not be
            # given its owner, takes back what this call made.
            _take_back(cluster, ns, applied_owned, created)
            raise
    labels = js["metadata"].get("labels") or {}
    annotations = js["metadata"].get("annotations") or {}
    held = HELD_QUEUE in annotations
    return Submitted(name, ns, annotations[HELD_QUEUE] if held else labels.get(QUEUE_LABEL),
                     held)


def _take_back(cluster: Any, ns: str, owned: list[tuple[str, str]], jobset: str | None
               ) -> None:
    """Delete what a failed submit applied (the JobSet, when it was created), quietly: the
    error that stopped the submit is the one to report."""
    deletes: list[Callable[[], Any]] = []
    if jobset is not None:
        deletes.append(lambda: cluster.delete_jobset(ns, jobset))
    for kind, name in owned:
        delete = cluster.delete_config_map if kind == "ConfigMap" else cluster.delete_compute_domain
        deletes.append(lambda d=delete, n=name: d(ns, n))  # type: ignore[misc]
    for fn in deletes:
        try:
            _call(fn)
        except ClusterError:
            pass
