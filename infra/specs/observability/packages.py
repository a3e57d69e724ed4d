"""``monitoringConfig.enableComponents``: the GKE managed metric packages the stack needs.

- ``SYSTEM_COMPONENTS``: GKE's system metrics, among them the TPU and multislice metrics
  (``kubernetes.io/{container,node}/accelerator/*``) the dashboard and the idle alert read;
- ``POD`` and ``JOBSET``: kube-state metrics of pods and JobSets (the restart alert reads
  ``kube_jobset_restarts``; https://cloud.google.com/kubernetes-engine/docs/how-to/
  kube-state-metrics), each from its floor (infra/config/observability.py PACKAGE_FLOORS);
- ``DCGM`` for a stack with GPU pools: GKE runs DCGM-Exporter and scrapes it into Managed
  Service for Prometheus (https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics);
- and any the stack file adds (``observability.metricPackages``, checked against the
  pulumi-gcp 10.2.0 list and the floors where the config is parsed).

Pure; no pulumi.
"""

from __future__ import annotations

from infra.catalog import gke_versions
from infra.config.observability import below_floor
from infra.config.stack import StackConfig

_ORDER = ("SYSTEM_COMPONENTS", "APISERVER", "SCHEDULER", "CONTROLLER_MANAGER", "STORAGE",
          "HPA", "POD", "DAEMONSET", "DEPLOYMENT", "STATEFULSET", "KUBELET", "CADVISOR",
          "DCGM", "JOBSET")


def nodes_version(cfg: StackConfig) -> str:
    """The version the cluster is created at: the pin, else the channel's default."""
    return gke_versions.effective(cfg.release_channel, cfg.gke_version).text


def has_gpus(cfg: StackConfig) -> bool:
    return any(p.accelerator.kind == "gpu" for p in cfg.slices) or any(
        a.kind == "gpu" for c in cfg.slice_classes for a in c.shapes)


def enable_components(cfg: StackConfig) -> list[str]:
    """The packages, in the provider documentation's order. A stack with observability
    off keeps what the cluster always sent: system metrics only."""
    wanted = {"SYSTEM_COMPONENTS"}
    if cfg.observability.enabled:
        version = nodes_version(cfg)
        for package in ("POD", "JOBSET"):
            if below_floor(version, package) is None:
                wanted.add(package)
        if has_gpus(cfg):
            wanted.add("DCGM")
        wanted.update(cfg.observability.extra_packages)
    return [p for p in _ORDER if p in wanted]
