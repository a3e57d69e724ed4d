"""The YAML the CLI prints: libyaml's emitter (when PyYAML has it) writes exactly what the
pure-Python emitter writes, for every golden workload and for the List of several."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from submit.cli import output
from submit.render.jobset import render
from test_render_golden import CASES, spec_for


class _PythonDumper(yaml.SafeDumper):
    """PyYAML's pure-Python SafeDumper with the CLI's one style choice: a long list of
    integers in flow style (output.flow_list)."""

    def represent_list(self, data: list[object]) -> yaml.Node:
        return self.represent_sequence("tag:yaml.org,2002:seq", data,
                                       flow_style=output.flow_list(data))


    def represent_str(self, data: str) -> yaml.Node:
        return self.represent_scalar("tag:yaml.org,2002:str", data,
                                     style="|" if "\n" in data else None)


_PythonDumper.add_representer(list, _PythonDumper.represent_list)
_PythonDumper.add_representer(str, _PythonDumper.represent_str)

_BASE = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _BaseDumper(_BASE):  # type: ignore[misc,valid-type]
    """libyaml's emitter with PyYAML's representer and the CLI's block style for text of
    several lines."""


_BaseDumper.add_representer(str, _PythonDumper.represent_str)


def test_the_c_emitter_is_used_where_available() -> None:
    assert issubclass(output.DUMPER, getattr(yaml, "CSafeDumper", yaml.SafeDumper))
    assert hasattr(yaml, "CSafeDumper"), "PyYAML without libyaml: the slow emitter is used"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_same_yaml_as_the_python_emitter(case: Path) -> None:
    objs = render(spec_for(case))
    for doc in (objs, objs[-1:]):
        python = yaml.dump(output.as_document(doc), Dumper=_PythonDumper, sort_keys=False)
        assert output.dump_objects(doc, "yaml") == python


# JSON-like data with the strings YAML would misread if written plain (booleans, nulls,
# numbers, dates, indicators, leading spaces, line breaks) and floats PyYAML writes its way.
_TEXT = st.one_of(st.text(max_size=12), st.sampled_from([
    "yes", "no", "on", "off", "true", "null", "~", "", "1", "0o17", "1e3", ".5", "-", ":",
    "- a", "a: b", "# c", "2026-01-01", "'q'", '"q"', " lead", "trail ", "a\nb", "*x",
    "&y", "!t", "%", "@", "`", "{}", "[]", "|", ">", "0x1f", "1_000", ".inf", "=", "<<"]))
_DATA = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_TEXT, inner, max_size=4)), max_leaves=30)


# Documents are objects, as manifests are.
_DOCS = st.lists(st.one_of(st.dictionaries(_TEXT, _DATA, max_size=5),
                           st.lists(_DATA, max_size=5)), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(_DOCS)
def test_the_fast_dumper_writes_what_libyaml_writes(docs: list[object]) -> None:
    # Against PyYAML's own representer on the same emitter: what this module changes. (The
    # emitters themselves differ on corners manifests do not have, such as an empty key;
    # on manifests they agree: test_same_yaml_as_the_python_emitter.)
    base = _BaseDumper
    assert output.yaml_text(docs[0]) == yaml.dump(docs[0], Dumper=base, sort_keys=False)
    assert output.yaml_documents(docs) == yaml.dump_all(docs, Dumper=base, sort_keys=False)


def test_shared_containers_are_written_out_not_anchored() -> None:
    # Renders may share one list between objects; safe_dump would write &id001 / *id001.
    shared = [{"key": "a"}]
    assert "&" not in output.yaml_text({"x": shared, "y": shared})


def test_exit_codes_are_a_few_lines_not_one_each() -> None:
    # podFailurePolicy's default codes, 42 and 127-255 (issue 34): 130 values.
    objs = render(spec_for(next(c for c in CASES if c.name == "no-flags")))
    text = output.dump_objects(objs, "yaml")
    values = [ln for ln in text.splitlines() if ln.strip().startswith("values: [42, 127,")]
    assert values, "the exit codes are written in flow style"
    assert len(text.splitlines()) < len(yaml.safe_dump_all(objs).splitlines()) - 100
    assert yaml.safe_load(text) == output.as_document(objs)



def test_text_of_several_lines_is_a_block_scalar(tmp_path: Path) -> None:
    # `--config-file` (issue 42): the file's text as written, not a quoted one-liner.
    from click.testing import CliRunner

    from fakes import stacks
    from submit.cli.app import main

    config = tmp_path / "train.yaml"
    config.write_text("steps: 100\noptimizer:\n  name: adam\n")
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    result = CliRunner().invoke(main, [
        "workload", "--outputs", str(outputs), "create", "--workload", "w1", "--accelerator",
        "v5litepod-16", "--image", "python:3.12", "--command", "true", "--no-resolve-image",
        "--config-file", str(config), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "    train.yaml: |\n      steps: 100\n      optimizer:\n        name: adam\n" \
        in result.stdout, result.stdout[:600]
    cm = yaml.safe_load(result.stdout)["items"][0]
    assert cm["data"]["train.yaml"] == config.read_text()
    # Where YAML allows no block (a line ending in spaces), a quoted scalar, read back the
    # same.
    for text in ("a  \nb\n", "x\n\n", "no newline at the end\nok", " lead\nx\n"):
        assert yaml.safe_load(output.yaml_text({"k": text})) == {"k": text}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(_TEXT, _DATA, min_size=1, max_size=4), min_size=2, max_size=4))
def test_a_list_written_item_by_item_is_the_whole_list(objs: list[dict[str, object]]) -> None:
    # dump_objects writes a List's items one at a time (bench/sweep_dry_run.py): the same
    # text as the dumper writes for the whole document.
    assert output.dump_objects(objs, "yaml") == output.yaml_text(output.as_document(objs))
