"""The YAML the CLI prints: libyaml's emitter (when PyYAML has it) writes exactly what the
pure-Python emitter writes, for every golden workload and for the List of several."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from submit.cli import output
from submit.render.jobset import render
from test_render_golden import CASES, spec_for


def test_the_c_emitter_is_used_where_available() -> None:
    assert output.DUMPER is getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    assert hasattr(yaml, "CSafeDumper"), "PyYAML without libyaml: the slow emitter is used"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_same_yaml_as_the_python_emitter(case: Path) -> None:
    objs = render(spec_for(case))
    for doc in (objs, objs[-1:]):
        python = yaml.dump(output.as_document(doc), Dumper=yaml.SafeDumper, sort_keys=False)
        assert output.dump_objects(doc, "yaml") == python
