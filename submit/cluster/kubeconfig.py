"""Merging a stack's kubeconfig into the user's, so kubectl (and k9s, ...) reach the
stack's cluster through gke-gcloud-auth-plugin, as `gcloud container clusters
get-credentials` would, without touching the user's other clusters, users and contexts.
Pure: text in, text out; the command (`submit cluster credentials`) reads and writes."""

from __future__ import annotations

from typing import Any

import yaml


class MergeError(ValueError):
    """The user's kubeconfig cannot be merged into; the message says why (never its
    content: it holds credentials)."""


def exec_commands(config: dict[str, Any]) -> list[str]:
    """The commands a kubeconfig's users run for credentials (``user.exec.command``)."""
    users = config.get("users")
    found = []
    for user in users if isinstance(users, list) else []:
        spec = user.get("user") if isinstance(user, dict) else None
        exec_ = spec.get("exec") if isinstance(spec, dict) else None
        cmd = exec_.get("command") if isinstance(exec_, dict) else None
        if isinstance(cmd, str) and cmd:
            found.append(cmd)
    return found


def _entries(doc: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(e, dict) and "name" in e
                                              for e in value):
        raise MergeError(f"{where}: {key} is not a list of named entries")
    return value


def merge(existing: str, stack_kubeconfig: str, where: str,
          switch: bool = True) -> tuple[str, str]:
    """(merged text, the context's name): the stack's cluster, user and context replace
    entries of the same names and are added otherwise; everything else stays."""
    try:
        current: Any = yaml.safe_load(existing) if existing.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise MergeError(f"{where} is not YAML{at}; its content is not shown: it holds "
                         "credentials") from None
    if not isinstance(current, dict):
        raise MergeError(f"{where} is not a kubeconfig (not a mapping)")
    new = yaml.safe_load(stack_kubeconfig)
    if not isinstance(new, dict) or not new.get("contexts"):
        raise MergeError("the stack's outputs hold no usable kubeconfig (an offline preview "
                         "has none: run `pulumi up` first)")
    out = dict(current)
    out.setdefault("apiVersion", "v1")
    out.setdefault("kind", "Config")
    for key in ("clusters", "users", "contexts"):
        mine = _entries(current, key, where)
        theirs = _entries(new, key, "the stack's kubeconfig")
        names = {e["name"] for e in theirs}
        out[key] = [e for e in mine if e["name"] not in names] + theirs
    context = str(new.get("current-context") or new["contexts"][0]["name"])
    if switch or not out.get("current-context"):
        out["current-context"] = context
    return str(yaml.safe_dump(out, sort_keys=False)), context
