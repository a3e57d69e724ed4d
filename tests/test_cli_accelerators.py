"""Contract tests for `submit accelerators`: exact output and exit codes."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from infra.catalog import tables as catalog
from submit.cli.app import main

HEADER = ("NAME     FAMILY  MACHINE TYPE     TOPOLOGY  CHIPS/VM  VMS  CHIPS  RESOURCE        "
          "NETWORKING")
KEYS = ["name", "kind", "family", "machineType", "topology", "chipsPerVm", "vmsPerSlice",
        "chips", "multiHost", "gkeAccelerator", "nodeSelector", "taint", "resourceName",
        "networking", "aliases", "arch", "subBlocks"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["accelerators", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _rows(out: str) -> list[list[str]]:
    """Table rows split on the two-space column gap (no cell holds two spaces)."""
    return [[c.strip() for c in line.split("  ") if c.strip()] for line in out.splitlines()]


def test_two_names_exact_table() -> None:
    code, out, err = run("v5p-4x4x4", "l4-2")
    assert (code, err) == (0, "")
    assert out == (
        HEADER + "\n"
        "v5p-128  v5p     ct5p-hightpu-4t  4x4x4     4         16   64     google.com/tpu  none\n"
        "l4-2     g2      g2-standard-24   -         2         1    2      nvidia.com/gpu  none\n"
    )


def test_names_printed_in_given_order() -> None:
    code, out, _ = run("h100-mega-80gb-8", "v5litepod-8-1vm", "n2-standard-32-4", "v4-8")
    assert code == 0
    rows = _rows(out)
    assert rows[0] == ["NAME", "FAMILY", "MACHINE TYPE", "TOPOLOGY", "CHIPS/VM", "VMS",
                       "CHIPS", "RESOURCE", "NETWORKING"]
    assert rows[1:] == [
        ["h100-mega-80gb-8", "a3-mega", "a3-megagpu-8g", "-", "8", "1", "8", "nvidia.com/gpu",
         "tcpxo"],
        ["v5litepod-8-1vm", "v5e", "ct5lp-hightpu-8t", "2x4", "8", "1", "8", "google.com/tpu",
         "none"],
        ["n2-standard-32-4", "cpu", "n2-standard-32", "-", "32", "4", "128", "-", "none"],
        ["v4-8", "v4", "ct4p-hightpu-4t", "2x2x1", "4", "1", "4", "google.com/tpu", "none"],
    ]


V5LITEPOD_8 = {
    "name": "v5litepod-8",
    "kind": "tpu",
    "family": "v5e",
    "machineType": "ct5lp-hightpu-4t",
    "topology": "2x4",
    "chipsPerVm": 4,
    "vmsPerSlice": 2,
    "chips": 8,
    "multiHost": True,
    "gkeAccelerator": "tpu-v5-lite-podslice",
    "nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                     "cloud.google.com/gke-tpu-topology": "2x4"},
    "taint": {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"},
    "resourceName": "google.com/tpu",
    "networking": "none",
    "aliases": ["v5litepod-2x4", "v5e-2x4", "v5e-8"],
    "arch": "amd64",
    "subBlocks": None,
}


def test_json_output() -> None:
    code, out, err = run("v5e-2x4", "gb200-4", "-o", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert isinstance(data, list)
    assert [d["name"] for d in data] == ["v5litepod-8", "gb200-4"]
    assert [list(d) for d in data] == [KEYS, KEYS]
    assert data[0] == V5LITEPOD_8
    assert data[1]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-gb200",
                                       "node.kubernetes.io/instance-type": "a4x-highgpu-4g",
                                       "kubernetes.io/arch": "arm64"}
    assert data[1]["arch"] == "arm64"
    assert (data[1]["topology"], data[1]["networking"], data[1]["machineType"]) == (
        None, "rdma", "a4x-highgpu-4g")


def test_yaml_output_is_the_json_data() -> None:
    names = ("v6e-8x16", "h200-141gb-8", "n2-standard-32-4", "tpu7x-2")
    code, out, err = run(*names, "-o", "yaml")
    assert (code, err) == (0, "")
    _, as_json, _ = run(*names, "-o", "json")
    data = yaml.safe_load(out)
    assert data == json.loads(as_json)
    assert [list(d) for d in data] == [KEYS] * 4
    assert [d["name"] for d in data] == ["v6e-128", "h200-141gb-8", "n2-standard-32-4",
                                         "tpu7x-2"]


def test_family_filter() -> None:
    code, out, err = run("--family", "a3-mega")
    assert (code, err) == (0, "")
    assert out == (
        "NAME              FAMILY   MACHINE TYPE   TOPOLOGY  CHIPS/VM  VMS  CHIPS  RESOURCE"
        "        NETWORKING\n"
        "h100-mega-80gb-8  a3-mega  a3-megagpu-8g  -         8         1    8      "
        "nvidia.com/gpu  tcpxo\n")


@pytest.mark.parametrize("family", catalog.families())
def test_family_filter_json(family: str) -> None:
    code, out, _ = run("--family", family, "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert data and {d["family"] for d in data} == {family}
    assert [d["name"] for d in data] == [
        e.name for e in catalog.all_accelerators() if e.family == family]


def test_family_filter_with_names() -> None:
    code, out, _ = run("v5p-8", "l4-1", "v5p-16", "--family", "v5p", "-o", "json")
    assert code == 0
    assert [d["name"] for d in json.loads(out)] == ["v5p-8", "v5p-16"]


def test_unknown_family_is_a_usage_error() -> None:
    code, out, err = run("--family", "v9")
    assert (code, out) == (2, "")
    assert "Error: Invalid value for '--family': 'v9' is not one of" in err


def test_listing_everything_covers_every_family() -> None:
    code, out, _ = run("--all", "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert {d["family"] for d in data} == set(catalog.families())
    assert len(data) == len(list(catalog.all_accelerators()))
    for name in ("v4-8", "v5litepod-8-1vm", "v5p-128", "v6e-256", "tpu7x-8", "tpu7-2",
                 "l4-8", "a100-40gb-1", "b200-8", "n2-standard-32-4"):
        assert name in {d["name"] for d in data}


def test_by_default_one_row_per_family() -> None:
    # The whole catalog is over a thousand rows (issue 34): by default one per family.
    code, out, err = run()
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["FAMILY", "KIND", "ENTRIES", "SMALLEST", "LARGEST"]
    assert [ln.split()[0] for ln in lines[1:]] == catalog.families()
    assert sum(int(ln.split()[2]) for ln in lines[1:]) == len(list(catalog.all_accelerators()))
    assert lines[1].split() == ["v4", "tpu", lines[1].split()[2], "v4-8", "v4-8x8x64"]
    assert err.startswith(f"{len(list(catalog.all_accelerators()))} entries in "
                          f"{len(catalog.families())} families: --family F lists one family, "
                          "--all every entry")


def test_listing_table_has_header_and_one_row_per_entry() -> None:
    code, out, _ = run("--all")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "FAMILY", "MACHINE", "TYPE", "TOPOLOGY", "CHIPS/VM",
                                "VMS", "CHIPS", "RESOURCE", "NETWORKING"]
    assert len(lines) == 1 + len(list(catalog.all_accelerators()))


def test_unknown_name_exit_2() -> None:
    code, out, err = run("v5p-8", "v5p-12")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "Error: Invalid value for 'NAME': 'v5p-12' is not a TPU v5p slice; "
        "did you mean v5p-8 or v5p-16?")


def test_unknown_name_without_suggestions() -> None:
    code, out, err = run("foo")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "Error: Invalid value for 'NAME': 'foo' is not a known accelerator")


def test_resolving_is_case_insensitive() -> None:
    code, out, _ = run(" V5P-4X4X4 ", "-o", "json")
    assert code == 0
    assert [d["name"] for d in json.loads(out)] == ["v5p-128"]
