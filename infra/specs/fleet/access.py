"""What a worker gives the manager, and nothing more: one ServiceAccount in Kueue's
namespace, a ClusterRole over the objects MultiKueue creates and watches there, a token,
and the LocalQueues the manager's worker- and region-scoped queues name.

The rules are those of Kueue's documented MultiKueue role (v0.19.2
site/static/examples/multikueue/create-multikueue-kubeconfig.sh), kept for the two
integrations accelstack's Kueue runs (infra/specs/addons.py KUEUE_FRAMEWORKS: batch/job and
jobset.x-k8s.io/jobset): Jobs and JobSets (create, delete, get, list, watch; status get),
Workloads (create, delete, get, list, watch, update, patch; status get, patch, update) and
ClusterQueues and LocalQueues (get, list, watch). The script's rules for pods, StatefulSets,
LeaderWorkerSets, Kubeflow, Ray and AppWrapper objects are left out: no workload of a fleet
is of those kinds, so the manager never creates one.

The kubeconfig is the one that script writes: the worker's server address, its CA as
certificate-authority-data and the token. Kueue refuses any other form (v0.19.2
pkg/controller/admissionchecks/multikueue/multikueuecluster.go validateKubeconfig: no exec
plugin, no token file, no CA file path, no basic auth), so the manager cannot use
gke-gcloud-auth-plugin. Must not import pulumi.
"""

from __future__ import annotations

from typing import Any

import yaml

from infra.specs.addons import KUEUE_NAMESPACE
from infra.specs.kueue import API as KUEUE_API

# The long-lived token: a Secret of this type annotated with the ServiceAccount's name, which
# the token controller fills with token and ca.crt (the same script; Kubernetes "Manually
# create a long-lived API token for a ServiceAccount").
TOKEN_TYPE = "kubernetes.io/service-account-token"
SA_ANNOTATION = "kubernetes.io/service-account.name"
KUBECONFIG_KEY = "kubeconfig"  # MultiKueueConfigSecretKey (v0.19.2 apis/kueue/v1beta2/multikueue_types.go)
MANAGED = {"app.kubernetes.io/managed-by": "accelstack"}

_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("batch", ("jobs",), ("create", "delete", "get", "list", "watch")),
    ("batch", ("jobs/status",), ("get",)),
    ("jobset.x-k8s.io", ("jobsets",), ("create", "delete", "get", "list", "watch")),
    ("jobset.x-k8s.io", ("jobsets/status",), ("get",)),
    ("kueue.x-k8s.io", ("workloads",),
     ("create", "delete", "get", "list", "watch", "update", "patch")),
    ("kueue.x-k8s.io", ("clusterqueues", "localqueues"), ("get", "list", "watch")),
    ("kueue.x-k8s.io", ("workloads/status",), ("get", "patch", "update")),
)


def account_name(fleet: str) -> str:
    return f"multikueue-{fleet}"


def token_secret_name(fleet: str, window: int) -> str:
    """The token Secret of one rotation window: a new window is a new name, so `pulumi up`
    replaces the Secret (the old token stops working when its Secret is deleted)."""
    return f"{account_name(fleet)}-token-{window}"


def rotation_window(now: float, days: int) -> int:
    """Which rotation window ``now`` (seconds since the epoch) falls in."""
    return int(now // (days * 86400))


def kubeconfig_secret_name(worker: str) -> str:
    return f"multikueue-{worker}"


def service_account(fleet: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": account_name(fleet), "namespace": KUEUE_NAMESPACE,
                         "labels": dict(MANAGED)},
            "automountServiceAccountToken": False}


def cluster_role(fleet: str) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": account_name(fleet), "labels": dict(MANAGED)},
            "rules": [{"apiGroups": [group], "resources": list(res), "verbs": list(verbs)}
                      for group, res, verbs in _RULES]}


def cluster_role_binding(fleet: str) -> dict[str, Any]:
    name = account_name(fleet)
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": dict(MANAGED)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name,
                          "namespace": KUEUE_NAMESPACE}]}


def token_secret(fleet: str, window: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": TOKEN_TYPE,
            "metadata": {"name": token_secret_name(fleet, window), "namespace": KUEUE_NAMESPACE,
                         "labels": dict(MANAGED),
                         "annotations": {SA_ANNOTATION: account_name(fleet)}}}


def mirrored_queues(scoped: list[tuple[str, str]], namespace_queues: dict[str, str]
                    ) -> list[dict[str, Any]]:
    """The worker's LocalQueues for the manager's scoped queues: MultiKueue creates the
    Workload on the worker under the manager's queue name (Kueue's setup_multikueue.md: the
    worker must mirror the manager's namespaces and LocalQueues), so each scoped name points
    at the worker's own ClusterQueue of that namespace. ``scoped``: (namespace, name);
    ``namespace_queues``: namespace -> the worker's ClusterQueue."""
    return [{"apiVersion": KUEUE_API, "kind": "LocalQueue",
             "metadata": {"name": name, "namespace": ns, "labels": dict(MANAGED)},
             "spec": {"clusterQueue": namespace_queues[ns]}} for ns, name in scoped]


def kubeconfig(worker: str, endpoint: str, ca_certificate: str, token: str) -> str:
    """The MultiKueue kubeconfig of a worker (``token`` in plain text, as the script
    writes it; the Secret holding this is a Pulumi secret)."""
    user = f"{worker}-multikueue"
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": worker, "cluster": {
               "server": f"https://{endpoint}", "certificate-authority-data": ca_certificate}}],
           "users": [{"name": user, "user": {"token": token}}],
           "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
           "current-context": worker}
    return str(yaml.safe_dump(doc, sort_keys=False))


def kubeconfig_secret(worker: str, kubeconfig_text: str) -> dict[str, Any]:
    """The manager's Secret MultiKueueCluster ``locationType: Secret`` names: in the Kueue
    controller's namespace, the kubeconfig under key ``kubeconfig``."""
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": kubeconfig_secret_name(worker), "namespace": KUEUE_NAMESPACE,
                         "labels": dict(MANAGED)},
            "stringData": {KUBECONFIG_KEY: kubeconfig_text}}
