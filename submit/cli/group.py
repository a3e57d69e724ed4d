"""`submit workload create-group FILE`: a job group (submit.experiment.group) checked, rendered and
applied through the Python API, as `create` does for one role."""

from __future__ import annotations

import json
from pathlib import Path

import click

from submit import api
from submit.cli.context import Context, apply_objects, bad_input, pass_ctx
from submit.cli.image_pin import resolve_all_for, resolve_image_option
from submit.cli.output import yaml_documents
from submit.experiment import group as gr
from submit.render import spec as sp
from submit.render.jobset import pin_images
from submit.render.spec import SpecError


@click.command("create-group")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Print the objects; apply nothing.")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Format of --dry-run and --export.")
@click.option("--export", "export_file", type=click.Path(dir_okay=False),
              help="Write the objects to FILE (for `submit workload apply`); apply nothing.")
@click.option("--replace", is_flag=True, help="Delete and recreate a workload of that name.")
@click.option("--after", metavar="WORKLOAD", help="Create it held until WORKLOAD has "
              "succeeded (see `submit workload release`).")
@resolve_image_option
@pass_ctx
def create_group(ctx: Context, file: str, dry_run: bool, fmt: str, export_file: str | None,
                 replace: bool, after: str | None, resolve_image: bool | None) -> None:
    """Render a workload of several roles (one JobSet, gang-scheduled) and apply it."""
    with bad_input():
        if after is not None:
            sp.check_workload_name(after, "--after")
        from submit.cli import export_file as export

        bad = export.problem(export_file) if export_file else None
        if bad:
            raise SpecError("--export", bad)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"{file}: cannot read it: "
                                 f"{getattr(e, 'strerror', None) or 'not UTF-8 text'}",
                                 param_hint="'FILE'") from None
    try:
        group = gr.load(file, text)
        objs = gr.render_group(group, ctx.outputs)
    except gr.GroupError as e:
        raise click.BadParameter(e.message, param_hint="'FILE'") from None
    if not (dry_run or export_file):
        # A local input: a bad kubeconfig is said before any registry is asked.
        ctx.cluster  # noqa: B018
    pin_images(objs, resolve_all_for([r.options.get("image") for r in group.roles],
                                     resolve_image, dry_run=dry_run,
                                     export=bool(export_file)))
    if after is not None:
        objs = api.hold(objs, after)
    if export_file:
        from submit.cli import export_file as export

        export.write(export_file, json.dumps(objs, indent=2) + "\n" if fmt == "json"
                     else yaml_documents(objs))
        click.echo(f"wrote {export_file}; applied nothing (apply it with `submit workload "
                   f"apply {export_file}`)", err=True)
    if dry_run:
        click.echo(json.dumps(objs if len(objs) > 1 else objs[0], indent=2) if fmt == "json"
                   else yaml_documents(objs), nl=False)
    if dry_run or export_file:
        return
    apply_objects(ctx, objs, replace)
