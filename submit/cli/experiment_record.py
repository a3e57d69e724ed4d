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


def trial_states(ctx: Context, name: str, ns: str, record: dict[str, Any],
                 links: bool = False) -> list[dict[str, Any]]:
    """Each trial of the record, in its order: its state, admission, restarts and message
    (and with ``links`` its Cloud Console links). The trials' JobSets are read a page at a
    time and dropped once their rows are made (submit/cli/listing.py), so 10,000 trials are
    never 10,000 JobSets in memory."""
    from submit.cli import listing

    cluster = ctx.cluster
    kueue = listing.kueue_index(cluster, ns)
    found: dict[str, dict[str, Any]] = {}
    for page in listing.pages(cluster.jobset_pages(ns, f"{ex.EXPERIMENT}={name}")):
        for js in page:
            s = api.status_of(js, listing.owned(kueue, js))
            found[js["metadata"]["name"]] = {
                "state": s.state, "admission": s.admission, "restarts": s.restarts,
                "message": s.message, "links": _links(ctx, js) if links else None}
    rows = []
    for t in record.get("trials", []):
        row = found.get(t["name"])
        if row is None:
            rows.append({"trial": t["name"], "state": "Deleted", "admission": "-",
                         "parameters": t["parameters"], "links": None})
            continue
        rows.append({"trial": t["name"], **row, "parameters": t["parameters"]})
    return rows


def _links(ctx: Context, js: dict[str, Any]) -> dict[str, Any]:
    """A trial's Cloud Console links (docs/diagnostics.md)."""
    from submit.render.dashboard_link import with_dashboard
    from submit.render.diagnostics import links  # late: describe only

    return with_dashboard(links.links(ctx.outputs.cluster, js), ctx.outputs, js)


def counts(rows: list[dict[str, Any]]) -> str:
    """Trials by state, in the order a trial goes through them: "2 Running, 1 Completed"."""
    by_state: dict[str, int] = {}
    for r in rows:
        by_state[r["state"]] = by_state.get(r["state"], 0) + 1
    order = list(STATES) + ["Deleted"]
    return ", ".join(f"{by_state[s]} {s}" for s in sorted(by_state, key=order.index))
