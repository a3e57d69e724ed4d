"""What `create --goodput` gives a workload so that it records its goodput with
ml-goodput-measurement: the run name the library keys on and the log it writes, as
environment variables (the stack gave the job identity the roles: infra/specs/
observability/goodput.py). Pure.

- ``ACCELSTACK_GOODPUT_RUN_NAME``: the workload's name, the library's ``job_name``;
- ``ACCELSTACK_GOODPUT_LOGGER_NAME``: ``goodput_<run name>``, its ``logger_name`` (the
  name MaxText and the library's README use);
- for MaxText, its config keys as environment overrides (MaxText's pyconfig reads
  ``M_<KEY>``: ``_MAX_PREFIX = "M_"``, ``yaml_key_to_env_key``): ``M_RUN_NAME``,
  ``M_ENABLE_GOODPUT_RECORDING=true`` and ``M_MONITOR_GOODPUT=true`` (MaxText's
  base.yml keys ``run_name``, ``enable_goodput_recording``, ``monitor_goodput``).

Code of its own calls the library with the first two (docs/observability.md).
"""

from __future__ import annotations

from submit.goodput.report import names

RUN_NAME = "ACCELSTACK_GOODPUT_RUN_NAME"
LOGGER_NAME = "ACCELSTACK_GOODPUT_LOGGER_NAME"


def env(workload: str) -> tuple[str, ...]:
    """KEY=VALUE lines, given before the user's own --env (which win)."""
    run, logger_name = names(workload)
    return (f"{RUN_NAME}={run}", f"{LOGGER_NAME}={logger_name}", f"M_RUN_NAME={run}",
            "M_ENABLE_GOODPUT_RECORDING=true", "M_MONITOR_GOODPUT=true")
