"""Pulumi secrets in the stack config: which keys may hold one, and a string that hides.

A value given with ``pulumi config set --secret`` (``secure:`` in the stack file) reaches
the program decrypted. It stays secret only if every resource input made from it is an
``Output.secret``, and if no message prints it. So secrets are accepted only for keys whose
values flow to inputs the program wraps (``infra.components.cluster`` wraps the control
plane's authorized networks); for any other key a secret would leak into resource names,
labels or the outputs contract, and is refused. Pure; no pulumi.
"""

from __future__ import annotations

import json
from typing import Any

MASK = "[secret]"

# masterAuthorizedNetworks: the addresses allowed to reach the control plane (office and
# VPN ranges) are what teams keep out of their repositories.
SECRET_KEYS = ("masterAuthorizedNetworks",)


class SecretStr(str):
    """A secret string: compares and parses as its value; ``repr`` (and so every config
    error message, which quotes values with ``repr``) shows only the mask."""

    __slots__ = ()

    def __repr__(self) -> str:
        return MASK


def contains_secret(value: object) -> bool:
    """Whether ``value`` holds a secret anywhere inside it."""
    if isinstance(value, SecretStr):
        return True
    if isinstance(value, dict):
        return any(contains_secret(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_secret(v) for v in value)
    return False


def hide(value: object) -> object:
    """``value`` with every string inside it made a SecretStr."""
    if isinstance(value, dict):
        return {k: hide(v) for k, v in value.items()}
    if isinstance(value, list):
        return [hide(v) for v in value]
    return SecretStr(value) if isinstance(value, str) else value


# Keys whose values are strings that read as JSON numbers: Pulumi hands a YAML string
# `"1.34"` over raw, exactly as it hands the number 1.34, so decoding would turn the pinned
# version into 1.34 (and "1.30" into 1.3). They are never decoded.
PLAIN_STRING_KEYS = frozenset({"gkeVersion"})


def decode_config_value(value: Any, name: str = "") -> Any:
    """A config value as Pulumi hands it to a program or a policy pack: structured values
    JSON-encoded, plain strings as they are. ``name``: the key without its namespace."""
    if not isinstance(value, str) or name in PLAIN_STRING_KEYS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value
