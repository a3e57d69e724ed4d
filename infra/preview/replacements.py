"""What a previewed change destroys, in `accelstack-preview --diff` and `--check-snapshots`:
the replacement block that leads each stack's diff (infra.replacements.summary), the guard
that refuses replacing or deleting an accelerator pool without an allowance (exit 3, as a
policy violation), and ``--replacements FILE``, the same summary as JSON for `submit cluster
at-risk --replacements FILE` (which adds the workloads running there) and the pull-request
summary (`python -m infra.replacements show FILE`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import click

from infra.config.replace import Allowance
from infra.replacements import guard, summary as summaries


def options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The command's options of this module."""
    fn = click.option("--replacements", "replacements_file", metavar="FILE",
                      type=click.Path(dir_okay=False, writable=True),
                      help="With --diff or --check-snapshots: also write what the change "
                           "replaces or deletes, per stack, as JSON (for `submit cluster "
                           "at-risk --replacements FILE`).")(fn)
    fn = click.option("--allow", "allow", multiple=True, metavar="POOL=REASON",
                      callback=_allowances,
                      help="Allow replacing or deleting this accelerator pool (a node pool "
                           "or slice pool name) for this run, with a reason of at least 10 "
                           "characters; as the stack key allowReplace does. Repeatable.")(fn)
    return fn


def _allowances(ctx: click.Context, param: click.Parameter,
                value: tuple[str, ...]) -> tuple[Allowance, ...]:
    out = []
    for item in value:
        pool, sep, reason = item.partition("=")
        if not sep or not pool.strip() or len(reason.strip()) < 10:
            raise click.BadParameter(f"{item!r}: expected POOL=REASON with a reason of at "
                                     "least 10 characters", param_hint="'--allow'")
        out.append(Allowance(pool.strip(), reason.strip()))
    return tuple(out)


def doc_keys(config: Any) -> dict[str, Any]:
    """What a stack's desired-state document carries for the guard: its allowances, when
    it has any (so that a stack without them keeps its snapshot as it was)."""
    allow = getattr(config, "allow_replace", ())
    return {"allowReplace": [{"pool": a.pool, "reason": a.reason} for a in allow]} \
        if allow else {}


def doc_allowances(doc: dict[str, Any]) -> tuple[Allowance, ...]:
    return tuple(Allowance(a["pool"], a["reason"]) for a in doc.get("allowReplace") or [])


class Collected:
    """The summaries of one run, and what the guard says of them."""

    def __init__(self, allow: tuple[Allowance, ...] = ()) -> None:
        self.allow = allow
        self.summaries: list[summaries.Summary] = []
        self.refused: list[str] = []

    def lead(self, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
        """The block that leads a stack's diff; records the guard's verdict."""
        found = summaries.from_documents(old, new)
        if not found.changes:
            return []
        self.summaries.append(found)
        allow = doc_allowances(new) + self.allow
        self.refused += guard.refusals(found, allow)
        return summaries.block(found) + [f"  {line}" for line in guard.allowed(found, allow)]

    def write(self, path: str | None) -> None:
        if path:
            from infra.preview.interrupt import writing

            with writing():
                Path(path).write_text(json.dumps(
                    {"stacks": [s.to_dict() for s in self.summaries]}, indent=2,
                    sort_keys=True) + "\n")

    def report(self) -> bool:
        """Print each refusal (stderr); whether there was one."""
        for line in self.refused:
            click.echo(line, err=True)
        return bool(self.refused)
