"""The monitoring part of the contract: the stack's Cloud Monitoring dashboard, for
`submit workload describe` and `experiment describe` (a link narrowed to the workload).

Optional and additive (no contract version change): outputs without the key have no
dashboard, so older outputs load unchanged. Pure data.

The console link: ``https://console.cloud.google.com/monitoring/dashboards/builder/ID
?project=PROJECT`` is the form public Terraform outputs build from a dashboard's resource
name (projects/NUMBER/dashboards/ID); the ``;filters=type:rlabel,key:K,val:V`` part that
narrows it to a workload is the form Google's own benchmark scripts link with, not a
documented URL format: not verified (docs/observability.md says so).
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import quote

from infra.record import record

CONSOLE = "https://console.cloud.google.com/monitoring/dashboards/builder/"


@record
class MonitoringInfo:
    project: str
    dashboard: str  # projects/<number>/dashboards/<id>
    # Each workload namespace's job identity may record goodput (the roles of
    # infra/specs/observability/goodput.py).
    goodput: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"project": self.project, "dashboard": self.dashboard,
                **({"goodput": True} if self.goodput else {})}

    def dashboard_url(self, namespace: str | None = None, workload: str | None = None) -> str:
        """The dashboard in the console; with ``namespace`` and ``workload`` its pinned
        filters set to them (the pods' namespace, their top-level controller: the JobSet)."""
        ident = self.dashboard.rsplit("/", 1)[-1]
        filters = []
        if namespace:
            filters.append(f"type:rlabel,key:namespace_name,val:{namespace}")
        if workload:
            filters.append(f"type:mlabel,key:top_level_controller_name,val:{workload}")
        part = (";filters=" + quote("+".join(filters), safe=":,")) if filters else ""
        return f"{CONSOLE}{ident}{part}?project={self.project}"


def load(data: Any, path: str, error: type[Exception]) -> MonitoringInfo | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise error(f"{path}: not an object")
    values = []
    for key in ("project", "dashboard"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise error(f"{path}.{key}: {value!r} is not a non-empty string")
        values.append(value)
    if not values[1].rsplit("/", 1)[-1]:
        raise error(f"{path}.dashboard: {values[1]!r} is not projects/P/dashboards/ID")
    goodput = data.get("goodput", False)
    if not isinstance(goodput, bool):
        raise error(f"{path}.goodput: {goodput!r} is not true or false")
    return MonitoringInfo(values[0], values[1], goodput)
