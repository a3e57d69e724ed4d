"""Policy checks on a stack's desired state: the rules a platform team enforces.

Each rule reads the resources the program would declare (type, name, inputs, as the
offline preview records them) and reports every violation with the resource, the rule and
the fix. A stack may waive a rule only with a written reason in its config
(``policy.waivers``); a waived finding is still reported, marked with the reason.
Pure: works on plain data, imports no pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from infra.images import image_has_digest, image_tag
from infra.config import POLICY_RULES, StackConfig

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_GRANTS = ("gcp:storage/bucketIAMMember:BucketIAMMember",
                 "gcp:storage/bucketIAMBinding:BucketIAMBinding")
# The two IAM principals that make a bucket public (Cloud Storage "Making data public":
# https://cloud.google.com/storage/docs/access-control/making-data-public).
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")
DEFAULT_SA_SUFFIX = "-compute@developer.gserviceaccount.com"


@dataclass(frozen=True)
class Item:
    """A resource of the desired state, inputs with secrets already masked or unwrapped."""

    type: str
    name: str
    inputs: Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    rule: str
    resource: str
    message: str
    fix: str
    waived_because: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"rule": self.rule, "resource": self.resource, "message": self.message,
               "fix": self.fix}
        if self.waived_because is not None:
            out["waived"] = self.waived_because
        return out


def _of(items: Iterable[Item], type_: str) -> list[Item]:
    return [i for i in items if i.type == type_]


def _where(item: Item) -> str:
    return f"{item.type} {item.name}"


def _workload_identity(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for c in _of(items, CLUSTER):
        pool = (c.inputs.get("workloadIdentityConfig") or {}).get("workloadPool")
        if not pool:
            yield Finding("workload-identity", _where(c), "Workload Identity is off",
                          "set workloadIdentityConfig.workloadPool to PROJECT.svc.id.goog")
    for np in _of(items, NODE_POOL):
        mode = ((np.inputs.get("nodeConfig") or {}).get("workloadMetadataConfig") or {}).get("mode")
        if mode != "GKE_METADATA":
            yield Finding("workload-identity", _where(np),
                          "nodes do not run the GKE metadata server",
                          "set nodeConfig.workloadMetadataConfig.mode to GKE_METADATA")


def _node_service_account(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for item in _of(items, CLUSTER) + _of(items, NODE_POOL):
        sa = (item.inputs.get("nodeConfig") or {}).get("serviceAccount")
        if not sa or sa == "default" or str(sa).endswith(DEFAULT_SA_SUFFIX):
            yield Finding("node-service-account", _where(item),
                          f"nodes run as the default compute service account ({sa or 'unset'})",
                          "use the stack's dedicated least-privilege node service account")


def _shielded_nodes(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for c in _of(items, CLUSTER):
        if c.inputs.get("enableShieldedNodes") is not True:
            yield Finding("shielded-nodes", _where(c), "shielded GKE nodes are off",
                          "set enableShieldedNodes: true")
    for np in _of(items, NODE_POOL):
        shielded = (np.inputs.get("nodeConfig") or {}).get("shieldedInstanceConfig") or {}
        if shielded.get("enableSecureBoot") is not True:
            yield Finding("shielded-nodes", _where(np), "secure boot is off",
                          "set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true")


def _authorized_networks(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for c in _of(items, CLUSTER):
        private = c.inputs.get("privateClusterConfig") or {}
        blocks = (c.inputs.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []
        if not private.get("enablePrivateEndpoint") and not blocks:
            yield Finding("authorized-networks", _where(c),
                          "the control plane has a public endpoint open to every address",
                          "list masterAuthorizedNetworks in the stack, or set "
                          "privateEndpoint: true")


def _deletion_protection(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    if not cfg.policy.production:
        return
    for c in _of(items, CLUSTER):
        if c.inputs.get("deletionProtection") is not True:
            yield Finding("deletion-protection", _where(c),
                          "a production stack's cluster can be deleted",
                          "set deletionProtection: true")


def _capacity(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for np in _of(items, NODE_POOL):
        nc = np.inputs.get("nodeConfig") or {}
        affinity = (nc.get("reservationAffinity") or {}).get("consumeReservationType")
        kind = ("spot" if nc.get("spot") else "queued" if (np.inputs.get("queuedProvisioning")
                or {}).get("enabled") else "flex-start" if nc.get("flexStart") else None)
        if kind and affinity not in (None, "NO_RESERVATION"):
            yield Finding("capacity-reservation", _where(np),
                          f"a {kind} pool consumes a reservation ({affinity})",
                          "give it reservation affinity NO_RESERVATION, or make it a "
                          "reservation pool")


def _image_latest(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for ds in _of(items, DAEMONSET):
        pod = (((ds.inputs.get("spec") or {}).get("template") or {}).get("spec") or {})
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            image = c.get("image", "")
            if not image_has_digest(image) and image_tag(image) in (None, "latest"):
                yield Finding("image-latest-tag", _where(ds),
                              f"image {image} is referenced by the mutable tag 'latest'",
                              "pin a version tag or a digest (@sha256:...)")


def _labelled(item: Item) -> Mapping[str, Any] | None:
    if item.type == CLUSTER:
        return item.inputs.get("resourceLabels") or {}
    if item.type == NODE_POOL:
        return (item.inputs.get("nodeConfig") or {}).get("resourceLabels") or {}
    return None


def _required_labels(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    need = cfg.policy.required_labels
    for item in items:
        labels = _labelled(item)
        if labels is None:
            continue
        missing = [k for k in need if k not in labels]
        if missing:
            yield Finding("required-labels", _where(item),
                          f"missing required labels: {', '.join(missing)}",
                          "add them to the stack's labels")


def _public_bucket(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for grant in [i for t in BUCKET_GRANTS for i in _of(items, t)]:
        members = grant.inputs.get("members") or [grant.inputs.get("member")]
        public = [m for m in members if m in PUBLIC_MEMBERS]
        if public:
            yield Finding("public-bucket", _where(grant),
                          f"grants {grant.inputs.get('role')} on bucket "
                          f"{grant.inputs.get('bucket')} to {', '.join(public)}",
                          "grant the role to the namespaces' service accounts only")
    for bucket in _of(items, BUCKET):
        if bucket.inputs.get("publicAccessPrevention") != "enforced":
            yield Finding("public-bucket", _where(bucket),
                          "public access prevention is not enforced",
                          "set publicAccessPrevention: enforced")


RULES: dict[str, Callable[[StackConfig, list[Item]], Iterable[Finding]]] = {
    "workload-identity": _workload_identity,
    "node-service-account": _node_service_account,
    "shielded-nodes": _shielded_nodes,
    "authorized-networks": _authorized_networks,
    "deletion-protection": _deletion_protection,
    "capacity-reservation": _capacity,
    "image-latest-tag": _image_latest,
    "required-labels": _required_labels,
    "public-bucket": _public_bucket,
}
assert tuple(RULES) == POLICY_RULES


def check(cfg: StackConfig, items: Iterable[Item]) -> list[Finding]:
    """Every finding, waived ones marked; a stack passes when none is unwaived."""
    listed = list(items)
    findings = []
    for rule, fn in RULES.items():
        waiver = cfg.policy.waivers.get(rule)
        for f in fn(cfg, listed):
            findings.append(Finding(f.rule, f.resource, f.message, f.fix, waiver))
    return findings


def violations(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.waived_because is None]
