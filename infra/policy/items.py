"""What the policy rules read and report: the desired state as items, and findings.

An ``Item`` is one resource of the desired state (type, name, inputs); the stack config
reaches the rules as items of type ``CONFIG`` (one per key, secret values already replaced
by ``MASK``: ``config_items``). A ``Finding`` is one violation, with the rule, the resource
and the fix. Both runners (the offline preview and the CrossGuard pack) build these and
hand them to infra/policy/rules.py. Pure: works on plain data, imports no pulumi.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from infra.record import record

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"  # a slice class (GKE ComputeClass)
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
CONFIG = "pulumi:config"  # a stack config key (name "namespace:key"; inputs {"value": ...})
MASK = "[secret]"  # what a secret value reads as, in both runners
# Cloud Storage resources that can make a bucket or its objects public (pulumi-gcp).
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_IAM = ("gcp:storage/bucketIAMMember:BucketIAMMember",
              "gcp:storage/bucketIAMBinding:BucketIAMBinding")
BUCKET_IAM_POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
BUCKET_ACLS = ("gcp:storage/bucketACL:BucketACL",
               "gcp:storage/defaultObjectACL:DefaultObjectACL",
               "gcp:storage/bucketAccessControl:BucketAccessControl",
               "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl",
               "gcp:storage/objectAccessControl:ObjectAccessControl")


@record
class Item:
    """A resource of the desired state, inputs with secrets already masked or unwrapped."""

    type: str
    name: str
    inputs: Mapping[str, Any]


@record
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


def of(items: Iterable[Item], type_: str) -> list[Item]:
    return [i for i in items if i.type == type_]


def where(item: Item) -> str:
    return f"{item.type} {item.name}"


def config_items(config: Mapping[str, Any], secret_keys: Iterable[str] = (),
                 written: Mapping[str, Any] | None = None) -> list[Item]:
    """The stack config (``namespace:key`` -> value) as items; secret values masked.

    A value written ``{secure: ...}`` in a stack file, or listed in ``secret_keys`` (the
    keys Pulumi marks secret), reads as ``MASK``.

    ``written``: the stack file's own ``config:`` mapping, ``secure:`` markers and all, for
    a ``config`` whose secrets arrive already decrypted and unmarked (as the Pulumi CLI
    hands them to a policy pack: infra/policy/pack/crossguard.py). Every leaf the file
    wrote as ``{secure: ...}`` is masked in the decrypted value, and keys the file does not
    hold (from an ESC environment or ``--config``, whose secrecy the pack cannot see) are
    left out rather than judged.
    """
    secret = set(secret_keys)
    out = []
    for key, value in sorted(config.items()):
        if written is not None:
            if key not in written:
                continue
            value = _overlay(value, written[key])
        if key in secret or (isinstance(value, Mapping) and set(value) == {"secure"}):
            value = MASK
        out.append(Item(CONFIG, str(key), {"value": _mask_secure(value)}))
    return out


def _overlay(value: Any, written: Any) -> Any:
    """``value`` with every leaf ``written`` marks ``{secure: ...}`` replaced by ``MASK``."""
    if isinstance(written, Mapping) and set(written) == {"secure"}:
        return MASK
    if isinstance(written, Mapping) and isinstance(value, Mapping):
        return {k: _overlay(v, written[k]) if k in written else v for k, v in value.items()}
    if isinstance(written, list) and isinstance(value, list) and len(written) == len(value):
        return [_overlay(v, w) for v, w in zip(value, written)]
    return value


def _mask_secure(value: Any) -> Any:
    if isinstance(value, Mapping):
        if set(value) == {"secure"}:
            return MASK
        return {k: _mask_secure(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_secure(v) for v in value]
    return value
