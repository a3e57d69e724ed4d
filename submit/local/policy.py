"""What a failed or finished process means for the workload, as the Job controller and
JobSet v0.12.0 decide it on the cluster. Pure: the runner asks, this module answers.

- A pod that exits non-zero is matched against its Job's ``podFailurePolicy`` rules, first
  match wins (Kubernetes batch/v1): ``FailJob`` fails the Job at once (reason
  ``PodFailurePolicy``), ``Ignore`` replaces the pod without counting it, ``Count`` (and no
  match) counts a failure; more failures than ``backoffLimit`` fail the Job (reason
  ``BackoffLimitExceeded``), fewer replace the pod.
- A failed Job is matched against the JobSet's ``failurePolicy.rules`` (by reason, message
  pattern and target replicated Job, first match wins); with no match the action is
  ``RestartJobSet``; with no failurePolicy at all the JobSet fails
  (kubernetes-sigs/jobset v0.12.0 pkg/controllers/failure_policy.go).
  ``RestartJobSet`` restarts everything while restarts counted so far < ``maxRestarts``,
  else fails; ``RestartJobSetAndIgnoreMaxRestarts`` restarts without counting.
- Success: every Job of the ``successPolicy`` targets (default: all) succeeded (``All``),
  or any one of them (``Any``).
"""

from __future__ import annotations

import re
from typing import Any

from infra.record import record

FAIL_JOB_SET = "FailJobSet"
RESTART_JOB_SET = "RestartJobSet"
RESTART_IGNORE_MAX = "RestartJobSetAndIgnoreMaxRestarts"
_SUPPORTED_ACTIONS = (FAIL_JOB_SET, RESTART_JOB_SET, RESTART_IGNORE_MAX)
POD_FAILURE_POLICY = "PodFailurePolicy"
BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
DEFAULT_BACKOFF_LIMIT = 6  # batch/v1 Job default


class PolicyError(ValueError):
    """A JobSet feature the local runner cannot reproduce."""


@record
class PodRule:
    action: str  # FailJob, Ignore or Count
    container: str | None
    operator: str | None  # In or NotIn (onExitCodes), None for onPodConditions
    values: tuple[int, ...]

    def matches(self, exit_code: int, container: str) -> bool:
        if self.operator is None:  # onPodConditions (e.g. DisruptionTarget): never locally
            return False
        if self.container is not None and self.container != container:
            return False
        inside = exit_code in self.values
        return inside if self.operator == "In" else not inside


@record
class JobPolicy:
    replicated_job: str
    backoff_limit: int
    rules: tuple[PodRule, ...]

    def pod_action(self, exit_code: int, container: str) -> tuple[str, int | None]:
        """(FailJob, Ignore or Count; the index of the matching rule) for a failed pod."""
        for i, rule in enumerate(self.rules):
            if rule.matches(exit_code, container):
                return rule.action, i
        return "Count", None


@record
class SetRule:
    name: str
    action: str
    reasons: tuple[str, ...]
    patterns: tuple[str, ...]
    targets: tuple[str, ...]

    def matches(self, replicated_job: str, reason: str, message: str) -> bool:
        return ((not self.reasons or reason in self.reasons)
                and (not self.patterns or any(re.search(p, message) for p in self.patterns))
                and (not self.targets or replicated_job in self.targets))


