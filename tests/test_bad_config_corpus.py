"""A corpus of bad stack files, each run through `accelstack-preview` as a user would.

Every case asserts exit code 2, one line per problem naming ``FILE:LINE`` (or the file, for
file-level faults) and the key path, the bad value and what is allowed; no traceback; and
nothing declared (the program's ``build`` never runs, no desired state is printed and no
outputs file is written). The last tests check that a Pulumi secret (``secure:``) never
appears in any output, snapshot, outputs file or error message.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infra import program
from infra.preview import harness
from infra.preview import cli as preview
from infra.config.stack import parse
from infra.config.errors import ConfigError
from infra.config.secrets import SecretStr

BASE = [
    "config:",                                   # 1
    "  accelstack:project: my-ml-project",       # 2
    "  accelstack:region: us-central1",          # 3
    "  accelstack:zones: [us-central1-a]",       # 4
    "  accelstack:clusterName: test",            # 5
    "  accelstack:slices:",                      # 6
    "    - accelerator: v5litepod-16",           # 7
    "      count: 1",                            # 8
]


def stack(*extra: str, sub: dict[int, str] | None = None, drop: tuple[int, ...] = ()) -> str:
    """BASE with lines replaced (``sub``, 1-based), removed (``drop``) and appended."""
    lines = [(sub or {}).get(i + 1, line) for i, line in enumerate(BASE) if i + 1 not in drop]
    return "\n".join(lines + list(extra)) + "\n"


def many_slices(n: int) -> str:
    return stack(*[f"    - {{accelerator: v5litepod-16, name: p{i}}}" for i in range(n)])


# (id, file text, line the first problem names (None: the file only), fragments it holds)
CASES: list[tuple[str, str | bytes, int | None, list[str]]] = [
    # The file itself
    ("tab-indent", stack(sub={8: "\t  count: 1"}), 8,
     [":8:1:", "'\\t'", "never tabs"]),
    ("unclosed-bracket", stack(sub={4: "  accelstack:zones: [us-central1-a"}), 5,
     ["expected ',' or ']'", "flow sequence at line 4"]),
    ("unclosed-brace", stack(sub={7: "    - {accelerator: v5litepod-16"}), 8,
     ["expected ',' or '}'", "flow mapping at line 7"]),
    ("top-level-list", "- config: {}\n", 1, [":1:1:", "the top level is a list"]),
    ("top-level-scalar", "just text\n", 1, ["the top level is a single value"]),
    ("config-list", "config:\n  - accelstack:project: p\n", 2,
     [":2:3:", "config: is a list", "accelstack:project"]),
    ("config-scalar", "config: 3\n", 1, ["config: is a single value"]),
    ("not-utf8", b"config:\n  accelstack:project: \xff\n", None, ["is not UTF-8 text"]),
    ("duplicate-top-key", stack("  accelstack:zones: [us-central1-b]"), 9,
     ["accelstack:zones: the key is given twice (lines 4 and 9)"]),
    ("duplicate-nested-key", stack("      count: 2"), 9,
     ["slices[0].count: the key is given twice (lines 8 and 9)"]),
    ("unnamespaced-key", stack("  deletionProtection: false"), 9,
     ["deletionProtection:", "needs a namespace", "did you mean accelstack:deletionProtection?"]),
    ("unnamespaced-typo", stack("  clustername: other"), 9,
     ["clustername:", "did you mean accelstack:clusterName?"]),
    ("unknown-namespace", stack("  acelstack:labels: {team: a}"), 9,
     ["acelstack:labels:", "'acelstack' namespace", "did you mean accelstack:labels?"]),
    ("namespace-without-key", stack("  'accelstack:': 1"), 9,
     ["accelstack:: names no key; write <namespace>:<name> such as accelstack:project"]),
    ("two-documents", stack("---", "config: {}"), 9, ["expected a single document"]),
    ("unknown-tag", stack("  accelstack:queues: !Ref other-stack"), 9,
     [":9:22: could not determine a constructor for the tag '!Ref'"]),
    ("recursive-alias", stack("  accelstack:labels: &a [*a]"), 9,
     ["labels[0]: contains itself (a YAML alias to an enclosing anchor)"]),
    ("secret-not-supported", stack("  accelstack:labels:", "    team:",
                                   "      secure: v1:AAAACIPHERTEXT"), 11,
     ["labels.team: a Pulumi secret is not supported for this key",
      "supported for: masterAuthorizedNetworks"]),
    # Keys and values
    ("unknown-key", stack("  accelstack:deletionProtecton: false"), 9,
     ["deletionProtecton: unknown key; did you mean deletionProtection?"]),
    ("missing-project", stack(drop=(2,)), 1, ["project: is required"]),
    ("bad-project", stack(sub={2: "  accelstack:project: My_Project"}), 2,
     ["project: 'My_Project' is not a GCP project ID"]),
    ("bad-region", stack(sub={3: "  accelstack:region: uscentral"}), 3,
     ["region: 'uscentral' is not a GCP region such as us-central1"]),
    ("zone-outside-region", stack(sub={4: "  accelstack:zones: [us-east1-b]"}), 4,
     ["zones[0]: 'us-east1-b' is not in region 'us-central1'"]),
    ("no-zones", stack(sub={4: "  accelstack:zones: []"}), 4, ["zones: must list at least one"]),
    ("bad-cluster-name", stack(sub={5: "  accelstack:clusterName: Test_1"}), 5,
     ["clusterName: 'Test_1' is not a valid GKE name"]),
    ("bad-release-channel", stack("  accelstack:releaseChannel: NIGHTLY"), 9,
     ["releaseChannel: 'NIGHTLY' is not a release channel; allowed: RAPID, REGULAR"]),
    ("bad-gke-version", stack("  accelstack:gkeVersion: latest"), 9,
     ["gkeVersion: 'latest' is not a GKE version"]),
    ("bad-maintenance", stack("  accelstack:maintenanceWindow:", "    start: tomorrow",
                              "    end: '2026-01-03T09:00:00Z'", "    recurrence: FREQ=DAILY"), 10,
     ["maintenanceWindow.start: 'tomorrow' is not an RFC 3339 time"]),
    ("bad-label", stack("  accelstack:labels: {Team: a}"), 9,
     ["labels.Team: is not a GCP label key"]),
    ("overlapping-cidrs", stack("  accelstack:network:", "    podsCidr: 10.0.0.0/14"), 10,
     ["network.podsCidr", "overlaps network.nodesCidr", "must be disjoint"]),
    ("master-not-28", stack("  accelstack:network:", "    masterCidr: 172.16.0.0/24"), 10,
     ["network.masterCidr: '172.16.0.0/24' must be a /28"]),
    ("public-cidr", stack("  accelstack:network:", "    nodesCidr: 8.8.0.0/20"), 10,
     ["network.nodesCidr: '8.8.0.0/20' is not inside a private range"]),
    ("gpu-cidr-too-small", stack("  accelstack:network:", "    gpuNetworksCidr: 192.168.0.0/22",
                                 sub={7: "    - accelerator: h100-mega-80gb-8"}), 10,
     ["network.gpuNetworksCidr: '192.168.0.0/22' holds 4 /24 subnets", "need 8"]),
    ("pods-range-too-small", stack("  accelstack:network:", "    podsCidr: 10.16.0.0/24"), 10,
     ["network.podsCidr: '10.16.0.0/24' holds 256 pod addresses",
      "system pool: 3 x /24", "v5litepod-16: 4 x /27", "use a /22 or larger"]),
    ("nodes-subnet-too-small", many_slices(2000), 1,
     ["network.nodesCidr: '10.0.0.0/20' holds 4,092 node addresses",
      "declares 8,007 nodes", "use a /19 or larger"]),
    # Slice pools
    ("bad-accelerator", stack(sub={7: "    - accelerator: v5litepod-12"}), 7,
     ["slices[0].accelerator: 'v5litepod-12' is not a TPU v5e slice; did you mean"]),
    ("count-zero", stack(sub={8: "      count: 0"}), 8, ["slices[0].count: 0 is below 1"]),
    ("count-not-a-number", stack(sub={8: "      count: two"}), 8,
     ["slices[0].count: 'two' is not an integer"]),
    ("count-over-cluster-limit", stack(sub={8: "      count: 100000"}), 8,
     ["slices[0].count: 100000 x v5litepod-16 (4 VMs each) is 400,000 nodes",
      "at most 15,000 nodes in a cluster"]),
    ("count-over-pool-zone-limit", stack(sub={7: "    - accelerator: n2-standard-32-1",
                                              8: "      count: 1001"}), 8,
     ["slices[0].count: 1001 x n2-standard-32-1 is 1,001 VMs in one node pool over 1 zone(s)",
      "1,000 nodes per node pool per zone"]),
    ("total-over-cluster-limit", stack(*[f"    - {{accelerator: v6e-256, count: 60, name: q{i}}}"
                                         for i in range(4)]), 6,
     ["slices: the stack declares 15,367 nodes", "at most 15,000 nodes in a cluster"]),
    ("duplicate-pool-name", stack("      name: x", "    - {accelerator: v5litepod-4, name: x}"),
     10, ["slices[1].name: 'x' is already the name of slices[0]"]),
    ("duplicate-node-pool-name", stack("    - accelerator: v5litepod-16"), 9,
     ["slices[1].name: node pool name 'v5litepod-16-0' is already used by slices[0]"]),
    ("system-pool-name", stack("      name: system", sub={7: "    - accelerator: v5litepod-4"}), 9,
     ["slices[0].name: 'system' is the name of the stack's system node pool"]),
    ("bad-capacity-mode", stack("      capacity: preemptible"), 9,
     ["slices[0].capacity.mode: 'preemptible' is not a capacity mode",
      "allowed: on-demand, spot, reservation, flex-start, queued"]),
    ("flex-start-v4", stack("      capacity: flex-start", sub={7: "    - accelerator: v4-8"}), 9,
     ["slices[0].capacity.mode: flex-start does not support v4-8",
      "TPU v5e, v5p, v6e only: https://cloud.google.com/kubernetes-engine/docs/concepts/dws"]),
    ("dranet-on-v5e", stack("      dranet: true"), 9,
     ["slices[0].dranet: GKE managed DRANET is offered for TPU v6e pools only, not "
      "v5litepod-16"]),
    ("dranet-old-gke", stack("      dranet: true", "  accelstack:gkeVersion: 1.33.5-gke.1",
                             sub={7: "    - accelerator: v6e-16"}), 9,
     ["slices[0].dranet: GKE managed DRANET needs GKE 1.34.1-gke.1829001 or later",
      "gkeVersion is 1.33.5-gke.1"]),
    ("spot-with-reservation", stack("      capacity: {mode: spot, reservation: r1}"), 9,
     ["slices[0].capacity.reservation: spot pools do not consume reservations"]),
    ("compact-two-zones", stack("      zones: [us-central1-a, us-central1-b]",
                                sub={4: "  accelstack:zones: [us-central1-a, us-central1-b]"}), 9,
     ["slices[0].zones: us-central1-a, us-central1-b: compact placement needs a single zone"]),
    ("min-count-multi-host", stack("      minCount: 1"), 9,
     ["slices[0].minCount: multi-host TPU slices (v5litepod-16) are created whole"]),
    ("bad-disk-type", stack("      diskType: ssd"), 9,
     ["slices[0].diskType: 'ssd' is not a boot disk type; allowed: pd-balanced"]),
    ("disk-type-the-machine-cannot-boot", stack("      diskType: pd-balanced",
                                                sub={7: "    - accelerator: v6e-16"}), 9,
     ["slices[0].diskType: 'pd-balanced': ct6e-standard-4t (v6e-16) cannot boot from it; "
      "allowed: hyperdisk-balanced"]),
    ("a4x-below-1.34", stack(
        "      capacity: {mode: reservation, reservation: r}",
        '  accelstack:gkeVersion: "1.33"', sub={7: "    - accelerator: gb200-4"}), 7,
     ["slices[0].accelerator: A4X (GB200) with NVIDIA's DRA driver", "needs GKE 1.34 or later",
      "gkeVersion is 1.33"]),
    ("max-pods-too-low", stack("      maxPodsPerNode: 7"), 9,
     ["slices[0].maxPodsPerNode: 7 is outside 8-110"]),
    ("max-pods-too-high", stack("      maxPodsPerNode: 256"), 9,
     ["slices[0].maxPodsPerNode: 256 is outside 8-110"]),
    ("cpu-pool-size", stack("    - accelerator: n2-standard-30-2"), 9,
     ["slices[1].accelerator: 'n2-standard-30-2' is not a CPU pool",
      "n2-standard comes with 2, 4, 8, 16, 32", "did you mean n2-standard-16 or n2-standard-32?"]),
    ("no-slices", stack(drop=(6, 7, 8)), 1,
     ["slices: declares no slice pools, no slice classes and nodeAutoProvisioning is off"]),
    # Slice classes (line 9 is `accelstack:sliceClasses:`, 10 its name, 11 on its keys)
    ("class-unknown-shape", stack("  accelstack:sliceClasses:",
                                  "    - name: burst",
                                  "      shapes: [v5litepod-17]",
                                  "      capacity: [spot]",
                                  "      limits: {slices: 2}"), 11,
     ["sliceClasses[0].shapes[0]: 'v5litepod-17' is not a TPU v5e slice; did you mean "
      "v5litepod-16"]),
    ("class-capacity-typo", stack("  accelstack:sliceClasses:",
                                  "    - name: burst",
                                  "      shapes: [v5litepod-16]",
                                  "      capacity: [spott]",
                                  "      limits: {slices: 2}"), 12,
     ["sliceClasses[0].capacity[0].mode: 'spott' is not a capacity mode of a class; did you "
      "mean spot?"]),
    ("class-limit-below-a-slice", stack("  accelstack:sliceClasses:",
                                        "    - name: burst",
                                        "      shapes: [v5litepod-16]",
                                        "      capacity: [spot]",
                                        "      limits: {chips: 8}"), 13,
     ["sliceClasses[0].limits.chips: 8 is below one slice of v5litepod-16 (16 chips)"]),
    ("class-queued", stack("  accelstack:sliceClasses:",
                           "    - name: burst",
                           "      shapes: [v5litepod-16]",
                           "      capacity: [queued]",
                           "      limits: {slices: 1}"), 12,
     ["queued provisioning is a fixed-pool mode"]),
    ("class-key-typo", stack("  accelstack:sliceClasses:",
                             "    - name: burst",
                             "      shape: [v5litepod-16]"), 11,
     ["sliceClasses[0].shape: unknown key; did you mean shapes?"]),
    # System pool
    ("system-machine-typo", stack("  accelstack:systemPool: {machineType: e2-standrd-8}"), 9,
     ["systemPool.machineType: 'e2-standrd-8' is not a predefined machine type; did you mean "
      "e2-standard-8?"]),
    ("system-machine-size", stack("  accelstack:systemPool: {machineType: n2-standard-30}"), 9,
     ["systemPool.machineType: 'n2-standard-30' is not a machine type: n2-standard comes with",
      "did you mean n2-standard-16 or n2-standard-32?"]),
    ("system-max-nodes", stack("  accelstack:systemPool: {maxNodes: 1001}"), 9,
     ["systemPool.maxNodes: 1001 is above GKE's 1,000 nodes per node pool per zone"]),
    ("system-min-nodes", stack("  accelstack:systemPool: {minNodes: 0}"), 9,
     ["systemPool.minNodes: 0 is below 1"]),
    # Auto-provisioning, add-ons, queues, image cache, policy
    ("nap-unknown-accelerator", stack("  accelstack:nodeAutoProvisioning:",
                                      "    accelerators: {nvidia-h100: 8}"), 10,
     ["nodeAutoProvisioning.accelerators.nvidia-h100: 'nvidia-h100' is not a GKE accelerator"]),
    ("bad-addon-version", stack("  accelstack:addons: {kueueVersion: '0.19'}"), 9,
     ["addons.kueueVersion: '0.19' is not a release version such as v0.19.2"]),
    ("reserved-namespace", stack("  accelstack:queues: {namespace: kube-system}"), 9,
     ["queues.namespace: 'kube-system' is reserved"]),
    ("quota-names-no-pool", stack("  accelstack:queues:", "    teams:",
                                  "      - {name: a, quota: {v5p-8: 4}}"), 11,
     ["queues.teams[0].quota.v5p-8: names no slice pool of this stack"]),
    ("bad-image", stack("  accelstack:imageCache: ['Not An Image']"), 9,
     ["imageCache[0].image"]),
    # Pathways
    ("pathways-no-scratch", stack("  accelstack:pathways: {enabled: true}"), 9,
     ["pathways.scratch: is required: a Cloud Storage location such as gs://BUCKET/pathways"]),
    ("pathways-bad-scratch", stack("  accelstack:pathways: {scratch: /tmp/pw}"), 9,
     ["pathways.scratch: '/tmp/pw' is not a Cloud Storage location (gs://BUCKET or "
      "gs://BUCKET/PREFIX, or store:NAME[/PREFIX] for a Cloud Storage store of the storage "
      "section)"]),
    ("pathways-scratch-unknown-store", stack("  accelstack:pathways: {scratch: 'store:ckpt/pw'}"),
     9, ["pathways.scratch: 'store:ckpt/pw': no store 'ckpt' in the storage section; its "
         "stores: none"]),
    ("pathways-latest-image", stack("  accelstack:pathways:", "    scratch: gs://b-pw/s",
                                    "    images: {proxy: 'us-docker.pkg.dev/p/r/proxy_server:latest'}"),
     11, ["pathways.images.proxy: 'us-docker.pkg.dev/p/r/proxy_server:latest' uses :latest"]),
    ("pathways-untagged-image", stack("  accelstack:pathways:", "    scratch: gs://b-pw/s",
                                      "    images: {server: us-docker.pkg.dev/p/r/server}"),
     11, ["pathways.images.server: 'us-docker.pkg.dev/p/r/server' has no tag"]),
    ("pathways-small-head", stack("  accelstack:pathways:", "    scratch: gs://b-pw/s",
                                  "    headPool: {machineType: n2-standard-16}"), 11,
     ["pathways.headPool.machineType: 'n2-standard-16' has 16 vCPUs and 64 GB; the Pathways "
      "head needs at least 49 vCPUs and 250 GB"]),
    ("pathways-head-name-clash", stack("  accelstack:pathways:", "    scratch: gs://b-pw/s",
                                       "    headPool: {name: v5litepod-16}"), 11,
     ["pathways.headPool.name: 'v5litepod-16' is already a node pool of the stack"]),
    ("pathways-head-min-nodes", stack("  accelstack:pathways:", "    scratch: gs://b-pw/s",
                                      "    headPool: {minNodes: 3, maxNodes: 2}"), 11,
     ["pathways.headPool.minNodes: 3 is outside 0-2 (maxNodes)"]),
    ("pathways-single-host-only", stack("  accelstack:pathways: {scratch: gs://b-pw/s}",
                                        sub={7: "    - accelerator: v5litepod-8-1vm"}), 9,
     ["pathways.enabled: Pathways runs its workers on multi-host TPU slices"]),
    ("unknown-policy-rule", stack("  accelstack:policy:", "    waivers:",
                                  "      - {rule: no-such-rule, reason: a long enough reason}"), 11,
     ["policy.waivers[0].rule: 'no-such-rule' is not a policy rule"]),
    # Observability (docs/observability.md)
    ("observability-package-floor", stack("  accelstack:gkeVersion: '1.31.5-gke.1000000'",
                                          "  accelstack:observability:",
                                          "    metricPackages: [POD, JOBSET]"), 11,
     ["observability.metricPackages[1]: JOBSET needs GKE 1.32.1-gke.1357001 or later; "
      "gkeVersion is 1.31.5-gke.1000000"]),
    ("observability-unknown-package", stack("  accelstack:observability:",
                                            "    metricPackages: [GPU]"), 10,
     ["observability.metricPackages[0]: 'GPU' is not a GKE metric package; allowed: "
      "SYSTEM_COMPONENTS, APISERVER,"]),
    ("observability-webhook-http", stack("  accelstack:observability:",
                                         "    notificationChannels:",
                                         "      - webhook: http://hooks.example.com/a"), 11,
     ["observability.notificationChannels[0].webhook: 'http://hooks.example.com/a' is not "
      "an https:// URL"]),
    ("observability-threshold", stack("  accelstack:observability:", "    alerts:",
                                      "      pendingMinutes: 2000"), 11,
     ["observability.alerts.pendingMinutes: 2000 is not between 5 and 1440"]),
]


@pytest.fixture
def no_build(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Records any call of the program's build: a bad stack must never reach it."""
    calls: list[Any] = []
    monkeypatch.setattr(program, "build", lambda *a, **k: calls.append(a) or {})
    return calls


