"""Evaluate the Pulumi program under the SDK's mock engine: no CLI, no backend, no cloud.

The tests and the offline preview both use ``evaluate``: it runs ``infra.program.build``
exactly as ``pulumi up`` would, records every resource the program registers (type,
logical name, parent, inputs as they reach the engine, camelCase) and resolves the stack
outputs. Values only the cloud knows (a cluster's endpoint, a service account's email)
are filled with stable stand-ins so outputs are complete and diffs stay quiet.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Mapping

import pulumi
from pulumi.runtime import mocks as _mocks

from infra.record import record
from infra import program
from infra.config import fleet as fleet_config
from infra.config import pools as pools_config
from infra.config import stack_file

SECRET_SIG = "4dabf18193072939515e22adb298388d"
MASK = "[secret]"
PREVIEW_ENDPOINT = "203.0.113.10"  # TEST-NET-3: a documentation address, never routed
PREVIEW_DNS_SUFFIX = "dns-endpoint.example"
PREVIEW_PROJECT_NUMBER = "123456789012"  # stands in for the project's number
PREVIEW_CA = base64.b64encode(b"accelstack offline preview: no certificate").decode()


@record
class Secret:
    """A secret input value, kept apart so it is never printed."""

    value: Any

    def __repr__(self) -> str:
        return MASK


@dataclass
class Resource:
    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    dependencies: tuple[str, ...] = ()
    transforms: int = 0  # resource transforms registered with it (the mock engine runs none)

    @property
    def parent_name(self) -> str:
        return self.parent.split("::")[-1] if self.parent else ""


@dataclass
class Evaluation:
    config: Any  # the StackConfig, or the FleetConfig of a fleet stack
    resources: list[Resource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)

    def of_type(self, type_: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str, type_: str | None = None) -> Resource:
        found = [r for r in self.resources if r.name == name and (type_ is None or r.type == type_)]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources named {name!r} (type {type_})")
        return found[0]


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SECRET_SIG) == "1b47061264138c4ac30d75fd1eb44270":
            return Secret(_unwrap(value.get("value")))
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Secret):
        return _plain(value.value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# What the token controller puts in a service-account-token Secret, in a preview.
PREVIEW_TOKEN = "accelstack-preview-token"


class _Mocks(pulumi.runtime.Mocks):
    # Existing buckets the mock engine reports without hierarchical namespace (tests set
    # it). Only Cloud Storage knows a bucket's namespace: an offline preview takes every
    # existing bucket to have one; a real preview reads it (infra/components/checkpointing.py).
    flat_buckets: frozenset[str] = frozenset()

    def __init__(self, references: Mapping[str, Any] | None = None) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.transforms: dict[tuple[str, str], int] = {}
        self.references = dict(references or {})  # stack name -> its outputs

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            # A StackReference is read, not registered: its state is the stack's outputs.
            target = str(args.inputs.get("name"))
            self.inputs[(args.typ, args.name)] = {"name": target}
            return target, {"name": target, "outputs": self.references.get(target, {}),
                            "secretOutputNames": []}
        inputs = _unwrap(dict(args.inputs))
        self.inputs[(args.typ, args.name)] = inputs
        self.transforms[(args.typ, args.name)] = len(args.transforms)
        state = _plain(inputs)
        name = state.get("name", args.name)
        project = state.get("project", "preview-project")
        rid = f"{args.name}-id"
        if args.typ == "gcp:container/cluster:Cluster":
            loc = state.get("location")
            rid = f"projects/{project}/locations/{loc}/clusters/{name}"
            state["endpoint"] = PREVIEW_ENDPOINT
            state["masterAuth"] = {"clusterCaCertificate": PREVIEW_CA}
            dns = (state.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")
            if dns is not None:
                # GKE's name is <uid>.<region>.gke.goog; .example is reserved (RFC 2606).
                dns["endpoint"] = f"{name}.{loc}.{PREVIEW_DNS_SUFFIX}"
        elif args.typ == "gcp:serviceaccount/account:Account":
            state["email"] = f"{state['accountId']}@{project}.iam.gserviceaccount.com"
        elif args.typ == "gcp:compute/network:Network":
            rid = f"projects/{project}/global/networks/{name}"
        elif args.typ == "gcp:compute/subnetwork:Subnetwork":
            rid = f"projects/{project}/regions/{state.get('region')}/subnetworks/{name}"
        elif args.typ == "gcp:compute/globalAddress:GlobalAddress":
            state.setdefault("address", "10.200.0.0")  # the range Google would allocate
        elif args.typ == "gcp:filestore/instance:Instance":
            for net in state.get("networks") or []:
                net["ipAddresses"] = ["10.200.0.2"]
        elif args.typ == "gcp:parallelstore/instance:Instance":
            state["accessPoints"] = ["10.200.0.3", "10.200.0.4", "10.200.0.5"]
        elif (args.typ == "kubernetes:core/v1:Secret"
              and state.get("type") == "kubernetes.io/service-account-token"):
            # The token controller fills a service-account-token Secret (pulumi-kubernetes
            # waits for it): a stand-in token and CA.
            state["data"] = {"token": base64.b64encode(PREVIEW_TOKEN.encode()).decode(),
                             "ca.crt": PREVIEW_CA}
        elif args.typ == "gcp:lustre/instance:Instance":
            state["mountPoint"] = f"10.200.0.6@tcp:/{state.get('filesystem')}"
        state["id"] = rid
        return rid, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        if args.token == "gcp:organizations/getProject:getProject":
            project = args.args.get("projectId", "preview-project")
            return {"projectId": project, "number": PREVIEW_PROJECT_NUMBER,
                    "name": project}, []
        if args.token == "gcp:storage/getBucket:getBucket":
            name = args.args.get("name")
            return {"name": name, "hierarchicalNamespaces": [
                {"enabled": name not in self.flat_buckets}]}, []
        return {}, []


class _Monitor(_mocks.MockMonitor):
    def __init__(self, mocks: _Mocks) -> None:
        super().__init__(mocks)
        self.order: list[tuple[str, str, str, bool, tuple[str, ...]]] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (the gRPC method name)
        if request.type != "pulumi:pulumi:Stack":
            self.order.append((request.type, request.name, request.parent,
                               bool(request.custom), tuple(request.dependencies)))
        return super().RegisterResource(request)  # type: ignore[no-untyped-call]

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 (the gRPC method name)
        # A StackReference is read: recorded too, so tests see which stacks a fleet reads.
        self.order.append((request.type, request.name, request.parent, True, ()))
        return super().ReadResource(request)  # type: ignore[no-untyped-call]


def evaluate(raw: Mapping[str, Any], stack: str = "dev", secret_keys: Collection[str] = (),
             locate: Callable[[str], str] | None = None) -> Evaluation:
    """Parse ``raw`` (config keys without the namespace) and run the program under mocks."""
    # A bad config stops here, before any resource.
    cfg = program.load_config(raw, secret_keys, locate)
    return _evaluate(cfg, stack, lambda: program.build(cfg, stack), {})


# A fixed clock for fleet previews (the token rotation window is part of a resource name):
# 2026-01-01T00:00:00Z.
PREVIEW_NOW = 1767225600.0


def evaluate_fleet(raw: Mapping[str, Any], stack: str, references: Mapping[str, Any],
                   now: float = PREVIEW_NOW,
                   locate: Callable[[str], str] | None = None) -> Evaluation:
    """Run a fleet stack under mocks; ``references`` maps each stack name its config
    references to that stack's outputs (what a StackReference would read)."""
    cfg = program.load_fleet_config(raw, stack, locate)
    return _evaluate(cfg, stack,
                     lambda: program.build_fleet(cfg, stack, now=now, locate=locate),
                     references)


