"""The `submit` command line: one Click group; each command group in its own module.

Exit codes (decided here and in Click): 0 success; 1 an error the command reports
(ClickException); 2 bad usage or a bad option or argument value (BadParameter).
"""

from __future__ import annotations

import click

from submit.accelerators import accelerators


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="accelstack")
def main() -> None:
    """Render, check and run training workloads on an accelstack cluster."""


main.add_command(accelerators)
