"""The rules added for production review (accelerator auto-repair, plain secrets in config,
public buckets), through the offline runner: ``policy.check`` and ``accelstack-preview``.
The CrossGuard runner of the same functions is tested in test_policy_pack.py."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import MINIMAL, ROOT
from infra.preview import harness
from infra.policy import rules as policy
from infra.preview import cli as preview


def _items(raw: dict[str, Any]) -> tuple[Any, list[policy.Item]]:
    ev = harness.evaluate(raw, "policy")
    return ev.config, [policy.Item(r.type, r.name, harness._plain(r.inputs))
                       for r in ev.resources]


def _rules(cfg: Any, items: list[policy.Item]) -> list[str]:
    return sorted({f.rule for f in policy.violations(policy.check(cfg, items))})


def _pool_edit(items: list[policy.Item], fn: Any) -> list[policy.Item]:
    out = []
    for i in items:
        if i.type == policy.NODE_POOL and i.name != "system":
            inputs = copy.deepcopy(dict(i.inputs))
            fn(inputs)
            i = policy.Item(i.type, i.name, inputs)
        out.append(i)
    return out


@pytest.fixture(scope="module")
def tpu() -> tuple[Any, list[policy.Item]]:
    raw = copy.deepcopy(MINIMAL)
    raw["masterAuthorizedNetworks"] = [{"cidr": "10.0.0.0/8"}]
    return _items(raw)


def test_accelerator_pools_need_auto_repair(tpu: tuple[Any, list[policy.Item]]) -> None:
    cfg, items = tpu
    assert _rules(cfg, items) == []
    off = _pool_edit(items, lambda i: i["management"].update(autoRepair=False))
    findings = policy.violations(policy.check(cfg, off))
    assert {f.rule for f in findings} == {"accelerator-auto-repair"}
    assert findings[0].message == "an accelerator pool runs without node auto-repair"


def test_the_system_pool_is_not_an_accelerator_pool(tpu: tuple[Any, list[policy.Item]]) -> None:
    cfg, items = tpu
    system = [i for i in items if i.type == policy.NODE_POOL and i.name == "system"]
    assert system
    edited = [policy.Item(i.type, i.name, {**i.inputs, "management": {"autoRepair": False}})
              if i in system else i for i in items]
    assert _rules(cfg, edited) == []


def test_flex_start_pools_are_exempt_as_gke_requires() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["masterAuthorizedNetworks"] = [{"cidr": "10.0.0.0/8"}]
    raw["slices"] = [{"accelerator": "v5litepod-16", "capacity": "flex-start"}]
    cfg, items = _items(raw)
    pools = [i for i in items if i.type == policy.NODE_POOL and i.name != "system"]
    assert pools and all(p.inputs["management"]["autoRepair"] is False for p in pools)
    assert _rules(cfg, items) == []


def test_a_slice_class_without_auto_repair_is_found() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["masterAuthorizedNetworks"] = [{"cidr": "10.0.0.0/8"}]
    raw["sliceClasses"] = [{"name": "burst", "shapes": ["v5litepod-16"], "capacity": ["spot"],
                            "limits": {"slices": 2}}]
    cfg, items = _items(raw)
    assert _rules(cfg, items) == []
    raw["sliceClasses"][0]["nodes"] = {"autoRepair": False}
    cfg, items = _items(raw)
    assert _rules(cfg, items) == ["accelerator-auto-repair"]
    [f] = policy.violations(policy.check(cfg, items))
    assert f.resource == "kubernetes:cloud.google.com/v1:ComputeClass computeclass-burst"


def test_gpu_pools_are_accelerator_pools() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["masterAuthorizedNetworks"] = [{"cidr": "10.0.0.0/8"}]
    raw["slices"] = [{"accelerator": "l4-1", "capacity": "on-demand"}]
    cfg, items = _items(raw)
    off = _pool_edit(items, lambda i: i["management"].update(autoRepair=False))
    assert _rules(cfg, off) == ["accelerator-auto-repair"]


@pytest.mark.parametrize("config,found", [
    ({"gcp:accessToken": "ya29.x"}, ["config gcp:accessToken"]),
    ({"accelstack:x": {"db": {"password": "hunter22"}}}, ["config accelstack:x"]),
    ({"gcp:credentials": {"secure": "v1:AAAA"}}, []),
    ({"other:key": "-----BEGIN RSA PRIVATE KEY-----\nMII"}, ["config other:key"]),
    ({"gcp:project": "p", "gcp:tokenTtl": True}, []),
])
def test_plain_secret_config(tpu: tuple[Any, list[policy.Item]], config: dict[str, Any],
                             found: list[str]) -> None:
    cfg, items = tpu
    findings = policy.check(cfg, items + policy.config_items(config))
    assert [f.resource for f in findings if f.rule == "plain-secret-config"] == found


@pytest.mark.parametrize("type_,inputs,public", [
    ("gcp:storage/bucketIAMMember:BucketIAMMember", {"member": "allUsers"}, True),
    ("gcp:storage/bucketIAMBinding:BucketIAMBinding",
     {"members": ["user:a@example.com", "allAuthenticatedUsers"]}, True),
    ("gcp:storage/bucketIAMPolicy:BucketIAMPolicy",
     {"policyData": '{"bindings":[{"role":"roles/storage.objectViewer","members":["allUsers"]}]}'},
     True),
    ("gcp:storage/bucketACL:BucketACL", {"predefinedAcl": "publicRead"}, True),
    ("gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl",
     {"entity": "allUsers", "role": "READER"}, True),
    ("gcp:storage/bucket:Bucket", {"name": "ckpt", "publicAccessPrevention": "enforced"}, False),
    ("gcp:storage/bucketIAMMember:BucketIAMMember", {"member": "group:ml@example.com"}, False),
])
def test_public_buckets(tpu: tuple[Any, list[policy.Item]], type_: str,
                        inputs: dict[str, Any], public: bool) -> None:
    cfg, items = tpu
    rules = _rules(cfg, items + [policy.Item(type_, "ckpt", inputs)])
    assert rules == (["public-bucket"] if public else [])


def test_the_preview_reads_every_key_of_the_stack_file(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("stacks", "snapshots"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    stack = tmp_path / "stacks" / "Pulumi.v5e-spot.yaml"
    stack.write_text(stack.read_text() + "  gcp:accessToken: ya29.plain-token\n")
    result = CliRunner().invoke(preview.main, ["--policy", "--quiet", "v5e-spot"])
    assert result.exit_code == preview.EXIT_POLICY
    assert result.output == (
        "v5e-spot: [plain-secret-config] config gcp:accessToken: a credential is stored as "
        "plain config; fix: store it encrypted: pulumi config set --secret gcp:accessToken "
        "(and remove the plain value) (VIOLATION)\n")
    assert "ya29" not in result.output
    stack.write_text(stack.read_text().replace("gcp:accessToken: ya29.plain-token",
                                               "gcp:accessToken:\n    secure: v1:AAAA"))
    result = CliRunner().invoke(preview.main, ["--policy", "--quiet", "v5e-spot"])
    assert result.exit_code == 0 and result.output == "v5e-spot: policy ok\n"


def test_waivers_accept_the_new_rules() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["policy"] = {"waivers": [{"rule": "public-bucket",
                                  "reason": "public model cards, reviewed in SEC-77"}]}
    assert harness.evaluate(raw).config.policy.waivers == {
        "public-bucket": "public model cards, reviewed in SEC-77"}


def test_a_dns_endpoint_that_takes_kubernetes_tokens_is_open_to_every_address() -> None:
    """Authorized networks restrict the IP endpoints only: a DNS endpoint that takes bare
    Kubernetes tokens answers every address, so authorized-networks flags it (a fleet's
    private worker waives it with its reason: stacks/Pulumi.fleet-east.yaml)."""
    raw = copy.deepcopy(MINIMAL)
    raw["masterAuthorizedNetworks"] = [{"cidr": "10.0.0.0/8"}]
    raw["dnsEndpoint"] = True  # Google credentials only: not flagged
    assert _rules(*_items(raw)) == []
    raw["dnsEndpoint"] = {"k8sTokens": True}
    cfg, items = _items(raw)
    [finding] = policy.violations(policy.check(cfg, items))
    assert finding.rule == "authorized-networks"
    assert finding.message == ("the DNS endpoint takes Kubernetes tokens from every address "
                               "(authorized networks do not apply to it)")
    waived = harness.evaluate_file(ROOT / "stacks" / "Pulumi.fleet-east.yaml")
    found = policy.check(waived.config, [policy.Item(r.type, r.name, harness._plain(r.inputs))
                                         for r in waived.resources])
    assert [f.rule for f in found] == ["authorized-networks"]
    assert policy.violations(found) == []
