"""`accelstack-preview`: a stack's desired state, offline.

Runs the Pulumi program under the SDK's mock engine (no Pulumi CLI, no state backend, no
cloud account) and prints every resource it declares (type, logical name, parent, inputs)
and the stack outputs it would export, as sorted YAML with secrets masked. Values only the
cloud knows are stand-ins (the cluster endpoint is a documentation address).

Snapshots of every stack live in ``snapshots/``; ``--check-snapshots`` fails when a change
alters a stack's desired state without updating its snapshot, and ``--diff`` shows what
changed, field by field. ``--policy`` runs the policy rules (``infra.policy``).
"""

from __future__ import annotations

import json
import sys
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


class BadStack(click.ClickException):
    """Invalid stack files: one line per problem on stderr, exit 2 (bad input)."""

    exit_code = 2

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems

    def show(self, file: Any = None) -> None:
        for line in self.problems:
            click.echo(line, err=True)


SNAPSHOTS_DIR = Path("snapshots")
EXIT_CHANGED = 1
EXIT_POLICY = 3


def desired_state(path: Path) -> dict[str, Any]:
    """The document the preview prints for one stack file."""
    from infra import harness, policy

    ev = harness.evaluate_file(path)
    resources = [{"type": r.type, "name": r.name, "parent": r.parent_name or None,
                  "inputs": _mask(r.inputs)} for r in ev.resources]
    items = [policy.Item(r["type"], r["name"], r["inputs"]) for r in resources]
    # Every key of the stack file (all namespaces) for the rules on config itself.
    stack_config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
    items += policy.config_items(stack_config)
    findings = policy.check(ev.config, items)
    return {
        "stack": harness.stack_name(path),
        "resources": resources,
        "outputs": harness.plain_outputs(ev),
        "policy": {
            "findings": [f.to_dict() for f in findings],
            "waivers": dict(ev.config.policy.waivers),
        },
    }


def dump(doc: dict[str, Any]) -> str:
    return str(yaml.safe_dump(doc, sort_keys=True, width=100))


def snapshot_path(stack: str) -> Path:
    return SNAPSHOTS_DIR / f"{stack}.yaml"


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Resources added, removed and changed (field by field), and changed outputs."""
    def index(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {f"{r['type']} {r['name']}": r for r in doc.get("resources", [])}

    before, after = index(old), index(new)
    lines: list[str] = []
    for key in sorted(after.keys() - before.keys()):
        lines.append(f"+ {key}")
        for field, value in sorted(_flatten({"inputs": after[key].get("inputs")}).items()):
            lines.append(f"    {field}: {json.dumps(value)}")
    for key in sorted(before.keys() - after.keys()):
        lines.append(f"- {key}")
    for key in sorted(before.keys() & after.keys()):
        a = _flatten({"inputs": before[key].get("inputs"), "parent": before[key].get("parent")})
        b = _flatten({"inputs": after[key].get("inputs"), "parent": after[key].get("parent")})
        changes = [(f, a.get(f), b.get(f)) for f in sorted(a.keys() | b.keys())
                   if a.get(f, _MISSING) != b.get(f, _MISSING)]
        if changes:
            lines.append(f"~ {key}")
            for field, x, y in changes:
                lines.append(f"    {field}: {_show(x, field in a)} -> {_show(y, field in b)}")
    oa, ob = _flatten(old.get("outputs") or {}), _flatten(new.get("outputs") or {})
    out_changes = [f for f in sorted(oa.keys() | ob.keys()) if oa.get(f, _MISSING) !=
                   ob.get(f, _MISSING)]
    if out_changes:
        lines.append("~ outputs")
        for f in out_changes:
            lines.append(f"    {f}: {_show(oa.get(f), f in oa)} -> {_show(ob.get(f), f in ob)}")
    return lines


_MISSING = object()


def _show(value: Any, present: bool) -> str:
    return json.dumps(value) if present else "(absent)"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("stacks", nargs=-1, metavar="[STACK]...")
@click.option("--outputs", "outputs_file", type=click.Path(dir_okay=False, writable=True),
              help="Also write the stack outputs (JSON, secrets masked) to this file; with "
                   "one STACK only. `submit workload --outputs FILE` reads it.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Print what changed against the committed snapshot, field by field.")
@click.option("--check-snapshots", is_flag=True,
              help="Fail (exit 1) when a stack's desired state differs from its snapshot.")
@click.option("--update-snapshots", is_flag=True, help="Rewrite the snapshots.")
@click.option("--policy", "run_policy", is_flag=True,
              help="Report policy findings; exit 3 if any is not waived.")
@click.option("--quiet", is_flag=True, help="Do not print the desired state.")
def main(stacks: tuple[str, ...], outputs_file: str | None, show_diff: bool,
         check_snapshots: bool, update_snapshots: bool, run_policy: bool, quiet: bool) -> None:
    """Print the desired state of each STACK (a name in stacks/ or a Pulumi.<stack>.yaml
    path; default: every stack in stacks/) without the Pulumi CLI or a cloud account.

    Exit codes: 0 done; 1 a snapshot differs (--check-snapshots); 2 usage, or a stack file
    or its config is invalid (one line per problem, FILE:LINE: ...; nothing is written);
    3 a policy rule is violated and not waived (--policy).
    """
    from infra.program import StackConfigError
    from infra.stack_file import StackFileError

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
    problems: list[str] = []
    for path in paths:
        try:
            docs.append(desired_state(path))
        except (StackConfigError, StackFileError) as e:
            problems += e.problems
    if problems:
        raise BadStack(problems)
    quiet = quiet or show_diff or check_snapshots or update_snapshots
    if not quiet:
        click.echo("---\n".join(dump(d) for d in docs), nl=False)
    if outputs_file:
        Path(outputs_file).write_text(json.dumps(docs[0]["outputs"], indent=2, sort_keys=True)
                                      + "\n")
    changed = []
    for doc in docs:
        snap = snapshot_path(doc["stack"])
        if update_snapshots:
            snap.parent.mkdir(parents=True, exist_ok=True)
            snap.write_text(dump(doc))
            click.echo(f"wrote {snap}", err=True)
            continue
        if not (show_diff or check_snapshots):
            continue
        if not snap.is_file():
            click.echo(f"{doc['stack']}: no snapshot at {snap} (run with --update-snapshots)")
            changed.append(doc["stack"])
            continue
        lines = diff(yaml.safe_load(snap.read_text()), doc)
        if lines:
            changed.append(doc["stack"])
            click.echo(f"{doc['stack']}: desired state differs from {snap}:")
            click.echo("\n".join(lines))
        elif show_diff:
            click.echo(f"{doc['stack']}: no changes")
    failed = False
    if run_policy:
        for doc in docs:
            for f in doc["policy"]["findings"]:
                mark = f"waived: {f['waived']}" if "waived" in f else "VIOLATION"
                click.echo(f"{doc['stack']}: [{f['rule']}] {f['resource']}: {f['message']}; "
                           f"fix: {f['fix']} ({mark})")
                failed = failed or "waived" not in f
            if not doc["policy"]["findings"]:
                click.echo(f"{doc['stack']}: policy ok")
    if check_snapshots and changed:
        click.echo(f"snapshots out of date: {', '.join(changed)}; review the change and run "
                   "`accelstack-preview --update-snapshots`", err=True)
        sys.exit(EXIT_CHANGED)
    if failed:
        sys.exit(EXIT_POLICY)


if __name__ == "__main__":
    main()
