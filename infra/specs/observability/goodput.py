"""What a workload needs to record its goodput with ``ml-goodput-measurement`` (Google's
library, AI-Hypercomputer/ml-goodput-measurement; MaxText records with it), as data.

The library's ``GoodputRecorder(job_name, logger_name, logging_enabled)`` writes one
structured Cloud Logging entry per event (job start, TPU init, training preparation, data
loading, each step's start, job end) to the log ``logger_name``, keyed by
``jsonPayload.job_name``; its ``GoodputCalculator`` reads them back (src/goodput.py
``_CloudLogger``: filter ``logName=...``, ``severity=INFO``, ``jsonPayload.job_name=...``)
and its monitoring uploader writes goodput as Cloud Monitoring metrics. So the job's
Google identity needs roles/logging.logWriter (write the entries) and
roles/monitoring.metricWriter (the uploader's time series), and roles/logging.viewer for
a calculator that runs in the job. Jobs reach Google as their namespace's Kubernetes
service account (Workload Identity Federation for GKE, infra/specs/storage.py), so each
workload namespace's account gets them when the stack observes (the default).
Pure; no pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import StackConfig
from infra.record import record
from infra.specs import storage as storage_spec

ROLES = ("roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/logging.viewer")


@record
class Grant:
    namespace: str
    role: str

    @property
    def resource_name(self) -> str:
        return f"goodput-{self.namespace}-{self.role.rsplit('.', 1)[-1].lower()}"


def grants(cfg: StackConfig) -> list[Grant]:
    if not cfg.observability.enabled:
        return []
    return [Grant(ns, role) for ns in storage_spec.namespaces(cfg) for role in ROLES]


def grant_args(cfg: StackConfig, grant: Grant, project_number: str) -> dict[str, Any]:
    return {"project": cfg.project, "role": grant.role,
            "member": storage_spec.principal(project_number, cfg.project, grant.namespace,
                                             cfg.storage.service_account)}
