"""Reading `--env-file`: the dotenv convention, with errors that never show a value.

Env files hold secrets (tokens, passwords), so no message here quotes a value or a whole
line: an error names the file, the line and at most the variable's name (the text before
``=``). Parsing is python-dotenv's (comments, blank lines, ``export``, single and double
quotes, escapes inside double quotes, quoted values over several lines), without its
interpolation: ``${VAR}`` stays literal, so nothing from the submitting machine's
environment leaks into the workload. Stricter than dotenv where dotenv would silently
drop or guess: a line it cannot parse, a name without ``=`` (dotenv's "unset" form), an
invalid variable name or a name set twice in the file are errors.
Pure: no Click, no Kubernetes client.
"""

from __future__ import annotations

import io
from pathlib import Path

from infra.lazy_re import later

# Kubernetes' rule for container env names before KEP-4369 (letters, digits, '_', '-' and
# '.', not starting with a digit). KEP-4369 allows any printable ASCII but '=' from 1.32
# (beta, on by default; stable in 1.34: https://www.kubernetes.dev/resources/keps/4369/);
# the strict rule is kept because clusters on older versions still enforce it.
ENV_NAME = later(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
NAME_RULE = "letters, digits, '_', '-' and '.', not starting with a digit"
MAX_BYTES = 1024 * 1024  # the values travel inside the JobSet; the API server caps objects
_HIDDEN = "the line is not shown: env files hold secrets"


class EnvFileError(ValueError):
    """A message naming the file and line, never a value."""


def _line_of(original: str, first_line: int) -> int:
    """dotenv marks a binding from the blank lines before it; count to its first text."""
    leading = original[: len(original) - len(original.lstrip())]
    return first_line + leading.count("\n") + leading.count("\r") - leading.count("\r\n")


# `NAME: value` (YAML's style, or docker-compose's `environment:` mapping pasted in): a
# name, a colon, then a space or the end of the line. `a:b` without the space is left
# alone: that is how a pasted token or password may look.
_YAML_STYLE = later(r"^\s*(?:export\s+)?([-._a-zA-Z][-._a-zA-Z0-9]*):(?:[ \t]|$)")


def _yaml_style_key(original: str) -> str | None:
    m = _YAML_STYLE.match(original.lstrip("\r\n").split("\n", 1)[0])
    return m.group(1) if m else None


def _key_before_equals(original: str) -> str | None:
    text = original.strip().split("\n", 1)[0]
    if "=" not in text:
        return None
    key = text.split("=", 1)[0].strip()
    if key.startswith("export ") or key.startswith("export\t"):
        key = key[len("export"):].strip()
    return key.strip("'") or None


def parse(text: str, path: str) -> list[tuple[str, str]]:
    """The (name, value) pairs of an env file's text, in order."""
    # Imported here: the package loads ~20 ms of modules that a dry run without an env file
    # does not need (see bench/cold_dry_run.py).
    from dotenv.parser import parse_stream

    out: list[tuple[str, str]] = []
    first_seen: dict[str, int] = {}
    for binding in parse_stream(io.StringIO(text)):
        line = _line_of(binding.original.string, binding.original.line)
        where = f"{path}:{line}"
        yaml_key = _yaml_style_key(binding.original.string) if (
            binding.error or binding.value is None) else None
        if yaml_key is not None:
            raise EnvFileError(f"{where}: {yaml_key} is written `{yaml_key}: ...` (YAML style); "
                               f"write {yaml_key}=VALUE (the value is not shown)")
        if binding.error:
            key = _key_before_equals(binding.original.string)
            if key is None:
                raise EnvFileError(f"{where}: not KEY=VALUE ({_HIDDEN})")
            if not ENV_NAME.match(key):
                raise EnvFileError(f"{where}: {key!r} is not a valid environment variable "
                                   f"name ({NAME_RULE})")
            raise EnvFileError(f"{where}: the value of {key} cannot be parsed (an unclosed "
                               "quote, or text after the closing quote; the value is not shown)")
        if binding.key is None:  # a blank or comment line
            continue
        if binding.value is None:
            # dotenv's `NAME` alone means "unset"; the line could also be a pasted secret.
            raise EnvFileError(f"{where}: not KEY=VALUE (write NAME= for an empty value; "
                               f"{_HIDDEN})")
        if not ENV_NAME.match(binding.key):
            raise EnvFileError(f"{where}: {binding.key!r} is not a valid environment variable "
                               f"name ({NAME_RULE})")
        if binding.key in first_seen:
            raise EnvFileError(f"{where}: {binding.key} is set again (first on line "
                               f"{first_seen[binding.key]}); keep one")
        first_seen[binding.key] = line
        out.append((binding.key, binding.value))
    return out


def read(path: str) -> list[tuple[str, str]]:
    """Read and parse an env file; every failure is an EnvFileError without a value."""
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError:
        raise EnvFileError(f"{path} is a directory, not an env file") from None
    except OSError as e:
        raise EnvFileError(f"cannot read {path}: {e.strerror}") from None
    if len(raw) > MAX_BYTES:
        raise EnvFileError(f"{path} is {len(raw)} bytes; an env file may have at most "
                           f"{MAX_BYTES} (put large data in --config-file)")
    if b"\x00" in raw:
        raise EnvFileError(f"{path} is not a text file (it holds NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise EnvFileError(f"{path}:{line}: not UTF-8 text") from None
    return parse(text, path)
