"""`submit workload describe`: the diagnostics a live JobSet runs, read back from its pod
template (the sidecars and env that submit/render/diagnostics/pod.py wrote), and where to
read what they produce. Pure: the caller fetched the JobSet.
"""

from __future__ import annotations

from typing import Any

from submit.render.diagnostics.pod import DEBUG_LOG_ENV, DUMP_CONTAINER, TENSORBOARD_ENV, \
    TRACE_CONTAINER, TRACE_DIR, VERTEX_EXPERIMENT_ENV, VERTEX_RESOURCE_ENV
from submit.render.diagnostics.options import STORE_MOUNT
from submit.render.diagnostics import ml_diagnostics


def _pod_spec(jobset: dict[str, Any]) -> dict[str, Any]:
    jobs = (jobset.get("spec") or {}).get("replicatedJobs") or [{}]
    return ((((jobs[0].get("template") or {}).get("spec") or {}).get("template") or {})
            .get("spec") or {})


def trace_query(namespace: str, name: str) -> str:
    """The Logs Explorer query of a workload's stack traces: the sidecar's stdout, which
    GKE sends to Cloud Logging as k8s_container entries (resource labels namespace_name,
    pod_name and container_name; pods are named <jobset>-<replicatedJob>-<job>-<index>-
    <suffix>; `=~` is the Logging query language's regular-expression match)."""
    return (f'resource.type="k8s_container" resource.labels.namespace_name="{namespace}" '
            f'resource.labels.container_name="{TRACE_CONTAINER}" '
            f'resource.labels.pod_name=~"^{name}-[a-z0-9-]+$"')


def diagnostics_of(jobset: dict[str, Any]) -> dict[str, Any]:
    """What the JobSet runs: {"stackTraces": {...} | None, "xlaDump": {...} | None,
    "debugLogs": bool, "tensorboard": "gs://..." | None}, for -o json and for the text."""
    meta = jobset.get("metadata") or {}
    name, ns = str(meta.get("name", "")), str(meta.get("namespace", ""))
    pod = _pod_spec(jobset)
    sidecars = {c.get("name"): c for c in pod.get("initContainers") or []}
    main = (pod.get("containers") or [{}])[0]
    env = {e.get("name"): e.get("value") for e in main.get("env") or []}
    traces = None
    if TRACE_CONTAINER in sidecars:
        traces = {"container": TRACE_CONTAINER, "directory": TRACE_DIR,
                  "loggingQuery": trace_query(ns, name)}
    dump = None
    if DUMP_CONTAINER in sidecars:
        upload = sidecars[DUMP_CONTAINER]
        upload_env = {e.get("name"): e.get("value") for e in upload.get("env") or []}
        volumes = {v.get("name"): v for v in pod.get("volumes") or []}
        store = next((m.get("name") for m in upload.get("volumeMounts") or []
                      if m.get("mountPath") == STORE_MOUNT), None)
        vol = volumes.get(store) or {}
        if "csi" in vol:
            where = f"gs://{(vol['csi'].get('volumeAttributes') or {}).get('bucketName', '')}"
        else:
            where = f"claim {(vol.get('persistentVolumeClaim') or {}).get('claimName', '')}"
        dump = {"location": where, "folder": upload_env.get("DUMP_FOLDER"),
                "perHost": "attempt-<restart>/slice-<slice>-worker-<worker>"}
    debug = all(env.get(k) is not None for k, _ in DEBUG_LOG_ENV)
    out = {"stackTraces": traces, "xlaDump": dump, "debugLogs": debug,
           "tensorboard": env.get(TENSORBOARD_ENV[0])}
    if ml_diagnostics.labeled(jobset):
        out["mlDiagnostics"] = {"label": f"{ml_diagnostics.LABEL}={ml_diagnostics.VALUE}",
                                "where": ml_diagnostics.WHERE}
    if env.get(VERTEX_RESOURCE_ENV):
        out["vertexTensorboard"] = {"instance": env[VERTEX_RESOURCE_ENV],
                                    "experiment": env.get(VERTEX_EXPERIMENT_ENV)}
    return out


def describe_lines(jobset: dict[str, Any]) -> list[str]:
    """The text `describe` prints (nothing when the workload runs no diagnostics)."""
    found = diagnostics_of(jobset)
    lines: list[str] = []
    traces, dump = found["stackTraces"], found["xlaDump"]
    if traces:
        ns = (jobset.get("metadata") or {}).get("namespace", "")
        lines += [
            f"  stack traces: the {traces['container']} sidecar of each pod prints what "
            f"cloud-tpu-diagnostics writes to {traces['directory']} (the job runs its code "
            "under diagnostic.diagnose with stack_trace_to_cloud=True); read them with",
            f"    kubectl logs -n {ns} POD -c {traces['container']}",
            "    or in Logs Explorer: " + traces["loggingQuery"]]
    if dump:
        where = dump["location"].rstrip("/")
        lines.append(f"  XLA dumps: {where}/{dump['folder']}/{dump['perHost']}/ "
                     "(uploaded every minute and when the pod ends)")
    if found["tensorboard"]:
        lines.append(f"  TensorBoard logs: {found['tensorboard']}/")
    vertex = found.get("vertexTensorboard")
    if vertex:
        lines.append(f"  Vertex AI TensorBoard: {vertex['instance']} (experiment "
                     f"{vertex['experiment']})")
    ml = found.get("mlDiagnostics")
    if ml:
        lines.append(f"  ML Diagnostics: labeled {ml['label']}; {ml['where']}")
    if found["debugLogs"]:
        lines.append("  debug logs: " + " ".join(f"{k}={v}" for k, v in DEBUG_LOG_ENV))
    return ["Diagnostics:"] + lines if lines else []
