"""`submit accelerators`: list the accelerator catalog or resolve names against it."""

from __future__ import annotations

import click

from infra import catalog
from submit.output import FORMATS, emit

COLUMNS = (
    ("NAME", "name"), ("FAMILY", "family"), ("MACHINE TYPE", "machineType"),
    ("TOPOLOGY", "topology"), ("CHIPS/VM", "chipsPerVm"), ("VMS", "vmsPerSlice"),
    ("CHIPS", "chips"), ("RESOURCE", "resourceName"), ("NETWORKING", "networking"),
)


@click.command("accelerators")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--family", type=click.Choice(catalog.families()),
              help="Only entries of this family.")
@click.option("-o", "--output", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True, help="Output format.")
def accelerators(names: tuple[str, ...], family: str | None, fmt: str) -> None:
    """List the accelerator catalog, or resolve NAMEs (any accepted form) in order.

    Names are those of xpk: v5p-8 (count form) or v5p-2x2x1 (topology form),
    v5litepod-16, v6e-8x16, tpu7x-4x4x8, h100-mega-80gb-8, n2-standard-32-4.
    For CPU pools, the count form is <machine type>-<VMs>.
    """
    if names:
        entries = []
        for name in names:
            try:
                entries.append(catalog.resolve(name))
            except catalog.UnknownAccelerator as e:
                raise click.BadParameter(str(e), param_hint="'NAME'") from None
    else:
        entries = list(catalog.all_accelerators())
    if family:
        entries = [e for e in entries if e.family == family]
    emit([e.to_dict() for e in entries], fmt, COLUMNS)
