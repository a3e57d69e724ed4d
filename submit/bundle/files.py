"""Which files of a script directory go into its layer, in the order they go: the
directory walked with parents first, less what its ignore file (Docker's syntax) and the
``.gitignore`` files under it leave out. Nothing is written: ``submit.bundle.plan`` turns
the entries into the layer.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pathspec

from infra.record import record

# Ignore files read from the script directory's root, first found wins (Docker's syntax).
IGNORE_FILES = (".accelstackignore", ".dockerignore")


class BundleError(ValueError):
    """Input that cannot be bundled; the message says what to do, ``option`` which option
    (the script directory, or the base image) is at fault."""

    def __init__(self, message: str, option: str = "--script-dir") -> None:
        super().__init__(message)
        self.option = option


def _docker_regex(pattern: str) -> re.Pattern[str]:
    """One .dockerignore pattern (Go filepath.Match plus ``**``) as a regular expression."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body.startswith(("!", "^")):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


class _DockerIgnore:
    """Docker's rules: patterns are relative to the root, a pattern that matches a
    directory excludes what is under it, the last matching pattern wins and ``!`` keeps."""

    def __init__(self, lines: list[str]) -> None:
        self.rules: list[tuple[bool, re.Pattern[str]]] = []
        for line in lines:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            keep = text.startswith("!")
            text = os.path.normpath(text[1:].strip() if keep else text).replace(os.sep, "/")
            text = text.lstrip("/") or "."
            self.rules.append((keep, _docker_regex(text)))

    def ignored(self, rel: str) -> bool:
        parts = rel.split("/")
        candidates = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        result = False
        for keep, rx in self.rules:
            if any(rx.match(c) for c in candidates):
                result = not keep
        return result


class _GitIgnores:
    """.gitignore files at every level: a deeper file's match decides over a shallower one,
    and within a file the last matching pattern wins (gitignore(5))."""

    def __init__(self) -> None:
        self.specs: dict[str, pathspec.GitIgnoreSpec] = {}

    def load(self, root: Path, rel_dir: str) -> None:
        path = root / rel_dir / ".gitignore" if rel_dir else root / ".gitignore"
        try:
            text = path.read_text(errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        except OSError as e:  # an unreadable directory or .gitignore: one line, no traceback
            raise BundleError(f"cannot read {path}: {e.strerror or e}") from None
        self.specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(text.splitlines())

    def ignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            base = "/".join(parts[:depth])
            spec = self.specs.get(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            decision = None
            for pat in spec.patterns:
                if pat.include is not None and pat.match_file(sub) is not None:
                    decision = bool(pat.include)
            if decision is not None:
                return decision
        return False


@record
class Entry:
    """One tar entry: a path relative to the script directory."""

    rel: str
    kind: str  # "dir", "file" or "symlink"
    executable: bool = False
    target: str = ""  # symlink target


def collect(root: Path) -> list[Entry]:
    """The entries of ``root`` to bundle, sorted with parents first: files ignored by a
    .gitignore at any level or by the root's ignore file are left out, and so is .git."""
    if not root.is_dir():
        raise BundleError(f"{root} is not a directory")
    docker: _DockerIgnore | None = None
    for name in IGNORE_FILES:
        try:
            text = (root / name).read_text(errors="replace")
        except (FileNotFoundError, IsADirectoryError):
            continue
        except OSError as e:
            raise BundleError(f"cannot read {root / name}: {e.strerror or e}") from None
        docker = _DockerIgnore(text.splitlines())
        break
    git = _GitIgnores()
    entries: list[Entry] = []

    def skip(rel: str, is_dir: bool) -> bool:
        return (rel.split("/")[-1] == ".git" or git.ignored(rel, is_dir)
                or (docker is not None and docker.ignored(rel)))

    def walk(rel_dir: str) -> None:
        here = root / rel_dir if rel_dir else root
        try:  # the directory first: an unreadable one is named, not its .gitignore
            names = sorted(os.listdir(here))
        except OSError as e:
            raise BundleError(f"cannot read {here}: {e.strerror}") from None
        if ".gitignore" in names:
            git.load(root, rel_dir)
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                st = os.lstat(here / name)
                target = os.readlink(here / name) if stat.S_ISLNK(st.st_mode) else ""
            except OSError as e:  # a directory listed but not searchable
                raise BundleError(f"cannot read {here / name}: {e.strerror}") from None
            if stat.S_ISLNK(st.st_mode):
                if not skip(rel, False):
                    entries.append(Entry(rel, "symlink", target=target))
            elif stat.S_ISDIR(st.st_mode):
                if not skip(rel, True):
                    entries.append(Entry(rel, "dir"))
                    walk(rel)
            elif stat.S_ISREG(st.st_mode):
                if not skip(rel, False):
                    entries.append(Entry(rel, "file", executable=bool(st.st_mode & 0o111)))
            # sockets, FIFOs and devices have no place in an image layer

    walk("")
    entries.sort(key=lambda e: e.rel.split("/"))
    return entries


# -- the layer --------------------------------------------------------------------------
