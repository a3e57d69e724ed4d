"""The work queued to a pools stack, deleted from the host before the stack is destroyed.

A pools stack (``accelstack:onCluster``) has a Kueue ClusterQueue of its own on a cluster
that another stack owns. Kueue keeps a ClusterQueue while Workloads it admitted hold quota
(its finalizer ``kueue.x-k8s.io/resource-in-use``: Kueue v0.19.2,
site/content/en/docs/tasks/troubleshooting/troubleshooting_delete_clusterqueue.md), and the
host outlives every run, so nothing else deletes that work: the destroy would wait on it.
So before a pools stack is destroyed (by `submit run`'s teardown and by `submit reap`),
every JobSet in the stack's namespaces whose queue is the stack's LocalQueue is deleted:
those labelled ``kueue.x-k8s.io/queue-name=QUEUE``, and held ones (submit/api.py HELD_QUEUE:
created without the label, the queue in an annotation). A JobSet of any other queue is
never touched, whoever made it. Which namespaces and queue, and the host's kubeconfig, come
from the pools stack's own outputs, read through the Automation API; a whole stack (no
``onCluster`` in its outputs) or a stack without outputs (its first `up` never finished, so
no work reached it) has nothing to delete here.

Reading and deleting go through submit.api and the Kubernetes seam (submit/cluster/kube.py);
a failure is reported and the destroy still runs: it takes the node pools, the part that
bills, even when the queue has to wait.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from infra.contract.outputs import OUTPUT_NAME, LocalQueueInfo
from submit.api import HELD_QUEUE, QUEUE_LABEL

# The JobSets without the queue label: a set-based requirement "!KEY" selects the objects
# that have no label KEY (https://kubernetes.io/docs/concepts/overview/working-with-objects/
# labels/#set-based-requirement: "!partition" selects "all resources without a label with
# key partition").
UNQUEUED = f"!{QUEUE_LABEL}"


def queue_of(jobset: Mapping[str, Any]) -> str | None:
    """The LocalQueue a JobSet is for: its queue label, or a held JobSet's annotation."""
    meta = jobset.get("metadata") or {}
    labels = meta.get("labels") or {}
    if QUEUE_LABEL in labels:
        return str(labels[QUEUE_LABEL])
    held = (meta.get("annotations") or {}).get(HELD_QUEUE)
    return str(held) if held is not None else None


def queued_to(jobsets: Sequence[Mapping[str, Any]], queue: str) -> list[str]:
    """The names of the JobSets among ``jobsets`` whose queue is ``queue``, sorted."""
    return sorted(str(js["metadata"]["name"]) for js in jobsets if queue_of(js) == queue)


def delete_queued(cluster: Any, queues: Sequence[LocalQueueInfo], host: str,
                  say: Callable[[str], None]) -> bool:
    """Delete every JobSet queued to one of ``queues`` in its namespace; True when none is
    left. A JobSet already gone (NotFound) counts as deleted."""
    from submit.cluster.kube import KubeError, NotFound

    ok = True
    for q in queues:
        try:
            found = (cluster.list_jobsets(q.namespace, f"{QUEUE_LABEL}={q.name}")
                     + cluster.list_jobsets(q.namespace, UNQUEUED))
        except KubeError as e:
            say(f"could not list the work of queue {q.name} in namespace {q.namespace}: {e}")
            ok = False
            continue
        for name in queued_to(found, q.name):
            try:
                cluster.delete_jobset(q.namespace, name)
            except NotFound:
                pass  # gone already: what the delete was for
            except KubeError as e:
                say(f"could not delete workload {name}: {e}")
                ok = False
                continue
            say(f"deleted workload {name} (namespace {q.namespace}, queue {q.name}) from the "
                f"cluster of {host}")
    return ok


def clear(stack: Any, name: str, say: Callable[[str], None]) -> bool:
    """Before ``stack`` (a pulumi.automation Stack) is destroyed: when it is a pools stack,
    delete the work queued to it on its host. True when nothing is left to delete."""
    from pulumi.automation.errors import CommandError

    from submit import api
    from submit.cluster.kube import KubeError
    from submit.cluster.stack_outputs import OutputsError, from_mapping
    from submit.ephemeral.backend import cli_message

    try:
        values = {k: v.value for k, v in stack.outputs().items()}
    except CommandError as e:
        say(f"could not read the outputs of stack {name} (to delete the work queued to it): "
            f"{cli_message(e)}")
        return False
    raw = values.get(OUTPUT_NAME)
    if not isinstance(raw, Mapping) or not raw.get("onCluster"):
        return True
    try:
        outputs = from_mapping(values, f"stack {name}")
        cluster = api.connect(outputs)
    except (OutputsError, api.ClusterError, KubeError) as e:
        say(f"could not reach the cluster of {raw.get('onCluster')} to delete the work "
            f"queued to stack {name}: {getattr(e, 'message', None) or e}")
        return False
    return delete_queued(cluster, outputs.local_queues, str(outputs.on_cluster), say)