def _run(tmp_path: Path, text: str | bytes, name: str = "Pulumi.bad.yaml",
         *args: str) -> tuple[Any, Path]:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    outputs = tmp_path / "out.json"
    result = CliRunner().invoke(preview.main, [str(path), "--outputs", str(outputs), *args])
    return result, path


@pytest.mark.parametrize("text,line,fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_stack_file(tmp_path: Path, no_build: list[Any], text: str | bytes, line: int | None,
                        fragments: list[str]) -> None:
    result, path = _run(tmp_path, text)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""  # no desired state printed
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert lines and all(ln.startswith(f"{path}:") for ln in lines), lines
    first = lines[0]
    where = f"{path}:{line}:" if line is not None else f"{path}: "
    assert first.startswith(where), first
    for fragment in fragments:
        assert fragment in first, (fragment, first)
    assert not no_build
    assert not (tmp_path / "out.json").exists()


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 45


def test_one_bad_accelerator_is_one_error(tmp_path: Path, no_build: list[Any]) -> None:
    text = stack("  accelstack:queues:", "    teams:", "      - {name: a, quota: {v5litepod-99: 4}}",
                 "  accelstack:imageCache:", "    - {image: 'gcr.io/p/i:1', slicePools: [v5litepod-99]}",
                 sub={7: "    - accelerator: v5litepod-99"})
    result, path = _run(tmp_path, text)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{path}:7: slices[0].accelerator: 'v5litepod-99' is not a TPU v5e slice; did you mean "
        "v5litepod-64 or v5litepod-128?"]


