"""Policy checks on a stack's desired state: the rules a platform team enforces.

Each rule reads the resources the program would declare (type, name, inputs) and the
stack's config, and reports every violation with the resource, the rule and the fix. A
stack may waive a rule only with a written reason in its config (``policy.waivers``); a
waived finding is still reported, marked with the reason.

One implementation, two runners: the offline preview (``infra.preview.cli``) runs ``check``
over the mock engine's record, and the CrossGuard pack (``infra/policy/pack``) runs the
same ``RULES`` over what ``pulumi preview``/``up`` hands it. The stack config reaches the
rules as items of type ``CONFIG`` (one per key, secret values already replaced by
``MASK``). The items and findings are defined in infra/policy/items.py. Pure: works on
plain data, imports no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Iterator, Mapping

from infra.catalog import tables as catalog
from infra.contract.images import image_has_digest, image_tag
from infra.config.stack import POLICY_RULES, StackConfig
from infra.cost import price, table as prices
from infra.policy.items import (BUCKET, BUCKET_ACLS, BUCKET_IAM, BUCKET_IAM_POLICY, CLUSTER,
                                COMPUTE_CLASS, CONFIG, DAEMONSET, MASK, NODE_POOL, Finding, Item,
                                config_items, of, where)

# The items and findings (infra/policy/items.py) are part of this module's interface: both
# runners and the tests reach them as ``rules.Item``, ``rules.config_items`` and so on.
__all__ = [
    "BUCKET", "BUCKET_ACLS", "BUCKET_IAM", "BUCKET_IAM_POLICY", "CLUSTER", "COMPUTE_CLASS",
    "CONFIG", "DAEMONSET", "MASK", "NODE_POOL", "RULES", "Finding", "Item", "check",
    "config_items", "violations",
]

DEFAULT_SA_SUFFIX = "-compute@developer.gserviceaccount.com"
# The IAM principals and ACL entities meaning "anyone" (Cloud Storage docs, "Making data
# public", https://cloud.google.com/storage/docs/access-control/making-data-public:
# allUsers, allAuthenticatedUsers) and the predefined ACLs that grant them.
PUBLIC_PRINCIPALS = ("allUsers", "allAuthenticatedUsers")
PUBLIC_ACLS = ("publicRead", "publicReadWrite", "authenticatedRead")


def _workload_identity(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for c in of(items, CLUSTER):
        pool = (c.inputs.get("workloadIdentityConfig") or {}).get("workloadPool")
        if not pool:
            yield Finding("workload-identity", where(c), "Workload Identity is off",
                          "set workloadIdentityConfig.workloadPool to PROJECT.svc.id.goog")
    for np in of(items, NODE_POOL):
        mode = ((np.inputs.get("nodeConfig") or {}).get("workloadMetadataConfig") or {}).get("mode")
        if mode != "GKE_METADATA":
            yield Finding("workload-identity", where(np),
                          "nodes do not run the GKE metadata server",
                          "set nodeConfig.workloadMetadataConfig.mode to GKE_METADATA")


def _node_service_account(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for item in of(items, CLUSTER) + of(items, NODE_POOL):
        sa = (item.inputs.get("nodeConfig") or {}).get("serviceAccount")
        if not sa or sa == "default" or str(sa).endswith(DEFAULT_SA_SUFFIX):
            yield Finding("node-service-account", where(item),
                          f"nodes run as the default compute service account ({sa or 'unset'})",
                          "use the stack's dedicated least-privilege node service account")


def _shielded_nodes(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for c in of(items, CLUSTER):
        if c.inputs.get("enableShieldedNodes") is not True:
            yield Finding("shielded-nodes", where(c), "shielded GKE nodes are off",
                          "set enableShieldedNodes: true")
    for np in of(items, NODE_POOL):
        shielded = (np.inputs.get("nodeConfig") or {}).get("shieldedInstanceConfig") or {}
        if shielded.get("enableSecureBoot") is not True:
            yield Finding("shielded-nodes", where(np), "secure boot is off",
                          "set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true")


def _authorized_networks(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for c in of(items, CLUSTER):
        private = c.inputs.get("privateClusterConfig") or {}
        networks = c.inputs.get("masterAuthorizedNetworksConfig") or {}
        # Given as a Pulumi secret, the whole block is masked: present, not readable.
        blocks = networks.get("cidrBlocks") if isinstance(networks, dict) else networks
        if not private.get("enablePrivateEndpoint") and not blocks:
            yield Finding("authorized-networks", where(c),
                          "the control plane has a public endpoint open to every address",
                          "list masterAuthorizedNetworks in the stack, or set "
                          "privateEndpoint: true")
        endpoints = c.inputs.get("controlPlaneEndpointsConfig") or {}
        dns = endpoints.get("dnsEndpointConfig") or {} if isinstance(endpoints, dict) else {}
        if isinstance(dns, dict) and dns.get("enableK8sTokensViaDns") is True:
            # Authorized networks restrict the IP endpoints only; the DNS endpoint answers
            # every address that reaches Google's APIs, and with this on it takes a bare
            # Kubernetes token (infra/config/cluster.py _dns_endpoint has the sources).
            yield Finding("authorized-networks", where(c),
                          "the DNS endpoint takes Kubernetes tokens from every address "
                          "(authorized networks do not apply to it)",
                          "set dnsEndpoint: true (Google credentials only), or waive this "
                          "rule with the reason (a fleet's manager comes in this way: "
                          "docs/fleets.md)")


def _deletion_protection(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    if not cfg.policy.production:
        return
    for c in of(items, CLUSTER):
        if c.inputs.get("deletionProtection") is not True:
            yield Finding("deletion-protection", where(c),
                          "a production stack's cluster can be deleted",
                          "set deletionProtection: true")


def _capacity(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for np in of(items, NODE_POOL):
        nc = np.inputs.get("nodeConfig") or {}
        affinity = (nc.get("reservationAffinity") or {}).get("consumeReservationType")
        kind = ("spot" if nc.get("spot") else "queued" if (np.inputs.get("queuedProvisioning")
                or {}).get("enabled") else "flex-start" if nc.get("flexStart") else None)
        if kind and affinity not in (None, "NO_RESERVATION"):
            yield Finding("capacity-reservation", where(np),
                          f"a {kind} pool consumes a reservation ({affinity})",
                          "give it reservation affinity NO_RESERVATION, or make it a "
                          "reservation pool")


def _image_latest(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for ds in of(items, DAEMONSET):
        pod = (((ds.inputs.get("spec") or {}).get("template") or {}).get("spec") or {})
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            image = c.get("image", "")
            if not image_has_digest(image) and image_tag(image) in (None, "latest"):
                yield Finding("image-latest-tag", where(ds),
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
            yield Finding("required-labels", where(item),
                          f"missing required labels: {', '.join(missing)}",
                          "add them to the stack's labels")


def _is_accelerator_pool(np: Item) -> bool:
    nc = np.inputs.get("nodeConfig") or {}
    return bool(nc.get("guestAccelerators")) or nc.get("machineType") in _accelerator_machines()


_MACHINES: set[str] = set()


def _accelerator_machines() -> set[str]:
    if not _MACHINES:
        _MACHINES.update(a.machine_type for a in catalog.all_accelerators()
                         if a.kind in ("tpu", "gpu"))
    return _MACHINES


def _auto_repair(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for np in of(items, NODE_POOL):
        if not _is_accelerator_pool(np):
            continue
        nc = np.inputs.get("nodeConfig") or {}
        # GKE creates flex-start and queued-provisioning pools with auto-repair off.
        if nc.get("flexStart") or (np.inputs.get("queuedProvisioning") or {}).get("enabled"):
            continue
        if (np.inputs.get("management") or {}).get("autoRepair") is not True:
            yield Finding("accelerator-auto-repair", where(np),
                          "an accelerator pool runs without node auto-repair",
                          "set management.autoRepair: true (a failed TPU/GPU node otherwise "
                          "stays out of its slice until someone notices)")
    # The node pools GKE creates for a slice class take the class's nodePoolConfig.
    for cc in of(items, COMPUTE_CLASS):
        config = (cc.inputs.get("spec") or {}).get("nodePoolConfig") or {}
        if config.get("autoRepair") is not True:
            yield Finding("accelerator-auto-repair", where(cc),
                          "a slice class creates accelerator pools without node auto-repair",
                          "remove nodes.autoRepair: false from the class (a failed TPU/GPU "
                          "node otherwise stays out of its slice until someone notices)")


# Names of config keys that hold credentials, and values that are credentials whatever
# their key: a PEM private key, a Google service-account key file (JSON, "type":
# "service_account").
_SECRET_NAME = re.compile(r"(password|passphrase|secret|token|api[-_]?key|private[-_]?key|"
                          r"credentials?|access[-_]?key)$", re.IGNORECASE)
_SECRET_VALUE = re.compile(r'-----BEGIN [A-Z ]*PRIVATE KEY-----|"type":\s*"service_account"')


def _leaves(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, last key, value) of every leaf of a config value."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, path.rsplit(".", 1)[-1].split(":")[-1].split("[")[0], value


def _plain_secrets(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for item in of(items, CONFIG):
        value = item.inputs.get("value")
        if value == MASK:
            continue
        key = item.name.split(":")[-1]
        plain = [v for _, name, v in _leaves(value, item.name)
                 if v is not None and v != MASK and not isinstance(v, bool)
                 and (_SECRET_NAME.search(name) or _SECRET_NAME.search(key)
                      or _SECRET_VALUE.search(str(v)))]
        if plain:
            yield Finding("plain-secret-config", f"config {item.name}",
                          "a credential is stored as plain config",
                          f"store it encrypted: pulumi config set --secret {item.name} "
                          "(and remove the plain value)")


def _grants(item: Item) -> list[str]:
    """What a storage resource grants, as strings to look for public principals in."""
    i = item.inputs
    if item.type in BUCKET_IAM:
        values = [i.get("member"), *(i.get("members") or [])]
    elif item.type == BUCKET_IAM_POLICY:
        values = [i.get("policyData")]  # a JSON IAM policy document
    elif item.type in BUCKET_ACLS:
        values = [i.get("entity"), i.get("predefinedAcl"), *(i.get("roleEntities") or [])]
    elif item.type == BUCKET:
        values = [i.get("predefinedAcl")]
    else:
        values = []
    return [v for v in values if isinstance(v, str)]


def _public_buckets(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    for item in items:
        public = [g for g in _grants(item)
                  if g in PUBLIC_ACLS or any(p in g for p in PUBLIC_PRINCIPALS)]
        if public:
            what = (f"grants {item.inputs.get('role')} on bucket {item.inputs.get('bucket')} "
                    f"to {', '.join(public)}" if item.type in BUCKET_IAM else
                    f"a bucket or its objects can be public ({', '.join(public)})")
            yield Finding("public-bucket", where(item), what,
                          "grant named principals only, and set publicAccessPrevention: "
                          "enforced on the bucket")
    yield from _bucket_prevention(cfg, items)


def _bucket_prevention(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    # Part of public-bucket: a bucket the stack creates enforces public access prevention,
    # so no later grant or ACL can make it public.
    for bucket in of(items, BUCKET):
        if bucket.inputs.get("publicAccessPrevention") != "enforced":
            yield Finding("public-bucket", where(bucket),
                          "public access prevention is not enforced",
                          "set publicAccessPrevention: enforced")


def _budget(cfg: StackConfig, items: list[Item]) -> Iterable[Finding]:
    """The stack's standing cost (infra/cost/price.py, the shipped price table) within its
    ``policy.budgetPerHour``. A total with unpriced parts cannot be shown to be within it."""
    budget = cfg.policy.budget_per_hour
    if budget is None:
        return
    fig = price.price_stack(cfg, prices.shipped())
    resource = f"{CLUSTER} {cfg.cluster_name}"
    if fig.known_total > budget:
        yield Finding("budget", resource,
                      f"the stack costs {fig.total_text()} while it stands, over its budget "
                      f"of {price.usd(budget)}/hour",
                      "make fewer or smaller slices, or other capacity modes "
                      "(`accelstack-preview STACK --summary` prices each part), or raise "
                      "policy.budgetPerHour")
    elif fig.unknown:
        yield Finding("budget", resource,
                      f"the stack costs {fig.total_text()}: within its budget of "
                      f"{price.usd(budget)}/hour cannot be shown while parts are unpriced",
                      "add their prices to the price table (docs/cost.md), or waive the rule "
                      "with a reason")


RULES: dict[str, Callable[[StackConfig, list[Item]], Iterable[Finding]]] = {
    "workload-identity": _workload_identity,
    "node-service-account": _node_service_account,
    "shielded-nodes": _shielded_nodes,
    "authorized-networks": _authorized_networks,
    "deletion-protection": _deletion_protection,
    "capacity-reservation": _capacity,
    "image-latest-tag": _image_latest,
    "required-labels": _required_labels,
    "accelerator-auto-repair": _auto_repair,
    "plain-secret-config": _plain_secrets,
    "public-bucket": _public_buckets,
    "budget": _budget,
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
