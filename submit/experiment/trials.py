"""Trials of an expanded experiment rendered into JobSets: each trial's workload, its name, the
objects it applies with the experiment's labels and annotations, and the table `plan` prints.
Pure; the sweep file itself is read and expanded by expand.py."""

from __future__ import annotations

import hashlib
import json
import shlex
from typing import Any

import yaml

from infra.contract.outputs import StackOutputs
from infra.record import record, replace
from submit import api
from submit.experiment.expand import (_LABEL_NAME, _LABEL_VALUE, EXPERIMENT, PARAM_PREFIX,
                                      PARAMETERS, TRIAL, Experiment, ExperimentError, Trial,
                                      _option, _text)
from submit.render import check
from submit.render import spec as sp
from submit.render.jobset import render


@record
class TrialPlan:
    trial: Trial
    name: str
    objects: list[dict[str, Any]]


def trial_workload(exp: Experiment, trial: Trial, name: str) -> tuple[api.Workload, Any]:
    """The trial's Workload and its config overrides (None: the base's file as it is)."""
    opts = dict(exp.base)
    env = list(opts.get("env", ()))
    args: list[str] = []
    config: list[tuple[list[str], Any]] = []
    for key, value in trial.params:
        if key.startswith("env."):
            env.append(f"{key[4:]}={_text(value)}")
        elif key == "args":
            args += [_text(v) for v in (value if isinstance(value, list) else [value])]
        elif key.startswith("config."):
            config.append((key[7:].split("."), value))
        else:
            opts[key] = _option(key, value, key, _never, exp.file)
    if env:
        opts["env"] = tuple(env)
    if args:
        opts["command"] = " ".join([opts["command"], *map(shlex.quote, args)])
    kwargs = {k.replace("-", "_"): v for k, v in opts.items()}
    return api.Workload(name=name, **kwargs), config or None


def _never(path: str, message: str) -> ValueError:
    return ValueError(f"{path}: {message}")


def _with_config(spec: sp.WorkloadSpec, overrides: list[tuple[list[str], Any]], where: str
                 ) -> sp.WorkloadSpec:
    text = spec.config_file_data or ""
    as_json = (spec.config_file_name or "").endswith(".json")
    try:
        data = json.loads(text) if as_json else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        raise sp.SpecError("--config-file", f"{spec.config_file_name} is not "
                           f"{'JSON' if as_json else 'YAML'}; config.* keys cannot be set") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise sp.SpecError("--config-file", f"{spec.config_file_name} is not a mapping")
    for keys, value in overrides:
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise sp.SpecError("--config-file", f"config.{'.'.join(keys)}: {k!r} in "
                                   f"{spec.config_file_name} is not a mapping")
        node[keys[-1]] = value
    out = json.dumps(data, indent=2) + "\n" if as_json else yaml.safe_dump(data, sort_keys=False)
    return replace(spec, config_file_data=out)


def trial_name(experiment: str, index: int, count: int, budget: int) -> str:
    """``<experiment>-<n>`` (n zero-padded to the trial count's width); over the hostname
    budget, the experiment part is cut and a hash of the full name keeps it unique."""
    full = f"{experiment}-{index:0{len(str(max(count - 1, 0)))}d}"
    if len(full) <= budget:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:5]
    tail = f"-{digest}-{index}"
    head = experiment[:max(1, budget - len(tail))].rstrip("-")
    return f"{head}{tail}"


def plan(exp: Experiment, outputs: StackOutputs) -> list[TrialPlan]:
    """Every trial rendered and checked against the stack; the first bad trial raises
    ExperimentError naming it and its parameters."""
    out: list[TrialPlan] = []
    for trial in exp.trials:
        try:
            out.append(_plan_trial(exp, trial, outputs))
        except sp.SpecError as e:
            raise ExperimentError(exp.file, _line_of_option(exp, trial, e.option),
                                  f"trial {trial.index} ({trial.describe()}): {e.option}: "
                                  f"{e.message}") from None
    return out


def _line_of_option(exp: Experiment, trial: Trial, option: str) -> int | None:
    """Where the value behind a bad option was written: the trial's swept value, else the
    base's key, else the trial's first sweep line."""
    key = option.lstrip("-")
    return (trial.line_of(key) or exp.lines.get(f"workload.{key}")
            or (exp.lines.get("workload.env") if key == "env" else None) or trial.line or None)


def _plan_trial(exp: Experiment, trial: Trial, outputs: StackOutputs) -> TrialPlan:
    provisional = f"{exp.name}-0"
    workload, config = trial_workload(exp, trial, provisional)
    verdict = check.workload(outputs, workload.options(), rendered=False)  # the one path
    if not verdict.ok:
        raise verdict.refusals[0]
    assert verdict.spec is not None
    spec = verdict.spec
    budget = sp.hostname_budget(spec.replicas, spec.parallelism, spec.pool.kind)
    name = trial_name(exp.name, trial.index, len(exp.trials), budget)
    spec = replace(spec, name=name)
    if config:
        spec = _with_config(spec, config, exp.file)
    objs = render(spec)
    for obj in objs:
        _mark(obj, exp.name, name, trial)
    return TrialPlan(trial, name, objs)


def _mark(obj: dict[str, Any], experiment: str, trial_name_: str, trial: Trial) -> None:
    meta = obj["metadata"]
    labels = meta.setdefault("labels", {})
    labels[EXPERIMENT] = experiment
    labels[TRIAL] = trial_name_
    if obj["kind"] != "JobSet":
        return
    for key, value in trial.params:
        label = PARAM_PREFIX + key
        text = _text(value)
        if (len(key) <= 63 and _LABEL_NAME.match(key) and len(text) <= 63
                and _LABEL_VALUE.match(text)):
            labels[label] = text
    # Every parameter, whatever its characters or length (label values cannot hold '=',
    # '/', spaces or more than 63 characters).
    meta.setdefault("annotations", {})[PARAMETERS] = json.dumps(
        dict((k, v) for k, v in trial.params))


def table(exp: Experiment, plans: list[TrialPlan]) -> list[dict[str, Any]]:
    """The expansion as rows: trial name, then one column per sweep key."""
    rows = []
    for p in plans:
        params = dict(p.trial.params)
        rows.append({"trial": p.name, **{k: _text(params[k]) if k in params else "-"
                                         for k in exp.keys}})
    return rows
