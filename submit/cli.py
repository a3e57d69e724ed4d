"""The `submit` command line: one Click group; each command group in its own module.

Exit codes (decided here, in Click and in `workload wait`; the README's table): 0 success;
1 an error the command reports (ClickException: the cluster, `pulumi stack output`, an
existing workload); 2 a bad or missing option or argument, or a bad file named by one
(BadParameter/UsageError, raised before anything is sent); 3 `wait`: the workload failed;
4 `wait`: the timeout passed first. `workload run-local`
exits with the exit code of the process that failed the workload (0 when every process
exited 0; 130/143 when interrupted).
"""

from __future__ import annotations

import click

from submit.accelerators import accelerators
from submit.experiment.commands import experiment, release
from submit.group_cli import create_group
from submit.local.commands import run_local
from submit.workload import workload


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="accelstack")
def main() -> None:
    """Render, check and run training workloads on an accelstack cluster."""


main.add_command(accelerators)
main.add_command(workload)
workload.add_command(run_local)
workload.add_command(release)
workload.add_command(create_group)
main.add_command(experiment)
