"""JobSet and Kueue installs, as data: chart coordinates, pinned versions and sizing.

Kueue is installed from its official Helm chart (CRDs are chart templates, so a version
bump upgrades them in place with the release); JobSet from its release manifest applied
server-side (its chart keeps CRDs in crds/, which Helm never upgrades). Must not import
pulumi.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from infra.config.stack import StackConfig
from infra.specs import kueue_dra
from infra.specs.fleet import origin as fleet_origin

KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_NAMESPACE = "kueue-system"
JOBSET_NAMESPACE = "jobset-system"
JOBSET_MANIFEST = "https://github.com/kubernetes-sigs/jobset/releases/download/{v}/manifests.yaml"


def node_count(cfg: StackConfig) -> int:
    """The most nodes the stack's pools can hold: what the controllers must keep up with."""
    system = cfg.system_pool.max_nodes * len(cfg.zones)
    return system + sum(p.count * p.accelerator.vms_per_slice for p in cfg.slices)


def kueue_memory_mi(nodes: int) -> int:
    # Kueue's defaults (512Mi) serve a few thousand workloads; its caches grow with nodes
    # and workloads, so allow 2 MiB per node above a 1 GiB floor.
    return max(1024, 2 * nodes)


# Kueue's webhooks and the namespaces it manages are scoped to namespaces carrying this
# label: the stack's workload namespaces (kueue_spec.namespaces). Kueue's chart derives every
# webhook's namespaceSelector from managedJobsNamespaceSelector (v0.19.2
# charts/kueue/templates/webhook/manifests.yaml); its default gates every namespace but
# kube-system and kueue-system, with failurePolicy Fail for the pod, deployment and
# statefulset webhooks it enables by default. Then the JobSet controller's Deployment in
# jobset-system, GKE's own system pods and the image cache DaemonSets are refused while
# Kueue is down or unreachable. Scoped like this, nothing outside the workload namespaces
# ever waits on Kueue, so installing or upgrading JobSet cannot deadlock on Kueue.
MANAGED_NAMESPACE_LABEL = "accelstack.dev/kueue-managed"
# Only the integrations accelstack uses: plain Jobs and JobSets. The pod, deployment and
# statefulset integrations of the chart's default would intercept every pod.
KUEUE_FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset")
KUEUE_WEBHOOK_PORT = 9443  # v0.19.2 chart: webhookService targetPort and webhook.port
KUEUE_VISIBILITY_PORT = 8082  # v0.19.2 chart: visibility-server Service targetPort (an
# APIService the control plane calls, like a webhook)
JOBSET_WEBHOOK_PORT = 9443  # v0.12.0 config/components/webhook/service.yaml targetPort


def kueue_manager_config(cfg: StackConfig) -> dict[str, Any]:
    """Kueue's Configuration (config.kueue.x-k8s.io/v1beta2) as the chart's
    managerConfig.controllerManagerConfigYaml: the chart's default settings (v0.19.2
    values.yaml) with the managed namespaces and integrations scoped as above, and the
    device classes the stack's pods claim mapped to quota (infra/specs/kueue_dra.py)."""
    config: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": KUEUE_WEBHOOK_PORT},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {"groupKindConcurrency": {
            "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5, "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1}},
        "clientConnection": {"qps": 300, "burst": 500},
        "managedJobsNamespaceSelector": {"matchLabels": {MANAGED_NAMESPACE_LABEL: "true"}},
        "integrations": {"frameworks": list(KUEUE_FRAMEWORKS)},
    }
    mappings = kueue_dra.device_class_mappings(cfg)
    if mappings:
        config["resources"] = {"deviceClassMappings": mappings}
    # Its own MultiKueue origin, should a fleet make it a manager (infra/specs/fleet/origin.py).
    config["multiKueue"] = {"origin": fleet_origin.origin(cfg.project, cfg.location,
                                                          cfg.cluster_name)}
    return config


# GKE labels every node with its node pool's name (https://cloud.google.com/kubernetes-engine/
# docs/how-to/creating-managing-labels: cloud.google.com/gke-nodepool).
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"


def controller_selector(cfg: StackConfig) -> dict[str, str]:
    """Where the controllers run: the stack's system pool, or on a cluster an in-cluster
    stack references, the pool it names (by GKE's own node pool label)."""
    if cfg.adopt.controller_pool is not None:
        return {NODE_POOL_LABEL: cfg.adopt.controller_pool}
    return {"accelstack.dev/slice-pool": "system"}


def kueue_release_args(cfg: StackConfig) -> dict[str, Any]:
    memory = f"{kueue_memory_mi(node_count(cfg))}Mi"
    return {
        "name": "kueue",
        "chart": KUEUE_CHART,
        "version": cfg.addons.kueue_version.lstrip("v"),  # chart versions have no leading v
        "namespace": KUEUE_NAMESPACE,
        "create_namespace": True,
        "atomic": True,  # a failed upgrade rolls back instead of leaving Kueue half-updated
        "timeout": 600,
        "values": {
            "controllerManager": {
                "replicas": 1,
                "manager": {"resources": {"requests": {"cpu": "500m", "memory": memory},
                                          "limits": {"cpu": "2", "memory": memory}}},
                # Controllers run on the system pool, never on accelerator nodes.
                "nodeSelector": controller_selector(cfg),
            },
            "enablePrometheus": False,
            "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(
                kueue_manager_config(cfg), sort_keys=False)},
        },
    }


def jobset_manifest_url(cfg: StackConfig) -> str:
    return JOBSET_MANIFEST.format(v=cfg.addons.jobset_version)


JOBSET_DEPLOYMENT = "jobset-controller-manager"  # in jobset-system; container "manager"


def jobset_memory_mi(nodes: int) -> int:
    # The manifest asks for 128Mi and caps at 4Gi; the controller's caches grow with the
    # Jobs and pods of the cluster, so ask for 1 MiB per node above the manifest's floor.
    return max(128, nodes)


def size_jobset_controller(obj: dict[str, Any], nodes: int,
                           selector: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The JobSet controller Deployment of the release manifest, sized for ``nodes`` and
    kept on the system pool; None for every other object of the manifest."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") != "Deployment" or meta.get("name") != JOBSET_DEPLOYMENT:
        return None
    out = copy.deepcopy(obj)
    pod = out.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    pod["nodeSelector"] = selector or {"accelstack.dev/slice-pool": "system"}
    request = jobset_memory_mi(nodes)
    for c in pod.get("containers") or []:
        if c.get("name") == "manager":
            c["resources"] = {"requests": {"cpu": "500m", "memory": f"{request}Mi"},
                              "limits": {"memory": f"{max(4096, 4 * request)}Mi"}}
    return out
