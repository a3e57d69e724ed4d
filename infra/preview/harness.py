"""Evaluate the Pulumi program under the SDK's mock engine: no CLI, no backend, no cloud.

The tests and the offline preview both use ``evaluate``: it runs ``infra.program.build``
exactly as ``pulumi up`` would, records every resource the program registers (type,
logical name, parent, inputs as they reach the engine, camelCase) and resolves the stack
outputs. Values only the cloud knows (a cluster's endpoint, a service account's email)
are filled with stable stand-ins so outputs are complete and diffs stay quiet (mocks.py:
the mock engine's answers; their names are importable from here too).
"""

from __future__ import annotations

import gc
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Mapping

import pulumi

from infra import program
from infra.config import fleet as fleet_config
from infra.config import in_cluster as in_cluster_config
from infra.config import pools as pools_config
from infra.config import stack_file, stack_refs
from infra.config.errors import did_you_mean
from infra.components.fleet import FleetConfigError
from infra.components.pools import PoolsConfigError
from infra.preview.mocks import MASK as MASK, PREVIEW_CA as PREVIEW_CA, \
    PREVIEW_DNS_SUFFIX as PREVIEW_DNS_SUFFIX, PREVIEW_ENDPOINT as PREVIEW_ENDPOINT, \
    PREVIEW_NAT_BASE as PREVIEW_NAT_BASE, PREVIEW_PROJECT_NUMBER as PREVIEW_PROJECT_NUMBER, \
    PREVIEW_TOKEN as PREVIEW_TOKEN, SECRET_SIG as SECRET_SIG, Mocks, Monitor, \
    Secret as Secret, plain

_plain = plain  # the name the tests use
_Mocks = Mocks  # the same class: tests set its flat_buckets


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
    import_id: str = ""  # the import option (an adopted resource's ID)
    ignore_changes: tuple[str, ...] = ()

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
    mocks = Mocks(references)
    monitor = Monitor(mocks)
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

    try:
        _run()
    except (FleetConfigError, PoolsConfigError) as e:
        # Refused once the referenced contracts are read: every output derived from the
        # plan holds the same error, and asyncio would log each as "Future exception was
        # never retrieved", with its traceback, when collected. The error is reported
        # once, by the caller; the copies are collected here, with asyncio's logger quiet.
        error = type(e)(e.problems)
        del e
        _collect_quietly()
        raise error from None
    for type_, name, parent, custom, deps in monitor.order:
        urn = monitor.make_urn(parent, type_, name)
        import_id, ignored = monitor.options.get((type_, name), ("", ()))
        result.resources.append(Resource(urn, type_, name, parent, custom,
                                         mocks.inputs.get((type_, name), {}), deps,
                                         mocks.transforms.get((type_, name), 0),
                                         import_id, ignored))
    # Registration order depends on when inputs resolve; sort for stable results.
    result.resources.sort(key=lambda r: r.urn)
    return result


def _collect_quietly() -> None:
    log = logging.getLogger("asyncio")
    was = log.disabled
    log.disabled = True
    try:
        gc.collect()
    finally:
        log.disabled = was


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
    folder = Path(path).parent
    if fleet_config.is_fleet(sf.raw):
        cfg = program.load_fleet_config(sf.raw, sf.stack, sf.locate)
        named = [("fleet.manager.stack", cfg.manager_stack)] + [
            (f"fleet.workers[{i}].stack", w.stack) for i, w in enumerate(cfg.workers)]
        problems = [sf.locate(p) for p in _reference_problems(folder, named)
                    + _shared_workers(folder, sf.stack, named[1:])]
        if problems:
            raise FleetConfigError(problems)
        refs = {n: referenced_outputs(folder, n) for _, n in named}
        return evaluate_fleet(sf.raw, sf.stack, {k: v for k, v in refs.items() if v},
                              locate=sf.locate)
    if in_cluster_config.is_in_cluster(sf.raw):
        # Offline: the cluster as its recorded description says (infra/program.py).
        icfg = program.load_in_cluster_config(sf.raw, sf.stack, sf.locate)
        description = program.describe_cluster(icfg, folder, live=False)
        layer = program.in_cluster_stack_config(icfg, description, sf.locate)
        return _evaluate(layer, sf.stack,
                         lambda: program.build_in_cluster(layer, sf.stack, description), {})
    if pools_config.is_pools(sf.raw):
        pools = program.load_pools_config(sf.raw, sf.stack, sf.locate)
        problems = [sf.locate(p) for p in _reference_problems(
            folder, [(f"{pools_config.ON_CLUSTER_KEY}.stack", pools.host_stack)])]
        if problems:
            raise PoolsConfigError(problems)
        host = referenced_outputs(folder, pools.host_stack)
        return evaluate_pools(sf.raw, sf.stack, {pools.host_stack: host} if host else {},
                              locate=sf.locate)
    return evaluate(sf.raw, sf.stack, sf.secret_keys, sf.locate)


