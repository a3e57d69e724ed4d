"""infra/lazy_re.py: a pattern compiled on first use answers as ``re`` does."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from infra.lazy_re import later

PATTERN = r"^(?P<n>[0-9]+)(?P<u>Ki|Mi|Gi)?\Z"


@pytest.mark.parametrize("text", ["10", "10Gi", "Gi", "", "10Ti"])
def test_same_answers_as_re(text: str) -> None:
    lazy, eager = later(PATTERN), re.compile(PATTERN)
    got, want = lazy.match(text), eager.match(text)
    assert (got and got.groupdict()) == (want and want.groupdict())
    assert bool(lazy.fullmatch(text)) == bool(eager.fullmatch(text))
    assert lazy.sub("x", text) == eager.sub("x", text)
    assert lazy.findall(text) == eager.findall(text)


def test_compiled_on_first_use_only() -> None:
    p = later(r"[a-z]+", re.IGNORECASE)
    assert p._compiled is None
    assert p.search("12AB").group() == "AB"  # the flags are kept
    assert p._compiled is not None and p.compiled is p._compiled


def test_importing_the_render_core_compiles_nothing() -> None:
    probe = ("import sys, re; compiled = []; real = re._compile\n"
             "def spy(p, f):\n    compiled.append(p); return real(p, f)\n"
             "import click, yaml, json\nre._compile = spy\n"
             "import submit.render.spec, submit.render.option_checks, infra.catalog.tables\n"
             "import infra.catalog.pod_resources\n"
             "import submit.cluster.stack_outputs, submit.render.mounts\n"
             "print(len([p for p in compiled if isinstance(p, str)]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip()
    # infra.contract.images compiles its image-reference pattern at import: every
    # workload's --image is checked against it, so compiling it later saves nothing.
    assert out == "1", out
