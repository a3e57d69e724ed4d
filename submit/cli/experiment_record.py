"""The experiment record, one ConfigMap ``<name>-experiment`` holding the expansion as JSON
(see submit/cli/experiment.py for why a ConfigMap), and its trials' states as the cluster
reports them: what `submit experiment list`, `describe` and `wait` read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from submit import api
from submit.experiment import expand as ex
from submit.experiment import trials
from submit.cli.context import Context, kube_call

RECORD_SUFFIX = "-experiment"
RECORD_KEY = "expansion.json"
RECORD_LABEL = "accelstack.dev/experiment-record"
STATES = ("Held", "Pending", "Suspended", "Running", "Completed", "Failed")


def record_name(name: str) -> str:
    return f"{name}{RECORD_SUFFIX}"


def new_record(exp: ex.Experiment, plans: list[trials.TrialPlan], ns: str,
               max_running: int | None) -> dict[str, Any]:
    expansion = {"name": exp.name, "description": exp.description,
                 "file": Path(exp.file).name, "maxRunning": max_running,
                 "keys": list(exp.keys),
                 "trials": [{"name": p.name, "parameters": dict(p.trial.params)}
                            for p in plans]}
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": record_name(exp.name), "namespace": ns,
                         "labels": {"app.kubernetes.io/managed-by": "accelstack",
                                    ex.EXPERIMENT: exp.name, RECORD_LABEL: "true"}},
            "data": {RECORD_KEY: json.dumps(expansion, indent=1)}}


def load_record(ctx: Context, name: str, ns: str) -> dict[str, Any]:
    cluster = ctx.cluster
    cm = kube_call(lambda: cluster.get_config_map(ns, record_name(name)))
    if cm is None:
        raise click.ClickException(f"experiment {name} not found in namespace {ns}")
    try:
        data: dict[str, Any] = json.loads((cm.get("data") or {})[RECORD_KEY])
    except (KeyError, ValueError):
        raise click.ClickException(f"the record of experiment {name} ({record_name(name)}) "
                                   "is not one accelstack wrote") from None
    return data


def trial_states(ctx: Context, name: str, ns: str, record: dict[str, Any]
                 ) -> list[dict[str, Any]]:
    cluster = ctx.cluster
    found = kube_call(lambda: cluster.list_jobsets(ns, f"{ex.EXPERIMENT}={name}"))
    kueue = kube_call(lambda: cluster.list_workloads(ns))
    by_name = {j["metadata"]["name"]: j for j in found}
    rows = []
    for t in record.get("trials", []):
        js = by_name.get(t["name"])
        if js is None:
            rows.append({"trial": t["name"], "state": "Deleted", "admission": "-",
                         "parameters": t["parameters"]})
            continue
        s = api.status_of(js, kueue)
        rows.append({"trial": t["name"], "state": s.state, "admission": s.admission,
                     "restarts": s.restarts, "message": s.message,
                     "parameters": t["parameters"], "jobset": js})
    return rows


def counts(rows: list[dict[str, Any]]) -> str:
    """Trials by state, in the order a trial goes through them: "2 Running, 1 Completed"."""
    by_state: dict[str, int] = {}
    for r in rows:
        by_state[r["state"]] = by_state.get(r["state"], 0) + 1
    order = list(STATES) + ["Deleted"]
    return ", ".join(f"{by_state[s]} {s}" for s in sorted(by_state, key=order.index))
