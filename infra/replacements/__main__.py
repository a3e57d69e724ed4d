"""`python -m infra.replacements`: the replacement summary where the pipeline needs it.

    python -m infra.replacements show FILE
        Markdown for the pull-request summary from `accelstack-preview --diff --replacements
        FILE` (or this command's --out), with the workloads `submit cluster at-risk` added.
    python -m infra.replacements pulumi-json PREVIEW.json --stack NAME [--stack-file PATH]
                                 [--allow POOL=REASON]... [--out FILE]
        The same summary from the real CLI's `pulumi preview --json`, and the guard: exit 3
        when it replaces or deletes an accelerator pool that neither the stack file's
        allowReplace nor --allow allows.

Exit codes: 0 done; 2 usage or a bad file (one line); 3 refused by the guard.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from infra.config.reader import Reader
from infra.config.replace import KEY, Allowance, parse_allow_replace
from infra.replacements import guard, summary
from infra.replacements.pulumi_json import PreviewJsonError, from_preview

EXIT_USAGE = 2
EXIT_REFUSED = 3


class Usage(Exception):
    """One line for stderr, exit 2."""


def show(data: dict[str, Any]) -> list[str]:
    """Markdown: one headline per stack first, then each stack's destroying changes."""
    stacks = data.get("stacks")
    if not isinstance(stacks, list):
        raise Usage("no 'stacks' list: not a file written by --replacements or --out")
    lines = ["## What this change destroys", ""]
    if not stacks:
        return lines + ["No stack changes."]
    for s in stacks:
        lines.append(f"- **{s['headline']}**" + (
            f": {summary.workloads_text(s.get('workloads', summary.NOT_LOOKED))}"
            if any(c.get("pool") and c["op"] in ("replace", "delete", "unapplied")
                   for c in s["changes"]) else ""))
    lines += ["", "```"]
    for s in stacks:
        lines += [s["headline"], *s["block"]]
        workloads = s.get("workloads")
        if isinstance(workloads, dict):
            lines += [f"  workload {w['kind']} {w['namespace']}/{w['name']} on "
                      f"{', '.join(w['nodePools'])}: {w['state']}, owner {w['owner']}, "
                      f"age {w['age']}" for w in workloads.get("items") or []]
    return lines + ["```"]


def _allowances(stack_file: str | None, flags: list[str]) -> tuple[Allowance, ...]:
    out: list[Allowance] = []
    if stack_file:
        from infra.config import stack_file as files

        try:
            sf = files.load(stack_file)
        except files.StackFileError as e:
            raise Usage(str(e).splitlines()[0]) from None
        r = Reader()
        out += parse_allow_replace(r, sf.raw.get(KEY))
        if r.problems:
            raise Usage(sf.locate(r.problems[0]))
    for item in flags:
        pool, sep, reason = item.partition("=")
        if not sep or not pool.strip() or len(reason.strip()) < 10:
            raise Usage(f"--allow {item!r}: expected POOL=REASON with a reason of at least "
                        "10 characters")
        out.append(Allowance(pool.strip(), reason.strip()))
    return tuple(out)


def _read_json(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except OSError as e:
        raise Usage(f"{path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise Usage(f"{path}:{e.lineno}: not JSON ({e.msg})") from None


def run(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m infra.replacements",
                                 description="What a change destroys.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p_show = sub.add_parser("show", help="markdown for the pull-request summary")
    p_show.add_argument("file")
    p_json = sub.add_parser("pulumi-json", help="summarise `pulumi preview --json`")
    p_json.add_argument("preview")
    p_json.add_argument("--stack", required=True)
    p_json.add_argument("--stack-file")
    p_json.add_argument("--allow", action="append", default=[], metavar="POOL=REASON")
    p_json.add_argument("--out")
    args = ap.parse_args(argv)
    if args.cmd == "show":
        print("\n".join(show(_read_json(args.file))))
        return 0
    allow = _allowances(args.stack_file, args.allow)
    try:
        found = from_preview(_read_json(args.preview), args.stack)
    except PreviewJsonError as e:
        raise Usage(f"{args.preview}: {e}") from None
    print("\n".join(summary.block(found) + guard.allowed(found, allow)))
    if args.out:
        Path(args.out).write_text(json.dumps({"stacks": [found.to_dict()]}, indent=2,
                                             sort_keys=True) + "\n")
    refused = guard.refusals(found, allow)
    for line in refused:
        print(line, file=sys.stderr)
    return EXIT_REFUSED if refused else 0


def main() -> None:
    try:
        sys.exit(run(sys.argv[1:]))
    except Usage as e:
        print(f"python -m infra.replacements: {e}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
