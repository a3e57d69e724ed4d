"""The goodput option of `submit workload create`: declared here, listed in
create_options.py, its variables from submit/goodput/plan.py (docs/observability.md)."""

from __future__ import annotations

import click

from infra.contract.outputs import StackOutputs
from submit.render.spec import SpecError

GOODPUT_OPTIONS = [
    click.option("--goodput", is_flag=True,
                 help="Record goodput with ml-goodput-measurement: the run name and log the "
                      "library keys on ($ACCELSTACK_GOODPUT_RUN_NAME, "
                      "$ACCELSTACK_GOODPUT_LOGGER_NAME; MaxText's M_RUN_NAME, "
                      "M_ENABLE_GOODPUT_RECORDING, M_MONITOR_GOODPUT); then `submit "
                      "workload goodput NAME`."),
]


def goodput_env(on: bool, workload: str) -> tuple[str, ...]:
    if not on:
        return ()
    from submit.goodput import plan

    return plan.env(workload)


def check_stack(outputs: StackOutputs) -> None:
    """--goodput needs a stack whose job identities may write the library's logs and
    metrics (the roles come with the stack's observability, on by default)."""
    if outputs.monitoring is None or not outputs.monitoring.goodput:
        raise SpecError("--goodput", f"stack {outputs.stack} does not give its job "
                        "identities the roles to record goodput (roles/logging.logWriter, "
                        "roles/monitoring.metricWriter); its observability is off or its "
                        "outputs predate it: run `pulumi up` with observability on")