@pytest.mark.parametrize("sub,message", [
    ({7: "    - accelerator: v5litepod-99"}, "7: slices[0].accelerator: 'v5litepod-99' is not "
     "a TPU v5e slice; did you mean v5litepod-64 or v5litepod-128?"),
    ({7: "    - {accelerator: v5litepod-16, count: 1, capacity: {mode: spto}}", 8: ""},
     "7: slices[0].capacity.mode: 'spto' is not a capacity mode; did you mean spot? (allowed: "
     "on-demand, spot, reservation, flex-start, queued)"),
])
def test_a_bad_pool_is_one_error_with_an_image_cache(tmp_path: Path, no_build: list[Any],
                                                     sub: dict[int, str], message: str) -> None:
    # The image cache without slicePools goes on every accelerator pool: with the only pool
    # unparsed it selects none, which is the pool's error, not a second one (issue 26).
    text = stack("  accelstack:imageCache:", "    - gcr.io/p/i:1", "    - {image: 'gcr.io/p/j:1'}",
                 sub=sub)
    result, path = _run(tmp_path, text)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"{path}:{message}"]


def test_every_problem_gets_a_line(tmp_path: Path, no_build: list[Any]) -> None:
    text = stack("  deletionProtection: false", "  accelstack:zones: [us-central1-b]")
    result, path = _run(tmp_path, text)
    assert result.exit_code == 2
    assert [ln.split(": ", 1)[0] for ln in result.stderr.splitlines()] == [
        f"{path}:9", f"{path}:10"]