def _shared_workers(folder: Path, stack: str, workers: list[tuple[str, str]]) -> list[str]:
    """Workers that another fleet stack beside this one has too: a worker is in one fleet
    (infra/specs/fleet/access.py claim; the deployed fleets refuse it at `pulumi up`)."""
    out = []
    for path in sorted(folder.glob("Pulumi.*.yaml")):
        try:
            other = stack_file.load(path)
        except stack_file.StackFileError:
            continue
        if other.stack == stack or not fleet_config.is_fleet(other.raw):
            continue
        theirs = (other.raw.get(fleet_config.FLEET_KEY) or {}).get("workers") or []
        refs = [stack_refs.ref(str(w.get("stack"))) for w in theirs
                if isinstance(w, dict) and w.get("stack")]
        for where, name in workers:
            if any(stack_refs.ref(name).same(r) for r in refs):
                out.append(f"{where}: {name!r} is also a worker of the fleet stack "
                           f"{other.stack!r} ({path.name}); a worker is in one fleet")
    return out


def _reference_problems(folder: Path, named: list[tuple[str, str]]) -> list[str]:
    """What offline evaluation can tell of the stacks a fleet or pools stack references
    before reading them: a stack file that is missing (with the nearest name there is), a
    fleet or a pools stack where a cluster stack belongs. ``named``: (config path, stack)."""
    out = []
    have = sorted(stack_file.stack_name(p) for p in folder.glob("Pulumi.*.yaml"))
    for where, name in named:
        short = name.rsplit("/", 1)[-1]
        file = folder / f"Pulumi.{short}.yaml"
        if not file.is_file():
            out.append(f"{where}: {name!r}: no stack {short!r} in {folder}"
                       f"{did_you_mean(short, have)}")
            continue
        try:
            raw = stack_file.load(file).raw
        except stack_file.StackFileError:
            continue  # reported when the stack itself is evaluated
        if fleet_config.is_fleet(raw):
            out.append(f"{where}: {name!r} is a fleet, not a cluster stack")
        elif pools_config.is_pools(raw):
            host = (raw.get(pools_config.ON_CLUSTER_KEY) or {}).get("stack")
            out.append(f"{where}: {name!r} is a pools stack (on the cluster of {host!r}), not "
                       "a cluster stack; name the cluster stack")
    return out


def referenced_outputs(folder: Path, stack: str) -> dict[str, Any] | None:
    """The outputs (secrets revealed) of the stack file a StackReference to ``stack`` names
    in ``folder``; None when there is no such file."""
    file = folder / f"Pulumi.{stack.rsplit('/', 1)[-1]}.yaml"
    if not file.is_file():
        return None
    return plain_outputs(evaluate_file(file), reveal=True)


def offline_outputs(ev: Evaluation) -> dict[str, Any]:
    """The outputs `accelstack-preview --outputs` writes for `submit --outputs`: secrets
    revealed except the kubeconfigs (credentials, and only stand-ins here), each masked. A
    fleet's outputs hold its manager's and workers' contracts, secret as a whole because
    they hold kubeconfigs; here they are the contracts, so `submit` reads them as it reads
    a deployed fleet's, and finds no usable kubeconfig in them, as for a cluster stack."""
    def mask(v: Any, key: str = "") -> Any:
        if key == "kubeconfig":
            return MASK
        if isinstance(v, dict):
            return {k: mask(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [mask(x) for x in v]
        return v
    out: dict[str, Any] = mask(plain_outputs(ev, reveal=True))
    return out


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