"""Cloud Console links of a workload, for `submit workload describe` and `submit experiment
describe` (text and -o json): its logs (a Logs Explorer query for its pods), its GKE page
and the folders of the Cloud Storage stores it mounts or dumps to. Pure: built from the
stack's cluster (outputs contract) and the live JobSet the caller fetched.

URL shapes (not an API: the console's own paths, as Google's tools print them):
- Logs Explorer: https://console.cloud.google.com/logs/query;query=<percent-encoded
  query>?project=<project> (the deep link xpk prints after `workload create`, and Google's
  Cloud Logging data source for Grafana, GoogleCloudPlatform/cloud-logging-data-source-
  plugin src/QueryEditor.tsx, builds).
- GKE: https://console.cloud.google.com/kubernetes/service/<location>/<cluster>/<namespace>/
  <jobset>/details?project=<project>, the page of the headless Service JobSet creates for
  its pods' DNS names (the link xpk prints for a workload).
- Cloud Storage: https://console.cloud.google.com/storage/browser/<bucket>/<folder>
  ?project=<project>.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from infra.contract.parts import ClusterInfo
from submit.render import mounts
from submit.render.diagnostics.describe import diagnostics_of

CONSOLE = "https://console.cloud.google.com"


def logs_query(cluster: ClusterInfo, namespace: str, name: str) -> str:
    """Every container log of the workload's pods (named <jobset>-<replicatedJob>-<job>-
    <index>-<suffix>) on the stack's cluster."""
    return "\n".join([
        'resource.type="k8s_container"',
        f'resource.labels.project_id="{cluster.project}"',
        f'resource.labels.location="{cluster.location}"',
        f'resource.labels.cluster_name="{cluster.name}"',
        f'resource.labels.namespace_name="{namespace}"',
        f'resource.labels.pod_name=~"^{name}-[a-z0-9-]+$"'])


def logs_link(cluster: ClusterInfo, query: str) -> str:
    return f"{CONSOLE}/logs/query;query={quote(query, safe='')}?project={cluster.project}"


def workload_link(cluster: ClusterInfo, namespace: str, name: str) -> str:
    return (f"{CONSOLE}/kubernetes/service/{cluster.location}/{cluster.name}/{namespace}/"
            f"{name}/details?project={cluster.project}")


def bucket_link(cluster: ClusterInfo, bucket: str, folder: str = "") -> str:
    path = f"{bucket}/{folder.strip('/')}".rstrip("/")
    return f"{CONSOLE}/storage/browser/{quote(path)}?project={cluster.project}"


def links(cluster: ClusterInfo, jobset: dict[str, Any]) -> dict[str, Any]:
    """{"logs", "workload", "stores": [{"store", "path", "link"}]} of a live JobSet; a store
    that is not a Cloud Storage bucket (a claim) has no console folder and is left out."""
    meta = jobset.get("metadata") or {}
    name, ns = str(meta.get("name", "")), str(meta.get("namespace", ""))
    jobs = (jobset.get("spec") or {}).get("replicatedJobs") or [{}]
    pod = ((((jobs[0].get("template") or {}).get("spec") or {}).get("template") or {})
           .get("spec") or {})
    stores = []
    for m in mounts.mounts_of(pod):
        if m["source"].startswith("gs://"):
            bucket = m["source"][len("gs://"):]
            stores.append({"store": m["store"], "path": m["path"],
                           "link": bucket_link(cluster, bucket)})
    found = diagnostics_of(jobset)
    board = found["tensorboard"]
    if board and board.startswith("gs://"):
        bucket, _, folder = board[len("gs://"):].partition("/")
        stores.append({"store": "tensorboard", "path": folder,
                       "link": bucket_link(cluster, bucket, folder)})
    dump = found["xlaDump"]
    if dump and dump["location"].startswith("gs://"):
        stores.append({"store": "xla-dump", "path": dump["folder"],
                       "link": bucket_link(cluster, dump["location"][len("gs://"):],
                                           dump["folder"])})
    out: dict[str, Any] = {"logs": logs_link(cluster, logs_query(cluster, ns, name)),
                           "workload": workload_link(cluster, ns, name), "stores": stores}
    if found.get("vertexTensorboard"):
        out["vertexTensorboard"] = found["vertexTensorboard"]
    return out


def describe_lines(found: dict[str, Any]) -> list[str]:
    """The text of ``links(...)``."""
    lines = ["Links:", f"  logs:      {found['logs']}", f"  workload:  {found['workload']}"]
    lines += [f"  {s['store']} ({s['path']}): {s['link']}" for s in found["stores"]]
    if found.get("dashboard"):  # the stack's dashboard (submit/render/dashboard_link.py)
        lines.append(f"  dashboard: {found['dashboard']}")
    vertex = found.get("vertexTensorboard")
    if vertex:
        lines.append(f"  Vertex AI TensorBoard: {vertex['instance']} (experiment "
                     f"{vertex['experiment']})")
    return lines
