"""`submit workload goodput NAME` and `submit experiment goodput NAME`: a run's (each
trial's) goodput and badput breakdown, computed by ml-goodput-measurement from its Cloud
Logging entries (submit/goodput/report.py; docs/observability.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click

from submit.cli.context import Context, bad_input, pass_ctx
from submit.cli.options import namespace_option, stack_options

_ENTRIES = click.option(
    "--entries", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the runs' entries from this file (one jsonPayload a line, the library's own "
         "format) instead of Cloud Logging.")
_FORMAT = click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]),
                       default="table", show_default=True,
                       help="Output format: the text, or the same as data (run, goodput, "
                            "badput by kind, lastStep; percentages).")


def _report(ctx: Context, run: str, entries: list[dict[str, Any]] | None) -> dict[str, Any]:
    from submit.goodput import report as rp

    log = rp.RecordedLog(run, entries) if entries is not None else None
    if log is None:
        # The library's own Cloud Logging client reads the stack's project.
        os.environ.setdefault("GOOGLE_CLOUD_PROJECT", ctx.outputs.cluster.project)
    return rp.report(run, log=log)


def _entries(path: Path | None) -> list[dict[str, Any]] | None:
    from submit.goodput import report as rp

    try:
        return rp.read_entries(path) if path else None
    except rp.GoodputError as e:
        raise click.ClickException(str(e)) from None


@click.command("goodput")
@stack_options
@click.argument("name")
@_ENTRIES
@_FORMAT
@pass_ctx
def goodput(ctx: Context, name: str, entries: Path | None, fmt: str) -> None:
    """A workload's goodput and badput, from what its GoodputRecorder logged."""
    from submit.goodput import report as rp
    from submit.render import spec as sp

    with bad_input():
        sp.check_workload_name(name)
    try:
        found = _report(ctx, name, _entries(entries))
    except rp.GoodputError as e:
        raise click.ClickException(str(e)) from None
    if fmt == "json":
        from submit.cli.output import emit

        emit(found, "json")
        return
    click.echo("\n".join(rp.lines(found)))


@click.command("goodput")
@stack_options
@click.argument("name")
@namespace_option
@_ENTRIES
@_FORMAT
@pass_ctx
def experiment_goodput(ctx: Context, name: str, namespace: str | None, entries: Path | None,
                       fmt: str) -> None:
    """Each trial's goodput and badput (a trial without entries says why)."""
    from submit.goodput import report as rp
    from submit.render import spec as sp

    with bad_input():
        sp.check_workload_name(name)
        sp.check_namespace(namespace)
    recorded = _entries(entries)
    if recorded is not None:  # the trials are the runs the file holds: NAME-<index>
        pattern = re.compile(rf"^{re.escape(name)}-\d+\Z")
        trials = sorted({str(e.get("job_name")) for e in recorded
                         if pattern.match(str(e.get("job_name")))},
                        key=lambda t: int(t.rsplit("-", 1)[1]))
    else:
        from submit.cli.experiment_record import load_record, trial_states

        ns = namespace or ctx.outputs.workload_namespace
        trials = [r["trial"] for r in trial_states(ctx, name, ns, load_record(ctx, name, ns))]
    if not trials:
        raise click.ClickException(f"experiment {name}: no trial runs found")
    out: list[dict[str, Any]] = []
    for trial in trials:
        try:
            out.append(_report(ctx, trial, recorded))
        except rp.GoodputError as e:
            out.append({"run": trial, "goodput": None, "error": str(e)})
    if fmt == "json":
        from submit.cli.output import emit

        emit({"experiment": name, "trials": out}, "json")
        return
    for found in out:
        click.echo("\n".join(rp.lines(found)) if found.get("goodput") is not None
                   else f"run {found['run']}: {found['error']}")
