"""The stack's alert policies (Monitoring API v3 ``AlertPolicy`` with PromQL conditions,
``conditionPrometheusQueryLanguage``) and the notification channels they send to.

Four policies, each one condition that holds for its threshold's duration before it fires
(PrometheusQueryLanguageCondition.duration; the query's result series are the incidents):
- idle: a workload's accelerators idle while its pods run. TPU: the container duty cycle
  per pod below ``idleDutyCycle`` (the metric exists only while the container runs, so a
  pod that is gone does not count as idle). GPU: DCGM's GPU utilisation per node below it.
- pending: a ClusterQueue with workloads pending the whole window (Kueue's
  ``kueue_pending_workloads`` counts per queue, not per workload: a queue that never drains
  for ``pendingMinutes`` has a workload waiting at least that long, or one behind another).
- restarts: a JobSet restarted ``restarts`` times within ``restartWindowMinutes``
  (``kube_jobset_restarts``, the JOBSET package; from the versions in
  infra/config/observability.py JOBSET_RESTARTS_FLOORS).
- repair: a node pool in Reconciling or Error status (``kubernetes.io/node_pool/status``,
  reported for multi-host TPU pools; GKE auto-repair recreates nodes while the pool
  reconciles) for ``repairMinutes``.

Notification channels (``gcp.monitoring.NotificationChannel``): ``email`` (label
``email_address``), ``pubsub`` (label ``topic``) and ``webhook_tokenauth`` (label ``url``),
the types and labels of Cloud Monitoring's channel descriptors as `gcloud monitoring
channels create --type=... --channel-labels=...` takes them (the descriptors list,
projects.notificationChannelDescriptors.list, was not read here: not verified). Pub/Sub also
needs Cloud Monitoring's service agent to publish to the topic (roles/pubsub.publisher
on it, same page); the stack does not grant that on a topic it does not own
(docs/observability.md).
Pure; no pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.observability import NotificationChannel, has_jobset_restarts
from infra.config.stack import StackConfig
from infra.record import record
from infra.specs.observability import metrics as m
from infra.specs.observability.packages import nodes_version

CHANNEL_TYPES = {"email": ("email", "email_address"), "pubsub": ("pubsub", "topic"),
                 "webhook": ("webhook_tokenauth", "url")}


@record
class Policy:
    key: str  # idle, pending, restarts, repair (the resource name's suffix)
    display_name: str
    query: str
    duration_s: int
    documentation: str


def _idle(cfg: StackConfig) -> list[Policy]:
    a = cfg.observability.alerts
    out = []
    if any(p.accelerator.kind == "tpu" for p in cfg.slices) or any(
            s.kind == "tpu" for c in cfg.slice_classes for s in c.shapes):
        sel = m.selector(m.TPU_DUTY_CYCLE, cluster_name=cfg.cluster_name)
        out.append(Policy(
            "idle-tpu", f"{cfg.cluster_name}: TPUs idle while their pods run",
            f"avg by (namespace_name, pod_name) ({sel}) < {a.idle_duty_cycle:g}",
            a.idle_minutes * 60,
            f"The TPU duty cycle of a pod stayed below {a.idle_duty_cycle:g}% for "
            f"{a.idle_minutes} minutes while the pod ran: the run may have stalled (a hang, "
            "a dead data loader, a collective waiting on a lost slice). Check the "
            "workload's logs and `submit workload describe`."))
    if any(p.accelerator.kind == "gpu" for p in cfg.slices):
        sel = m.selector(m.GPU_UTIL, cluster=cfg.cluster_name)
        out.append(Policy(
            "idle-gpu", f"{cfg.cluster_name}: GPUs idle",
            f"avg by (instance) ({sel}) < {a.idle_duty_cycle:g}", a.idle_minutes * 60,
            f"DCGM's GPU utilisation of a node stayed below {a.idle_duty_cycle:g}% for "
            f"{a.idle_minutes} minutes (per node: DCGM does not name the workload's pod)."))
    return out


def policies(cfg: StackConfig) -> list[Policy]:
    """The stack's policies; none when its alerts are off."""
    a = cfg.observability.alerts
    if not (cfg.observability.enabled and a.enabled):
        return []
    out = _idle(cfg)
    pending = m.selector(m.KUEUE_PENDING, cluster=cfg.cluster_name)
    out.append(Policy(
        "pending", f"{cfg.cluster_name}: workloads pending for {a.pending_minutes} minutes",
        f"sum by (cluster_queue) ({pending}) > 0", a.pending_minutes * 60,
        f"A ClusterQueue had workloads pending for {a.pending_minutes} minutes without a "
        "break. `submit workload queue` shows why each waits (quota, flavors, admission "
        "checks)."))
    if has_jobset_restarts(nodes_version(cfg)):
        restarts = m.selector(m.JOBSET_RESTARTS, cluster=cfg.cluster_name)
        window = a.restart_window_minutes
        out.append(Policy(
            "restarts", f"{cfg.cluster_name}: a JobSet restarting repeatedly",
            f"delta({restarts}[{window}m]) >= {a.restarts}", 0,
            f"A JobSet restarted {a.restarts} or more times within {window} minutes: a "
            "crash loop or a failing host. Read the failed pods' logs."))
    status = m.selector(m.NODE_POOL_STATUS, cluster_name=cfg.cluster_name,
                        status="~Reconciling|Error")
    out.append(Policy(
        "repair", f"{cfg.cluster_name}: a node pool in repair",
        f"max by (node_pool_name, status) ({status}) > 0", a.repair_minutes * 60,
        f"A node pool stayed Reconciling or in Error for {a.repair_minutes} minutes "
        "(node auto-repair, an upgrade, or capacity lost): its slices' jobs wait."))
    return out


