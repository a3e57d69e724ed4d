"""The docs/ pages build into a static site with MkDocs in strict mode: a link to a page or
an anchor that does not exist, or a page missing from the nav, fails the build and so this
test (the README's `mkdocs build` command, run as written into a temporary directory)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT

COMMANDS = [".venv/bin/mkdocs build --strict --site-dir site"]


def test_the_site_builds_strict(tmp_path: Path) -> None:
    [command] = COMMANDS
    argv = shlex.split(command)
    argv[0] = str(Path(sys.executable).with_name("mkdocs"))
    argv[argv.index("--site-dir") + 1] = str(tmp_path / "site")
    res = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()
    # Markup that breaks without a broken link: a heading swallowed by the table above it
    # (no blank line between them) is no heading on the site.
    lost = [f"{page.name}: {h}" for page in sorted((ROOT / "docs").glob("*.md"))
            for h in _headings(page.read_text())
            if h not in _site_headings(tmp_path / "site", page)]
    assert lost == [], "headings of the pages that the site does not show as headings"


def _headings(markdown: str) -> list[str]:
    """The text of each ATX heading outside fenced blocks."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            text = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", line.split(" ", 1)[1])
            out.append(text.replace("`", "").replace("*", "").strip())
    return out


def _site_headings(site: Path, page: Path) -> set[str]:
    import html

    built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
    found = re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", built.read_text(), re.S)
    return {html.unescape(re.sub(r"<[^>]+>", "", h)).strip() for h in found}


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """Strict mode is what catches it: the same docs with one bad link do not build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for page in (ROOT / "docs").glob("*.md"):
        (docs / page.name).write_text(page.read_text())
    (docs / "limits.md").write_text((docs / "limits.md").read_text()
                                    + "\nSee [nowhere](no-such-page.md).\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["docs_dir"] = str(docs)
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    res = subprocess.run([str(Path(sys.executable).with_name("mkdocs")), "build",
                          "--site-dir", str(tmp_path / "site")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "no-such-page.md" in res.stderr


def test_every_page_is_in_the_nav_and_the_readme() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    in_nav = {next(iter(item.values())) for item in config["nav"]}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert in_nav == pages
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\(docs/([a-z-]+\.md)", readme))
    assert linked == pages, "README.md's table of contents misses a page"


def test_the_readme_stays_a_map() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
