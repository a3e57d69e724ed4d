"""Config of the stack's Vertex AI TensorBoard instance (``accelstack:tensorboard``).

``tensorboard`` declares one Vertex AI TensorBoard instance the stack owns: workloads
created with ``submit workload create --tensorboard`` get the variables MaxText reads to
upload their logs to it (submit/render/diagnostics/pod.py). Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import show
from infra.config.reader import Reader
from infra.record import record

KEYS = ("displayName", "region")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+\Z")


@record
class VertexTensorboard:
    """One Vertex AI TensorBoard instance in the stack's project."""

    display_name: str
    region: str


def default_display_name(cluster_name: str) -> str:
    return f"{cluster_name}-tensorboard"


def parse_tensorboard(r: Reader, raw: Any, *, region: str | None,
                      cluster_name: str | None) -> VertexTensorboard | None:
    """``tensorboard: {}`` (or ``true``) declares the instance with the defaults: display name
    ``<clusterName>-tensorboard`` in the stack's region."""
    if raw is None or raw is False:
        return None
    if raw is True:
        raw = {}
    top = r.obj(raw, "tensorboard", KEYS)
    if not isinstance(raw, Mapping):
        return None
    name = r.get(top, "displayName", "tensorboard", str,
                 default=default_display_name(cluster_name or ""))
    where = r.get(top, "region", "tensorboard", str, default=region)
    ok = r.check(bool(name.strip()), "tensorboard.displayName",
                 f"{show(name)} is empty; give the instance's display name")
    if where is not None and "region" in top:
        ok = r.check(bool(_REGION.match(where)), "tensorboard.region",
                     f"{show(where)} is not a region such as us-central1") and ok
    if not ok or where is None:
        return None
    return VertexTensorboard(display_name=name, region=where)

