"""The documentation the doc-tests read: README.md (the map) and every page of docs/.

One place that knows where each subject lives, so a test that runs a page's example names
the page, and a page that moves breaks one line here rather than every test."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

# Fenced blocks that hold commands are ```sh; other shell spellings would escape the
# doc-test, so a page may not use them (tests/test_readme_commands.py checks).
SHELL_FENCES = ("bash", "shell", "console", "zsh", "fish", "shell-session")


def pages() -> list[Path]:
    """README.md, then every docs/*.md page in name order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def name(page: Path) -> str:
    """The page's path from the project root (``docs/storage.md``)."""
    return page.relative_to(ROOT).as_posix()


def text(page: str) -> str:
    """A page's text by its path from the root: ``text("docs/storage.md")``."""
    return (ROOT / page).read_text()


def section(page: str, heading: str) -> str:
    """The text under ``heading`` (a whole heading line, e.g. ``"## Shell completion"``)
    up to the next heading of the same or a higher level (fenced blocks are not
    headings)."""
    level = len(heading.split(" ", 1)[0])
    lines = text(page).splitlines(keepends=True)
    start = lines.index(heading + "\n") + 1
    fenced = False
    for i in range(start, len(lines)):
        if lines[i].startswith("```"):
            fenced = not fenced
        m = re.match(r"(#+) ", lines[i])
        if m and not fenced and len(m.group(1)) <= level:
            return "".join(lines[start:i])
    return "".join(lines[start:])


def all_text() -> str:
    return "\n".join(p.read_text() for p in pages())


def commands() -> list[tuple[str, str, str]]:
    """(page, section, command) for every command of every ```sh block of every page,
    continuation lines joined, comments dropped, in page order. The section is the page's
    last `#`/`##` heading above the block."""
    out = []
    for page in pages():
        heading = ""
        for m in re.finditer(r"^(#{1,2}) ([^\n]+)$|^```(\S*)\n(.*?)^```", page.read_text(),
                             re.M | re.S):
            if m.group(2):
                heading = m.group(2).strip()
                continue
            if m.group(3) != "sh":
                continue
            for line in m.group(4).replace("\\\n", " ").splitlines():
                command = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
                if command:
                    out.append((name(page), heading, " ".join(command.split())))
    return out
