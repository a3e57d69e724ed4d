"""What a user needs after `create`: the workload, its queue, the commands to watch it,
and the Cloud Console pages xpk users are used to (its workload page and the Logs
Explorer query for its pods). Pure: text from the applied JobSet and the stack's cluster.

The URL formats are those xpk prints after `xpk workload create` (xpk's
src/xpk/commands/workload.py): the workload page
``https://console.cloud.google.com/kubernetes/service/LOCATION/CLUSTER/NAMESPACE/NAME/details?project=PROJECT``
and a Logs Explorer query on ``resource.type="k8s_container"`` with the project, location,
cluster, namespace and a pod-name prefix, ``storageScope=project;duration=P1D``. Our
query names every pod of the workload (prefix ``NAME-REPLICATEDJOB-``), not only worker 0.
"""

from __future__ import annotations

import shlex
from typing import Any
from urllib.parse import quote

CONSOLE = "https://console.cloud.google.com"


def workload_url(project: str, location: str, cluster: str, namespace: str, name: str) -> str:
    return (f"{CONSOLE}/kubernetes/service/{location}/{cluster}/{namespace}/{name}/details"
            f"?project={quote(project)}")


def logs_url(project: str, location: str, cluster: str, namespace: str,
             pod_prefix: str) -> str:
    query = "\n".join([
        'resource.type="k8s_container"',
        f'resource.labels.project_id="{project}"',
        f'resource.labels.location="{location}"',
        f'resource.labels.cluster_name="{cluster}"',
        f'resource.labels.namespace_name="{namespace}"',
        f'resource.labels.pod_name:"{pod_prefix}" severity>=DEFAULT',
    ])
    return (f"{CONSOLE}/logs/query;query={quote(query, safe='')};storageScope=project;"
            f"duration=P1D?project={quote(project)}")


def lines(jobset: dict[str, Any], cluster: Any, stack_args: list[str]) -> list[str]:
    """The lines printed after a workload is applied. ``cluster`` is the contract's
    ClusterInfo; ``stack_args`` the options naming the stack (``--stack v5e-spot``)."""
    meta = jobset["metadata"]
    name, ns = meta["name"], meta["namespace"]
    queue = (meta.get("labels") or {}).get("kueue.x-k8s.io/queue-name")
    jobs = (jobset.get("spec") or {}).get("replicatedJobs") or [{}]
    prefix = f"{name}-{jobs[0].get('name', 'slice')}-"
    base = shlex.join(["submit", "workload", *stack_args])
    return [
        f"workload {name} submitted to namespace {ns} (queue {queue})",
        "watch it:",
        f"  {base} describe {name}      # admission, pods, events",
        f"  {base} wait {name}",
        f"  {base} logs {name} -f",
        f"console: {workload_url(cluster.project, cluster.location, cluster.name, ns, name)}",
        f"logs:    {logs_url(cluster.project, cluster.location, cluster.name, ns, prefix)}",
    ]
