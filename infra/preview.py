"""`accelstack-preview`: a stack's desired state, offline.

Runs the Pulumi program under the SDK's mock engine (no Pulumi CLI, no state backend, no
cloud account) and prints every resource it declares (type, logical name, parent, inputs)
and the stack outputs it would export, as sorted YAML with secrets masked. Values only the
cloud knows are stand-ins (the cluster endpoint is a documentation address).

Exit codes: 0 printed; 1 a stack's config is invalid (the problems are printed); 2 usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

STACKS_DIR = Path("stacks")


def _stack_path(ref: str) -> Path:
    path = Path(ref)
    if path.suffix == ".yaml":
        return path
    return STACKS_DIR / f"Pulumi.{ref}.yaml"


def _mask(value: Any) -> Any:
    from infra.harness import MASK, Secret

    if isinstance(value, Secret):
        return MASK
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the engine carries numbers as doubles
    return value


def desired_state(path: Path) -> dict[str, Any]:
    """The document the preview prints for one stack file."""
    from infra import harness

    ev = harness.evaluate_file(path)
    return {
        "stack": harness.stack_name(path),
        "resources": [
            {"type": r.type, "name": r.name, "parent": r.parent_name or None,
             "inputs": _mask(r.inputs)}
            for r in ev.resources
        ],
        "outputs": harness.plain_outputs(ev),
    }


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("stacks", nargs=-1, metavar="[STACK]...")
@click.option("--outputs", "outputs_file", type=click.Path(dir_okay=False, writable=True),
              help="Also write the stack outputs (JSON, secrets masked) to this file; with "
                   "one STACK only.")
def main(stacks: tuple[str, ...], outputs_file: str | None) -> None:
    """Print the desired state of each STACK (a name in stacks/ or a Pulumi.<stack>.yaml
    path; default: every stack in stacks/) without the Pulumi CLI or a cloud account."""
    from infra.program import StackConfigError

    paths = [_stack_path(s) for s in stacks] or sorted(STACKS_DIR.glob("Pulumi.*.yaml"))
    if not paths:
        raise click.UsageError(f"no stack files in {STACKS_DIR}/ (run from the project root "
                               "or name a Pulumi.<stack>.yaml file)")
    if outputs_file and len(paths) != 1:
        raise click.UsageError("--outputs takes exactly one STACK")
    for path in paths:
        if not path.is_file():
            raise click.BadParameter(f"{path}: no such stack file", param_hint="'STACK'")
    docs = []
    for path in paths:
        try:
            docs.append(desired_state(path))
        except StackConfigError as e:
            raise click.ClickException(f"{path}: {e}") from None
    click.echo(yaml.safe_dump_all(docs, sort_keys=True, width=100), nl=False)
    if outputs_file:
        Path(outputs_file).write_text(json.dumps(docs[0]["outputs"], indent=2, sort_keys=True)
                                      + "\n")


if __name__ == "__main__":
    main()
