"""`accelstack-preview`: a stack's desired state, offline.

Runs the Pulumi program under the SDK's mock engine (no Pulumi CLI, no state backend, no
cloud account) and prints every resource it declares (type, logical name, parent, inputs)
and the stack outputs it would export, as sorted YAML with secrets masked. Values only the
cloud knows are stand-ins (the cluster endpoint is a documentation address).

Snapshots of every stack live in ``snapshots/``; ``--check-snapshots`` fails when a change
alters a stack's desired state without updating its snapshot, and ``--diff`` shows what
changed, field by field. ``--policy`` runs the policy rules (``infra.policy.rules``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from datetime import date
from typing import Any

import click
import yaml

from infra.preview import replacements
from infra.preview.snapshots import SNAPSHOTS_DIR, diff, dump, snapshot_path
from infra.preview.summaries import summary, summary_data
from infra.preview.streams import echo

__all__ = ["SNAPSHOTS_DIR", "desired_state", "diff", "dump", "main", "snapshot_path",
           "summary", "summary_data"]

STACKS_DIR = Path("stacks")


def _stack_path(ref: str, root: Path = Path(".")) -> Path:
    """STACK as typed: a file (a .yaml or .yml name, or any path) or a stack name."""
    path = Path(ref)
    if path.suffix in (".yaml", ".yml") or "/" in ref or os.sep in ref:
        return path
    return root / STACKS_DIR / f"Pulumi.{ref}.yaml"


def find_project(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a Pulumi.yaml (as the Pulumi
    CLI looks for its project)."""
    for d in [start, *start.parents]:
        if (d / "Pulumi.yaml").is_file():
            return d
    return None