def evaluate_pools(raw: Mapping[str, Any], stack: str, references: Mapping[str, Any],
                   locate: Callable[[str], str] | None = None) -> Evaluation:
    """Run a pools stack under mocks; ``references`` maps its host stack's name to that
    stack's outputs (what the StackReference reads)."""
    cfg = program.load_pools_config(raw, stack, locate)
    return _evaluate(cfg, stack, lambda: program.build_pools(cfg, stack, locate=locate),
                     references)


def _evaluate(cfg: Any, stack: str, build: Callable[[], dict[str, Any]],
              references: Mapping[str, Any]) -> Evaluation:
    mocks = _Mocks(references)
    monitor = _Monitor(mocks)
    # Each evaluation gets its own root stack resource (named after this stack).
    from pulumi.runtime import settings

    settings.ROOT.set(None)
    pulumi.runtime.set_mocks(mocks, project="accelstack", stack=stack, preview=False,
                             monitor=monitor)
    result = Evaluation(cfg)
    exports: dict[str, Any] = {}

    async def _collect() -> None:
        for key, value in exports.items():
            if isinstance(value, dict):
                resolved: dict[str, Any] = {}
                for k, v in value.items():
                    out = pulumi.Output.from_input(v)
                    val = await out.future()
                    if await out.is_secret():
                        result.secret_outputs.add(f"{key}.{k}")
                        val = Secret(val)
                    resolved[k] = val
                result.outputs[key] = resolved
            else:
                out = pulumi.Output.from_input(value)
                result.outputs[key] = await out.future()

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def _run() -> pulumi.Output[Any]:
        exports.update(build())
        return pulumi.Output.from_input(_collect())

    _run()
    for type_, name, parent, custom, deps in monitor.order:
        urn = monitor.make_urn(parent, type_, name)
        result.resources.append(Resource(urn, type_, name, parent, custom,
                                         mocks.inputs.get((type_, name), {}), deps,
                                         mocks.transforms.get((type_, name), 0)))
    # Registration order depends on when inputs resolve; sort for stable results.
    result.resources.sort(key=lambda r: r.urn)
    return result


