"""`--ml-diagnostics`: the label that has ML Diagnostics' injection webhook give a JobSet's
pods the metadata the google-cloud-mldiagnostics SDK reads, on stacks that install the
webhook (``accelstack:mlDiagnostics``, infra/specs/ml_diagnostics.py). Pure.

Google's instructions label the JobSet itself (or its namespace) with
``managed-mldiagnostics-gke: "true"`` before it is created (AI-Hypercomputer/
google-cloud-mldiagnostics README.md, "Label workload"). The run itself, and its profiles,
come from the SDK's ``machinelearning_run`` in the job's code; the runs are listed in the
Cloud Console under GKE's AI/ML Diagnostics tab and Cluster Director's Diagnostics tab (same
README, "Viewing Logs, Metrics and Profiles"), which gives no URL of a run's page.
"""

from __future__ import annotations

from typing import Any

LABEL = "managed-mldiagnostics-gke"
VALUE = "true"
WHERE = ("the Cloud Console's GKE > AI/ML > Diagnostics tab (or Cluster Director > "
         "Diagnostics) lists the machine-learning runs the job's google-cloud-mldiagnostics "
         "SDK creates, with their profiles")


def refusal(stack_has_it: bool) -> str | None:
    """Why --ml-diagnostics cannot run on this stack, or None."""
    if stack_has_it:
        return None
    return ("the stack does not install ML Diagnostics' injection webhook; set "
            "accelstack:mlDiagnostics: true in its stack file and run `pulumi up` "
            "(docs/diagnostics.md)")


def label(jobset: dict[str, Any]) -> dict[str, Any]:
    """The JobSet with the label that has the webhook inject the SDK's metadata."""
    jobset["metadata"].setdefault("labels", {})[LABEL] = VALUE
    return jobset


def labeled(jobset: dict[str, Any]) -> bool:
    return ((jobset.get("metadata") or {}).get("labels") or {}).get(LABEL) == VALUE
