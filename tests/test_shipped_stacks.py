"""The README's and docs/stacks.md's tables of shipped stacks list every stack in stacks/,
and nothing else (issue 34). Checked against the directory, so a new stack file fails this
test until its row is added; the failure prints a row to start from (the stack file's
opening comment)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = {"README.md": "## The shipped stacks", "docs/stacks.md": "| shipped stack | what |"}


def shipped() -> dict[str, Path]:
    return {p.name[len("Pulumi."):-len(".yaml")]: p
            for p in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))}


def table_rows(page: str, anchor: str) -> list[str]:
    """The first column (a `name`) of each row of the first table at or after ``anchor``."""
    text = (ROOT / page).read_text()
    assert anchor in text, f"{page}: no {anchor!r}"
    rows = []
    started = False
    for line in text[text.index(anchor):].splitlines():
        if line.startswith("|"):
            started = True
            m = re.match(r"\|\s*`([^`]+)`\s*\|", line)
            if m:
                rows.append(m.group(1))
        elif started:
            break
    return rows


def suggested_row(stack: str, path: Path) -> str:
    comment = " ".join(ln.lstrip("# ").strip() for ln in path.read_text().splitlines()
                       if ln.startswith("#"))
    first = re.split(r"(?<=[.:])\s", comment, maxsplit=1)[0].rstrip(".:")
    return f"| `{stack}` | {first} |"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_table_lists_every_shipped_stack(page: str) -> None:
    rows = table_rows(page, PAGES[page])
    stacks = shipped()
    missing = [s for s in stacks if s not in rows]
    assert not missing, f"{page}: add a row for each of {missing}, for example:\n" + \
        "\n".join(suggested_row(s, stacks[s]) for s in missing)
    assert sorted(set(rows) - set(stacks)) == [], f"{page}: rows for stacks not in stacks/"
    assert len(rows) == len(set(rows)), f"{page}: a stack listed twice"


def test_the_readme_says_what_set_up_prints() -> None:
    from infra.preview.cli import summary

    readme = (ROOT / "README.md").read_text()
    setup = readme[readme.index("## Set-up"):readme.index("## What runs where")]
    doc = {"stack": "v5e-spot", "resources": [{"type": "t"}], "outputs": {},
           "policy": {"findings": []}}
    # What tools/setup's --summary prints: resources, outputs and pools, policy verdict,
    # then the cost lines (tests/test_setup_script.py has them for v5e-spot).
    assert [line.split(" ")[0] for line in summary(doc, by_type=False)] == \
        ["stack", "outputs:", "policy:"]
    assert "(resources, outputs and pools, policy verdict, and what the stack costs per hour" \
        in " ".join(setup.split())
