"""Check recorded resource inputs against the installed provider SDKs' own input types.

The mock engine accepts any input, so a misspelt or misplaced field (``enablePrivateNodez``,
a ``tolerations`` one level too deep) passes every other test and fails only at a real
``pulumi up``. The pulumi-gcp and pulumi-kubernetes Python SDKs declare each resource's
inputs as ``*Args`` classes (``@pulumi.input_type``): one property per input, its wire
name in ``@pulumi.getter(name=...)`` and its type in the annotation, down to every nested
``*Args`` class in the packages' ``_inputs`` modules. This walks a recorded input tree
against those declarations: unknown names at any depth, wrong value types and values
outside a declared enum are problems, each reported with its path.
"""

from __future__ import annotations

import collections.abc as cabc
import enum
import importlib
import inspect
import json
import sys
import typing
from functools import lru_cache
from typing import Any

import pulumi

from infra.preview.harness import Secret

# The SDK package of each provider of the type tokens our program registers.
_PACKAGES = {"gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}
# pulumi-kubernetes names its Python modules after the API group without the domain.
_K8S_GROUPS = {"helm.sh": "helm", "yaml": "yaml", "core": "core", "apps": "apps",
               "rbac.authorization.k8s.io": "rbac", "scheduling.k8s.io": "scheduling",
               "policy": "policy", "batch": "batch"}


def args_class(type_token: str) -> type:
    """The ``*Args`` class of a resource type token (``gcp:container/cluster:Cluster``)."""
    pkg, module, name = type_token.split(":")
    if pkg == "pulumi" and module == "providers":
        return typing.cast(type, getattr(importlib.import_module(_PACKAGES[name]),
                                         "ProviderArgs"))
    if pkg == "gcp":
        mod = importlib.import_module(f"pulumi_gcp.{module.split('/')[0]}")
    elif pkg == "kubernetes":
        group, version = module.split("/")
        if _is_custom(type_token):
            from pulumi_kubernetes.apiextensions import CustomResourceArgs
            return CustomResourceArgs
        mod = importlib.import_module(f"pulumi_kubernetes.{_K8S_GROUPS[group]}.{version}")
    else:
        raise LookupError(f"{type_token}: no provider SDK mapped for package {pkg!r}")
    return typing.cast(type, getattr(mod, f"{name}Args"))


@lru_cache(maxsize=None)
def properties(cls: type) -> dict[str, Any]:
    """Wire name -> declared type of every input of an ``@pulumi.input_type`` class."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for attr in vars(klass).values():
            if isinstance(attr, property) and hasattr(attr.fget, "_pulumi_name"):
                hints = typing.get_type_hints(attr.fget, vars(sys.modules[klass.__module__]))
                out[attr.fget._pulumi_name] = hints["return"]
    return out


def _is_input_type(tp: Any) -> bool:
    return isinstance(tp, type) and bool(properties(tp))


def _candidates(tp: Any) -> list[Any]:
    """The concrete types a value may take: Optional, Input (Awaitable/Output) unwrapped."""
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        out: list[Any] = []
        for arg in typing.get_args(tp):
            out.extend(_candidates(arg))
        return out
    if tp is type(None) or origin is cabc.Awaitable or tp is pulumi.Output or \
            origin is pulumi.Output:
        return []
    return [tp]


def check(value: Any, tp: Any, path: str) -> list[str]:
    """Problems of ``value`` against declared type ``tp``; empty when it conforms."""
    if isinstance(value, Secret):
        value = value.value
    if value is None:
        return []
    options = _candidates(tp)
    if not options:
        return []
    enums = [o for o in options if isinstance(o, type) and issubclass(o, enum.Enum)]
    if enums and isinstance(value, str):
        # The SDKs type an enum field as Union[str, TheEnum] so new values still pass; a
        # value outside the declared enum is checked as a problem all the same.
        allowed = [m.value for e in enums for m in e]
        return [] if value in allowed else [f"{path}: {value!r} is not one of {allowed}"]
    best: list[str] | None = None
    for option in options:
        problems = _check_one(value, option, path)
        if not problems:
            return []
        if best is None or len(problems) < len(best):
            best = problems
    return best or []


def _check_one(value: Any, tp: Any, path: str) -> list[str]:
    if tp is Any or tp is object:
        return []
    origin = typing.get_origin(tp)
    if origin in (cabc.Sequence, list, typing.List):
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        (item,) = typing.get_args(tp) or (Any,)
        return [p for i, v in enumerate(value) for p in check(v, item, f"{path}[{i}]")]
    if origin in (cabc.Mapping, dict, typing.Dict):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a mapping"]
        _, item = typing.get_args(tp) or (str, Any)
        return [p for k, v in value.items() for p in check(v, item, f"{path}.{k}")]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        allowed = [m.value for m in tp]
        return [] if value in allowed else [f"{path}: {value!r} is not one of {allowed}"]
    if _is_input_type(tp):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object ({tp.__name__})"]
        return check_object(value, tp, path)
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a boolean"]
    if tp in (int, float):
        # The engine carries numbers as doubles: an integral float is an int.
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (
            tp is float or float(value).is_integer())
        return [] if ok else [f"{path}: {value!r} is not {'an integer' if tp is int else 'a number'}"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: {value!r} is not a string"]
    if isinstance(tp, type):
        return [] if isinstance(value, tp) else [f"{path}: {value!r} is not {tp.__name__}"]
    return []  # a construct the SDKs do not use for inputs (e.g. a TypeVar): accept


@lru_cache(maxsize=None)
def required(cls: type) -> tuple[str, ...]:
    """Wire names of the inputs the class's constructor requires (no default): a missing
    one passes under the mock engine, but the provider refuses it."""
    wire = {name: attr.fget._pulumi_name for klass in cls.__mro__
            for name, attr in vars(klass).items()
            if isinstance(attr, property) and hasattr(attr.fget, "_pulumi_name")}
    params = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
    return tuple(wire[p.name] for p in params
                 if p.default is inspect.Parameter.empty and p.name in wire)


def check_object(value: dict[str, Any], cls: type, path: str) -> list[str]:
    props = properties(cls)
    problems = [f"{path + '.' if path else ''}{key}: required by {cls.__module__}."
                f"{cls.__name__}, missing" for key in required(cls) if value.get(key) is None]
    for key, v in value.items():
        where = f"{path}.{key}" if path else key
        if key not in props:
            problems.append(f"{where}: not an input of {cls.__module__}.{cls.__name__}")
            continue
        problems.extend(check(v, props[key], where))
    return problems


def _is_custom(type_token: str) -> bool:
    """A custom resource of a CRD the SDK has no types for (GKE's ComputeClass): declared
    with pulumi_kubernetes.apiextensions.CustomResource."""
    pkg, module, _ = type_token.split(":")
    return pkg == "kubernetes" and module.split("/")[0] not in _K8S_GROUPS


def check_resource(type_token: str, inputs: dict[str, Any]) -> list[str]:
    """Every problem of one resource's recorded inputs against its SDK ``*Args`` class.
    A custom resource's ``spec`` is the CRD's, not the SDK's: tests/schema.py validates it
    against the CRD schema (tests/test_slice_classes.py for ComputeClass)."""
    cls = args_class(type_token)
    if _is_custom(type_token):
        inputs = {k: v for k, v in inputs.items() if k != "spec"}
    if type_token.startswith("pulumi:providers:"):
        # The SDK sends a provider's non-string settings JSON-encoded ("true", "30").
        inputs = {k: _decoded(v, properties(cls).get(k)) for k, v in inputs.items()}
    return check_object(inputs, cls, "")


def _decoded(value: Any, tp: Any) -> Any:
    if isinstance(value, str) and str not in _candidates(tp):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
