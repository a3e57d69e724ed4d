"""The two tables of contents, README.md's and docs/index.md's, each link every page of
docs/: a newcomer who reads either finds every page (issue 34)."""

from __future__ import annotations

import re

import doc_pages


def _linked(text: str, prefix: str) -> set[str]:
    return set(re.findall(rf"^\| \[[^]]+\]\({re.escape(prefix)}([a-z0-9-]+\.md)\)", text,
                          re.M))


PAGES = {p.name for p in doc_pages.DOCS.glob("*.md")} - {"index.md"}


def test_the_readme_contents_link_every_page() -> None:
    contents = doc_pages.section("README.md", "## Contents")
    assert sorted(PAGES - _linked(contents, "docs/")) == []


def test_the_docs_index_links_every_page() -> None:
    assert sorted(PAGES - _linked(doc_pages.text("docs/index.md"), "")) == []
