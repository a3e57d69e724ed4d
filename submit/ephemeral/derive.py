"""The outputs contract a run's stack will have, and what it costs per hour, derived offline
from the run's config before anything is made: with the offline preview's own harness
(infra/preview/harness.py, the Pulumi program under the SDK's mock engine, as
`accelstack-preview --outputs` runs it) and its pricing (infra/preview/costs.py), so that
`submit run` checks its work against exactly what `create --outputs` would read from the
preview, and prices the stack exactly as the preview does.

A pools stack's host is evaluated from its stack file beside the run's stack file, as the
preview does (a host with no file there is refused: there is nothing offline to check the
work against). Values only the cloud knows are the preview's stand-ins; none of them is a
fact the work's checks read.

The harness loads pulumi and its providers: imported only when `submit run` checks a run.
Each config is evaluated once per process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

from infra.config import pools as pools_config
from infra.contract.outputs import StackOutputs
from infra.cost.price import Figures
from infra.record import record
from submit.ephemeral.plan import NAMESPACE, PlanError


@record
class Derived:
    outputs: StackOutputs
    figures: Figures


# Each config's evaluation, once per process (the figures are priced afresh each time,
# from the price table of the moment).
_DONE: dict[tuple[str, ...], tuple[StackOutputs, Any, dict[str, Any] | None]] = {}


def derive(config: Mapping[str, Any], stack: str, stack_file: Path,
           locate: Callable[[str], str]) -> Derived:
    """The run's outputs and figures from its ``config`` (namespaced keys, overrides and the
    run's own keys applied), evaluated as stack ``stack`` (the run's name). PlanError
    naming STACK for what the evaluation refuses (one line per problem)."""
    from infra.preview import costs

    prefix = f"{NAMESPACE}:"
    raw = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
    host_file = None
    if pools_config.is_pools(raw):
        host = str((raw.get(pools_config.ON_CLUSTER_KEY) or {}).get("stack") or "")
        host_file = stack_file.parent / f"Pulumi.{host.rsplit('/', 1)[-1]}.yaml"
    key = (stack, json.dumps(raw, sort_keys=True, default=str), str(host_file),
           _text(host_file))
    if key not in _DONE:
        _DONE[key] = _evaluate(raw, stack, stack_file, locate)
    outputs, ev, host_outputs = _DONE[key]
    return Derived(outputs, costs.figures(stack_file, ev, host=host_outputs))


def _text(path: Path | None) -> str:
    try:
        return path.read_text(encoding="utf-8") if path is not None else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _evaluate(raw: dict[str, Any], stack: str, stack_file: Path, locate: Callable[[str], str]
              ) -> tuple[StackOutputs, Any, dict[str, Any] | None]:
    from infra.components.pools import PoolsConfigError
    from infra.config.errors import ConfigError
    from infra.config.stack_file import StackFileError
    from infra.preview import harness
    from infra.program import StackConfigError
    from submit.cluster.stack_outputs import OutputsError, from_mapping

    host: dict[str, Any] | None = None
    try:
        if pools_config.is_pools(raw):
            cfg = pools_config.parse_pools(raw, stack)
            found = harness.referenced_outputs(stack_file.parent, cfg.host_stack)
            if found is None:
                raise PlanError("STACK", f"{stack_file}: the host stack {cfg.host_stack!r} has "
                                "no stack file beside it, so the outputs the run's pools will "
                                "have cannot be derived offline to check the work against "
                                f"(put Pulumi.{cfg.host_stack.rsplit('/', 1)[-1]}.yaml there)")
            host = found
            ev = harness.evaluate_pools(raw, stack, {cfg.host_stack: host}, locate=locate)
        else:
            ev = harness.evaluate(raw, stack, (), locate)
    except (ConfigError, StackConfigError, StackFileError, PoolsConfigError) as e:
        raise PlanError("STACK", "\n".join(e.problems)) from None
    try:
        outputs = from_mapping(harness.offline_outputs(ev), f"stack {stack!r} (derived offline)")
    except OutputsError as e:
        raise PlanError("STACK", str(e)) from None
    return outputs, ev, host
