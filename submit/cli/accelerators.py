"""`submit accelerators`: list the accelerator catalog, resolve names against it, or list
what one stack offers with --stack/--outputs: its pools, each shape its slice classes
can create (capacity ``class: ...``, the sources it tries in order), and each shape its
dynamic slicing pools join from sub-blocks (DYNAMIC SLICE, SUB-BLOCKS/SLICE, SUB-BLOCKS,
SLICES/WORKLOAD)."""

from __future__ import annotations

from typing import Any

import click

from infra.catalog import tables as catalog
from submit.cli.options import OUTPUTS_HELP, PROJECT_DIR_HELP, STACK_HELP, complete, \
    one_source, table_output_option
from submit.cli.output import emit

COLUMNS = (
    ("NAME", "name"), ("FAMILY", "family"), ("MACHINE TYPE", "machineType"),
    ("TOPOLOGY", "topology"), ("CHIPS/VM", "chipsPerVm"), ("VMS", "vmsPerSlice"),
    ("CHIPS", "chips"), ("RESOURCE", "resourceName"), ("NETWORKING", "networking"),
)
FAMILY_COLUMNS = (("FAMILY", "family"), ("KIND", "kind"), ("ENTRIES", "entries"),
                  ("SMALLEST", "smallest"), ("LARGEST", "largest"))
POOL_COLUMNS = (
    ("POOL", "pool"), ("ACCELERATOR", "accelerator"), ("FAMILY", "family"),
    ("MACHINE TYPE", "machineType"), ("TOPOLOGY", "topology"), ("SLICES", "slices"),
    ("CAPACITY", "capacityMode"), ("ZONES", "zones"),
)
CHECKPOINT_COLUMNS = (("CHECKPOINT RAM", "checkpointRamDisk"), ("POD MEMORY", "podMemory"))
# Dynamic slicing (docs/dynamic-slicing.md): the shape a workload asks GKE's slice
# controller for, the 4x4x4 sub-blocks one such slice joins, the pool's sub-blocks, and
# the most slices one workload may have (its slices share a reservation block).
DYNAMIC_COLUMNS = (("DYNAMIC SLICE", "sliceTopology"),
                   ("SUB-BLOCKS/SLICE", "subBlocksPerSlice"), ("SUB-BLOCKS", "subBlocks"),
                   ("SLICES/WORKLOAD", "slicesPerWorkload"))


@click.command("accelerators")
@click.argument("names", nargs=-1, metavar="[NAME]...",
                shell_complete=complete("accelerators"))
@click.option("--family", type=click.Choice(catalog.families()),
              help="Only entries of this family.")
@click.option("--stack", envvar="ACCELSTACK_STACK", show_envvar=True, metavar="NAME",
              shell_complete=complete("stacks"), callback=one_source("stack"),
              help=STACK_HELP + " List the pools it offers instead of the catalog.")
@click.option("--outputs", "outputs_file", envvar="ACCELSTACK_OUTPUTS", show_envvar=True,
              metavar="FILE", type=click.Path(dir_okay=False), callback=one_source("outputs"),
              help=OUTPUTS_HELP + " List the pools it offers instead of the catalog.")
@click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
              default=".", show_default=True, metavar="DIR", type=click.Path(file_okay=False),
              help=PROJECT_DIR_HELP)
@click.option("--all", "whole", is_flag=True,
              help="The whole catalog, one row per entry (without NAMEs, --family or a "
                   "stack, one row per family is listed).")
@table_output_option
@click.pass_context
def accelerators(ctx: click.Context, names: tuple[str, ...], family: str | None,
                 stack: str | None, outputs_file: str | None, project_dir: str,
                 whole: bool, fmt: str) -> None:
    """Summarise the accelerator catalog by family (--all: every entry), or resolve NAMEs
    (any accepted form) in order; with --stack or --outputs, list the stack's pools (NAMEs
    then filter them).

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
    if stack or outputs_file:
        _pools(stack, outputs_file, project_dir, names, entries, family, fmt)
        return
    if not (names or family or whole):
        emit(_families(entries), fmt, FAMILY_COLUMNS)
        click.echo(f"{len(entries)} entries in {len(catalog.families())} families: --family "
                   "F lists one family, --all every entry, NAME... resolves names, --stack "
                   "or --outputs lists a stack's pools", err=True)
        return
    emit([e.to_dict() for e in entries], fmt, COLUMNS)


def _families(entries: list[Any]) -> list[dict[str, Any]]:
    """One row per family, in the catalog's order: its kind, entries, smallest and largest."""
    rows: dict[str, list[Any]] = {}
    for e in entries:
        rows.setdefault(e.family, []).append(e)
    return [{"family": f, "kind": es[0].kind, "entries": len(es),
             "smallest": min(es, key=lambda e: (e.chips, e.name)).name,
             "largest": max(es, key=lambda e: (e.chips, e.name)).name}
            for f, es in rows.items()]


def _capacity(outputs: Any, pool: Any) -> str:
    """A fixed pool's capacity mode; for a slice class, what it tries, in order (its
    SLICES are the most it may hold at once, and it makes them on demand)."""
    info = outputs.slice_class(pool.compute_class) if pool.compute_class else None
    if info is None:
        return str(pool.capacity_mode)
    return "class: " + " > ".join(info.capacity)


def _pools(stack: str | None, outputs_file: str | None, project_dir: str,
           names: tuple[str, ...], entries: list[Any], family: str | None,
           fmt: str) -> None:
    """The stack's pools; NAMEs (any form) and --family keep the pools of those types."""
    from submit.cli.context import Context

    outputs = Context(stack, outputs_file, project_dir).outputs
    wanted = {e.name for e in entries}
    pools = [p for p in outputs.slice_pools
             if (not names or catalog.resolve(p.accelerator).name in wanted)
             and (not family or p.family == family)]
    rows: list[dict[str, Any]] = [
        {"pool": p.name, "accelerator": p.accelerator, "family": p.family,
         "machineType": p.machine_type, "topology": p.topology, "slices": p.slice_count,
         "capacityMode": _capacity(outputs, p), "zones": ",".join(p.zones)}
        for p in pools]
    columns: tuple[tuple[str, str], ...] = POOL_COLUMNS
    if any(p.slice_topology for p in outputs.slice_pools):
        columns += DYNAMIC_COLUMNS
        for row, p in zip(rows, pools):
            dynamic = p.slice_topology is not None
            row["sliceTopology"] = p.slice_topology
            row["subBlocksPerSlice"] = (catalog.sub_blocks(catalog.resolve(p.accelerator))
                                        if dynamic else None)
            row["subBlocks"] = len(p.node_pools) if dynamic else None
            row["slicesPerWorkload"] = p.block_slice_count
    if any(p.checkpointing for p in outputs.slice_pools):
        # Multi-tier checkpointing: the RAM disk each node gives up, and what a pod keeps.
        columns += CHECKPOINT_COLUMNS
        by_name = {p.name: p.checkpointing for p in outputs.slice_pools}
        for row in rows:
            tier = by_name.get(str(row["pool"]))
            row["checkpointRamDisk"] = f"{tier.ram_disk_mi}Mi" if tier else None
            row["podMemory"] = (f"{tier.pod_memory_mi}Mi" if tier and tier.pod_memory_mi
                                else None)
    emit(rows, fmt, columns)
