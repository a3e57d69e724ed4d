"""Every stack-outputs file the docs tell users to write (`--outputs FILE`) is git-ignored
where they write it, the project root (issue 26): a real stack's outputs hold its cluster
credentials, and a preview's its layout."""

from __future__ import annotations

import re
import subprocess

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _outputs_files() -> set[str]:
    found = set()
    for doc in DOCS:
        for name in re.findall(r"--outputs[ =]([^\s`)]+)", doc.read_text()):
            if not name.isupper():  # FILE, a placeholder
                found.add(name)
    found |= set(re.findall(r"stack output --json(?: --show-secrets)? > ([^\s`]+)",
                            "\n".join(d.read_text() for d in DOCS)))
    return found


def test_the_docs_write_outputs_files() -> None:
    assert "v5e-spot.outputs.json" in _outputs_files()


def test_every_outputs_file_the_docs_write_is_ignored() -> None:
    names = sorted(_outputs_files())
    r = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT,
                       input="\n".join(names) + "\n", capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    assert sorted(r.stdout.split()) == names
