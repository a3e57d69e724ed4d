"""The stack's Cloud Monitoring dashboard, narrowed to one workload, for `describe`
(infra/contract/observability.py builds the URL; docs/observability.md). Pure."""

from __future__ import annotations

from typing import Any

from infra.contract.outputs import StackOutputs


def with_dashboard(found: dict[str, Any], outputs: StackOutputs,
                   jobset: dict[str, Any]) -> dict[str, Any]:
    """``found`` (the workload's links) with ``dashboard`` added when the stack has one."""
    if outputs.monitoring is None:
        return found
    meta = jobset.get("metadata") or {}
    url = outputs.monitoring.dashboard_url(str(meta.get("namespace") or "") or None,
                                           str(meta.get("name") or "") or None)
    return {**found, "dashboard": url}
