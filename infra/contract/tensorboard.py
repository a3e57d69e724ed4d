"""The Vertex AI TensorBoard part of the contract: the instance the stack declares
(infra/config/tensorboard.py), for `submit workload create --tensorboard` and `describe`.

Optional and additive (no contract version change): outputs without the key have no
instance, so older outputs load unchanged. Pure data.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.record import record

_FIELDS = ("project", "region", "displayName", "name")


@record
class TensorboardInfo:
    """``name`` is the instance's resource name,
    projects/<number>/locations/<region>/tensorboards/<id>."""

    project: str
    region: str
    display_name: str
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {"project": self.project, "region": self.region,
                "displayName": self.display_name, "name": self.name}


def load(data: Any, path: str, error: type[Exception]) -> TensorboardInfo | None:
    """Read the ``tensorboard`` value (None when absent); ``error`` names ``path`` and the
    bad field."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise error(f"{path}: not an object")
    values = []
    for key in _FIELDS:
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise error(f"{path}.{key}: {value!r} is not a non-empty string")
        values.append(value)
    return TensorboardInfo(*values)
