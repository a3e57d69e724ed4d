"""The outputs contract: what the program exports is what the loader reads."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from infra.contract import outputs as contract
from infra.preview import harness
from conftest import STACK_FILES, evaluate_shipped


@pytest.fixture(scope="module")
def exported() -> dict[str, Any]:
    ev = evaluate_shipped(STACK_FILES[0])
    return harness.plain_outputs(ev, reveal=True)


def test_round_trip_through_json(exported: dict[str, Any]) -> None:
    data = json.loads(json.dumps(exported))
    loaded = contract.load(data)
    assert loaded.to_dict() == data["accelstack"]


def test_loader_accepts_the_output_value_alone(exported: dict[str, Any]) -> None:
    assert contract.load(exported["accelstack"]) == contract.load(exported)


def test_every_exported_key_is_read(exported: dict[str, Any]) -> None:
    # A key the program exports but the loader ignores would drift unnoticed.
    data = exported["accelstack"]
    assert set(contract.load(data).to_dict()) == set(data)
    pool = data["slicePools"][0]
    assert set(contract.load(data).to_dict()["slicePools"][0]) == set(pool)


def test_incompatible_version_is_refused(exported: dict[str, Any]) -> None:
    data = copy.deepcopy(exported)
    data["accelstack"]["contractVersion"] = 99
    with pytest.raises(contract.ContractError) as e:
        contract.load(data)
    assert str(e.value) == (
        "stack outputs: contract version 99 is not supported; this version of accelstack "
        "reads version 3 (run `pulumi up` with the same accelstack version, or upgrade the "
        "submitter)")


def test_version_2_is_refused(exported: dict[str, Any]) -> None:
    # Version 2 has no storage: a submitter that mounts stores cannot read it.
    data = copy.deepcopy(exported)
    data["accelstack"]["contractVersion"] = 2
    with pytest.raises(contract.ContractError, match="contract version 2 is not supported"):
        contract.load(data)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["storage"]["stores"].insert(0, {"name": "x", "kind": "nfs", "source": "s",
                                                 "access": {}}),
     "outputs.storage.stores[0].kind: 'nfs' is not one of gcs, filestore, parallelstore, "
     "lustre"),
    (lambda d: d["storage"]["stores"].insert(0, {"name": "x", "kind": "gcs", "source": "b",
                                                 "access": {"ns": "write"}}),
     "outputs.storage.stores[0].access.ns: 'write' is not one of read-only, read-write"),
    (lambda d: d["storage"].pop("serviceAccounts"), "outputs.storage.serviceAccounts: missing"),
    (lambda d: d["cluster"].pop("endpoint"), "outputs.cluster.endpoint: missing"),
    (lambda d: d["slicePools"][0].update(chipsPerVm="4"),
     "outputs.slicePools[0].chipsPerVm: '4' is not int"),
    (lambda d: d["slicePools"][0].update(chipsPerSlice=3),
     "outputs.slicePools[0].chipsPerSlice: does not equal chipsPerVm x vmsPerSlice"),
    (lambda d: d["slicePools"][0]["nodeSelector"].update(x=1),
     "outputs.slicePools[0].nodeSelector: not a mapping of strings"),
    (lambda d: d.pop("kubeconfig"), "outputs.kubeconfig: missing"),
    (lambda d: d["slicePools"][0].update(localSsdGiB="6000"),
     "outputs.slicePools[0].localSsdGiB: '6000' is not int"),
    (lambda d: d["slicePools"][0].update(localSsdGiB=-1),
     "outputs.slicePools[0].localSsdGiB: -1 is negative"),
])
def test_bad_outputs_name_the_field(exported: dict[str, Any], mutate: Any, message: str) -> None:
    data = copy.deepcopy(exported["accelstack"])
    mutate(data)
    with pytest.raises(contract.ContractError) as e:
        contract.load(data)
    assert str(e.value) == message


def test_not_an_object() -> None:
    with pytest.raises(contract.ContractError):
        contract.load(["nope"])


def test_local_ssd_is_optional_when_loading(exported: dict[str, Any]) -> None:
    # A stack exported before the field existed (same contract version) reads as "no
    # Local SSD", so its jobs get no file cache rather than a refusal.
    data = copy.deepcopy(exported["accelstack"])
    for pool in data["slicePools"]:
        pool.pop("localSsdGiB")
    assert all(p.local_ssd_gib == 0 for p in contract.load(data).slice_pools)
    assert contract.load(data).contract_version == 3


@pytest.mark.parametrize("stack_file,pool,gib", [
    ("Pulumi.a3mega.yaml", "h100-mega-80gb-8", 16 * 375),
    ("Pulumi.a4x.yaml", "gb200-4", 0),
    ("Pulumi.v6e-training.yaml", "v6e-256", 0),
])
def test_local_ssd_is_exported_per_pool(stack_file: str, pool: str, gib: int) -> None:
    [path] = [p for p in STACK_FILES if p.name == stack_file]
    outputs = contract.load(harness.plain_outputs(harness.evaluate_file(path), reveal=True))
    info = outputs.pool(pool)
    assert info is not None and info.local_ssd_gib == gib
