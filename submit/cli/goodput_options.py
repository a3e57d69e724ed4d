"""The goodput option of `submit workload create`: declared here, listed in
create_options.py, its variables from submit/goodput/plan.py (docs/observability.md)."""

from __future__ import annotations

import click


GOODPUT_OPTIONS = [
    click.option("--goodput", is_flag=True,
                 help="Record goodput with ml-goodput-measurement: the run name and log the "
                      "library keys on ($ACCELSTACK_GOODPUT_RUN_NAME, "
                      "$ACCELSTACK_GOODPUT_LOGGER_NAME; MaxText's M_RUN_NAME, "
                      "M_ENABLE_GOODPUT_RECORDING, M_MONITOR_GOODPUT); then `submit "
                      "workload goodput NAME`."),
]