def policy_args(cfg: StackConfig, policy: Policy, channels: list[Any]) -> dict[str, Any]:
    """``gcp.monitoring.AlertPolicy`` arguments (pulumi-gcp 10.2.0)."""
    return {
        "project": cfg.project,
        "display_name": policy.display_name,
        "combiner": "OR",
        "conditions": [{
            "display_name": policy.display_name,
            "condition_prometheus_query_language": {
                "query": policy.query,
                "duration": f"{policy.duration_s}s",
                "evaluation_interval": "60s",  # a positive multiple of 30 s
                # The metrics exist only once scraped or reported (Kueue's after the first
                # scrape, the TPU ones once a TPU pod runs, kube_jobset_* once a JobSet
                # exists); Cloud Monitoring otherwise refuses a condition on a metric that
                # does not exist yet (v3 PrometheusQueryLanguageCondition.
                # disableMetricValidation: "allows alerting policies to be defined on
                # metrics that do not yet exist").
                "disable_metric_validation": True,
            },
        }],
        "documentation": {"content": policy.documentation, "mime_type": "text/markdown"},
        "alert_strategy": {"auto_close": "1800s"},
        "notification_channels": channels,
        "severity": "WARNING" if policy.key in ("pending", "repair") else "ERROR",
        "user_labels": {"accelstack-stack": cfg.cluster_name[:63]},
    }


def channel_args(cfg: StackConfig, index: int, channel: NotificationChannel
                 ) -> dict[str, Any]:
    """``gcp.monitoring.NotificationChannel`` arguments. A webhook's URL is a plain label
    (``sensitive_labels`` holds only auth_token, password and service_key), so it must not
    carry a secret (docs/observability.md)."""
    kind, label = CHANNEL_TYPES[channel.kind]
    return {
        "project": cfg.project,
        "display_name": f"{cfg.cluster_name} {channel.kind} {index}",
        "type": kind,
        "labels": {label: channel.target},
        "user_labels": {"accelstack-stack": cfg.cluster_name[:63]},
    }
