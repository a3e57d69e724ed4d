"""The offline desired-state preview: snapshots, the diff mode, policy checks, secrets."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from conftest import ADOPTED_FILES, FLEET_FILES, IN_CLUSTER_FILES, POOLS_FILES, MINIMAL, ROOT, STACK_FILES
from infra.preview import harness
from infra.policy import rules as policy
from infra.preview import cli as preview
from infra.config.stack import parse

SNAPSHOTS = ROOT / "snapshots"


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    return {harness.stack_name(p): preview.desired_state(p)
            for p in STACK_FILES + FLEET_FILES + POOLS_FILES + IN_CLUSTER_FILES + ADOPTED_FILES}


def test_every_stack_has_a_snapshot() -> None:
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.yaml")) == sorted(
        harness.stack_name(p) for p in STACK_FILES + FLEET_FILES + POOLS_FILES + IN_CLUSTER_FILES + ADOPTED_FILES)


@pytest.mark.parametrize("path", STACK_FILES + FLEET_FILES + POOLS_FILES + IN_CLUSTER_FILES + ADOPTED_FILES,
                         ids=lambda p: p.name)
def test_snapshot_is_current(path: Path, docs: dict[str, dict[str, Any]]) -> None:
    # A change to a stack's desired state must come with its regenerated snapshot
    # (`accelstack-preview --update-snapshots`), so the pull request shows it.
    stack = harness.stack_name(path)
    snapshot = (SNAPSHOTS / f"{stack}.yaml").read_text()
    assert preview.dump(docs[stack]) == snapshot, (
        f"snapshots/{stack}.yaml is out of date:\n"
        + "\n".join(preview.diff(yaml.safe_load(snapshot), docs[stack])))


def test_preview_is_sorted_and_stable(docs: dict[str, dict[str, Any]]) -> None:
    doc = docs["v5e-spot"]
    keys = [(r["type"], r["name"]) for r in doc["resources"]]
    assert len(keys) == len(set(keys))
    again = preview.desired_state(ROOT / "stacks" / "Pulumi.v5e-spot.yaml")
    assert preview.dump(again) == preview.dump(doc)
    assert {"resources", "outputs", "policy", "stack", "cost"} == set(doc)
    cluster = next(r for r in doc["resources"] if r["type"] == "gcp:container/cluster:Cluster")
    assert cluster["parent"] == "v5e-spot" and cluster["name"] == "v5e-spot"
    assert cluster["inputs"]["initialNodeCount"] == 1  # numbers print as integers


def test_secrets_never_appear(docs: dict[str, dict[str, Any]]) -> None:
    ev = harness.evaluate_file(ROOT / "stacks" / "Pulumi.v5e-spot.yaml")
    kubeconfig = harness.plain_outputs(ev, reveal=True)["accelstack"]["kubeconfig"]
    assert "gke-gcloud-auth-plugin" in kubeconfig
    texts = [preview.dump(d) for d in docs.values()] + [p.read_text() for p in
                                                        SNAPSHOTS.glob("*.yaml")]
    for text in texts:
        assert "gke-gcloud-auth-plugin" not in text
        assert "certificate-authority-data" not in text
        assert "[secret]" in text
    provider = next(r for r in docs["v5e-spot"]["resources"]
                    if r["type"] == "pulumi:providers:kubernetes")
    assert provider["inputs"]["kubeconfig"] == "[secret]"


# ----------------------------------------------------------------------------------
# --diff on crafted changes


def _doc(raw: dict[str, Any], tmp_path: Path, name: str = "crafted") -> dict[str, Any]:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {f"accelstack:{k}": v for k, v in raw.items()}}))
    return preview.desired_state(path)


def _base() -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": "v5p-64", "count": 1, "capacity": "spot"}]
    raw["imageCache"] = [{"name": "trainer", "image": "us-docker.pkg.dev/p/r/trainer:1.0"}]
    return raw


def test_diff_add_a_slice(tmp_path: Path) -> None:
    before = _doc(_base(), tmp_path)
    raw = _base()
    raw["slices"][0]["count"] = 2
    lines = preview.diff(before, _doc(raw, tmp_path))
    assert "+ gcp:container/nodePool:NodePool v5p-64-1" in lines
    assert '    inputs.nodeCount: 8' in lines
    assert "~ kubernetes:yaml/v2:ConfigGroup clusterqueue-cluster-queue" in lines
    assert ("    inputs.objs[0].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
            "32 -> 64") in lines
    assert "    accelstack.slicePools[0].sliceCount: 1 -> 2" in lines
    assert not any(line.startswith("- ") for line in lines)


def test_diff_change_a_topology(tmp_path: Path) -> None:
    before = _doc(_base(), tmp_path)
    raw = _base()
    raw["slices"][0]["accelerator"] = "v5p-4x4x8"
    raw["slices"][0]["name"] = "v5p-64"  # keep the pool name: an in-place change to review
    lines = preview.diff(before, _doc(raw, tmp_path))
    assert "~ gcp:container/nodePool:NodePool v5p-64-0" in lines
    assert '    inputs.placementPolicy.tpuTopology: "4x4x2" -> "4x4x8"' not in lines
    assert '    inputs.placementPolicy.tpuTopology: "2x4x4" -> "4x4x8"' in lines
    assert "    inputs.nodeCount: 8 -> 32" in lines
    assert "- kubernetes:yaml/v2:ConfigGroup resourceflavor-v5p-64-spot" in lines
    assert "+ kubernetes:yaml/v2:ConfigGroup resourceflavor-v5p-256-spot" in lines


def test_diff_rotate_an_image(tmp_path: Path) -> None:
    before = _doc(_base(), tmp_path)
    raw = _base()
    raw["imageCache"][0]["image"] = "us-docker.pkg.dev/p/r/trainer:1.1"
    lines = preview.diff(before, _doc(raw, tmp_path))
    assert lines == [
        "~ kubernetes:apps/v1:DaemonSet daemonset-accelstack-system-image-cache-trainer",
        '    inputs.spec.template.spec.initContainers[1].image: '
        '"us-docker.pkg.dev/p/r/trainer:1.0" -> "us-docker.pkg.dev/p/r/trainer:1.1"',
        "~ outputs",
        '    accelstack.cachedImages[0]: "us-docker.pkg.dev/p/r/trainer:1.0" -> '
        '"us-docker.pkg.dev/p/r/trainer:1.1"',
    ]


def test_no_changes_no_lines(docs: dict[str, dict[str, Any]]) -> None:
    assert preview.diff(docs["a3mega"], copy.deepcopy(docs["a3mega"])) == []


# ----------------------------------------------------------------------------------
# The command


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copytree(SNAPSHOTS, tmp_path / "snapshots")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_snapshots_fails_on_an_unrecorded_change(project: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(preview.main, ["--check-snapshots"]).exit_code == 0
    stack = project / "stacks" / "Pulumi.v5e-spot.yaml"
    stack.write_text(stack.read_text().replace("      count: 2", "      count: 3"))
    result = runner.invoke(preview.main, ["--check-snapshots", "v5e-spot"])
    assert result.exit_code == 1
    assert "v5e-spot: desired state differs from snapshots/v5e-spot.yaml:" in result.output
    assert "+ gcp:container/nodePool:NodePool v5litepod-16-2" in result.output
    assert runner.invoke(preview.main, ["--update-snapshots", "v5e-spot"]).exit_code == 0
    # The example fleet reads v5e-spot as a worker: its quota follows the worker's slices.
    result = runner.invoke(preview.main, ["--check-snapshots"])
    assert result.exit_code == 1
    assert "fleet: desired state differs from snapshots/fleet.yaml:" in result.output
    assert runner.invoke(preview.main, ["--update-snapshots", "fleet"]).exit_code == 0
    assert runner.invoke(preview.main, ["--check-snapshots"]).exit_code == 0


def test_missing_snapshot_is_a_change(project: Path) -> None:
    (project / "snapshots" / "a3mega.yaml").unlink()
    result = CliRunner().invoke(preview.main, ["--check-snapshots", "a3mega"])
    assert result.exit_code == 1
    assert "a3mega: no snapshot at snapshots/a3mega.yaml (run with --update-snapshots)" in \
        result.output


def test_outputs_file_feeds_the_submitter(project: Path) -> None:
    from submit.cli.app import main as submit

    runner = CliRunner()
    result = runner.invoke(preview.main, ["v6e-training", "--quiet", "--outputs", "out.json"])
    assert result.exit_code == 0, result.output
    data = json.loads((project / "out.json").read_text())
    assert data["accelstack"]["kubeconfig"] == "[secret]"
    result = runner.invoke(submit, ["workload", "--outputs", "out.json", "create", "--workload",
                                    "pretrain", "--accelerator", "v6e-16x16", "--num-slices", "4",
                                    "--image", "us-docker.pkg.dev/p/r/maxtext:2", "--dry-run"])
    assert result.exit_code == 0, result.output
    jobset = yaml.safe_load(result.output)
    assert jobset["spec"]["replicatedJobs"][0]["replicas"] == 4
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "main"
    assert jobset["metadata"]["namespace"] == "pretraining"


def test_policy_exit_codes(project: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(preview.main, ["--policy", "--quiet"])
    assert result.exit_code == 0, result.output
    assert ("a3mega: [authorized-networks] gcp:container/cluster:Cluster a3mega: the control "
            "plane has a public endpoint open to every address; fix: list "
            "masterAuthorizedNetworks in the stack, or set privateEndpoint: true (waived: "
            "Short-lived benchmark cluster") in result.output
    stack = project / "stacks" / "Pulumi.a3mega.yaml"
    text = stack.read_text()
    stack.write_text(text[:text.index("    waivers:")])
    result = runner.invoke(preview.main, ["--policy", "--quiet", "a3mega"])
    assert result.exit_code == 3
    assert "(VIOLATION)" in result.output


# ----------------------------------------------------------------------------------
# Every policy rule, passing and failing


def _items(raw: dict[str, Any]) -> tuple[Any, list[policy.Item]]:
    ev = harness.evaluate(raw, "policy")
    items = [policy.Item(r.type, r.name, harness._plain(r.inputs)) for r in ev.resources]
    return ev.config, items


def _mutate(items: list[policy.Item], type_: str, fn: Any) -> list[policy.Item]:
    out = []
    for i in items:
        if i.type == type_:
            inputs = copy.deepcopy(dict(i.inputs))
            fn(inputs)
            i = policy.Item(i.type, i.name, inputs)
        out.append(i)
    return out


def _rules(cfg: Any, items: list[policy.Item]) -> list[str]:
    return sorted({f.rule for f in policy.violations(policy.check(cfg, items))})


@pytest.fixture(scope="module")
def passing() -> tuple[Any, list[policy.Item]]:
    raw = copy.deepcopy(MINIMAL)
    raw.update(masterAuthorizedNetworks=[{"cidr": "10.0.0.0/8"}], labels={"team": "ml"},
               policy={"production": True, "requiredLabels": ["team"]},
               imageCache=["us-docker.pkg.dev/p/r/trainer:1.0"],
               storage={"stores": [{"name": "ckpt", "kind": "gcs",
                                    "access": {"training": "read-write"}}]})
    raw["slices"] = [{"accelerator": "v5litepod-16", "capacity": "spot"}]
    return _items(raw)


CLUSTER, NODE_POOL, DS = policy.CLUSTER, policy.NODE_POOL, policy.DAEMONSET
BUCKET, GRANT = policy.BUCKET, policy.BUCKET_IAM[0]


def _set(path: str, value: Any) -> Any:
    def fn(inputs: dict[str, Any]) -> None:
        node = inputs
        keys = path.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        if value is None:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    return fn


@pytest.mark.parametrize("rule,type_,mutation", [
    ("workload-identity", CLUSTER, _set("workloadIdentityConfig", None)),
    ("workload-identity", NODE_POOL, _set("nodeConfig.workloadMetadataConfig.mode", "GCE_METADATA")),
    ("node-service-account", NODE_POOL,
     _set("nodeConfig.serviceAccount", "123456789-compute@developer.gserviceaccount.com")),
    ("node-service-account", CLUSTER, _set("nodeConfig.serviceAccount", "default")),
    ("shielded-nodes", CLUSTER, _set("enableShieldedNodes", False)),
    ("shielded-nodes", NODE_POOL, _set("nodeConfig.shieldedInstanceConfig.enableSecureBoot", False)),
    ("authorized-networks", CLUSTER, _set("masterAuthorizedNetworksConfig", None)),
    ("deletion-protection", CLUSTER, _set("deletionProtection", False)),
    ("capacity-reservation", NODE_POOL,
     _set("nodeConfig.reservationAffinity.consumeReservationType", "ANY_RESERVATION")),
    ("required-labels", NODE_POOL, _set("nodeConfig.resourceLabels", {})),
    ("public-bucket", GRANT, _set("member", "allUsers")),
    ("public-bucket", GRANT, _set("member", "allAuthenticatedUsers")),
    ("public-bucket", BUCKET, _set("publicAccessPrevention", "inherited")),
])
def test_policy_rule_fails(passing: tuple[Any, list[policy.Item]], rule: str, type_: str,
                           mutation: Any) -> None:
    cfg, items = passing
    assert _rules(cfg, items) == []
    assert _rules(cfg, _mutate(items, type_, mutation)) == [rule]


def test_public_bucket_grant_is_named(passing: tuple[Any, list[policy.Item]]) -> None:
    cfg, items = passing
    findings = policy.violations(policy.check(cfg, _mutate(items, GRANT,
                                                            _set("member", "allUsers"))))
    assert [(f.rule, f.resource, f.message) for f in findings] == [(
        "public-bucket", f"{GRANT} grant-ckpt-training-read-write",
        "grants roles/storage.objectUser on bucket test-project-test-ckpt to allUsers")]


@pytest.mark.parametrize("image", ["busybox", "busybox:latest", "gcr.io/p/app:latest"])
def test_policy_latest_image(passing: tuple[Any, list[policy.Item]], image: str) -> None:
    cfg, items = passing

    def fn(inputs: dict[str, Any]) -> None:
        inputs["spec"]["template"]["spec"]["initContainers"][1]["image"] = image
    findings = policy.violations(policy.check(cfg, _mutate(items, DS, fn)))
    assert [(f.rule, f.message) for f in findings] == [
        ("image-latest-tag", f"image {image} is referenced by the mutable tag 'latest'")]


def test_latest_tag_with_digest_is_pinned(passing: tuple[Any, list[policy.Item]]) -> None:
    cfg, items = passing

    def fn(inputs: dict[str, Any]) -> None:
        inputs["spec"]["template"]["spec"]["initContainers"][1]["image"] = (
            "busybox:latest@sha256:" + "a" * 64)
    assert _rules(cfg, _mutate(items, DS, fn)) == []


def test_policy_from_stack_config_alone() -> None:
    # Rules a stack can violate through its config, without crafting resources.
    raw = copy.deepcopy(MINIMAL)
    raw.update(deletionProtection=False, policy={"production": True,
                                                  "requiredLabels": ["cost-center"]},
               imageCache=["busybox"])
    cfg, items = _items(raw)
    assert _rules(cfg, items) == ["authorized-networks", "deletion-protection",
                                  "image-latest-tag", "required-labels"]


def test_waiver_needs_a_reason_and_shows() -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["policy"] = {"waivers": [{"rule": "authorized-networks",
                                  "reason": "lab cluster behind IAP, see INFRA-9"}]}
    cfg, items = _items(raw)
    findings = policy.check(cfg, items)
    assert [f.to_dict() for f in findings] == [{
        "rule": "authorized-networks", "resource": "gcp:container/cluster:Cluster test",
        "message": "the control plane has a public endpoint open to every address",
        "fix": "list masterAuthorizedNetworks in the stack, or set privateEndpoint: true",
        "waived": "lab cluster behind IAP, see INFRA-9"}]
    assert policy.violations(findings) == []
    from infra.config.errors import ConfigError
    for waiver, message in [
        ({"rule": "authorized-networks", "reason": "ok"},
         "policy.waivers[0].reason: a waiver needs a written reason (at least 10 characters) "
         "that reviewers can judge"),
        ({"rule": "authorised-networks", "reason": "a long enough reason"},
         "policy.waivers[0].rule: 'authorised-networks' is not a policy rule; did you mean "
         "authorized-networks? (rules: " + ", ".join(policy.RULES) + ")"),
        ({"rule": "authorized-networks"}, "policy.waivers[0].reason: is required"),
    ]:
        raw["policy"] = {"waivers": [waiver]}
        with pytest.raises(ConfigError) as e:
            parse(raw)
        assert e.value.problems == [message]


def test_diff_shows_a_waiver_that_comes(tmp_path: Path) -> None:
    """A waiver is a security decision to review: the diff (and --check-snapshots) shows a
    finding or waiver that comes or goes, with the waiver's reason."""
    raw = _base()
    raw["masterAuthorizedNetworks"] = [{"cidr": "10.0.0.0/8"}]
    raw["dnsEndpoint"] = {"k8sTokens": True}
    before = _doc(raw, tmp_path)
    raw["policy"] = {"waivers": [{"rule": "authorized-networks", "reason": "a fleet worker"}]}
    lines = preview.diff(before, _doc(raw, tmp_path))
    found = ("authorized-networks gcp:container/cluster:Cluster test: the DNS endpoint takes "
             "Kubernetes tokens from every address (authorized networks do not apply to it)")
    assert lines == ["~ policy", f"    - {found}", f"    + {found} (waived: a fleet worker)"]
