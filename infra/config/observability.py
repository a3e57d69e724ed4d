"""Config of what the stack observes (``accelstack:observability``): GKE's managed metric
packages, the stack's Cloud Monitoring dashboard, its alert policies and where they notify.

Everything is on by default, with thresholds that suit training runs: a stack without the
key gets the metric packages its pools need (infra/specs/observability/packages.py), one
dashboard and the four alert policies, notifying no channel (the incidents still open in
Cloud Monitoring). ``observability: false`` turns all of it off. Pure; no pulumi.

    observability:
      metricPackages: [APISERVER]      # added to the ones the stack needs
      dashboard: true
      alerts:
        idleMinutes: 30                # accelerators idle while the pods run
        idleDutyCycle: 1               # percent; below it counts as idle
        pendingMinutes: 60             # a ClusterQueue with workloads waiting that long
        restarts: 3                    # JobSet restarts within restartWindowMinutes
        restartWindowMinutes: 60
        repairMinutes: 15              # a node pool in repair that long
      notificationChannels:
        - email: oncall@example.com
        - pubsub: projects/my-project/topics/training-alerts
        - webhook: https://hooks.example.com/accelstack
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.catalog import gke_versions
from infra.catalog.gke_versions import GkeVersion
from infra.config.errors import one_of, show
from infra.config.reader import Reader
from infra.record import record

KEYS = ("metricPackages", "dashboard", "alerts", "notificationChannels")
ALERT_KEYS = ("enabled", "idleMinutes", "idleDutyCycle", "pendingMinutes", "restarts",
              "restartWindowMinutes", "repairMinutes")
CHANNEL_KINDS = ("email", "pubsub", "webhook")

# monitoringConfig.enableComponents: the values pulumi-gcp 10.2.0 documents
# (pulumi_gcp/container/_inputs.py ClusterMonitoringConfigArgs.enable_components), and the
# GKE version each needs. KUBELET/CADVISOR and JOBSET floors are the provider's docstring;
# the kube-state packages' floor is GKE's "Collect and view kube state metrics" page
# (docs.cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics, "1.27.2-gke.1200");
# DCGM: GKE's DCGM page says the package is on by default from 1.32.1-gke.1357000 but its
# floor for turning it on was not read (not verified), so no floor is enforced for it.
# Reference copy: ../shared/reference/upstream/gke-metric-types/metrics.yaml (M4, M5, M6).
METRIC_PACKAGES = ("SYSTEM_COMPONENTS", "APISERVER", "SCHEDULER", "CONTROLLER_MANAGER",
                   "STORAGE", "HPA", "POD", "DAEMONSET", "DEPLOYMENT", "STATEFULSET",
                   "KUBELET", "CADVISOR", "DCGM", "JOBSET")
PACKAGE_FLOORS: Mapping[str, str] = {
    "KUBELET": "1.29.3-gke.1093000", "CADVISOR": "1.29.3-gke.1093000",
    "JOBSET": "1.32.1-gke.1357001",
    "STORAGE": "1.27.2-gke.1200", "POD": "1.27.2-gke.1200", "DAEMONSET": "1.27.2-gke.1200",
    "DEPLOYMENT": "1.27.2-gke.1200", "STATEFULSET": "1.27.2-gke.1200",
    "HPA": "1.27.2-gke.1200",
}
# kube_jobset_restarts is exported from these versions on (kube-state-metrics page above);
# the restart alert needs it.
JOBSET_RESTARTS_FLOORS = ("1.32.4-gke.1767000", "1.33.0-gke.1868000")

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+\Z")
_TOPIC = re.compile(r"^projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/topics/[A-Za-z][-A-Za-z0-9_.~+%]{2,254}\Z")


@record
class Alerts:
    """Thresholds of the alert policies (infra/specs/observability/alerts.py)."""

    enabled: bool = True
    idle_minutes: int = 30
    idle_duty_cycle: float = 1.0
    pending_minutes: int = 60
    restarts: int = 3
    restart_window_minutes: int = 60
    repair_minutes: int = 15


@record
class NotificationChannel:
    kind: str  # email, pubsub or webhook
    target: str  # the address, the topic's resource name or the URL


@record
class Observability:
    enabled: bool = True
    extra_packages: tuple[str, ...] = ()
    dashboard: bool = True
    alerts: Alerts = Alerts()
    channels: tuple[NotificationChannel, ...] = ()


def below_floor(version: str, package: str) -> str | None:
    """The floor ``version`` is below for ``package``, or None."""
    floor = PACKAGE_FLOORS.get(package)
    return floor if floor is not None and gke_versions.below(version, floor) else None


def has_jobset_restarts(version: str) -> bool:
    """Whether kube_jobset_restarts exists at ``version`` (the 1.32 line from one patch,
    1.33 from another, every later minor)."""
    v = gke_versions.version_tuple(version)
    if v[:2] == (1, 32):
        return not gke_versions.below(version, JOBSET_RESTARTS_FLOORS[0])
    return not gke_versions.below(version, JOBSET_RESTARTS_FLOORS[1])


def parse_observability(r: Reader, raw: Any, version: GkeVersion | None) -> Observability:
    if raw is None or raw is True:
        return Observability()
    if raw is False:
        return Observability(enabled=False, dashboard=False, alerts=Alerts(enabled=False))
    top = r.obj(raw, "observability", KEYS)
    if not isinstance(raw, Mapping):
        return Observability()
    packages = _packages(r, r.get(top, "metricPackages", "observability", list, default=[]),
                         version)
    dashboard = bool(r.get(top, "dashboard", "observability", bool, default=True))
    alerts = _alerts(r, top.get("alerts"))
    channels = _channels(r, r.get(top, "notificationChannels", "observability", list,
                                  default=[]))
    return Observability(extra_packages=packages, dashboard=dashboard, alerts=alerts,
                         channels=channels)


def _packages(r: Reader, raw: list[Any], version: GkeVersion | None) -> tuple[str, ...]:
    out: list[str] = []
    for i, item in enumerate(raw):
        path = f"observability.metricPackages[{i}]"
        if not isinstance(item, str) or item not in METRIC_PACKAGES:
            r.fail(path, f"{show(item)} is not a GKE metric package; allowed: "
                   f"{one_of(METRIC_PACKAGES)}")
            continue
        floor = below_floor(version.text, item) if version is not None else None
        if floor is not None and version is not None:
            r.fail(path, f"{item} needs GKE {floor} or later; {version.said()}")
            continue
        if item not in out:
            out.append(item)
    return tuple(out)


def _minutes(r: Reader, top: Mapping[str, Any], key: str, default: int,
             least: int = 1, most: int = 1440) -> int:
    value = r.get(top, key, "observability.alerts", int, default=default)
    if not r.check(least <= value <= most, f"observability.alerts.{key}",
                   f"{show(value)} is not between {least} and {most}"):
        return default
    return int(value)


def _alerts(r: Reader, raw: Any) -> Alerts:
    if raw is False:
        return Alerts(enabled=False)
    top = r.obj(raw, "observability.alerts", ALERT_KEYS)
    enabled = bool(r.get(top, "enabled", "observability.alerts", bool, default=True))
    duty = r.get(top, "idleDutyCycle", "observability.alerts", (int, float), default=1.0)
    if not r.check(0 < duty < 100, "observability.alerts.idleDutyCycle",
                   f"{show(duty)} is not a percentage above 0 and below 100"):
        duty = 1.0
    # Cloud Monitoring's PromQL conditions hold for at most a day (AlertPolicy v3
    # PrometheusQueryLanguageCondition.duration); a window longer than that says nothing.
    return Alerts(
        enabled=enabled,
        idle_minutes=_minutes(r, top, "idleMinutes", 30, least=5),
        idle_duty_cycle=float(duty),
        pending_minutes=_minutes(r, top, "pendingMinutes", 60, least=5),
        restarts=_minutes(r, top, "restarts", 3, least=1, most=1000),
        restart_window_minutes=_minutes(r, top, "restartWindowMinutes", 60, least=5),
        repair_minutes=_minutes(r, top, "repairMinutes", 15, least=1),
    )


def _channels(r: Reader, raw: list[Any]) -> tuple[NotificationChannel, ...]:
    out: list[NotificationChannel] = []
    for i, item in enumerate(raw):
        path = f"observability.notificationChannels[{i}]"
        if not isinstance(item, Mapping) or len(item) != 1:
            r.fail(path, f"{show(item)} is not one of {{email: ADDRESS}}, "
                   "{pubsub: projects/P/topics/T}, {webhook: https://URL}")
            continue
        kind, target = next(iter(item.items()))
        if kind not in CHANNEL_KINDS:
            r.fail(f"{path}.{kind}", f"unknown channel kind; allowed: {one_of(CHANNEL_KINDS)}")
            continue
        if not isinstance(target, str):
            r.fail(f"{path}.{kind}", f"{show(target)} is not a string")
            continue
        ok = {"email": bool(_EMAIL.match(target)),
              "pubsub": bool(_TOPIC.match(target)),
              "webhook": target.startswith("https://") and len(target) > 8}[kind]
        what = {"email": "an email address",
                "pubsub": "a topic's resource name, projects/PROJECT/topics/TOPIC",
                "webhook": "an https:// URL"}[kind]
        if not r.check(ok, f"{path}.{kind}", f"{show(target)} is not {what}"):
            continue
        out.append(NotificationChannel(kind, target))
    return tuple(out)