# ----------------------------------------------------------------------------------
# Stack files


def read_stack_file(path: str | Path) -> dict[str, Any]:
    """The ``accelstack:*`` keys of a ``Pulumi.<stack>.yaml`` file, namespace removed.
    Raises ``stack_file.StackFileError`` for a file that does not load (see there)."""
    return stack_file.load(path).raw


def stack_name(path: str | Path) -> str:
    return stack_file.stack_name(path)


def evaluate_file(path: str | Path) -> Evaluation:
    """Evaluate a stack file; config errors name ``FILE:LINE``. A fleet stack's references
    (and a pools stack's host) are the stack files beside it (``ORG/PROJECT/NAME`` reads ``Pulumi.NAME.yaml``),
    evaluated here in turn."""
    sf = stack_file.load(path)
    if fleet_config.is_fleet(sf.raw):
        cfg = program.load_fleet_config(sf.raw, sf.stack, sf.locate)
        names = [cfg.manager_stack] + [w.stack for w in cfg.workers]
        refs = {n: referenced_outputs(Path(path).parent, n) for n in names}
        return evaluate_fleet(sf.raw, sf.stack, {k: v for k, v in refs.items() if v},
                              locate=sf.locate)
    if pools_config.is_pools(sf.raw):
        pools = program.load_pools_config(sf.raw, sf.stack, sf.locate)
        host = referenced_outputs(Path(path).parent, pools.host_stack)
        return evaluate_pools(sf.raw, sf.stack, {pools.host_stack: host} if host else {},
                              locate=sf.locate)
    return evaluate(sf.raw, sf.stack, sf.secret_keys, sf.locate)


def referenced_outputs(folder: Path, stack: str) -> dict[str, Any] | None:
    """The outputs (secrets revealed) of the stack file a StackReference to ``stack`` names
    in ``folder``; None when there is no such file."""
    file = folder / f"Pulumi.{stack.rsplit('/', 1)[-1]}.yaml"
    if not file.is_file():
        return None
    return plain_outputs(evaluate_file(file), reveal=True)


def plain_outputs(ev: Evaluation, reveal: bool = False) -> dict[str, Any]:
    """Outputs as JSON-ready data; secrets masked unless ``reveal``."""
    def conv(v: Any) -> Any:
        if isinstance(v, Secret):
            return conv(v.value) if reveal else MASK
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    out: dict[str, Any] = json.loads(json.dumps(conv(ev.outputs)))
    return out
