"""Every page runs offline as written (issue 34): a page that shows `--stack STACK` also shows
the offline route, `accelstack-preview STACK --outputs FILE` and then a command with
`--outputs FILE`; and every outputs file a page's commands read is written by an
`accelstack-preview` command earlier on that page. The doc-test (tests/test_readme_commands.py)
then runs the route: it gives a section only the outputs files its page wrote before it."""

from __future__ import annotations

import shlex

import pytest

import doc_pages


def _argvs(page: str) -> list[list[str]]:
    out = []
    for p, _, command in doc_pages.commands():
        if p != page:
            continue
        try:
            out.append(shlex.split(command))
        except ValueError:
            continue
    return out


def _value(argv: list[str], option: str) -> str | None:
    return argv[argv.index(option) + 1] if option in argv[:-1] else None


def _preview(argv: list[str]) -> bool:
    return bool(argv) and argv[0].endswith("accelstack-preview")


PAGES = sorted({p for p, _, _ in doc_pages.commands()})


@pytest.mark.parametrize("page", PAGES)
def test_every_outputs_file_is_written_on_the_page_before_it_is_read(page: str) -> None:
    written: set[str] = set()
    unwritten = []
    for argv in _argvs(page):
        f = _value(argv, "--outputs")
        if f is None:
            continue
        if _preview(argv):
            written.add(f)
        elif f not in written:
            unwritten.append(f)
    assert unwritten == [], f"{page} reads outputs files it never wrote: add " \
        "`accelstack-preview STACK --quiet --outputs FILE` before"


@pytest.mark.parametrize("page", PAGES)
def test_every_stack_example_has_its_offline_route(page: str) -> None:
    argvs = _argvs(page)
    previews = {(a[1], _value(a, "--outputs")) for a in argvs
                if _preview(a) and len(a) > 1 and _value(a, "--outputs")}
    read = {_value(a, "--outputs") for a in argvs if not _preview(a)}
    # accelstack-adopt's --stack names the stack file it writes, not a stack it reads.
    missing = sorted({s for a in argvs if (s := _value(a, "--stack")) is not None
                      and a[0] != "accelstack-adopt"
                      and not any(stack == s and f in read for stack, f in previews)})
    assert missing == [], f"{page}: --stack examples without the offline route for {missing}"


def test_every_export_the_docs_write_lands_in_a_git_ignored_folder() -> None:
    """Following the docs must not leave untracked files in the checkout (issue 34)."""
    import subprocess

    from conftest import ROOT

    paths = sorted({v for page in PAGES for a in _argvs(page)
                    if (v := _value(a, "--export")) is not None})
    assert paths, "the docs show no --export"
    checked = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=ROOT,
                             capture_output=True, text=True)
    assert sorted(checked.stdout.split()) == paths, "--export paths git would not ignore"
