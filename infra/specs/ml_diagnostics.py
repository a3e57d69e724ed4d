"""ML Diagnostics on the stack's cluster (``accelstack:mlDiagnostics: true``), as data: what
``infra.components.ml_diagnostics`` declares. Must not import pulumi.

GKE's managed setting (``gcloud beta container clusters create|update CLUSTER
--enable-managed-mldiagnostics``, GKE 1.35.0-gke.3065000 and later; "Configure GKE for ML
Diagnostics", https://cloud.google.com/tpu/docs/ml-diagnostics/gke) has no field in the
pinned pulumi-gcp 10.2.0, so the stack declares the page's manual install instead: cert-manager
(the injection webhook's prerequisite), then the injection webhook and the connection
operator, Helm charts from Google's Artifact Registry. Chart names, repositories, versions and
values are those of Google's install instructions (AI-Hypercomputer/google-cloud-mldiagnostics
README.md, "Configure GKE Cluster": cert-manager v1.13.0 from https://charts.jetstack.io with
installCRDs=true and global.leaderElection.namespace=cert-manager; the webhook 0.23.0 and the
operator 0.21.0, the version it gives for JAX 0.9 and later, in namespace gke-mldiagnostics).

The workload's Google identity needs Cluster Director Editor (create and manage its
machine-learning runs), roles/logging.logWriter (logs and metrics) and
roles/storage.objectUser (profiles in the run's bucket), on the project (same README, "IAM
Permissions"). Jobs reach Google as their namespace's Kubernetes service account (Workload
Identity Federation for GKE, infra/specs/storage.py), so each namespace's account gets them.
Cluster Director Editor's role ID is ``roles/hypercomputecluster.editor`` (its permissions
``hypercomputecluster.machineLearningRuns.*``, ...): Google's IAM roles reference,
https://cloud.google.com/iam/docs/roles-permissions/hypercomputecluster. There is no
``roles/clusterdirector.*`` role, so granting one fails at ``pulumi up``.

The SDK's README says to enable the Cluster Director API first. Its service name is
``hypercomputecluster.googleapis.com``: Google's API client libraries name it
(googleapis/google-cloud-node packages/google-cloud-hypercomputecluster/README.md, the
"enable the API" link ``apiid=hypercomputecluster.googleapis.com``; the googleapis Dart
client ``hypercomputecluster_v1`` "Cluster Director API", root URL
https://hypercomputecluster.googleapis.com/), and the SDK's own control-plane client calls
``https://hypercomputecluster.googleapis.com/v1alpha/projects/.../machineLearningRuns``.
``infra.specs.services`` enables it with the stack's other APIs when this is on.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import StackConfig
from infra.record import record
from infra.specs import storage as storage_spec

NAMESPACE = "gke-mldiagnostics"
CHARTS = "oci://us-docker.pkg.dev/ai-on-gke/mldiagnostics-webhook-and-operator-helm"
WEBHOOK_VERSION = "0.23.0"
OPERATOR_VERSION = "0.21.0"
CERT_MANAGER_REPOSITORY = "https://charts.jetstack.io"
CERT_MANAGER_VERSION = "v1.13.0"
CERT_MANAGER_NAMESPACE = "cert-manager"
ROLES = ("roles/hypercomputecluster.editor", "roles/logging.logWriter",
         "roles/storage.objectUser")
CLUSTER_DIRECTOR_API = "hypercomputecluster.googleapis.com"


def services(cfg: StackConfig) -> list[str]:
    """The APIs ML Diagnostics needs in the stack's project (the Cluster Director API)."""
    return [CLUSTER_DIRECTOR_API] if cfg.ml_diagnostics else []


@record
class Grant:
    namespace: str
    role: str

    @property
    def resource_name(self) -> str:
        return f"mldiagnostics-{self.namespace}-{self.role.rsplit('.', 1)[-1].lower()}"


def cert_manager_release_args() -> dict[str, Any]:
    return {
        "name": "cert-manager",
        "chart": "cert-manager",
        "repository_opts": {"repo": CERT_MANAGER_REPOSITORY},
        "version": CERT_MANAGER_VERSION,
        "namespace": CERT_MANAGER_NAMESPACE,
        "create_namespace": True,
        "atomic": True,
        "timeout": 600,  # the README's --timeout 10m
        "values": {"installCRDs": True,
                   "global": {"leaderElection": {"namespace": CERT_MANAGER_NAMESPACE}}},
    }


def _google_chart(name: str, version: str) -> dict[str, Any]:
    return {"name": name, "chart": f"{CHARTS}/{name}", "version": version,
            "namespace": NAMESPACE, "create_namespace": True, "atomic": True, "timeout": 600}


def webhook_release_args() -> dict[str, Any]:
    return _google_chart("mldiagnostics-injection-webhook", WEBHOOK_VERSION)


def operator_release_args() -> dict[str, Any]:
    return _google_chart("mldiagnostics-connection-operator", OPERATOR_VERSION)


def grants(cfg: StackConfig) -> list[Grant]:
    """Each workload namespace's job service account, each role."""
    return [Grant(ns, role) for ns in storage_spec.namespaces(cfg) for role in ROLES]


def grant_args(cfg: StackConfig, grant: Grant, project_number: str) -> dict[str, Any]:
    return {"project": cfg.project, "role": grant.role,
            "member": storage_spec.principal(project_number, cfg.project, grant.namespace,
                                             cfg.storage.service_account)}
