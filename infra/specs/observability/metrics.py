"""The metrics the dashboard and the alert policies name, and their PromQL spelling.

Every name here is in Google's lists (tests/test_observability_metrics.py checks each
against ../shared/reference/upstream/gke-metric-types/metrics.yaml, and Kueue's against
Kueue v0.19.2's pkg/metrics/metrics.go):
- GKE system metrics, ``kubernetes.io/...`` (Cloud Monitoring "Kubernetes metrics",
  https://cloud.google.com/monitoring/api/metrics_kubernetes);
- kube-state metrics of the JOBSET and POD packages and DCGM's, written by Managed Service
  for Prometheus as ``prometheus.googleapis.com/NAME/KIND``
  (https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics,
  https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics);
- Kueue's own, scraped by the ClusterPodMonitoring of kueue_scrape.py.

PromQL (Managed Service for Prometheus, "PromQL for Cloud Monitoring",
https://cloud.google.com/stackdriver/docs/managed-prometheus/promql): a Cloud Monitoring
metric is named by ``__name__`` inside the braces, ``{__name__="kubernetes.io/container/
accelerator/duty_cycle", ...}``, and a distribution gets ``_bucket``/``_sum``/``_count``
appended to it; a Prometheus metric ``prometheus.googleapis.com/NAME/KIND`` is queried as
``NAME``. Monitored-resource labels (``cluster_name``, ``namespace_name``, ``pod_name``,
``node_name``, ``node_pool_name``) are plain labels there.
"""

from __future__ import annotations

# GKE system metrics (SYSTEM_COMPONENTS).
TPU_DUTY_CYCLE = "kubernetes.io/container/accelerator/duty_cycle"
TENSORCORE_UTILIZATION = "kubernetes.io/container/accelerator/tensorcore_utilization"
HBM_USED = "kubernetes.io/container/accelerator/memory_used"
HBM_TOTAL = "kubernetes.io/container/accelerator/memory_total"
NODE_DUTY_CYCLE = "kubernetes.io/node/accelerator/duty_cycle"
NODE_HBM_USED = "kubernetes.io/node/accelerator/memory_used"
NODE_TENSORCORE = "kubernetes.io/node/accelerator/tensorcore_utilization"
COLLECTIVE_LATENCY = "kubernetes.io/container/multislice/network/collective_end_to_end_latencies"
DCN_LATENCY = "kubernetes.io/container/multislice/network/dcn_transfer_latencies"
NODE_POOL_STATUS = "kubernetes.io/node_pool/status"
NODE_POOL_INTERRUPTIONS = "kubernetes.io/node_pool/interruption_count"
CONTAINER_RESTARTS = "kubernetes.io/container/restart_count"
# Distribution-valued (queried through their _bucket series).
DISTRIBUTIONS = frozenset({COLLECTIVE_LATENCY, DCN_LATENCY})

# kube-state metrics (Prometheus names).
JOBSET_RESTARTS = "kube_jobset_restarts"  # JOBSET package
JOBSET_READY = "kube_jobset_ready_replicas"
POD_PHASE = "kube_pod_status_phase"  # POD package
# DCGM (the DCGM package).
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
GPU_FB_USED = "DCGM_FI_DEV_FB_USED"
GPU_TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
# Kueue (v0.19.2 pkg/metrics/metrics.go: Subsystem "kueue" + Name).
KUEUE_PENDING = "kueue_pending_workloads"  # gauge: cluster_queue, status
KUEUE_ADMITTED_ACTIVE = "kueue_admitted_active_workloads"  # gauge: cluster_queue
KUEUE_ADMISSION_WAIT = "kueue_admission_wait_time_seconds"  # histogram: cluster_queue

# The Cloud Monitoring type of each Prometheus name used here, for the reference check.
PROMETHEUS_TYPES = {
    JOBSET_RESTARTS: "prometheus.googleapis.com/kube_jobset_restarts/gauge",
    JOBSET_READY: "prometheus.googleapis.com/kube_jobset_ready_replicas/gauge",
    POD_PHASE: "prometheus.googleapis.com/kube_pod_status_phase/gauge",
    GPU_UTIL: "prometheus.googleapis.com/DCGM_FI_DEV_GPU_UTIL/gauge",
    GPU_FB_USED: "prometheus.googleapis.com/DCGM_FI_DEV_FB_USED/gauge",
    GPU_TENSOR_ACTIVE: "prometheus.googleapis.com/DCGM_FI_PROF_PIPE_TENSOR_ACTIVE/gauge",
}
KUEUE_METRICS = (KUEUE_PENDING, KUEUE_ADMITTED_ACTIVE, KUEUE_ADMISSION_WAIT)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def selector(metric: str, **labels: str) -> str:
    """A PromQL selector of ``metric`` with equality matchers; a label whose value starts
    with ``~`` is matched as a regular expression. Cloud Monitoring types (with a ``/``) go
    inside the braces as ``__name__``; Prometheus names stay in front."""
    matchers = []
    for key, value in labels.items():
        op, text = ("=~", value[1:]) if value.startswith("~") else ("=", value)
        matchers.append(f"{key}{op}{_quote(text)}")
    if "/" in metric:
        name = metric + "_bucket" if metric in DISTRIBUTIONS else metric
        return "{" + ",".join([f"__name__={_quote(name)}", *matchers]) + "}"
    return metric + ("{" + ",".join(matchers) + "}" if matchers else "")


def regex_of(values: list[str]) -> str:
    """An anchored alternation of literal values (node pool names are DNS labels)."""
    return "|".join(sorted(values))
