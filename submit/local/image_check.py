"""``--image-check``: what a command needs that this machine may lack.

run-local never uses the image: the command runs with ``/bin/sh -c`` here. This module
reads the command and reports the programs that are not on PATH, the ``python -m`` modules
the named interpreter cannot import and the Python scripts that do not exist, each of
which the image would have had to provide. Warnings only; shell constructs it cannot read
(functions, variables used as commands) are skipped, not guessed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import Mapping, Sequence

_BUILTINS = {
    "cd", "export", "source", ".", "exec", "set", "unset", "echo", "printf", "test", "[",
    "true", "false", "if", "then", "else", "elif", "fi", "for", "while", "until", "do",
    "done", "case", "esac", "in", "{", "}", "!", "exit", "return", "wait", "trap", "read",
    "shift", "eval", "ulimit", "umask", "sleep", "local", ":",
}
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "\n"}


def commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script (words after leading VAR=value assignments)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    out: list[list[str]] = []
    current: list[str] = []
    try:
        for tok in lexer:
            if tok in _SEPARATORS:
                if current:
                    out.append(current)
                current = []
            elif current or "=" not in tok or tok.startswith("="):
                current.append(tok)
    except ValueError:  # unbalanced quotes: let the shell report it
        return out
    if current:
        out.append(current)
    return out


def _python_module(words: Sequence[str]) -> str | None:
    for i, w in enumerate(words[1:-1], 1):
        if w == "-m":
            return words[i + 1]
        if not w.startswith("-"):
            return None
    return None


def _python_script(words: Sequence[str]) -> str | None:
    for w in words[1:]:
        if w in ("-c", "-m"):
            return None
        if not w.startswith("-"):
            return w if w.endswith(".py") else None
    return None


def warnings(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> list[str]:
    if len(argv) >= 3 and argv[0] in ("/bin/sh", "sh", "/bin/bash", "bash") and \
            argv[1] == "-c":
        cmds = commands(argv[2])
    else:
        cmds = [list(argv)]
    path = env.get("PATH", os.defpath)
    out: list[str] = []
    for words in cmds:
        prog = words[0]
        if prog in _BUILTINS or "$" in prog:
            continue
        found = shutil.which(prog, path=path) if "/" not in prog else (
            prog if os.access(os.path.join(cwd, prog), os.X_OK) else None)
        if found is None:
            out.append(f"{prog}: not found on this machine (the image would provide it)")
            continue
        if os.path.basename(prog).startswith("python"):
            module = _python_module(words)
            if module and "$" not in module:
                top = module.split(".")[0]
                probe = subprocess.run(
                    [found, "-c", "import importlib.util, sys; "
                     "sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)", top],
                    env=dict(env), cwd=cwd, capture_output=True, timeout=60)
                if probe.returncode != 0:
                    out.append(f"{prog} -m {module}: module {top!r} is not importable by "
                               f"{found} (the image would provide it)")
            script = _python_script(words)
            if script and "$" not in script and not os.path.exists(os.path.join(cwd, script)):
                out.append(f"{prog} {script}: no such file in {cwd} (the image would provide it)")
    return out
