"""The DNS-based control-plane endpoint: stack option, cluster input, outputs contract and
kubeconfig (which must reach the control plane at its DNS name when the option is on)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from infra.contract import outputs as contract
from infra.preview import harness
from infra.program import StackConfigError

CLUSTER = "gcp:container/cluster:Cluster"


def _outputs(raw: dict[str, Any]) -> tuple[harness.Evaluation, dict[str, Any]]:
    ev = harness.evaluate(raw, "dns")
    return ev, harness.plain_outputs(ev, reveal=True)["accelstack"]


def test_on_declares_the_dns_endpoint_and_the_kubeconfig_uses_it(raw: dict[str, Any]) -> None:
    raw["dnsEndpoint"] = True
    ev, out = _outputs(raw)
    cluster = ev.named("test", CLUSTER)
    assert cluster.inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True}}
    name = f"test.us-central1.{harness.PREVIEW_DNS_SUFFIX}"
    assert out["cluster"]["dnsEndpoint"] == name
    assert out["cluster"]["endpoint"] == harness.PREVIEW_ENDPOINT  # the IP stays reported
    kube = yaml.safe_load(out["kubeconfig"])
    # Google's front end serves the DNS name with a publicly trusted certificate.
    assert kube["clusters"][0]["cluster"] == {"server": f"https://{name}"}
    assert kube["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert contract.load(out).cluster.dns_endpoint == name
    assert "accelstack.kubeconfig" in ev.secret_outputs


def test_off_keeps_the_ip_endpoint_with_its_ca(raw: dict[str, Any]) -> None:
    ev, out = _outputs(raw)
    assert "controlPlaneEndpointsConfig" not in ev.named("test", CLUSTER).inputs
    assert out["cluster"]["dnsEndpoint"] is None
    kube = yaml.safe_load(out["kubeconfig"])
    assert kube["clusters"][0]["cluster"] == {
        "server": f"https://{harness.PREVIEW_ENDPOINT}",
        "certificate-authority-data": harness.PREVIEW_CA}
    assert contract.load(out).cluster.dns_endpoint is None


def test_a_bad_value_is_one_precise_error(raw: dict[str, Any]) -> None:
    raw["dnsEndpoint"] = "yes"
    with pytest.raises(StackConfigError) as e:
        harness.evaluate(raw)
    assert str(e.value) == ("invalid stack config (1 problem):\n"
                            "  dnsEndpoint: 'yes' is not true, false or a mapping such as "
                            "{k8sTokens: true}")


def test_k8s_tokens_turn_on_token_auth_at_the_dns_endpoint(raw: dict[str, Any]) -> None:
    # A fleet's manager comes in with a ServiceAccount token (docs/fleets.md).
    raw["dnsEndpoint"] = {"k8sTokens": True}
    ev, out = _outputs(raw)
    assert ev.named("test", CLUSTER).inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True, "enableK8sTokensViaDns": True}}
    assert out["cluster"]["dnsEndpoint"] == f"test.us-central1.{harness.PREVIEW_DNS_SUFFIX}"
    assert out["cluster"]["dnsK8sTokens"] is True
    assert contract.load(out).cluster.dns_k8s_tokens is True


@pytest.mark.parametrize("value", [True, {}, {"k8sTokens": False}])
def test_the_endpoint_without_k8s_tokens_takes_google_identities_only(
        raw: dict[str, Any], value: Any) -> None:
    raw["dnsEndpoint"] = value
    ev, out = _outputs(raw)
    assert ev.named("test", CLUSTER).inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert out["cluster"]["dnsK8sTokens"] is False
    assert contract.load(out).cluster.dns_k8s_tokens is False


@pytest.mark.parametrize("value,message", [
    ({"k8sToken": True},
     "dnsEndpoint.k8sToken: unknown key; did you mean k8sTokens? (allowed: k8sTokens)"),
    ({"k8sTokens": "yes"}, "dnsEndpoint.k8sTokens: 'yes' is not true or false"),
    (["k8sTokens"], "dnsEndpoint: ['k8sTokens'] is not true, false or a mapping such as "
                    "{k8sTokens: true}"),
])
def test_a_bad_dns_endpoint_mapping_is_one_precise_error(
        raw: dict[str, Any], value: Any, message: str) -> None:
    raw["dnsEndpoint"] = value
    with pytest.raises(StackConfigError) as e:
        harness.evaluate(raw)
    assert e.value.problems == [message]


def test_an_older_contract_without_dns_k8s_tokens_reads_as_unknown(raw: dict[str, Any]) -> None:
    _, out = _outputs(raw)
    data = copy.deepcopy(out)
    del data["cluster"]["dnsK8sTokens"]
    assert contract.load(data).cluster.dns_k8s_tokens is None
    data["cluster"]["dnsK8sTokens"] = "on"
    with pytest.raises(contract.ContractError,
                       match="outputs.cluster.dnsK8sTokens: 'on' is not bool"):
        contract.load(data)


def test_the_contract_requires_the_field(raw: dict[str, Any]) -> None:
    _, out = _outputs(raw)
    data = copy.deepcopy(out)
    del data["cluster"]["dnsEndpoint"]
    with pytest.raises(contract.ContractError, match=r"^outputs.cluster.dnsEndpoint: missing$"):
        contract.load(data)
    data["cluster"]["dnsEndpoint"] = 7
    with pytest.raises(contract.ContractError, match="outputs.cluster.dnsEndpoint: 7 is not str"):
        contract.load(data)


def test_a_bad_k8s_tokens_value_names_the_stack_file_line(tmp_path: Any) -> None:
    from conftest import STACKS_DIR
    text = (STACKS_DIR / "Pulumi.fleet-east.yaml").read_text()
    assert "k8sTokens: true" in text
    (tmp_path / "Pulumi.fleet-east.yaml").write_text(
        text.replace("k8sTokens: true", "k8sTokens: maybe"))
    with pytest.raises(StackConfigError) as e:
        harness.evaluate_file(tmp_path / "Pulumi.fleet-east.yaml")
    [problem] = e.value.problems
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "k8sTokens: true" in t)
    assert problem == (f"{tmp_path / 'Pulumi.fleet-east.yaml'}:{line}: "
                       "dnsEndpoint.k8sTokens: 'maybe' is not true or false")
