"""`submit workload goodput NAME` (and `experiment goodput`): a run's goodput and badput
breakdown, computed by ml-goodput-measurement from its Cloud Logging entries
(submit/goodput/report.py; docs/observability.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from submit.cli.context import Context, pass_ctx
from submit.cli.options import stack_options


@click.command("goodput")
@stack_options
@click.argument("name")
@click.option("--entries", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Read the run's entries from this file (one jsonPayload a line, the "
                   "library's own format) instead of Cloud Logging.")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]),
              default="table", show_default=True)
@pass_ctx
def goodput(ctx: Context, name: str, entries: Path | None, fmt: str) -> None:
    """A workload's goodput and badput, from what its GoodputRecorder logged."""
    from submit.goodput import report as rp

    try:
        log = rp.RecordedLog(name, rp.read_entries(entries)) if entries else None
        if log is None:
            # The library's own Cloud Logging client reads the stack's project.
            os.environ.setdefault("GOOGLE_CLOUD_PROJECT", ctx.outputs.cluster.project)
        found = rp.report(name, log=log)
    except rp.GoodputError as e:
        raise click.ClickException(str(e)) from None
    if fmt == "json":
        from submit.cli.output import emit

        emit(found, "json")
        return
    click.echo("\n".join(rp.lines(found)))
