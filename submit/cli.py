"""The `submit` command line: one Click group; each command group in its own module.

Exit codes (decided here, in Click and in `workload wait`; the README's table): 0 success;
1 an error the command reports (ClickException: the cluster, `pulumi stack output`, an
existing workload); 2 a bad or missing option or argument, or a bad file named by one
(BadParameter/UsageError, raised before anything is sent); 3 `wait`: the workload failed;
4 `wait`: the timeout passed first.
"""

from __future__ import annotations

import click

from submit.accelerators import accelerators
from submit.workload import workload


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="accelstack")
def main() -> None:
    """Render, check and run training workloads on an accelstack cluster."""


main.add_command(accelerators)
main.add_command(workload)
