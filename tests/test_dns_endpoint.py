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
                            "  dnsEndpoint: 'yes' is not true or false")


def test_the_contract_requires_the_field(raw: dict[str, Any]) -> None:
    _, out = _outputs(raw)
    data = copy.deepcopy(out)
    del data["cluster"]["dnsEndpoint"]
    with pytest.raises(contract.ContractError, match=r"^outputs.cluster.dnsEndpoint: missing$"):
        contract.load(data)
    data["cluster"]["dnsEndpoint"] = 7
    with pytest.raises(contract.ContractError, match="outputs.cluster.dnsEndpoint: 7 is not str"):
        contract.load(data)
