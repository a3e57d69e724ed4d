"""Fleet stacks under the SDK's mock engine: the example fleet (a manager and two worker
stacks, read through StackReferences) and a fleet of three workers in three regions;
every object validated against its CRD (MultiKueue's from tests/schemas/)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml

import schema
from conftest import FLEET_FILES, MINIMAL, STACKS_DIR, evaluate_shipped
from infra.components.fleet import FleetConfigError
from infra.contract import fleet as fleet_contract
from infra.contract.outputs import ContractError
from infra.preview import harness
from infra.program import StackConfigError
from infra.specs.fleet import access

SA = "kubernetes:core/v1:ServiceAccount"
SECRET = "kubernetes:core/v1:Secret"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
GROUP = "kubernetes:yaml/v2:ConfigGroup"
PROVIDER = "pulumi:providers:kubernetes"
REF = "pulumi:pulumi:StackReference"


def _worker(name: str, region: str, **overrides: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw.update(region=region, zones=[f"{region}-a"], clusterName=name,
               slices=[{"accelerator": "v5litepod-16", "count": 2,
                        "capacity": {"mode": "spot"}}])
    raw.update(overrides)
    return raw


def _outputs(raw: dict[str, Any], stack: str) -> dict[str, Any]:
    return harness.plain_outputs(harness.evaluate(raw, stack), reveal=True)


MANAGER = {**copy.deepcopy(MINIMAL), "clusterName": "mgr",
           "slices": [{"accelerator": "n2-standard-8-1", "count": 1}],
           "queues": {"namespace": "ops"}}


@pytest.fixture(scope="module")
def three() -> dict[str, Any]:
    """Outputs of a manager and three worker stacks in three regions."""
    return {
        "org/p/mgr": _outputs(MANAGER, "mgr"),
        "org/p/w1": _outputs(_worker("w1", "us-west4"), "w1"),
        "org/p/w2": _outputs(_worker("w2", "us-east5"), "w2"),
        "org/p/w3": _outputs(_worker("w3", "europe-west4",
                                     slices=[{"accelerator": "v5litepod-16", "count": 1,
                                              "capacity": {"mode": "spot"}},
                                             {"accelerator": "v6e-16", "count": 1}]), "w3"),
    }


def _fleet(**overrides: Any) -> dict[str, Any]:
    fleet: dict[str, Any] = {
        "name": "research", "manager": {"stack": "org/p/mgr"},
        "workers": [{"name": "a", "stack": "org/p/w1"}, {"name": "b", "stack": "org/p/w2"},
                    {"name": "c", "stack": "org/p/w3"}]}
    fleet.update(overrides)
    return {"fleet": fleet}


def _objects(ev: harness.Evaluation, group: str) -> list[dict[str, Any]]:
    return list(harness._plain(ev.named(group, GROUP).inputs)["objs"])


@pytest.fixture(scope="module")
def example() -> harness.Evaluation:
    [path] = [p for p in FLEET_FILES if p.name == "Pulumi.fleet.yaml"]
    return evaluate_shipped(path)


@pytest.fixture(scope="module")
def fleet3(three: dict[str, Any]) -> harness.Evaluation:
    return harness.evaluate_fleet(_fleet(), "fleet3", three)


# ----------------------------------------------------------------------------------
# The example fleet stack


def test_reads_the_manager_and_every_worker_through_stack_references(
        example: harness.Evaluation) -> None:
    assert sorted(r.inputs["name"] for r in example.of_type(REF)) == [
        "my-org/accelstack/fleet-east", "my-org/accelstack/fleet-manager",
        "my-org/accelstack/v5e-spot"]
    assert sorted(r.name for r in example.of_type(PROVIDER)) == [
        "fleet-east-claim-k8s", "fleet-east-k8s", "fleet-manager-k8s", "fleet-west-claim-k8s",
        "fleet-west-k8s"]
    # Each provider talks to its cluster with the kubeconfig of that stack's contract.
    outputs = harness.referenced_outputs(STACKS_DIR, "v5e-spot")
    assert outputs is not None
    kube = example.named("fleet-west-k8s", PROVIDER).inputs["kubeconfig"]
    assert isinstance(kube, harness.Secret)
    assert kube.value == outputs["accelstack"]["kubeconfig"]


def test_each_cluster_has_its_own_multikueue_origin(example: harness.Evaluation,
                                                    three: dict[str, Any]) -> None:
    # Kueue's default origin ("multikueue") on two managers sharing a worker: each one's
    # garbage collector deletes the other's Workloads there.
    origins = {stack: o["accelstack"]["cluster"]["multiKueueOrigin"] for stack, o in three.items()}
    assert len(set(origins.values())) == len(origins)
    assert all(len(v) <= 63 and re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", v)
               for v in origins.values())
    # the manager's Kueue runs with it
    ev = harness.evaluate(MANAGER, "mgr")
    [release] = ev.of_type("kubernetes:helm.sh/v3:Release")
    config = yaml.safe_load(harness._plain(release.inputs)["values"]["managerConfig"][
        "controllerManagerConfigYaml"])
    assert config["multiKueue"] == {"origin": origins["org/p/mgr"]}


def test_a_manager_without_an_origin_is_refused(three: dict[str, Any]) -> None:
    old = copy.deepcopy(three["org/p/mgr"])
    del old["accelstack"]["cluster"]["multiKueueOrigin"]
    assert _refused(three, {"org/p/mgr": old}) == [
        "fleet.manager.stack: stack 'org/p/mgr' does not export its Kueue's MultiKueue origin "
        "(cluster.multiKueueOrigin; outputs written by an older accelstack): run `pulumi up` "
        "on it with this version first"]


def test_each_worker_is_claimed_before_anything_else_is_declared_on_it(
        example: harness.Evaluation) -> None:
    claim = example.named("fleet-west-claim", "kubernetes:core/v1:ConfigMap")
    assert harness._plain(claim.inputs)["data"] == {"fleet": "research", "stack": "fleet"}
    assert harness._plain(claim.inputs)["metadata"]["name"] == "accelstack-fleet"
    # created through a provider that never adopts an existing object
    provider = example.named("fleet-west-claim-k8s", PROVIDER)
    assert provider.inputs["upsertExistingObjects"] == "false"
    for r in example.resources:
        if r.name.startswith("fleet-west-") and r.custom and r.type != PROVIDER \
                and r.name not in ("fleet-west-claim", "fleet-west-kubeconfig"):
            # (fleet-west-kubeconfig is the manager's Secret: it waits for the token)
            assert claim.urn in r.dependencies, r.name


def test_every_object_validates_against_its_schema(example: harness.Evaluation,
                                                   fleet3: harness.Evaluation) -> None:
    for ev in (example, fleet3):
        for r in ev.of_type(GROUP):
            for obj in harness._plain(r.inputs)["objs"]:
                schema.validate(obj)
        for r in ev.of_type(SA) + ev.of_type(ROLE) + ev.of_type(BINDING) + ev.of_type(SECRET):
            schema.validate(harness._plain(r.inputs))


def test_worker_access_is_the_documented_role_for_jobs_and_jobsets_only(
        example: harness.Evaluation) -> None:
    role = harness._plain(example.named("fleet-west-role", ROLE).inputs)
    groups = {(g, tuple(r["resources"])): r["verbs"] for r in role["rules"]
              for g in r["apiGroups"]}
    assert groups == {
        ("batch", ("jobs",)): ["create", "delete", "get", "list", "watch"],
        ("batch", ("jobs/status",)): ["get"],
        ("jobset.x-k8s.io", ("jobsets",)): ["create", "delete", "get", "list", "watch"],
        ("jobset.x-k8s.io", ("jobsets/status",)): ["get"],
        ("kueue.x-k8s.io", ("workloads",)): ["create", "delete", "get", "list", "watch",
                                             "update", "patch"],
        ("kueue.x-k8s.io", ("clusterqueues", "localqueues")): ["get", "list", "watch"],
        ("kueue.x-k8s.io", ("workloads/status",)): ["get", "patch", "update"],
    }
    binding = harness._plain(example.named("fleet-west-binding", BINDING).inputs)
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "multikueue-research",
                                    "namespace": "kueue-system"}]
    account = harness._plain(example.named("fleet-west-account", SA).inputs)
    assert account["metadata"]["namespace"] == "kueue-system"
    assert account["automountServiceAccountToken"] is False
    token = harness._plain(example.named("fleet-west-token", SECRET).inputs)
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": "multikueue-research"}


def test_the_example_private_worker_is_reached_at_its_dns_endpoint(
        example: harness.Evaluation) -> None:
    outputs = harness.referenced_outputs(STACKS_DIR, "fleet-east")
    assert outputs is not None
    cluster = outputs["accelstack"]["cluster"]
    assert cluster["privateEndpoint"] is True and cluster["dnsK8sTokens"] is True
    assert _kubeconfig(example, "east")["clusters"][0]["cluster"] == {
        "server": f"https://{cluster['dnsEndpoint']}"}


def test_manager_kubeconfig_secret_holds_a_token_kubeconfig_kueue_accepts(
        example: harness.Evaluation) -> None:
    secret = example.named("fleet-west-kubeconfig", SECRET).inputs
    assert secret["metadata"]["namespace"] == "kueue-system"
    assert secret["metadata"]["name"] == "multikueue-west"
    data = secret["stringData"]
    assert isinstance(data, harness.Secret)  # the token never shows in a diff
    config = yaml.safe_load(data.value["kubeconfig"])
    outputs = harness.referenced_outputs(STACKS_DIR, "v5e-spot")
    assert outputs is not None
    cluster = outputs["accelstack"]["cluster"]
    # Kueue v0.19.2 validateKubeconfig: CA data (no file), a server address, a bearer
    # token; no exec plugin, token file or insecure flag.
    assert config["clusters"][0]["cluster"] == {
        "server": f"https://{cluster['endpoint']}",
        "certificate-authority-data": cluster["caCertificate"]}
    assert config["users"][0]["user"] == {"token": harness.PREVIEW_TOKEN}
    objs = _objects(example, "fleet-manager-objects")
    [mkc] = [o for o in objs if o["kind"] == "MultiKueueCluster"
             and o["metadata"]["name"] == "west"]
    assert mkc["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert mkc["spec"] == {"clusterSource": {"kubeConfig": {
        "locationType": "Secret", "location": "multikueue-west"}}}


def _token_names(ev: harness.Evaluation) -> dict[str, str]:
    return {w: harness._plain(ev.named(f"fleet-{w}-token", SECRET).inputs)["metadata"]["name"]
            for w in "abc"}


def test_tokens_rotate_with_the_window(three: dict[str, Any]) -> None:
    day = 86400.0
    start = 400 * 30 * day  # the start of a 30-day window
    names = []
    for now in (start, start + 29 * day, start + 30 * day):
        ev = harness.evaluate_fleet(_fleet(tokenRotationDays=30), "f", three, now=now)
        names.append(harness._plain(ev.named("fleet-a-token", SECRET).inputs)
                     ["metadata"]["name"])
    assert names[0] == names[1] != names[2]
    assert re.fullmatch(r"multikueue-research-token-400-[0-9a-f]{10}", names[0])
    assert names[2].startswith("multikueue-research-token-401-")


def test_tokens_rotate_when_the_fleet_changes_and_only_then(three: dict[str, Any]) -> None:
    # The issue: tokens "rotated when the stack is updated". An update that changes what
    # the fleet declares (its config, or a contract it reads) replaces every worker's
    # token; one that changes nothing keeps them (Pulumi shows no change).
    base = _token_names(harness.evaluate_fleet(_fleet(), "f", three))
    assert _token_names(harness.evaluate_fleet(_fleet(), "f", three)) == base
    config = _token_names(harness.evaluate_fleet(_fleet(namespaces=["training"]), "f", three))
    bigger = _outputs(_worker("w2", "us-east5", slices=[
        {"accelerator": "v5litepod-16", "count": 3, "capacity": {"mode": "spot"}}]), "w2")
    contract = _token_names(harness.evaluate_fleet(_fleet(), "f", {**three, "org/p/w2": bigger}))
    for changed in (config, contract):
        assert all(changed[w] != base[w] for w in "abc")
    assert config != contract
    # A kubeconfig is the users' credentials, not something the fleet declares.
    rekeyed = copy.deepcopy(three)
    rekeyed["org/p/w1"]["accelstack"]["kubeconfig"] += "# refreshed\n"
    assert _token_names(harness.evaluate_fleet(_fleet(), "f", rekeyed)) == base


def test_the_kubeconfig_secret_waits_for_the_new_token(fleet3: harness.Evaluation) -> None:
    # Replacing the token Secret creates the new one first; the manager's kubeconfig
    # Secret reads its token, so the engine rewrites it after, and deletes the old token
    # Secret last (infra/components/fleet.py).
    for w in "abc":
        token = fleet3.named(f"fleet-{w}-token", SECRET)
        kubeconfig = fleet3.named(f"fleet-{w}-kubeconfig", SECRET)
        assert token.urn in kubeconfig.dependencies
        text = kubeconfig.inputs["stringData"].value["kubeconfig"]
        assert yaml.safe_load(text)["users"][0]["user"] == {"token": harness.PREVIEW_TOKEN}


# ----------------------------------------------------------------------------------
# A fleet of three workers in three regions


def _by_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_scopes_all_workers_each_worker_and_each_region(fleet3: harness.Evaluation) -> None:
    objs = _objects(fleet3, "fleet-manager-objects")
    configs = _by_kind(objs, "MultiKueueConfig")
    assert {k: v["spec"]["clusters"] for k, v in configs.items()} == {
        "research": ["a", "b", "c"], "research-a": ["a"], "research-b": ["b"],
        "research-c": ["c"], "research-europe-west4": ["c"], "research-us-east5": ["b"],
        "research-us-west4": ["a"]}
    checks = _by_kind(objs, "AdmissionCheck")
    assert set(checks) == set(configs)
    for name, check in checks.items():
        assert check["spec"] == {"controllerName": "kueue.x-k8s.io/multikueue", "parameters": {
            "apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": name}}
    cqs = _by_kind(objs, "ClusterQueue")
    for name, cq in cqs.items():
        assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": name}]}
        assert cq["spec"]["cohortName"] == "research"
    lqs = {(o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["clusterQueue"]
           for o in objs if o["kind"] == "LocalQueue"}
    assert lqs[("training", "main")] == "research"
    assert lqs[("training", "main-b")] == "research-b"
    assert lqs[("training", "main-europe-west4")] == "research-europe-west4"
    [ns] = [o for o in objs if o["kind"] == "Namespace"]
    assert ns["metadata"]["labels"]["accelstack.dev/kueue-managed"] == "true"


def _quota(cq: dict[str, Any], flavor: str, resource: str) -> dict[str, Any]:
    [group] = cq["spec"]["resourceGroups"]
    [f] = [f for f in group["flavors"] if f["name"] == flavor]
    [r] = [r for r in f["resources"] if r["name"] == resource]
    return dict(r)


def test_manager_quota_is_the_workers_total_and_a_worker_queue_never_borrows(
        fleet3: harness.Evaluation) -> None:
    cqs = _by_kind(_objects(fleet3, "fleet-manager-objects"), "ClusterQueue")
    flavors = _by_kind(_objects(fleet3, "fleet-manager-objects"), "ResourceFlavor")
    assert set(flavors) == {"v5litepod-16-spot", "v6e-16-on-demand"}
    # a: two v5e-16 slices (32 chips), b: two (32), c: one (16) and one v6e-16 (16).
    assert _quota(cqs["research-a"], "v5litepod-16-spot", "google.com/tpu") == {
        "name": "google.com/tpu", "nominalQuota": 32, "borrowingLimit": 0}
    assert _quota(cqs["research-c"], "v6e-16-on-demand", "google.com/tpu")["nominalQuota"] \
        == 16
    assert _quota(cqs["research-a"], "v6e-16-on-demand", "google.com/tpu")["nominalQuota"] \
        == 0
    everyone = _quota(cqs["research"], "v5litepod-16-spot", "google.com/tpu")
    assert everyone == {"name": "google.com/tpu", "nominalQuota": 0}  # borrows the cohort's
    total = sum(_quota(cqs[f"research-{w}"], "v5litepod-16-spot", "google.com/tpu")
                ["nominalQuota"] for w in "abc")
    assert total == 80


def test_worker_mirrors_the_queues_that_can_send_it_work(fleet3: harness.Evaluation) -> None:
    queues = _objects(fleet3, "fleet-c-queues")
    assert {(q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"]
            for q in queues} == {("training", "main-c"): "cluster-queue",
                                 ("training", "main-europe-west4"): "cluster-queue"}


def test_outputs_load_as_a_manager_view(fleet3: harness.Evaluation,
                                        three: dict[str, Any]) -> None:
    assert {"accelstackFleet.manager", "accelstackFleet.workers"} <= fleet3.secret_outputs
    view = fleet_contract.load_fleet(harness.plain_outputs(fleet3, reveal=True))
    assert view.fleet is not None and [w.name for w in view.fleet.workers] == ["a", "b", "c"]
    assert view.kubeconfig == three["org/p/mgr"]["accelstack"]["kubeconfig"]
    assert {p.name: p.slice_count for p in view.slice_pools} == {
        "v5litepod-16-spot": 2, "v6e-16-on-demand": 1}
    assert [w.name for w in fleet_contract.offering(view.fleet, "v6e-16-on-demand")] == ["c"]
    assert view.local_queue("training") is not None
    assert view.local_queue("training").cluster_queue == "research"  # type: ignore[union-attr]


# ----------------------------------------------------------------------------------
# Refusals: config alone, then the referenced contracts


@pytest.mark.parametrize("fleet,message", [
    ({"workers": [{"name": "a", "stack": "org/p/w1"}, {"name": "a", "stack": "org/p/w2"}]},
     "fleet.workers[1].name: 'a' is a duplicate worker: workers[0] has that name"),
    ({"workers": [{"name": "a", "stack": "org/p/w1"}, {"name": "b", "stack": "org/p/w1"}]},
     "fleet.workers[1].stack: 'org/p/w1' is a duplicate worker: workers[0] is that stack"),
    ({"workers": [{"name": "a", "stack": "org/p/mgr"}]},
     "fleet.workers[0].stack: 'org/p/mgr' is the manager stack: the manager cannot be one of "
     "its own workers (a cycle MultiKueue does not support)"),
    ({"workers": [{"name": "a", "stack": "org/p/f"}]},
     "fleet.workers[0].stack: 'org/p/f' is this fleet stack itself (a cycle)"),
    # One stack under two spellings is one worker, the manager or the fleet itself.
    ({"workers": [{"name": "a", "stack": "org/p/w1"}, {"name": "b", "stack": "w1"}]},
     "fleet.workers[1].stack: 'w1' is a duplicate worker: workers[0] is that stack (written "
     "'org/p/w1' there)"),
    ({"workers": [{"name": "a", "stack": "org/w1"}, {"name": "b", "stack": "org/p/w1"}]},
     "fleet.workers[1].stack: 'org/p/w1' is a duplicate worker: workers[0] is that stack "
     "(written 'org/w1' there)"),
    ({"workers": [{"name": "a", "stack": "mgr"}]},
     "fleet.workers[0].stack: 'mgr' is the manager stack: the manager cannot be one of "
     "its own workers (a cycle MultiKueue does not support)"),
    ({"workers": [{"name": "a", "stack": "org/f"}]},
     "fleet.workers[0].stack: 'org/f' is this fleet stack itself (a cycle)"),
    ({"workers": []}, "fleet.workers: is empty; a fleet needs at least one worker stack"),
    ({"managerEgress": ["10.0.0.1/8"]},
     "fleet.managerEgress[0]: '10.0.0.1/8' is not a CIDR block such as 203.0.113.4/32"),
])
def test_config_refusals(three: dict[str, Any], fleet: dict[str, Any], message: str) -> None:
    with pytest.raises(StackConfigError) as e:
        harness.evaluate_fleet(_fleet(**fleet), "f", three)
    assert message in e.value.problems


def _refused(three: dict[str, Any], refs: dict[str, Any], **fleet: Any) -> list[str]:
    with pytest.raises(FleetConfigError) as e:
        harness.evaluate_fleet(_fleet(**fleet), "f", {**three, **refs})
    return e.value.problems


def test_version_mismatch_is_refused(three: dict[str, Any]) -> None:
    old = _outputs(_worker("w2", "us-east5", addons={"kueueVersion": "v0.18.0"}), "w2")
    assert _refused(three, {"org/p/w2": old}) == [
        "fleet.workers[1]: worker b (org/p/w2) runs Kueue v0.18.0, the manager v0.19.2; set "
        "the same addons.kueueVersion in both stacks"]


def test_missing_namespace_and_differing_queue_are_refused(three: dict[str, Any]) -> None:
    other_ns = _outputs(_worker("w2", "us-east5", queues={"namespace": "jobs"}), "w2")
    problems = _refused(three, {"org/p/w2": other_ns}, namespaces=["training"])
    assert problems == [
        "fleet.workers[1]: namespace 'training' is missing on worker b (org/p/w2; its queue "
        "namespaces: jobs); MultiKueue needs every mirrored namespace and its LocalQueue on "
        "every worker"]
    other_queue = _outputs(_worker("w2", "us-east5", queues={"localQueue": "q"}), "w2")
    problems = _refused(three, {"org/p/w2": other_queue})
    assert problems == [
        "fleet.namespaces: the LocalQueue of namespace 'training' differs between workers "
        "(a: main, b: q, c: main); MultiKueue keeps the queue name, so the queue is missing "
        "on some: give every worker the same queues.localQueue"]


def test_a_fleet_as_a_worker_is_a_cycle(three: dict[str, Any]) -> None:
    problems = _refused(three, {"org/p/w3": {"accelstackFleet": {"fleetContractVersion": 1,
                                                                   "name": "x"}}})
    assert problems == [
        "fleet.workers[2].stack: stack 'org/p/w3' is a fleet, not a cluster stack (a fleet "
        "cannot be the manager or a worker of a fleet: that would be a cycle)"]
    problems = _refused(three, {"org/p/w3": {}})
    assert problems == [
        "fleet.workers[2].stack: stack 'org/p/w3' has no 'accelstack' output: it is not an "
        "accelstack cluster stack, or not deployed yet"]


def test_a_pools_stack_as_a_worker_is_refused(three: dict[str, Any]) -> None:
    pools = copy.deepcopy(three["org/p/w3"])
    pools["accelstack"]["onCluster"] = "org/p/w1"
    assert _refused(three, {"org/p/w3": pools}) == [
        "fleet.workers[2].stack: stack 'org/p/w3' is a pools stack (on the cluster of "
        "'org/p/w1'), not a cluster stack; name the cluster stack"]


def test_the_manager_must_be_let_in(three: dict[str, Any]) -> None:
    # The manager's Cloud NAT sends from addresses its stack reserves and exports; the fleet
    # reads them (no hand-typed list).
    nat = three["org/p/mgr"]["accelstack"]["cluster"]["natAddresses"]
    assert nat == ["203.0.113.64/32"]
    walled = _outputs(_worker("w1", "us-west4", masterAuthorizedNetworks=[
        {"cidr": "10.0.0.0/8", "name": "corp"}]), "w1")
    assert _refused(three, {"org/p/w1": walled}) == [
        "fleet.workers[0]: worker a's masterAuthorizedNetworks do not let the manager in from "
        "203.0.113.64/32 (the manager's Cloud NAT address); add it to the worker stack's "
        "masterAuthorizedNetworks"]
    opened = _outputs(_worker("w1", "us-west4", masterAuthorizedNetworks=[
        {"cidr": "203.0.113.64/32", "name": "manager"}]), "w1")
    harness.evaluate_fleet(_fleet(), "f", {**three, "org/p/w1": opened})
    # A hand-typed list beside them is refused: the contract is the source.
    assert _refused(three, {}, managerEgress=["203.0.113.8/29"]) == [
        "fleet.managerEgress: the manager stack exports the addresses its Cloud NAT sends from "
        "(203.0.113.64/32), which the fleet reads; remove managerEgress"]
    # A manager without NAT (public nodes, or older outputs): managerEgress, as before.
    no_nat = copy.deepcopy(three["org/p/mgr"])
    del no_nat["accelstack"]["cluster"]["natAddresses"]
    problems = _refused(three, {"org/p/mgr": no_nat, "org/p/w1": walled})
    assert problems == [
        "fleet.workers[0]: worker a limits its control plane to masterAuthorizedNetworks, and "
        "the manager stack (org/p/mgr) exports no Cloud NAT addresses (cluster.natAddresses: "
        "run `pulumi up` on it with this version, or give it privateNodes, which sends through "
        "Cloud NAT); without NAT, give fleet.managerEgress (its nodes' addresses) so the fleet "
        "can check that the manager is let in"]
    assert _refused(three, {"org/p/mgr": no_nat, "org/p/w1": walled},
                    managerEgress=["203.0.113.8/29"]) == [
        "fleet.workers[0]: worker a's masterAuthorizedNetworks do not let the manager in from "
        "203.0.113.8/29 (fleet.managerEgress); add it to the worker stack's "
        "masterAuthorizedNetworks"]


PRIVATE_REFUSAL = (
    "fleet.workers[0]: worker a has privateEndpoint on: its IP endpoint answers only inside "
    "its own VPC network, which the manager is not in, and the manager authenticates with a "
    "ServiceAccount token (Kueue takes no gcloud plugin); set dnsEndpoint: {k8sTokens: true} "
    "in the worker stack (org/p/w1) so the manager comes in through its DNS endpoint with "
    "that token, or turn privateEndpoint off there and let the manager in through "
    "masterAuthorizedNetworks")


@pytest.mark.parametrize("dns", [None, True, {"k8sTokens": False}])
def test_a_private_worker_without_k8s_tokens_at_its_dns_endpoint_is_refused(
        three: dict[str, Any], dns: Any) -> None:
    extra = {} if dns is None else {"dnsEndpoint": dns}
    private = _outputs(_worker("w1", "us-west4", privateEndpoint=True, **extra), "w1")
    assert _refused(three, {"org/p/w1": private}) == [PRIVATE_REFUSAL]


def test_a_private_worker_of_an_older_contract_is_refused(three: dict[str, Any]) -> None:
    # A contract written before cluster.dnsK8sTokens existed reads as unknown: not let in.
    private = _outputs(_worker("w1", "us-west4", privateEndpoint=True,
                               dnsEndpoint={"k8sTokens": True}), "w1")
    del private["accelstack"]["cluster"]["dnsK8sTokens"]
    assert _refused(three, {"org/p/w1": private}) == [PRIVATE_REFUSAL.replace(
        "with that token,", "with that token (if it already does, run pulumi up on org/p/w1: "
        "its outputs predate cluster.dnsK8sTokens and do not say so),")]


def _kubeconfig(ev: harness.Evaluation, worker: str) -> dict[str, Any]:
    data = ev.named(f"fleet-{worker}-kubeconfig", SECRET).inputs["stringData"]
    assert isinstance(data, harness.Secret)
    return dict(yaml.safe_load(data.value["kubeconfig"]))


def test_a_private_worker_is_reached_at_its_dns_endpoint_with_the_token(
        three: dict[str, Any]) -> None:
    # Its masterAuthorizedNetworks restrict the IP endpoints only, so they are not checked
    # against the manager's egress (they would refuse it).
    private = _outputs(_worker("w1", "us-west4", privateEndpoint=True,
                               dnsEndpoint={"k8sTokens": True},
                               masterAuthorizedNetworks=[{"cidr": "10.0.0.0/8"}]), "w1")
    ev = harness.evaluate_fleet(_fleet(), "f", {**three, "org/p/w1": private})
    config = _kubeconfig(ev, "a")
    dns = private["accelstack"]["cluster"]["dnsEndpoint"]
    assert dns == f"w1.us-west4.{harness.PREVIEW_DNS_SUFFIX}"
    # Google's front end serves the DNS name with a publicly trusted certificate: no CA
    # data, the system roots verify it.
    assert config["clusters"][0]["cluster"] == {"server": f"https://{dns}"}
    assert config["users"][0]["user"] == {"token": harness.PREVIEW_TOKEN}
    # The other workers keep their IP endpoint and its CA.
    assert _kubeconfig(ev, "b")["clusters"][0]["cluster"] == {
        "server": f"https://{harness.PREVIEW_ENDPOINT}",
        "certificate-authority-data": harness.PREVIEW_CA}
    view = fleet_contract.load_fleet(harness.plain_outputs(ev, reveal=True))
    assert view.fleet is not None
    assert [w.manager_via for w in view.fleet.workers] == ["dns", "ip", "ip"]


@pytest.mark.parametrize("via,message", [
    ("vpn", "fleet.workers[0].managerVia: 'vpn' is not dns or ip"),
    (None, "fleet.workers[0].managerVia: NoneType is not str"),
])
def test_the_fleet_contract_refuses_an_unknown_way_in(
        fleet3: harness.Evaluation, via: Any, message: str) -> None:
    data = harness.plain_outputs(fleet3, reveal=True)
    fleet = data[fleet_contract.FLEET_OUTPUT_NAME]
    assert [w["managerVia"] for w in fleet["workers"]] == ["ip", "ip", "ip"]
    del fleet["workers"][1]["managerVia"]  # an older contract: unknown
    assert fleet_contract.load_fleet(data).fleet.workers[1].manager_via is None  # type: ignore[union-attr]
    fleet["workers"][0]["managerVia"] = via
    with pytest.raises(ContractError) as e:
        fleet_contract.load_fleet(data)
    assert str(e.value) == message


def test_a_public_worker_with_k8s_tokens_is_reached_over_dns_too(
        three: dict[str, Any]) -> None:
    public = _outputs(_worker("w2", "us-east5", dnsEndpoint={"k8sTokens": True}), "w2")
    ev = harness.evaluate_fleet(_fleet(), "f", {**three, "org/p/w2": public})
    assert _kubeconfig(ev, "b")["clusters"][0]["cluster"] == {
        "server": f"https://w2.us-east5.{harness.PREVIEW_DNS_SUFFIX}"}


def test_refused_fleet_names_the_stack_file_line(tmp_path: Any) -> None:
    text = (STACKS_DIR / "Pulumi.fleet.yaml").read_text().replace(
        "my-org/accelstack/fleet-east", "my-org/accelstack/fleet-manager")
    (tmp_path / "Pulumi.fleet.yaml").write_text(text)
    with pytest.raises(StackConfigError) as e:
        harness.evaluate_file(tmp_path / "Pulumi.fleet.yaml")
    [problem] = e.value.problems
    assert problem.startswith(f"{tmp_path / 'Pulumi.fleet.yaml'}:15: fleet.workers[1].stack: ")


def test_a_queue_name_too_long_for_the_scoped_queues_is_refused(three: dict[str, Any]) -> None:
    name = "q" * 55
    refs = {f"org/p/w{i}": _outputs(_worker(f"w{i}", region, queues={"localQueue": name}),
                                    f"w{i}")
            for i, region in ((1, "us-west4"), (2, "us-east5"), (3, "europe-west4"))}
    assert _refused(three, refs) == [
        f"fleet.namespaces: the LocalQueue name {name!r} of namespace 'training' is too long "
        f"for the fleet's scoped queues ({name}-<worker or region> must fit a 63-character "
        "label value); give the workers a shorter queues.localQueue"]


def test_config_problems_name_the_stack_file_line(tmp_path: Any) -> None:
    text = (STACKS_DIR / "Pulumi.fleet.yaml").read_text().replace("name: east", "name: west")
    (tmp_path / "Pulumi.fleet.yaml").write_text(text)
    with pytest.raises(StackConfigError) as e:
        harness.evaluate_file(tmp_path / "Pulumi.fleet.yaml")
    assert e.value.problems == [
        f"{tmp_path / 'Pulumi.fleet.yaml'}:14: fleet.workers[1].name: 'west' is a duplicate "
        "worker: workers[0] has that name"]


def test_a_workers_slice_class_stays_its_own(three: dict[str, Any]) -> None:
    # ComputeClass shapes are made on demand per cluster: the manager neither counts nor
    # offers them (only node pools are dispatched).
    classy = _outputs(_worker("w2", "us-east5", sliceClasses=[{
        "name": "burst", "shapes": ["v6e-64"], "capacity": ["spot"],
        "limits": {"chips": 64}}]), "w2")
    assert any(p.get("computeClass") for p in classy["accelstack"]["slicePools"])
    ev = harness.evaluate_fleet(_fleet(), "f", {**three, "org/p/w2": classy})
    flavors = _by_kind(_objects(ev, "fleet-manager-objects"), "ResourceFlavor")
    assert set(flavors) == {"v5litepod-16-spot", "v6e-16-on-demand"}
    view = fleet_contract.load_fleet(harness.plain_outputs(ev, reveal=True))
    assert view.slice_classes == () and "v6e-64-spot" not in {p.name for p in view.slice_pools}


def test_pools_whose_pods_claim_dra_devices_stay_the_workers_own(
        three: dict[str, Any]) -> None:
    dranet = _outputs(_worker("w2", "us-east5", slices=[
        {"accelerator": "v5litepod-16", "count": 2, "capacity": {"mode": "spot"}},
        {"accelerator": "v6e-16", "count": 1, "dranet": True}]), "w2")
    ev = harness.evaluate_fleet(_fleet(), "f", {**three, "org/p/w2": dranet})
    cqs = _by_kind(_objects(ev, "fleet-manager-objects"), "ClusterQueue")
    assert _quota(cqs["research-b"], "v5litepod-16-spot", "google.com/tpu")["nominalQuota"] \
        == 32
    assert _quota(cqs["research-b"], "v6e-16-on-demand", "google.com/tpu")["nominalQuota"] \
        == 0
