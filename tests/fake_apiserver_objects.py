"""The fake API server's objects the submitter writes (JobSets, ConfigMaps, ComputeDomains):
apply, merge patch, get and delete, answered as kube-apiserver answers them.

Every status code comes from the table in tests/apiserver_answers.py (with its source), and
every failure body is a metav1 Status built as apimachinery's pkg/api/errors/errors.go
builds it. ``answer`` is pure over the fake's state: the HTTP handler only routes to it.
Not modelled: managedFields, resourceVersion and generation of stored objects, and merging
applies of several field managers (an apply replaces the object, keeping its uid, its
deletion timestamp and the finalizers it had).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from apiserver_answers import ANSWERS


@dataclass(frozen=True)
class Kind:
    store: str  # the fake State's attribute holding these objects
    group: str
    version: str
    resource: str
    kind: str
    uid_prefix: str  # the fake's uids: prefix + name

    def path(self) -> re.Pattern[str]:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return re.compile(f"^{re.escape(base)}/namespaces/([^/]+)/{self.resource}(?:/([^/]+))?$")

    def resource_name(self) -> str:
        """GroupResource.String(): what NotFound names (``jobsets.jobset.x-k8s.io``)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def kind_name(self) -> str:
        """GroupKind.String(): what Invalid names (``JobSet.jobset.x-k8s.io``)."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


KINDS = (
    Kind("jobsets", "jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", "uid-"),
    Kind("configmaps", "", "v1", "configmaps", "ConfigMap", "uid-configmap-"),
    Kind("computedomains", "resource.nvidia.com", "v1beta1", "computedomains",
         "ComputeDomain", "uid-computedomain-"),
)
# The time a delete stamps (metadata.deletionTimestamp): fixed, so answers compare equal.
DELETED_AT = "2026-01-01T00:00:00Z"


def status(code: int, reason: str, message: str,
           details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A metav1 Status, as the API server writes a failure (responsewriters.ErrorNegotiated)."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Failure", "message": message, "reason": reason,
                            "code": code}
    if details is not None:
        body["details"] = details
    return body


def not_found(kind: Kind, name: str) -> tuple[int, dict[str, Any]]:
    """errors.NewNotFound: details name the resource (plural) in ``kind``."""
    return 404, status(404, "NotFound", f'{kind.resource_name()} "{name}" not found',
                       {"name": name, "group": kind.group, "kind": kind.resource})


def _copy(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def _merge(target: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386): null deletes a key."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def _option(name: str, query: dict[str, str], body: Any) -> str | None:
    """A DeleteOptions field, from the query or the request's DeleteOptions body."""
    if name in query:
        return query[name]
    value = body.get(name) if isinstance(body, dict) else None
    return None if value is None else str(value).lower()


def answer(st: Any, kind: Kind, method: str, ns: str, name: str | None, content_type: str,
           query: dict[str, str], body: Any) -> tuple[int, dict[str, Any]] | None:
    """(status, body) for a request on one object of ``kind``; None: not such a request."""
    store: dict[tuple[str, str], dict[str, Any]] = getattr(st, kind.store)
    if name is None:
        return None
    key = (ns, name)
    found = store.get(key)
    if method == "PATCH" and "apply-patch" in content_type:
        return _apply(st, kind, store, key, body)
    if method == "PATCH" and "merge-patch" in content_type:
        if found is None:
            return not_found(kind, name)
        store[key] = _merge(found, body)
        return ANSWERS["merge-patch"].status, _copy(store[key])
    if method == "GET":
        return not_found(kind, name) if found is None else (ANSWERS["get"].status, _copy(found))
    if method == "DELETE":
        return _delete(kind, store, key, query, body)
    return None


def _apply(st: Any, kind: Kind, store: dict[tuple[str, str], dict[str, Any]],
           key: tuple[str, str], body: Any) -> tuple[int, dict[str, Any]]:
    name = key[1]
    if name in st.invalid:  # errors.NewInvalid (rest/create.go BeforeCreate, update.go)
        causes = st.invalid[name]
        # The message ends in errs.ToAggregate(): one error as itself, several (repeats
        # dropped) bracketed, ", " between (apimachinery pkg/util/errors/errors.go
        # aggregate.Error); each is field.Error.Error(), "FIELD: " + ErrorBody.
        errs = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in causes))
        detail = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        return ANSWERS["apply-invalid"].status, status(
            422, "Invalid", f'{kind.kind_name()} "{name}" is invalid: {detail}',
            {"name": name, "group": kind.group, "kind": kind.kind, "causes": causes})
    if name in st.conflicts:  # managedfields/internal/conflict.go NewConflictError
        manager, path = st.conflicts[name]
        return ANSWERS["apply-conflict"].status, status(
            409, "Conflict", f'Apply failed with 1 conflict: conflict with "{manager}": {path}',
            {"causes": [{"type": "FieldManagerConflict", "message": f'conflict with "{manager}"',
                         "field": path}]})
    found = store.get(key)
    obj = _copy(body)
    meta = obj.setdefault("metadata", {})
    old = (found or {}).get("metadata", {})
    meta["uid"] = old.get("uid") or f"{kind.uid_prefix}{name}"
    # apiserver registry/rest/update.go BeforeUpdate: "an update can never remove/change a
    # deletion timestamp" (nor a set grace period), so an apply onto an object being
    # deleted leaves it being deleted; finalizers are a set (ObjectMeta listType=set), so
    # another manager's stay next to the applier's.
    for field_ in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if field_ in old:
            meta[field_] = old[field_]
    finalizers = list(dict.fromkeys(old.get("finalizers", []) + meta.get("finalizers", [])))
    if finalizers:
        meta["finalizers"] = finalizers
    store[key] = obj
    row = ANSWERS["apply-create" if found is None else "apply-update"]
    return row.status, _copy(obj)


def _delete(kind: Kind, store: dict[tuple[str, str], dict[str, Any]], key: tuple[str, str],
            query: dict[str, str], body: Any) -> tuple[int, dict[str, Any]]:
    """registry/store.go Delete: an object with finalizers (its own, or foregroundDeletion
    that propagationPolicy=Foreground adds) is answered marked for deletion; the fake has
    no dependents, so its garbage collector drops foregroundDeletion at once and the object
    goes unless finalizers of its own keep it. Otherwise it goes now, answered by a Status."""
    found = store.get(key)
    if found is None:
        return not_found(kind, key[1])
    own = list(found.get("metadata", {}).get("finalizers") or [])
    foreground = _option("propagationPolicy", query, body) == "Foreground"
    pending = own + (["foregroundDeletion"] if foreground else [])
    if pending:
        marked = _copy(found)  # store.go markAsDeleting: a timestamp, grace period 0
        marked["metadata"].update(deletionTimestamp=DELETED_AT, deletionGracePeriodSeconds=0,
                                  finalizers=pending)
        if own:
            store[key] = {**marked, "metadata": {**marked["metadata"], "finalizers": own}}
        else:
            store.pop(key)
        row = ("delete-orphan-false" if _option("orphanDependents", query, body) == "false"
               else "delete-foreground")
        return ANSWERS[row].status, marked
    store.pop(key)
    uid = found.get("metadata", {}).get("uid", "")
    return ANSWERS["delete"].status, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": key[1], "group": kind.group, "kind": kind.resource, "uid": uid}}


def merge_patch(target: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386) of a copy of ``target`` (a cluster-scoped object the
    fake routes itself, such as a ClusterQueue)."""
    return _merge(_copy(target), patch)
