"""The provider IDs submit/ephemeral/pending.py computes for a killed create, from its inputs
in the exported state (the formats terraform-provider-google sets: see that module)."""

from __future__ import annotations

from submit.ephemeral.pending import CLUSTER, NODE_POOL, PendingCreate, pending_creates, provider_id

URN = "urn:pulumi:s::accelstack::t::n"


def test_cluster_and_node_pool_ids() -> None:
    inputs = {"project": "p", "location": "us-west4", "name": "c"}
    assert provider_id(PendingCreate(URN, CLUSTER, inputs)) == (
        "projects/p/locations/us-west4/clusters/c")
    # The stacks pass the cluster's ID as `cluster`; a short name works the same.
    for cluster in ("projects/p/locations/us-west4/clusters/c", "c"):
        pool = {"project": "p", "location": "us-west4", "cluster": cluster, "name": "np"}
        assert provider_id(PendingCreate(URN, NODE_POOL, pool)) == (
            "projects/p/locations/us-west4/clusters/c/nodePools/np")


def test_no_id_without_a_rule_or_a_field() -> None:
    assert provider_id(PendingCreate(URN, "gcp:compute/address:Address",
                                     {"project": "p", "region": "r", "name": "a"})) is None
    # A project left to the provider's default is not in the inputs: no ID is guessed.
    assert provider_id(PendingCreate(URN, CLUSTER, {"location": "l", "name": "c"})) is None


def test_pending_creates_reads_only_creates_with_their_inputs() -> None:
    deployment = {"pending_operations": [
        {"resource": {"urn": URN, "type": CLUSTER, "inputs": {"name": "c"}}, "type": "creating"},
        {"resource": {"urn": URN + "2", "type": CLUSTER}, "type": "updating"}]}
    assert pending_creates(deployment) == [PendingCreate(URN, CLUSTER, {"name": "c"})]
    assert pending_creates(None) == []
