"""An experiment file expanded into trials: pure, so the whole sweep is checked before
anything is sent.

The file (YAML)::

    name: lr-sweep                  # the experiment (a DNS-1035 label, at most 40 chars)
    workload:                       # the base: every `create` option by its long name
      accelerator: v5litepod-16
      image: python:3.12
      command: python train.py
      env: {STEPS: "100"}           # a mapping, or a list of KEY=VALUE
    sweep:                          # one block, or a list of blocks (their union)
      env.LR: [1e-4, 3e-4]          # a list is an axis: axes combine as a product
      num-slices: [1, 2, 4]
      zip:                          # keys given together are zipped (equal lengths)
        args: ["--model=small", "--model=large"]   # appended to the command
        config.batch: [64, 32]      # a key of the --config-file (YAML or JSON)

A sweep key is ``env.NAME``, ``args``, ``config.KEY[.KEY...]`` or any option of the base
(``accelerator``, ``pool``, ``num-slices``, ``image`` ...). A scalar is a value every trial
of the block gets. Trials are numbered in order (blocks in turn, the last axis varying
fastest) and named ``<experiment>-<n>``; a name that would not leave room for the pods'
hostnames (submit.render.spec.hostname_budget) is shortened with a hash of the full one.
Every error is one line ``FILE:LINE: where: what is wrong``.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import yaml

from infra.config.errors import did_you_mean
from infra.record import field_names, record
from submit import api
from submit.render import spec as sp

MAX_NAME = 40  # experiment name: leaves room for "-<n>" and the pods' hostnames
DEFAULT_MAX_TRIALS = 100
EXPERIMENT = "accelstack.dev/experiment"
TRIAL = "accelstack.dev/trial"
PARAMETERS = "accelstack.dev/parameters"  # annotation: every parameter, as JSON
PARAM_PREFIX = "params.accelstack.dev/"  # one label per parameter whose value fits a label
TOP_KEYS = ("name", "description", "workload", "sweep")
# The base's keys: `create`'s options by their long names (the API's Workload fields);
# `workload` is each trial's name, and building images (--script-dir) is per command.
OPTIONS = tuple(name.replace("_", "-") for name in field_names(api.Workload)
                if name != "name")
_LIST_OPTIONS = ("env", "secret-env", "add-capability", "mount")
_PATH_OPTIONS = ("env-file", "config-file")
_INT_OPTIONS = ("num-slices", "num-nodes", "max-restarts", "elastic-slices")
# Durations: seconds as a number, or text such as 90s or 2m (submit/render/duration.py).
_DURATION_OPTIONS = ("ttl", "termination-grace-period")
_BOOL_OPTIONS = ("mount-service-account-token", "pathways", "headless")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")


class ExperimentError(ValueError):
    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.message = f"{file}:{line}: {message}" if line else f"{file}: {message}"
        super().__init__(self.message)


@record
class Trial:
    index: int
    params: tuple[tuple[str, Any], ...]  # (sweep key, value), in the file's order
    line: int  # where its sweep block starts
    param_lines: tuple[int, ...] = ()  # the line of each parameter's value

    def line_of(self, key: str) -> int | None:
        """The line of the value this trial takes for sweep key ``key``, if it sweeps it."""
        for (k, _), line in zip(self.params, self.param_lines):
            if k == key or (key == "env" and k.startswith("env.")):
                return line
        return None

    def describe(self) -> str:
        return ", ".join(f"{k}={_text(v)}" for k, v in self.params) or "(base)"


@record
class Experiment:
    name: str
    file: str
    base: dict[str, Any]  # option (long name) -> value, paths resolved
    trials: tuple[Trial, ...]
    keys: tuple[str, ...]  # every sweep key, in order of first appearance
    lines: dict[str, int]
    description: str = ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# -- reading the file with lines ---------------------------------------------------------

def _construct(node: yaml.Node, path: str, lines: dict[str, int], file: str) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            if not isinstance(key, str) or k.tag != "tag:yaml.org,2002:str":
                raise ExperimentError(file, k.start_mark.line + 1,
                                      f"{path or 'the file'}: keys must be strings")
            if key in out:
                raise ExperimentError(file, k.start_mark.line + 1, f"{_join(path, key)}: "
                                      f"duplicate key (first on line {lines[_join(path, key)]})")
            lines[_join(path, key)] = k.start_mark.line + 1
            out[key] = _construct(v, _join(path, key), lines, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(v, f"{path}[{i}]", lines, file) for i, v in enumerate(node.value)]
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def load(file: str, text: str | None = None, image_built: bool = False) -> Experiment:
    """Read and expand an experiment file (raises ExperimentError). ``image_built``: the
    command builds the image (--script-dir), so the file must not name one."""
    if text is None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except OSError as e:
            raise ExperimentError(file, None, f"cannot read it: {e.strerror}") from None
        except UnicodeDecodeError:
            raise ExperimentError(file, None, "is not UTF-8 text") from None
    try:
        node = yaml.compose(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        raise ExperimentError(file, mark.line + 1 if mark else None,
                              f"not YAML: {e.problem}") from None
    if node is None:
        raise ExperimentError(file, None, "is empty; it needs name, workload and sweep")
    lines: dict[str, int] = {}
    data = _construct(node, "", lines, file)
    if not isinstance(data, dict):
        raise ExperimentError(file, 1, "must be a mapping with name, workload and sweep")
    return _expand(file, data, lines, image_built)


def _expand(file: str, data: dict[str, Any], lines: dict[str, int],
            image_built: bool = False) -> Experiment:
    def bad(path: str, message: str) -> ExperimentError:
        return ExperimentError(file, lines.get(path), f"{path}: {message}")

    for key in data:
        if key not in TOP_KEYS:
            raise bad(key, unknown("key", key, TOP_KEYS))
    name = data.get("name")
    if not isinstance(name, str):
        raise ExperimentError(file, lines.get("name"), "name: give the experiment's name")
    if not sp.DNS_1035.match(name) or len(name) > MAX_NAME:
        raise bad("name", f"{name!r} is not a DNS-1035 label of at most {MAX_NAME} characters "
                  "(lowercase letters, digits and '-', starting with a letter)")
    workload = data.get("workload")
    if not isinstance(workload, dict):
        raise ExperimentError(file, lines.get("workload"),
                              "workload: give the base workload (a mapping of create options)")
    base: dict[str, Any] = {}
    for key, value in workload.items():
        base[key] = _option(key, value, f"workload.{key}", bad, file)
    for required in ("accelerator",) if image_built else ("accelerator", "image"):
        if required not in base:
            raise ExperimentError(file, lines.get("workload"),
                                  f"workload: {required} is required")
    if image_built and "image" in base:
        raise ExperimentError(file, lines.get("workload.image"),
                              "workload.image: cannot be used with --script-dir (the image is "
                              "built from --base-image and the directory)")
    sweep = data.get("sweep")
    if sweep is None:  # no sweep: one trial, the base
        sweep = {}
    blocks = sweep if isinstance(sweep, list) else [sweep]
    if not blocks:
        raise bad("sweep", "is an empty list; give at least one sweep block")
    trials: list[Trial] = []
    keys: list[str] = []
    for b, block in enumerate(blocks):
        where = f"sweep[{b}]" if isinstance(sweep, list) else "sweep"
        if not isinstance(block, dict):
            raise bad(where, "a sweep block is a mapping of keys to values or lists")
        for params in _block(block, where, base, bad, file):
            for k, _, _ in params:
                if k not in keys:
                    keys.append(k)
            # The trial's line: its first parameter's (else its block's).
            at = [lines[f"{where}{z}.{k}"] for k, _, _ in params for z in ("", ".zip")
                  if f"{where}{z}.{k}" in lines]
            trials.append(Trial(len(trials), tuple((k, v) for k, v, _ in params),
                                min(at, default=lines.get(where, 0)),
                                tuple(lines.get(path, 0) for _, _, path in params)))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise bad("description", "give one line of text")
    return Experiment(name, file, base, tuple(trials), tuple(keys), lines, description)


def unknown(what: str, key: str, allowed: tuple[str, ...] | list[str]) -> str:
    """``unknown option; did you mean command? (allowed: ...)``, as stack files say it."""
    return f"unknown {what}{did_you_mean(key, allowed)} (allowed: {', '.join(allowed)})"


def _option(key: str, value: Any, path: str, bad: Any, file: str) -> Any:
    if key not in OPTIONS:
        raise bad(path, unknown("option", key, OPTIONS))
    if key == "env" and isinstance(value, dict):
        value = [f"{k}={_text(v)}" for k, v in value.items()]
    if key in _LIST_OPTIONS:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(path, "give a list of strings" + (" or a mapping" if key == "env" else ""))
        return tuple(value)
    if key in _PATH_OPTIONS and isinstance(value, str):
        return str(Path(file).parent / value)
    if isinstance(value, (dict, list)):
        raise bad(path, "give one value, not a list or mapping")
    if key in _INT_OPTIONS and (not isinstance(value, int) or isinstance(value, bool)):
        raise bad(path, f"{value!r} is not a whole number")
    if key in _BOOL_OPTIONS and not isinstance(value, bool):
        raise bad(path, f"{value!r} is not true or false")
    if key in _DURATION_OPTIONS and (isinstance(value, bool)
                                     or not isinstance(value, (int, str))):
        raise bad(path, f"{value!r} is not a duration (seconds, or such as 90s or 2m)")
    if key not in _INT_OPTIONS + _BOOL_OPTIONS + _DURATION_OPTIONS and \
            not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key in (
                "cpu", "memory", "shm-size"):
            return str(value)
        raise bad(path, f"{value!r} is not a string")
    return value


def _block(block: dict[str, Any], where: str, base: dict[str, Any], bad: Any, file: str
           ) -> list[list[tuple[str, Any, str]]]:
    """The block's trials: the product of its axes (each zip group one axis); each
    parameter is (key, value, the path of the value in the file)."""
    axes: list[list[list[tuple[str, Any, str]]]] = []
    for key, value in block.items():
        path = f"{where}.{key}"
        if key == "zip":
            groups = value if isinstance(value, list) else [value]
            for g, group in enumerate(groups):
                gpath = f"{path}[{g}]" if isinstance(value, list) else path
                if not isinstance(group, dict) or not group:
                    raise bad(gpath, "a zip group is a mapping of keys to lists of equal length")
                lengths = {}
                for k, v in group.items():
                    _check_key(k, f"{gpath}.{k}", base, bad)
                    if not isinstance(v, list) or not v:
                        raise bad(f"{gpath}.{k}", "a zipped key needs a non-empty list")
                    for i, x in enumerate(v):
                        _check_value(k, x, f"{gpath}.{k}[{i}]", bad, file)
                    lengths[k] = len(v)
                if len(set(lengths.values())) > 1:
                    sizes = ", ".join(f"{k}: {n}" for k, n in lengths.items())
                    raise bad(gpath, f"zipped lists must have equal lengths ({sizes})")
                axes.append([[(k, group[k][i], f"{gpath}.{k}[{i}]") for k in group]
                             for i in range(next(iter(lengths.values())))])
            continue
        _check_key(key, path, base, bad)
        if isinstance(value, list):
            if not value:
                raise bad(path, "the axis is empty; give at least one value")
            for i, v in enumerate(value):
                _check_value(key, v, f"{path}[{i}]", bad, file)
            axes.append([[(key, v, f"{path}[{i}]")] for i, v in enumerate(value)])
        else:
            _check_value(key, value, path, bad, file)
            axes.append([[(key, value, path)]])
    return [[p for part in combo for p in part] for combo in itertools.product(*axes)]


def _check_value(key: str, value: Any, path: str, bad: Any, file: str) -> None:
    if key.startswith(("env.", "config.")) or key == "args":
        if key != "args" and not key.startswith("config.") and isinstance(value, (dict, list)):
            raise bad(path, "an env value is one string or number")
        return
    _option(key, value, path, bad, file)


def _check_key(key: str, path: str, base: dict[str, Any], bad: Any) -> None:
    if key.startswith("env."):
        if not sp._ENV_NAME.match(key[4:]):
            raise bad(path, f"{key[4:]!r} is not an environment variable name")
        return
    if key.startswith("config."):
        if "config-file" not in base:
            raise bad(path, "config keys need workload.config-file (a YAML or JSON mapping)")
        return
    if key == "args":
        if "command" not in base:
            raise bad(path, "args are appended to the command: set workload.command")
        return
    if key not in OPTIONS or key in ("env-file", "secret-env", "config-file"):
        sweepable = [o for o in OPTIONS if o not in ("env-file", "secret-env", "config-file")]
        prefix, dot, rest = key.partition(".")
        close = did_you_mean(prefix, ("env", "config")) if dot else ""
        hint = (close[:-1] + f".{rest}?" if close
                else did_you_mean(key, ["zip", "args", *sweepable]))
        raise bad(path, f"unknown sweep key{hint} (give env.NAME, args, config.KEY, zip or one "
                  f"of: {', '.join(sweepable)})")


# -- one trial's workload ----------------------------------------------------------------