@pytest.mark.parametrize("name", ["stack.yaml", "Pulumi.yaml", "Pulumi..yaml", "pulumi.dev.yaml"])
def test_stack_file_name(tmp_path: Path, no_build: list[Any], name: str) -> None:
    result, path = _run(tmp_path, stack(), name)
    assert result.exit_code == 2
    assert result.stderr == (f"{path}: a stack file is named Pulumi.<stack>.yaml (the name "
                             f"Pulumi looks for in stackConfigDir), not {name!r}\n")


def test_provider_namespaces_are_left_to_pulumi(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, stack("  gcp:project: my-ml-project", "  pulumi:tags: {a: b}"),
                     "Pulumi.ok.yaml", "--quiet")
    assert result.exit_code == 0, result.output


def test_yaml_anchors_and_merge_keys(tmp_path: Path) -> None:
    text = stack("      labels: &l {team: a}",
                 "    - {<<: {accelerator: v5litepod-4}, name: small, labels: {<<: *l, env: x}}")
    result, _ = _run(tmp_path, text, "Pulumi.ok.yaml", "--quiet")
    assert result.exit_code == 0, result.output
    raw = harness.read_stack_file(tmp_path / "Pulumi.ok.yaml")
    assert raw["slices"][1] == {"accelerator": "v5litepod-4", "name": "small",
                                "labels": {"team": "a", "env": "x"}}


