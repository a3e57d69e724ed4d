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
gke-gcloud-auth-plugin. The server is the worker's DNS endpoint when the worker lets
Kubernetes tokens in there, else its IP endpoint (``reach``). Must not import pulumi.

The token's Secret is named after the rotation window and a digest of everything the fleet
declares (``token_secret_name``), so an update that changes the fleet, or the first one in
a new window, replaces it: the new Secret is created, the manager's kubeconfig Secret is
rewritten with its token, and the old Secret is deleted last, which revokes the old token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Mapping

import yaml

from infra.config.fleet import FleetConfig
from infra.contract.outputs import StackOutputs
from infra.record import record
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


DIGEST_LENGTH = 10  # hex characters of the fleet's digest in a token Secret's name


def token_secret_name(fleet: str, window: int, digest: str) -> str:
    """The token Secret of one rotation window and one state of the fleet: a new window or
    a changed fleet is a new name, so `pulumi up` replaces the Secret (the old token stops
    working when its Secret is deleted). At most 11 + 20 + 7 + 6 + 1 + 10 characters: a
    valid Secret name (a DNS subdomain, 253 at most)."""
    return f"{account_name(fleet)}-token-{window}-{digest}"


def declared_digest(cfg: FleetConfig, manager: StackOutputs,
                    workers: Mapping[str, StackOutputs]) -> str:
    """A short digest of everything the fleet declares from: its config and the contracts
    of the manager and the workers as read, kubeconfigs excluded (they hold the users'
    credentials and change when nothing the fleet declares does). Deterministic: the same
    inputs give the same digest, so an unchanged fleet keeps its tokens within a window."""
    def contract(o: StackOutputs) -> dict[str, Any]:
        data = o.to_dict()
        data.pop("kubeconfig", None)
        return data
    doc = {"config": dataclasses.asdict(cfg), "manager": contract(manager),
           "workers": {name: contract(o) for name, o in sorted(workers.items())}}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


def rotation_window(now: float, days: int) -> int:
    """Which rotation window ``now`` (seconds since the epoch) falls in."""
    return int(now // (days * 86400))


def kubeconfig_secret_name(worker: str) -> str:
    return f"multikueue-{worker}"


# One fleet per worker. A worker's Workloads from two managers are told apart by origin
# (infra/specs/fleet/origin.py), but two fleets on one worker would still mirror queues of
# the same names there and both write them. Each fleet claims its workers with this
# ConfigMap, created through a provider that never adopts an existing object
# (infra/components/fleet.py): a second fleet's create is refused with AlreadyExists, and
# nothing else of it is declared on the worker, as everything else there waits for it.
CLAIM_NAME = "accelstack-fleet"


def claim(fleet: str, stack: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CLAIM_NAME, "namespace": KUEUE_NAMESPACE,
                         "labels": dict(MANAGED)},
            "data": {"fleet": fleet, "stack": stack}}


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


def token_secret(fleet: str, window: int, digest: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": TOKEN_TYPE,
            "metadata": {"name": token_secret_name(fleet, window, digest),
                         "namespace": KUEUE_NAMESPACE,
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


@record
class Reach:
    """How the manager reaches a worker's control plane: ``server`` (a host), and the CA
    to verify it with (None: the system's trusted roots)."""

    via: str  # "dns" or "ip"
    server: str
    ca_certificate: str | None


def over_dns(o: StackOutputs) -> bool:
    """Does the worker let a ServiceAccount token in at its DNS endpoint?"""
    return bool(o.cluster.dns_endpoint) and o.cluster.dns_k8s_tokens is True


def reach(o: StackOutputs) -> Reach:
    """The DNS endpoint when the worker takes Kubernetes tokens there (whether or not its IP
    endpoint is private: the worker opted in, and no IP allowlist or cluster CA then stands
    between the manager and the worker), else the IP endpoint with the cluster CA.

    The DNS endpoint is served by Google's front end with a publicly trusted certificate
    (Google Trust Services), not one the cluster CA signed: pinning the cluster CA there
    fails TLS verification (crossplane-contrib/provider-upjet-gcp#988 and the fix #991,
    fluxcd/flux2#5896, GoogleCloudPlatform/gcpdiag#115), so that kubeconfig carries no
    certificate-authority-data and Kueue verifies against the system roots, which its
    image has (Kueue v0.19.2 Dockerfile: gcr.io/distroless/static, which "contains
    ca-certificates", GoogleContainerTools/distroless base/README.md). Kueue accepts a
    kubeconfig without CA data and a DNS host name (v0.19.2 multikueuecluster.go
    validateKubeconfig, isValidHostname)."""
    c = o.cluster
    if over_dns(o):
        assert c.dns_endpoint is not None
        return Reach("dns", c.dns_endpoint, None)
    return Reach("ip", c.endpoint, c.ca_certificate)


def kubeconfig(worker: str, way: Reach, token: str) -> str:
    """The MultiKueue kubeconfig of a worker (``token`` in plain text, as the script
    writes it; the Secret holding this is a Pulumi secret)."""
    user = f"{worker}-multikueue"
    cluster = {"server": f"https://{way.server}"}
    if way.ca_certificate is not None:
        cluster["certificate-authority-data"] = way.ca_certificate
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": worker, "cluster": cluster}],
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
