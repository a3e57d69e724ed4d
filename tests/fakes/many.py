"""Many workloads on the fake API server (tests/fake_apiserver.py): N JobSets as the
submitter renders them (the golden v5e multislice JobSet, tests/golden/v5e-multislice, about
7 KB each, renamed), their Kueue workloads (named as Kueue names them: jobset-<name>-<5 hex>,
owned by the JobSet), and an experiment's record; for tests/test_lists_at_scale.py and
bench/lists.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "v5e-multislice" / "expected.yaml"
EXPERIMENT = "accelstack.dev/experiment"  # submit/experiment/expand.py EXPERIMENT
RECORD_LABEL = "accelstack.dev/experiment-record"  # submit/cli/experiment_record.py


def jobsets(ns: str, names: list[str], experiment: str | None = None
            ) -> dict[tuple[str, str], dict[str, Any]]:
    """The fake's ``state.jobsets`` for these names."""
    template = yaml.safe_load(GOLDEN.read_text())
    out = {}
    for i, name in enumerate(names):
        js = copy.deepcopy(template)
        meta = js["metadata"]
        meta.update(name=name, namespace=ns, uid=f"uid-{name}",
                    creationTimestamp="2026-01-01T00:00:00Z")
        if experiment:
            meta["labels"][EXPERIMENT] = experiment
        js["status"] = {"restarts": 0, "replicatedJobsStatus": [
            {"name": "slice", "active": 2 if i % 2 else 0, "ready": 0}]}
        out[(ns, name)] = js
    return out


def workloads(ns: str, names: list[str]) -> list[dict[str, Any]]:
    """The Kueue workloads of these JobSets: every third one admitted."""
    return [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
             "metadata": {"name": f"jobset-{name}-1a2b3", "namespace": ns,
                          "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2",
                                               "kind": "JobSet", "name": name,
                                               "uid": f"uid-{name}"}]},
             "spec": {"queueName": "main"},
             "status": {"conditions": [{"type": "Admitted", "status": "True",
                                        "reason": "Admitted"}] if i % 3 == 0 else []}}
            for i, name in enumerate(names)]


def record(ns: str, experiment: str, names: list[str]) -> dict[str, Any]:
    """The experiment's record ConfigMap: one trial per name, parameter ``env.LR``."""
    expansion = {"name": experiment, "keys": ["env.LR"], "file": f"{experiment}.yaml",
                 "trials": [{"name": n, "parameters": {"env.LR": f"{i}e-4"}}
                            for i, n in enumerate(names)]}
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{experiment}-experiment", "namespace": ns,
                         "labels": {EXPERIMENT: experiment, RECORD_LABEL: "true"}},
            "data": {"expansion.json": json.dumps(expansion)}}
