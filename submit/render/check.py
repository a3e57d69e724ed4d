"""The one check path: what the user asked for (the options of `submit workload create`, by
their Python names) and a stack's outputs contract in, the rendered workload or its refusal
out. `create`, `create-group` (per role), `experiment create` (per trial), `submit run`
(against the outputs its stack will have, derived offline before `up`:
submit/ephemeral/derive.py) and the Python API all call ``workload`` before any network
call; they differ only in where the outputs come from. Pure: no Click, no Kubernetes client,
no pulumi, no network.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.contract.outputs import StackOutputs
from infra.record import record
from submit.render.build import build_spec
from submit.render.jobset import render
from submit.render.option_checks import option_refusals
from submit.render.spec import SpecError, WorkloadSpec


@record
class Verdict:
    """The checked workload and its objects (ConfigMap, ComputeDomain, then the JobSet), or
    the refusals: every refusal of the options alone (each option's first), else the first
    against the stack (those checks run in order, and later ones need what earlier ones
    decided: the pool decides the shape, the shape the name's budget)."""

    spec: WorkloadSpec | None = None
    objects: tuple[dict[str, Any], ...] = ()
    refusals: tuple[SpecError, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refusals

    def rendered(self) -> list[dict[str, Any]]:
        """The objects; the first refusal raised (a SpecError naming the option)."""
        if self.refusals:
            raise self.refusals[0]
        return list(self.objects)


def workload(outputs: StackOutputs, options: Mapping[str, Any],
             node_version: str | None = None, rendered: bool = True) -> Verdict:
    """Check ``options`` (``build_spec``'s keyword arguments) against ``outputs`` and render
    them. ``node_version``: the GKE version the pool's nodes report, when the submitter read
    it from the cluster (the version floors of --mount). ``rendered=False``: the checked
    spec only, for a caller that renames it first (an experiment's trials)."""
    alone = option_refusals(**options)
    if alone:
        return Verdict(refusals=tuple(alone))
    try:
        spec = build_spec(outputs, **options, node_version=node_version)
    except SpecError as e:
        return Verdict(refusals=(e,))
    return Verdict(spec, tuple(render(spec)) if rendered else ())