def _no_stack(path: Path, root: Path) -> str:
    """No such stack file: name the stacks there are and the nearest to what was typed."""
    import difflib

    names = sorted(p.name[len("Pulumi."):-len(".yaml")]
                   for p in (root / STACKS_DIR).glob("Pulumi.*.yaml"))
    typed = path.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
    close = difflib.get_close_matches(typed, names, n=2, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    if path.suffix == ".yml":
        hint += " (Pulumi reads stack files named Pulumi.<stack>.yaml)"
    return (f"{path}: no such stack file{hint} (stacks: {', '.join(names) or 'none'})")


def _mask(value: Any) -> Any:
    from infra.preview.harness import MASK, Secret

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
            echo(line, err=True)


EXIT_CHANGED = 1
EXIT_POLICY = 3


def desired_state(path: Path) -> dict[str, Any]:
    """The document the preview prints for one stack file."""
    return _desired_state(path)[0]


def _desired_state(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document the preview prints for one stack file, and the outputs --outputs
    writes (harness.offline_outputs)."""
    from infra.preview import harness
    from infra.policy import rules as policy
    from infra.specs import image_cache as image_cache_spec

    from infra.preview import costs

    ev = harness.evaluate_file(path)
    # What the stack costs per hour while it stands (docs/cost.md), part of the snapshot so
    # that a pull request shows the change in $/hour beside the resources.
    cost = costs.figures(path, ev).to_dict()
    offline = harness.offline_outputs(ev)
    resources = [{"type": r.type, "name": r.name, "parent": r.parent_name or None,
                  "inputs": _mask(r.inputs),
                  # an adopted resource: imported by this ID, these fields kept as they are
                  **({"import": r.import_id, "ignoreChanges": list(r.ignore_changes)}
                     if r.import_id else {})} for r in ev.resources]
    if not hasattr(ev.config, "policy"):
        # A fleet stack (docs/fleets.md) or a pools stack (docs/ephemeral.md) declares no
        # cluster: the cluster rules do not apply.
        return {"stack": harness.stack_name(path), "resources": resources,
                "outputs": harness.plain_outputs(ev),
                "policy": {"findings": [], "waivers": {}}, "cost": cost}, offline
    items = [policy.Item(r["type"], r["name"], r["inputs"]) for r in resources]
    # Every key of the stack file (all namespaces) for the rules on config itself.
    stack_config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
    items += policy.config_items(stack_config)
    findings = policy.check(ev.config, items)
    doc: dict[str, Any] = {
        "stack": harness.stack_name(path),
        "resources": resources,
        "outputs": harness.plain_outputs(ev),
        "policy": {
            "findings": [f.to_dict() for f in findings],
            "waivers": dict(ev.config.policy.waivers),
        },
        "cost": cost,
    }
    doc.update(replacements.doc_keys(ev.config))  # allowReplace, read by the guard
    # Config checks that warn rather than refuse (the Pulumi program logs the same ones).
    warnings = image_cache_spec.warnings(ev.config)
    if warnings:
        doc["warnings"] = warnings
    return doc, offline


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="accelstack", prog_name="accelstack-preview")
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
@click.option("--summary", "summary_only", is_flag=True,
              help="Print each stack's summary (resources, outputs, pools, policy verdict) "
                   "instead of its desired state.")
@click.option("--quiet", is_flag=True,
              help="Do not print the desired state (nor its summary).")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Format of the desired state: YAML documents with the "
              "summary as comments, or JSON (one object per stack, a list for several; "
              "with --summary, --diff, --check-snapshots or --quiet, what was asked instead "
              "of the desired state: stdout is one JSON document).")
@replacements.options
@click.option("--project-dir", type=click.Path(file_okay=False, exists=True), metavar="DIR",
              help="The Pulumi project (holding Pulumi.yaml, stacks/ and snapshots/) "
                   "[default: the nearest directory at or above this one with a "
                   "Pulumi.yaml].")
def main(stacks: tuple[str, ...], outputs_file: str | None, show_diff: bool,
         check_snapshots: bool, update_snapshots: bool, run_policy: bool, summary_only: bool,
         quiet: bool, fmt: str, replacements_file: str | None, allow: tuple[Any, ...],
         project_dir: str | None) -> None:
    """Print the desired state of each STACK (a name in stacks/ or a Pulumi.<stack>.yaml
    path; default: every stack in stacks/) without the Pulumi CLI or a cloud account.

    Exit codes: 0 done; 1 a snapshot differs (--check-snapshots); 2 usage, or a stack file
    or its config is invalid (one line per problem, FILE:LINE: ...; nothing is written);
    3 a policy rule is violated and not waived (--policy), or a pool replacement is not
    allowed (--diff, --check-snapshots); 130 interrupted (Ctrl-C).
    """
    today = _today()
    root, paths = _stack_paths(stacks, project_dir, outputs_file)
    docs, offline = _evaluate(paths)
    from infra.preview import costs

    for warning in costs.table_warnings(today):
        echo(f"warning: {warning}", err=True)
    for doc in docs:
        for warning in doc.get("warnings", []):
            echo(f"{doc['stack']}: warning: {warning}", err=True)
    as_json = fmt == "json"
    quiet = quiet or show_diff or check_snapshots or update_snapshots
    if not as_json:
        for doc in docs if not quiet else []:
            if summary_only:
                echo("\n".join(summary(doc, by_type=False)))
                continue
            # The summary first; as YAML comments, so that stdout stays the YAML it was.
            echo("".join(f"# {line}\n" for line in summary(doc)), nl=False)
            echo(dump(doc) + ("---\n" if doc is not docs[-1] else ""), nl=False)
    if outputs_file:
        from infra.preview.outputs_file import write

        write(offline[0], outputs_file)
    # With -o json, stdout is one JSON document whatever was asked (the desired state, or
    # per stack what was asked for instead of it); every other line goes to stderr.
    reports: list[dict[str, Any]] = [
        doc if as_json and not quiet and not summary_only else {"stack": doc["stack"]}
        for doc in docs]
    seen = replacements.Collected(allow)
    changed = [doc["stack"] for doc, report in zip(docs, reports)
               if _snapshot_changed(doc, root, update_snapshots, show_diff, check_snapshots,
                                    report if as_json else None, seen)]
    seen.write(replacements_file)
    failed = (run_policy and _policy_failed(docs, err=as_json)) | seen.report()
    if as_json and (quiet or summary_only):
        for doc, report in zip(docs, reports):
            if summary_only:
                report["summary"] = summary_data(doc)
            if run_policy:
                report["policy"] = doc["policy"]
    if as_json:
        echo(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2,
                        sort_keys=True))
    if check_snapshots and changed:
        echo(f"snapshots out of date: {', '.join(changed)}; review the change and run "
             "`accelstack-preview --update-snapshots`", err=True)
        sys.exit(EXIT_CHANGED)
    if check_snapshots:
        echo(f"snapshots up to date: {len(docs)} stack{'s' if len(docs) != 1 else ''} "
             f"({', '.join(d['stack'] for d in docs)})", err=True)
    if failed:
        sys.exit(EXIT_POLICY)


def _today() -> date | None:
    """ACCELSTACK_TODAY (an ISO date: the day the price table's age is counted from), or
    None for the calendar's; a value that is not a date is bad input (exit 2)."""
    pinned = os.environ.get("ACCELSTACK_TODAY")
    if not pinned:
        return None
    try:
        return date.fromisoformat(pinned)
    except ValueError:
        raise BadStack([f"ACCELSTACK_TODAY: {pinned!r} is not a date; give an ISO date such "
                        "as 2026-11-28, or unset it (today's date is used)"]) from None


def _stack_paths(stacks: tuple[str, ...], project_dir: str | None,
                 outputs_file: str | None) -> tuple[Path, list[Path]]:
    """The project root and the stack files to evaluate, each checked to exist."""
    found = find_project(Path.cwd())
    if project_dir is None and found is None and not (
            stacks and all(Path(s).is_file() for s in stacks)) \
            and not any(STACKS_DIR.glob("Pulumi.*.yaml")):
        raise click.UsageError(
            f"no Pulumi.yaml in {Path.cwd()} or above it: run accelstack-preview inside the "
            "accelstack project (the directory holding Pulumi.yaml, stacks/ and snapshots/), "
            "pass --project-dir DIR, or name a stack file (path/to/Pulumi.<stack>.yaml)")
    root = Path(project_dir) if project_dir else (
        Path(os.path.relpath(found)) if found else Path("."))
    paths = [_stack_path(s, root) for s in stacks] or sorted(
        (root / STACKS_DIR).glob("Pulumi.*.yaml"))
    if not paths:
        raise click.UsageError(f"no stack files in {root / STACKS_DIR}/ (run inside the "
                               "project, pass --project-dir, or name a Pulumi.<stack>.yaml "
                               "file)")
    if outputs_file and len(paths) != 1:
        raise click.UsageError("--outputs takes exactly one STACK")
    folder = Path(outputs_file).parent if outputs_file else None
    if folder is not None and not folder.is_dir():
        # A typo in a path is not a folder to make (docs/review.md): said before any work.
        what = "not a folder" if folder.exists() else "no such folder"
        raise BadStack([f"--outputs {outputs_file}: {what}: {folder} (make it first, or "
                        "write the file elsewhere)"])
    for path in paths:
        if not path.is_file():
            raise click.BadParameter(_no_stack(path, root), param_hint="'STACK'")
    return root, paths


def _evaluate(paths: list[Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every stack's desired state and offline outputs; all the problems of all of them,
    or none."""
    from infra.program import StackConfigError
    from infra.config.stack_file import StackFileError
    from infra.components.fleet import FleetConfigError
    from infra.components.pools import PoolsConfigError

    from infra.preview.streams import Progress

    docs = []
    offline = []
    problems: list[str] = []
    progress = Progress()
    for i, path in enumerate(paths):
        progress.step(i, len(paths), _stack_label(path))
        try:
            doc, outputs = _desired_state(path)
            docs.append(doc)
            offline.append(outputs)
        except (StackConfigError, StackFileError, FleetConfigError, PoolsConfigError) as e:
            # A fleet's or a pools stack's refusals depend on the stacks it references
            # (their contracts): as the config's own, one line each, FILE:LINE first.
            problems += e.problems
    progress.done()
    if problems:
        raise BadStack(problems)
    return docs, offline


def _stack_label(path: Path) -> str:
    """The stack a file holds, as the progress line names it (harness.stack_name's rule,
    without importing the harness first)."""
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")


def _snapshot_changed(doc: dict[str, Any], root: Path, update: bool, show_diff: bool,
                      check: bool, report: dict[str, Any] | None,
                      seen: replacements.Collected) -> bool:
    """Rewrite the stack's snapshot (--update-snapshots) or compare with it; whether it
    differs. The differences are printed, or with ``report`` (-o json) put into it."""
    from infra.preview import snapshots

    if update:
        snap = snapshots.write(doc, root)
        echo(f"wrote {snap}", err=True)
        if report is not None:
            report["snapshot"] = {"path": str(snap), "written": True}
        return False
    if not (show_diff or check):
        return False
    snap, lines = snapshots.compare(doc, root)
    # What the change destroys leads the diff (docs/review.md), and feeds the guard.
    lead = seen.lead(yaml.safe_load(snap.read_text()), doc) if lines else []
    if report is not None:
        report["snapshot"] = {"path": str(snap), "exists": lines is not None,
                              "destroys": lead, "changes": lines or []}
        return lines is None or bool(lines)
    if lines is None:
        echo(f"{doc['stack']}: no snapshot at {snap} (run with --update-snapshots)")
        return True
    if lines:
        echo(f"{doc['stack']}: desired state differs from {snap}:")
        echo("\n".join(lead + lines))
    elif show_diff:
        echo(f"{doc['stack']}: no changes")
    return bool(lines)


def _policy_failed(docs: list[dict[str, Any]], err: bool = False) -> bool:
    """Print every finding (on stderr with ``err``: stdout holds JSON); whether any
    violation is not waived."""
    failed = False
    for doc in docs:
        for f in doc["policy"]["findings"]:
            mark = f"waived: {f['waived']}" if "waived" in f else "VIOLATION"
            echo(f"{doc['stack']}: [{f['rule']}] {f['resource']}: {f['message']}; "
                 f"fix: {f['fix']} ({mark})", err=err)
            failed = failed or "waived" not in f
        if not doc["policy"]["findings"]:
            echo(f"{doc['stack']}: policy ok", err=err)
    return failed


if __name__ == "__main__":
    main()
