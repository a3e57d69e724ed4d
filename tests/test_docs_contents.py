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


def test_the_stacks_page_has_a_row_for_every_config_key() -> None:
    """docs/stacks.md promises every `accelstack:` key: each key the parsers take (a cluster
    stack's, a pools stack's and a fleet's) has a row of its table."""
    from infra.config.fleet import FLEET_KEY
    from infra.config.pools import ON_CLUSTER_KEY
    from infra.config.stack import TOP_LEVEL_KEYS

    rows = doc_pages.section("docs/stacks.md", "## Stack config")
    cells = {key for line in rows.splitlines() if line.startswith("| `")
             for key in re.findall(r"`([A-Za-z]+)`", line.split(" | ", 1)[0])}
    keys = {*TOP_LEVEL_KEYS, ON_CLUSTER_KEY, FLEET_KEY}
    assert sorted(keys - cells) == []


def test_the_upgrades_section_has_a_row_for_every_key() -> None:
    """docs/stacks.md's "Upgrades and maintenance" table names every key the maintenance
    parsers take (infra/config/maintenance.py)."""
    from infra.config import maintenance

    rows = doc_pages.section("docs/stacks.md", "## Upgrades and maintenance")
    cells = {token.rsplit(".", 1)[-1] for line in rows.splitlines() if line.startswith("| `")
             for token in re.findall(r"`([^`]+)`", line.split(" | ", 1)[0])}
    keys = {*maintenance.WINDOW_KEYS, *maintenance.EXCLUSION_KEYS, *maintenance.UPGRADE_KEYS}
    assert sorted(keys - cells) == []
    blue_green = next(ln for ln in rows.splitlines() if ln.startswith("| `slices[].upgrade.blueGreen`"))
    assert sorted(k for k in maintenance.BLUE_GREEN_KEYS if f"`{k}`" not in blue_green) == []
