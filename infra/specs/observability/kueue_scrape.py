"""Kueue's own Prometheus metrics into Managed Service for Prometheus.

Kueue v0.19.2 serves ``/metrics`` on the manager's containerPort 8443 named ``metrics``
(chart templates/manager/manager.yaml; the stack's Configuration keeps ``metrics.
bindAddress: :8443``, infra/specs/addons.py), over HTTPS and only to a caller whose bearer
token may ``get`` the non-resource URL ``/metrics`` (cmd/kueue/main.go: ``SecureServing:
true``, ``FilterProvider: filters.WithAuthenticationAndAuthorization``; the role is
config/components/rbac/metrics_reader_role.yaml). Reference copies:
../shared/reference/upstream/kueue-v0.19.2-metrics/.

So the scrape needs, besides the ClusterPodMonitoring (monitoring.googleapis.com/v1,
GoogleCloudPlatform/prometheus-engine charts/operator/crds):
- a token: a ServiceAccount bound to a ClusterRole that may ``get /metrics``, and a
  long-lived token Secret for it (type ``kubernetes.io/service-account-token``, the
  Kubernetes docs' "Manually create a long-lived API token for a ServiceAccount");
- the collector's right to read that Secret: GMP's collector runs as ServiceAccount
  ``collector`` in ``gmp-system`` (prometheus-engine manifests/operator.yaml) and reads the
  Secrets an endpoint's ``authorization`` names; a Role in a namespace of its own holding
  only this Secret, so the collector is given no other Secret (not Kueue's webhook keys);
- TLS without verification: with the chart's ``enableCertManager: false`` (the stack's
  release) no metrics certificate is mounted, so controller-runtime serves a self-signed
  one it makes at start-up; there is no CA to verify it against. The token still gates
  the endpoint, and the scrape stays inside the cluster's pod network.
Pure; no pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.specs.addons import KUEUE_NAMESPACE

NAMESPACE = "accelstack-metrics"
READER = "kueue-metrics-reader"
TOKEN_SECRET = "kueue-metrics-reader-token"
GMP_COLLECTOR = ("gmp-system", "collector")
KUEUE_METRICS_PORT = "metrics"  # v0.19.2 chart manager.yaml: containerPort 8443
SCRAPE_INTERVAL = "60s"
# v0.19.2 chart _helpers.tpl kueue.selectorLabels; the stack's release is named "kueue".
KUEUE_POD_LABELS = {"app.kubernetes.io/name": "kueue", "app.kubernetes.io/instance": "kueue",
                    "control-plane": "controller-manager"}
_LABELS = {"app.kubernetes.io/managed-by": "accelstack"}


def objects() -> list[dict[str, Any]]:
    """Every object of the scrape, in the order they can be applied."""
    meta = {"namespace": NAMESPACE, "labels": dict(_LABELS)}
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": NAMESPACE, "labels": dict(_LABELS)}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": READER, **meta}, "automountServiceAccountToken": False},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": f"accelstack:{READER}", "labels": dict(_LABELS)},
         "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": f"accelstack:{READER}", "labels": dict(_LABELS)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": f"accelstack:{READER}"},
         "subjects": [{"kind": "ServiceAccount", "name": READER, "namespace": NAMESPACE}]},
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
         "metadata": {"name": TOKEN_SECRET, **meta,
                      "annotations": {"kubernetes.io/service-account.name": READER}}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "gmp-collector-secret-reader", **meta},
         "rules": [{"apiGroups": [""], "resources": ["secrets"],
                    "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "gmp-collector-secret-reader", **meta},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "gmp-collector-secret-reader"},
         "subjects": [{"kind": "ServiceAccount", "name": GMP_COLLECTOR[1],
                       "namespace": GMP_COLLECTOR[0]}]},
        pod_monitoring(),
    ]


def pod_monitoring() -> dict[str, Any]:
    """A ClusterPodMonitoring (the token Secret lives outside Kueue's namespace, which a
    namespaced PodMonitoring could not name)."""
    return {
        "apiVersion": "monitoring.googleapis.com/v1", "kind": "ClusterPodMonitoring",
        "metadata": {"name": "kueue-controller-manager", "labels": dict(_LABELS)},
        "spec": {
            "selector": {"matchLabels": dict(KUEUE_POD_LABELS)},
            "endpoints": [{
                "port": KUEUE_METRICS_PORT, "scheme": "https", "path": "/metrics",
                "interval": SCRAPE_INTERVAL,
                "tls": {"insecureSkipVerify": True},
                "authorization": {"type": "Bearer", "credentials": {"secret": {
                    "name": TOKEN_SECRET, "key": "token", "namespace": NAMESPACE}}},
            }],
        },
    }


__all__ = ["KUEUE_NAMESPACE", "objects", "pod_monitoring"]