def test_huge_counts_fail_at_once(tmp_path: Path, no_build: list[Any]) -> None:
    start = time.monotonic()
    result, _ = _run(tmp_path, many_slices(2000))
    result2, _ = _run(tmp_path, stack(sub={8: "      count: 100000"}))
    assert result.exit_code == result2.exit_code == 2
    # Not a timing test of the code's speed: a guard against a hang (the preview of 2,000
    # declared slices took 40 s before anything said no).
    assert time.monotonic() - start < 30


# ----------------------------------------------------------------------------------
# Pulumi secrets: accepted for masterAuthorizedNetworks, masked, never printed

CIPHER = "v1:Zm9vYmFyCIPHERTEXT0123456789"
SECRET_STACK = stack("  accelstack:masterAuthorizedNetworks:", "    - cidr:",
                     f"        secure: {CIPHER}", "      name: office")


def _secret_free(text: str) -> None:
    assert CIPHER not in text and "Zm9vYmFy" not in text
    assert "192.0.2.0/24" not in text  # the offline stand-in is masked too


def test_secure_value_never_appears(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.sec.yaml").write_text(SECRET_STACK)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(preview.main, ["sec", "--outputs", "out.json"])
    assert result.exit_code == 0, result.output
    _secret_free(result.output)
    assert "[secret]" in result.output
    _secret_free((tmp_path / "out.json").read_text())
    assert runner.invoke(preview.main, ["--update-snapshots"]).exit_code == 0
    snapshot = (tmp_path / "snapshots" / "sec.yaml").read_text()
    _secret_free(snapshot)
    assert "masterAuthorizedNetworksConfig: '[secret]'" in snapshot
    result = runner.invoke(preview.main, ["--diff", "sec"])
    _secret_free(result.output)
    # An error elsewhere in the same file: the secret is still not printed.
    (tmp_path / "stacks" / "Pulumi.sec.yaml").write_text(
        SECRET_STACK.replace("count: 1", "count: 0"))
    result = runner.invoke(preview.main, ["sec"])
    assert result.exit_code == 2
    _secret_free(result.output)


def test_secret_value_is_masked_in_errors() -> None:
    raw = {"project": "my-ml-project", "region": "us-central1", "zones": ["us-central1-a"],
           "clusterName": "test", "slices": [{"accelerator": "v5litepod-16"}],
           "masterAuthorizedNetworks": [{"cidr": SecretStr("10.1.2.3/33"),
                                         "name": SecretStr("vpn-of-team-x")}]}
    with pytest.raises(ConfigError) as info:
        parse(raw, {"masterAuthorizedNetworks"})
    assert info.value.problems == ["masterAuthorizedNetworks[0].cidr: [secret] is not a CIDR block"]


def test_secret_value_is_a_secret_input() -> None:
    raw = {"project": "my-ml-project", "region": "us-central1", "zones": ["us-central1-a"],
           "clusterName": "test", "slices": [{"accelerator": "v5litepod-16"}],
           "masterAuthorizedNetworks": [{"cidr": SecretStr("198.51.100.0/24"), "name": "vpn"}]}
    ev = harness.evaluate(raw, "sec", {"masterAuthorizedNetworks"})
    cluster = ev.named("test", "gcp:container/cluster:Cluster")
    networks = cluster.inputs["masterAuthorizedNetworksConfig"]
    assert isinstance(networks, harness.Secret)
    assert networks.value == {"cidrBlocks": [{"cidrBlock": "198.51.100.0/24",
                                              "displayName": "vpn"}]}
    assert "198.51.100.0" not in repr(ev.resources) + json.dumps(harness.plain_outputs(ev))


def test_program_reads_secret_keys_from_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({
        "accelstack:project": "my-ml-project",
        "accelstack:masterAuthorizedNetworks": json.dumps([{"cidr": "198.51.100.0/24"}]),
        "gcp:project": "other"}))
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", json.dumps(
        ["accelstack:masterAuthorizedNetworks"]))
    raw, secret_keys = program.raw_config()
    assert secret_keys == {"masterAuthorizedNetworks"}
    assert raw["project"] == "my-ml-project" and "gcp:project" not in raw
    cidr = raw["masterAuthorizedNetworks"][0]["cidr"]
    assert cidr == "198.51.100.0/24" and repr(cidr) == "[secret]"


def test_program_points_errors_at_the_stack_file(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: accelstack\nruntime: python\n"
                                          "stackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(stack(sub={8: "      count: 0"}))
    locate = program.stack_file_locator("dev", tmp_path)
    assert locate is not None
    raw = harness.read_stack_file(tmp_path / "stacks" / "Pulumi.dev.yaml")
    with pytest.raises(program.StackConfigError) as info:
        program.load_config(raw, (), locate)
    assert info.value.problems == [
        f"{os.path.join('stacks', 'Pulumi.dev.yaml')}:8: slices[0].count: 0 is below 1"]
    assert program.stack_file_locator("missing", tmp_path) is None
