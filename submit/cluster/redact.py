"""What no message of the Kubernetes seam (submit/cluster/kube.py) may show: the
kubeconfig's credentials (tokens, client keys and certificates, exec plugin arguments) and
bearer or basic tokens a proxy or webhook echoes; and where a kubeconfig's YAML is wrong,
without the text PyYAML would quote. Pure: the seam scrubs with these before a message
leaves it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

BEARER = re.compile(r"(?i)(bearer|basic)\s+[-A-Za-z0-9._~+/=]+")
_CREDENTIAL_KEYS = ("token", "password", "client-key-data", "client-certificate-data",
                    "id-token", "refresh-token", "access-token", "client-secret")
_NOT_CREDENTIALS = ("name", "command", "apiVersion", "installHint", "interactiveMode")
REDACTED = "[redacted]"


def server_message(exc: Any) -> str:
    """The API server's own message of a failed call (its Status body), else the reason."""
    body = getattr(exc, "body", None)
    if body:
        try:
            data = json.loads(body)
            if isinstance(data, dict) and data.get("message"):
                return str(data["message"])
        except (ValueError, TypeError):
            pass
    return str(getattr(exc, "reason", "") or exc)


def credentials(node: Any, key: str = "", in_users: bool = False) -> list[str]:
    """Every value in a kubeconfig that must never be shown: under ``users`` all but names
    and the exec plugin's command, and any credential key (or ``*-data``) wherever it is."""
    if isinstance(node, dict):
        return [s for k, v in node.items()
                for s in credentials(v, str(k), in_users or k == "users")]
    if isinstance(node, list):
        return [s for v in node for s in credentials(v, key, in_users)]
    if isinstance(node, str) and len(node) >= 4 and (
            in_users and key not in _NOT_CREDENTIALS
            or key in _CREDENTIAL_KEYS or key.endswith("-data")):
        return [node]
    return []


def yaml_problem(e: yaml.YAMLError) -> str:
    """Where a YAML error is, without the snippet of text PyYAML quotes."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or e.__class__.__name__
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return str(problem)