@record
class Policy:
    has_failure_policy: bool
    max_restarts: int
    rules: tuple[SetRule, ...]
    jobs: tuple[JobPolicy, ...]
    success_operator: str = "All"
    success_targets: tuple[str, ...] = ()

    def job(self, replicated_job: str) -> JobPolicy:
        return next(j for j in self.jobs if j.replicated_job == replicated_job)

    def on_job_failure(self, replicated_job: str, reason: str, message: str,
                       restarts_counted: int) -> tuple[str, str]:
        """(FailJobSet or a restart action, why) for a failed Job."""
        if not self.has_failure_policy:
            return FAIL_JOB_SET, "the JobSet has no failurePolicy"
        rule = next((r for r in self.rules if r.matches(replicated_job, reason, message)), None)
        action = rule.action if rule else RESTART_JOB_SET
        why = f"rule {rule.name}" if rule else "no rule matched (default RestartJobSet)"
        if action == RESTART_JOB_SET and restarts_counted >= self.max_restarts:
            return FAIL_JOB_SET, f"{why}; maxRestarts {self.max_restarts} reached"
        return action, why

    def succeeded(self, done: dict[str, list[bool]]) -> bool:
        """``done``: per replicated Job, whether each of its Jobs succeeded."""
        targets = self.success_targets or tuple(done)
        flags = [ok for name in targets for ok in done.get(name, [])]
        return any(flags) if self.success_operator == "Any" else all(flags)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"maxRestarts": self.max_restarts} if self.has_failure_policy \
            else {"failurePolicy": None}
        if self.rules:
            out["rules"] = [{"name": r.name, "action": r.action, "reasons": list(r.reasons)}
                            for r in self.rules]
        out["jobs"] = [{"replicatedJob": j.replicated_job, "backoffLimit": j.backoff_limit,
                        "podFailureRules": [
                            {"action": r.action, "operator": r.operator,
                             "values": list(r.values)} for r in j.rules]}
                       for j in self.jobs]
        out["success"] = {"operator": self.success_operator,
                          "targets": list(self.success_targets)}
        return out


def _job_policy(rj: dict[str, Any]) -> JobPolicy:
    job = rj["template"]["spec"]
    if "backoffLimitPerIndex" in job:
        raise PolicyError(f"replicated job {rj['name']!r}: backoffLimitPerIndex is not "
                          "supported by run-local")
    rules = []
    for r in (job.get("podFailurePolicy") or {}).get("rules") or []:
        if r["action"] not in ("FailJob", "Ignore", "Count"):
            raise PolicyError(f"replicated job {rj['name']!r}: podFailurePolicy action "
                              f"{r['action']!r} is not supported by run-local")
        codes = r.get("onExitCodes")
        if codes:
            rules.append(PodRule(r["action"], codes.get("containerName"), codes["operator"],
                                 tuple(int(v) for v in codes["values"])))
        else:
            rules.append(PodRule(r["action"], None, None, ()))
    return JobPolicy(rj["name"], int(job.get("backoffLimit", DEFAULT_BACKOFF_LIMIT)),
                     tuple(rules))


def from_jobset(js: dict[str, Any]) -> Policy:
    spec = js["spec"]
    fp = spec.get("failurePolicy")
    rules = []
    for i, r in enumerate((fp or {}).get("rules") or []):
        if r["action"] not in _SUPPORTED_ACTIONS:
            raise PolicyError(f"failurePolicy action {r['action']!r} is not supported by "
                              f"run-local (supported: {', '.join(_SUPPORTED_ACTIONS)})")
        rules.append(SetRule(r.get("name") or f"failurePolicyRule{i}", r["action"],
                             tuple(r.get("onJobFailureReasons") or ()),
                             tuple(r.get("onJobFailureMessagePatterns") or ()),
                             tuple(r.get("targetReplicatedJobs") or ())))
    sp = spec.get("successPolicy") or {}
    return Policy(
        has_failure_policy=fp is not None, max_restarts=int((fp or {}).get("maxRestarts", 0)),
        rules=tuple(rules), jobs=tuple(_job_policy(rj) for rj in spec["replicatedJobs"]),
        success_operator=sp.get("operator", "All"),
        success_targets=tuple(sp.get("targetReplicatedJobs") or ()))


def exit_status(returncode: int) -> int:
    """The exit code Kubernetes reports: a process killed by signal N exits 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def job_failure_message(reason: str, container: str, pod: str, exit_code: int,
                        rule_index: int | None = None) -> str:
    """The message the Job controller writes on the Failed condition (matched by
    onJobFailureMessagePatterns)."""
    if reason == POD_FAILURE_POLICY:
        return (f"Container {container} for pod {pod} failed with exit code {exit_code} "
                f"matching FailJob rule at index {rule_index}")
    return "Job has reached the specified backoff limit"
