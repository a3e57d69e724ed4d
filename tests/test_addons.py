"""The cluster add-ons under the SDK's mock engine: installs, ordering, Kueue objects, the
image cache, secondary boot disks and the outputs contract, for every example stack and
for inline configs that exercise what the examples do not (queued capacity, NAP, mixed
pools, teams, CPU pools).

Expected values are written out or computed here from the raw config and the catalog, not
taken from the code under test, so a wrong number fails. Where a whole-program check
compares with ``kueue_spec``/``image_cache_spec``, it proves the program declares exactly
what the pure renderers produce; the renderers' numbers are pinned by the other tests.

How the harness records things that matter here:
- the Kubernetes provider is recorded like any resource (type ``pulumi:providers:kubernetes``);
  provider inputs reach the engine as strings, so ``enableServerSideApply`` is ``"true"``.
  Which provider a resource uses is not recorded, so that is not checked.
- a component's ``depends_on`` reaches the engine as the URNs of its custom children: the
  add-ons' dependency on the system pool component shows as the system NodePool's URN.
- numbers come back from the mock engine as floats (4.0 == 4).
"""

from __future__ import annotations

import math

import copy
from collections import Counter
from typing import Any

import pytest
import yaml

import schema
import stack_fixtures
from conftest import MINIMAL, STACK_FILES, evaluate_shipped
from infra.specs import addons as addons_spec
from infra.catalog import tables as catalog
from infra.contract import outputs as contract
from infra.preview import harness
from infra.specs import image_cache as image_cache_spec
from infra.specs import kueue as kueue_spec
from infra.config import stack as config_mod
from infra.specs import dra_driver as dra_driver_spec
from infra.catalog import pod_resources
from infra.preview.harness import Evaluation, Resource
from infra.program import StackConfigError

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
NAMESPACE = "kubernetes:core/v1:Namespace"
PROVIDER = "pulumi:providers:kubernetes"
ADDONS = "accelstack:addons:ClusterAddons"
SYSTEM = "accelstack:nodepool:SystemNodePool"
NODE_POOL = "gcp:container/nodePool:NodePool"

API = "kueue.x-k8s.io/v1beta2"
TPU = "google.com/tpu"
GPU = "nvidia.com/gpu"
TPU_TOL = {"key": "google.com/tpu", "operator": "Equal", "value": "present",
           "effect": "NoSchedule"}
GPU_TOL = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
           "effect": "NoSchedule"}
SPOT_TOL = {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true",
            "effect": "NoSchedule"}
QUEUED_TOL = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true",
              "effect": "NoSchedule"}
TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
TPU_ACCEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPO = "cloud.google.com/gke-tpu-topology"
GPU_ACCEL = "cloud.google.com/gke-accelerator"
POOL = "accelstack.dev/slice-pool"
CAP = "accelstack.dev/capacity"
PRIORITIES = {"very-low": 100, "low": 250, "medium": 500, "high": 750, "very-high": 1000}
SOLO = {"withinClusterQueue": "LowerPriority"}
COHORT = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
          "borrowWithinCohort": {"policy": "LowerPriority"}}
DIGEST = "sha256:" + "0123456789abcdef" * 4

# Inline stacks: what the example stacks do not cover.
INLINE: dict[str, dict[str, Any]] = {
    "queued-and-spot": {"slices": [
        {"accelerator": "v5p-64", "count": 2, "capacity": {"mode": "queued"}},
        {"accelerator": "v5litepod-16", "count": 2, "capacity": "spot"}],
        "queues": {"teams": [{"name": "research", "quota": {"v5p-64": 32}}]}},
    "tpu-gpu-cpu-teams": {
        "zones": ["us-central1-a", "us-central1-b"],
        "systemPool": {"maxNodes": 5},
        "slices": [{"name": "cpu", "accelerator": "n2-standard-32-4", "count": 2},
                   {"name": "inference", "accelerator": "l4-1", "count": 4,
                    "capacity": "flex-start"},
                   {"name": "batch", "accelerator": "v5litepod-16", "count": 1,
                    "secondaryBootDisk": "global/images/trainer-cache"}],
        "addons": {"jobsetVersion": "v0.13.0", "kueueVersion": "v0.20.1"},
        "queues": {"namespace": "ml", "localQueue": "jobs", "clusterQueue": "shared",
                   "cohort": "org",
                   "teams": [{"name": "etl", "quota": {"cpu": 64},
                              "borrowingLimit": {"cpu": 32}},
                             {"name": "evals", "namespace": "eval-jobs",
                              "quota": {"inference": 2, "batch": 8}}]},
        "imageCache": [f"us-docker.pkg.dev/p/r/trainer:v1@{DIGEST}",
                       {"name": "eval", "image": "localhost:5000/eval",
                        "slicePools": ["inference"]}]},
    "nap": {"slices": [], "nodeAutoProvisioning": {
        "accelerators": {"tpu-v6e-slice": 256, "nvidia-l4": 16}}},
    "large": {"zones": ["us-central1-a", "us-central1-b"], "systemPool": {"maxNodes": 6},
              "slices": [{"accelerator": "v6e-256", "count": 10}],
              "queues": {"topologyAwareScheduling": "on"}},
}
CASES = [p.name for p in STACK_FILES] + list(INLINE)


def _raw(case: str) -> dict[str, Any]:
    if case in INLINE:
        raw = copy.deepcopy(MINIMAL)
        raw.update(copy.deepcopy(INLINE[case]))
        return raw
    [path] = [p for p in STACK_FILES if p.name == case]
    return harness.read_stack_file(path)


def _evaluate(case: str) -> Evaluation:
    if case in INLINE:
        return harness.evaluate(_raw(case), "test")
    [path] = [p for p in STACK_FILES if p.name == case]
    return evaluate_shipped(path)


def _ev(**overrides: Any) -> Evaluation:
    raw = copy.deepcopy(MINIMAL)
    raw.update(overrides)
    return harness.evaluate(raw, "test")


@pytest.fixture(scope="module", params=CASES)
def case(request: pytest.FixtureRequest) -> tuple[dict[str, Any], Evaluation]:
    return _raw(request.param), _evaluate(request.param)


def _kueue_release(ev: Evaluation) -> Resource:
    # A4X stacks install a second chart (NVIDIA's DRA driver); Kueue's is named kueue.
    return ev.named("kueue", RELEASE)


def _one(ev: Evaluation, type_: str) -> Resource:
    found = ev.of_type(type_)
    assert len(found) == 1, f"{len(found)} resources of type {type_}"
    return found[0]


def _group_name(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    ns = f"{meta['namespace']}-" if "namespace" in meta else ""
    return f"{obj['kind'].lower()}-{ns}{meta['name']}"


def _kueue_groups(ev: Evaluation) -> list[Resource]:
    """The ConfigGroups that apply Kueue objects (others apply e.g. GKE network objects)."""
    return [r for r in ev.of_type(CONFIG_GROUP)
            if any(o["apiVersion"].startswith("kueue.x-k8s.io/")
                   for o in harness._plain(r.inputs)["objs"])]


def _groups(ev: Evaluation) -> dict[str, dict[str, Any]]:
    """ConfigGroup name -> the one Kueue object it applies."""
    out = {}
    for r in _kueue_groups(ev):
        objs = harness._plain(r.inputs)["objs"]
        assert len(objs) == 1, f"{r.name} applies {len(objs)} objects"
        out[r.name] = objs[0]
    return out


def _jobset(ev: Evaluation) -> Resource:
    """The JobSet release manifest: the one ConfigFile that applies a JobSet release."""
    found = [r for r in ev.of_type(CONFIG_FILE)
             if "github.com/kubernetes-sigs/jobset/" in str(r.inputs.get("file"))]
    assert len(found) == 1, f"{len(found)} JobSet manifests"
    return found[0]


def _kind(ev: Evaluation, kind: str) -> dict[str, dict[str, Any]]:
    """Objects of one kind by name (namespace/name for namespaced kinds)."""
    out = {}
    for obj in _groups(ev).values():
        if obj["kind"] == kind:
            meta = obj["metadata"]
            key = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
            out[key] = obj
    return out


def _daemonsets(ev: Evaluation) -> dict[str, dict[str, Any]]:
    return {r.name: harness._plain(r.inputs) for r in ev.of_type(DAEMONSET)}


def _node_count(raw: dict[str, Any]) -> int:
    """The most nodes a stack holds, from its raw config: system maxNodes x zones plus
    count x VMs per slice for every slice pool."""
    system = (raw.get("systemPool") or {}).get("maxNodes", 3) * len(raw["zones"])
    return system + sum(p.get("count", 1) * catalog.resolve(p["accelerator"]).vms_per_slice
                        for p in raw.get("slices") or [])


def _queues(raw: dict[str, Any]) -> dict[str, Any]:
    return raw.get("queues") or {}


def _share_of(accel: str, nodes: int, frac: float = 1.0) -> tuple[str | int, str]:
    """cpu and memory quota of ``nodes`` VMs of an accelerator at a fraction (pod share
    times nodes; the share itself is pinned in test_pod_share_*)."""
    share = pod_resources.pod_share(catalog.resolve(accel).machine_type)
    assert share is not None
    return (pod_resources.cpu_quantity(int(share.cpu_milli * nodes * frac)),
            f"{int(share.memory_mi * nodes * frac)}Mi")


def _fl(name: str, covered: list[str], amounts: dict[str, Any],
        borrow: dict[str, Any] | None = None) -> dict[str, Any]:
    """One flavor of the single resource group; resources not in ``amounts`` are 0."""
    res = []
    for r in covered:
        entry: dict[str, Any] = {"name": r, "nominalQuota": amounts.get(r, 0)}
        if borrow is not None:
            entry["borrowingLimit"] = borrow.get(r, 0)
        res.append(entry)
    return {"name": name, "resources": res}


def _acc(name: str, covered: list[str], resource: str, chips: int, accel: str, nodes: int,
         frac: float = 1.0, borrow: tuple[int, float] | None = None,
         devices: dict[str, int] | None = None) -> dict[str, Any]:
    """An accelerator flavor: its chips, and the pod share of CPU and memory of its nodes
    (scaled by ``frac``; ``borrow`` is (chips, fraction)); ``devices``: DRA device class ->
    devices of the whole flavor, scaled the same way (rounded up)."""
    cpu, mem = _share_of(accel, nodes, frac)
    dev = {c: math.ceil(n * frac) for c, n in (devices or {}).items()}
    b = None
    if borrow is not None:
        b_cpu, b_mem = _share_of(accel, nodes, borrow[1])
        b = {resource: borrow[0], "cpu": b_cpu, "memory": b_mem,
             **{c: math.ceil(n * borrow[1]) for c, n in (devices or {}).items()}}
    return _fl(name, covered, {resource: chips, "cpu": cpu, "memory": mem, **dev}, b)


def _group(covered: list[str], *flavors: dict[str, Any]) -> dict[str, Any]:
    return {"coveredResources": covered, "flavors": list(flavors)}


def _cq(name: str, namespace: str, groups: list[dict[str, Any]],
        cohort: str | None = None, checks: list[dict[str, Any]] | None = None
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": groups,
        "preemption": COHORT if cohort else SOLO,
    }
    if cohort:
        spec["cohortName"] = cohort
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": spec}


def _lq(name: str, namespace: str, cluster_queue: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue}}


def _rf(name: str, labels: dict[str, str], tolerations: list[dict[str, str]],
        topology: str | None = None, taints: list[dict[str, str]] | None = None
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": labels}
    if taints:
        spec["nodeTaints"] = taints
    if tolerations:
        spec["tolerations"] = tolerations
    if topology:
        spec["topologyName"] = topology
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name},
            "spec": spec}


# ----------------------------------------------------------------------------------
# Installs


def test_kueue_release(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    release = _kueue_release(ev)
    assert release.name == "kueue"
    assert release.parent.endswith(f"{ADDONS}::addons")
    inputs = harness._plain(release.inputs)
    version = (raw.get("addons") or {}).get("kueueVersion", "v0.19.2")
    memory = f"{max(1024, 2 * _node_count(raw))}Mi"
    assert inputs["name"] == "kueue"
    assert inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert inputs["version"] == version[1:]
    assert inputs["namespace"] == "kueue-system"
    assert inputs["createNamespace"] is True
    assert inputs["atomic"] is True
    assert inputs["timeout"] == 600
    assert inputs["values"] == {
        "controllerManager": {
            "replicas": 1,
            "manager": {"resources": {"requests": {"cpu": "500m", "memory": memory},
                                      "limits": {"cpu": "2", "memory": memory}}},
            "nodeSelector": {"accelstack.dev/slice-pool": "system"},
        },
        "enablePrometheus": False,
        "managerConfig": {"controllerManagerConfigYaml": inputs["values"]["managerConfig"][
            "controllerManagerConfigYaml"]},
    }
    config = yaml.safe_load(inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    # The device classes the stack's pods claim are mapped, each to a quota resource of
    # its own name (infra/specs/kueue_dra.py; tests/test_kueue_dra.py replays Kueue's check).
    slices = raw.get("slices") or []
    classes = sorted(
        {"compute-domain-default-channel.nvidia.com" for p in slices
         if str(p.get("accelerator", "")).startswith("gb200")}
        | {"netdev.google.com" for p in slices if p.get("dranet")})
    expected = dict(KUEUE_CONFIG)
    if classes:
        expected["resources"] = {"deviceClassMappings": [
            {"name": c, "deviceClassNames": [c]} for c in classes]}
    # Its own MultiKueue origin, a label value unique to the cluster (test_fleet_program.py)
    origin = config.pop("multiKueue")["origin"]
    assert origin.startswith("accelstack-") and len(origin) <= 63
    assert config == expected


# The chart's default Configuration (v0.19.2 charts/kueue/values.yaml) with two changes:
# Kueue manages (and its webhooks see) only namespaces labelled for it, and only the Job
# and JobSet integrations are on.
KUEUE_CONFIG = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"}, "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {"groupKindConcurrency": {
        "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10, "LocalQueue.kueue.x-k8s.io": 5,
        "ClusterQueue.kueue.x-k8s.io": 5, "ResourceFlavor.kueue.x-k8s.io": 1}},
    "clientConnection": {"qps": 300, "burst": 500},
    "managedJobsNamespaceSelector": {"matchLabels": {"accelstack.dev/kueue-managed": "true"}},
    "integrations": {"frameworks": ["batch/job", "jobset.x-k8s.io/jobset"]},
}


def _selected(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector["matchLabels"].items())


def test_kueue_never_gates_system_namespaces(case: tuple[dict[str, Any], Evaluation]) -> None:
    # The chart gives every Kueue webhook this namespaceSelector: namespaces outside it
    # (JobSet's, GKE's, the image cache's, NVIDIA's DRA driver's) never wait on Kueue; the workload namespaces,
    # as the stack declares them, are managed.
    _, ev = case
    selector = KUEUE_CONFIG["managedJobsNamespaceSelector"]
    declared = {r.name: harness._plain(r.inputs)["metadata"] for r in ev.of_type(NAMESPACE)}
    for meta in declared.values():
        managed = meta["name"] not in (image_cache_spec.NAMESPACE, dra_driver_spec.NAMESPACE)
        assert _selected(selector, meta.get("labels", {})) == managed, meta
    for system in ("kube-system", "kueue-system", "jobset-system", "gmp-system",
                   "gke-managed-system"):
        assert not _selected(selector, {"kubernetes.io/metadata.name": system})


# Was: Kueue and JobSet were installed in parallel; Kueue's deployment webhook (failurePolicy
# Fail with the chart's default integrations) could refuse the JobSet controller's
# Deployment while Kueue was starting.
def test_jobset_is_installed_before_kueue(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    kueue, jobset = _kueue_release(ev), _jobset(ev)
    assert jobset.urn in kueue.dependencies
    assert kueue.urn not in jobset.dependencies


@pytest.mark.parametrize("case_name,memory", [
    ("Pulumi.v6e-training.yaml", "1024Mi"),  # 6 + 4 x 64 = 262 nodes: the floor
    ("Pulumi.a3mega.yaml", "1024Mi"),
    ("large", "1304Mi"),  # 6 x 2 zones + 10 x 64 = 652 nodes
    ("tpu-gpu-cpu-teams", "1024Mi"),  # 5 x 2 zones + 8 + 4 + 4 = 26 nodes
])
def test_kueue_memory_pinned(case_name: str, memory: str) -> None:
    values = harness._plain(_kueue_release(_evaluate(case_name)).inputs)["values"]
    resources = values["controllerManager"]["manager"]["resources"]
    assert resources["requests"]["memory"] == resources["limits"]["memory"] == memory


@pytest.mark.parametrize("max_nodes,memory", [(16, "1024Mi"), (17, "1026Mi")])
def test_kueue_memory_floor_boundary(max_nodes: int, memory: str) -> None:
    # 31 x v5p-128 = 496 VMs; with 16 system nodes 512 nodes is exactly the 1 GiB floor.
    ev = _ev(systemPool={"maxNodes": max_nodes},
             slices=[{"accelerator": "v5p-128", "count": 31}])
    values = harness._plain(_kueue_release(ev).inputs)["values"]
    assert values["controllerManager"]["manager"]["resources"]["limits"]["memory"] == memory


def test_jobset_manifest(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    jobset = _jobset(ev)
    assert jobset.name == "jobset"
    assert jobset.parent_name == "addons"
    version = (raw.get("addons") or {}).get("jobsetVersion", "v0.12.0")
    assert harness._plain(jobset.inputs) == {
        "file": f"https://github.com/kubernetes-sigs/jobset/releases/download/{version}/"
                "manifests.yaml"}


def test_version_overrides() -> None:
    ev = _evaluate("tpu-gpu-cpu-teams")
    assert harness._plain(_kueue_release(ev).inputs)["version"] == "0.20.1"
    assert harness._plain(_jobset(ev).inputs)["file"] == (
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.13.0/manifests.yaml")


def test_kubernetes_provider(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    provider = _one(ev, PROVIDER)
    assert provider.name == "addons-k8s"
    assert provider.parent.endswith(f"{ADDONS}::addons")
    kubeconfig = provider.inputs["kubeconfig"]
    assert isinstance(kubeconfig, harness.Secret)
    exported = harness.plain_outputs(ev, reveal=True)["accelstack"]["kubeconfig"]
    assert kubeconfig.value == exported
    assert "gke-gcloud-auth-plugin" in kubeconfig.value
    # Provider inputs are sent to the engine JSON-encoded, so a bool arrives as "true".
    assert provider.inputs["enableServerSideApply"] in (True, "true")
    # the kubeconfig needs the cluster
    cluster = _one(ev, "gcp:container/cluster:Cluster")
    assert cluster.urn in provider.dependencies


def test_addon_resources_live_in_the_component(case: tuple[dict[str, Any], Evaluation]
                                               ) -> None:
    _, ev = case
    [component] = ev.of_type(ADDONS)
    # Kueue's metrics scrape belongs to the observability component (docs/observability.md).
    observed = {r.urn for r in ev.of_type("accelstack:observability:Observability")}
    for type_ in (RELEASE, CONFIG_FILE, CONFIG_GROUP, DAEMONSET, NAMESPACE, PROVIDER):
        for r in ev.of_type(type_):
            assert r.parent == component.urn or r.parent in observed, f"{r.type} {r.name}"


def test_every_urn_is_unique(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    dup = [u for u, n in Counter(r.urn for r in ev.resources).items() if n > 1]
    assert dup == []


# ----------------------------------------------------------------------------------
# Ordering


def test_kueue_objects_wait_for_both_installs(case: tuple[dict[str, Any], Evaluation]
                                             ) -> None:
    _, ev = case
    kueue = _kueue_release(ev).urn
    jobset = _jobset(ev).urn
    namespaces = {r.urn for r in ev.of_type(NAMESPACE)}
    groups = _kueue_groups(ev)
    assert groups
    for g in groups:
        assert kueue in g.dependencies, g.name
        assert jobset in g.dependencies, g.name
        assert namespaces <= set(g.dependencies), g.name


def test_installs_do_not_wait_for_kueue_objects(case: tuple[dict[str, Any], Evaluation]
                                                ) -> None:
    _, ev = case
    groups = {r.urn for r in ev.of_type(CONFIG_GROUP)}
    for install in (_kueue_release(ev), _jobset(ev)):
        assert not groups & set(install.dependencies)


def test_addons_wait_for_the_system_pool(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    [component] = ev.of_type(ADDONS)
    system_pool = ev.named("system", NODE_POOL)
    assert system_pool.parent_name == "system"
    assert ev.named("system", SYSTEM).urn == system_pool.parent
    # depends_on=[the SystemNodePool component] reaches the engine as its node pool's URN
    assert system_pool.urn in component.dependencies


def test_daemonsets_wait_for_their_namespace(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    ns = ev.named("namespace-accelstack-system", NAMESPACE).urn
    for r in ev.of_type(DAEMONSET):
        assert ns in r.dependencies


# ----------------------------------------------------------------------------------
# Every declared object is what the renderers produce, and is valid


def test_kueue_objects_are_the_rendered_ones(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    expected = kueue_spec.kueue_objects(ev.config)
    assert len({_group_name(o) for o in expected}) == len(expected)
    assert _groups(ev) == {_group_name(o): o for o in expected}


def test_kueue_objects_validate(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    for obj in _groups(ev).values():
        schema.validate(obj)


def test_daemonsets_are_the_rendered_ones(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    expected = image_cache_spec.daemonsets(ev.config)
    assert len(expected) == len(raw.get("imageCache") or [])
    assert _daemonsets(ev) == {
        f"daemonset-accelstack-system-{d['metadata']['name']}": d for d in expected}


def test_daemonsets_validate(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    for ds in _daemonsets(ev).values():
        assert (ds["apiVersion"], ds["kind"]) == ("apps/v1", "DaemonSet")
        schema.validate(ds)


def test_namespaces(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    q = _queues(raw)
    names = [q.get("namespace", "training")] + [
        t.get("namespace", t["name"]) for t in q.get("teams", [])] + ["accelstack-system"]
    if any(catalog.resolve(p["accelerator"]).family == "a4x" for p in raw.get("slices", [])):
        names.append("nvidia-dra-driver-gpu")  # NVIDIA's DRA driver, for A4X stacks only
    declared = {r.name: harness._plain(r.inputs) for r in ev.of_type(NAMESPACE)}

    def labels(n: str) -> dict[str, str]:
        out = {"app.kubernetes.io/managed-by": "accelstack"}
        if n not in ("accelstack-system", "nvidia-dra-driver-gpu"):  # workload namespaces opt in
            out["accelstack.dev/kueue-managed"] = "true"
        return out
    assert declared == {
        f"namespace-{n}": {"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": n, "labels": labels(n)}}
        for n in names}
    for ns in declared.values():
        schema.validate(ns)


def test_priority_classes(case: tuple[dict[str, Any], Evaluation]) -> None:
    _, ev = case
    classes = _kind(ev, "WorkloadPriorityClass")
    assert classes == {name: {"apiVersion": API, "kind": "WorkloadPriorityClass",
                              "metadata": {"name": name}, "value": value,
                              "description": f"accelstack priority {name}"}
                       for name, value in PRIORITIES.items()}


def test_local_queues(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    q = _queues(raw)
    local = q.get("localQueue", "main")
    ns = q.get("namespace", "training")
    expected = [_lq(local, ns, q.get("clusterQueue", "cluster-queue"))] + [
        _lq(local, t.get("namespace", t["name"]), t["name"]) for t in q.get("teams", [])]
    assert _kind(ev, "LocalQueue") == {
        f"{o['metadata']['namespace']}/{local}": o for o in expected}


# ----------------------------------------------------------------------------------
# Exact objects of the example stacks


def test_v6e_training_kueue_objects() -> None:
    ev = _evaluate("Pulumi.v6e-training.yaml")
    flavor = "v6e-256-on-demand"
    head = "cpu-pathways-head"  # the Pathways head pool: two n2-standard-64 VMs
    # GKE's TPU taint is the flavor's node taint: only pods tolerating it get the flavor
    assert _kind(ev, "ResourceFlavor") == {
        flavor: _rf(flavor, {TPU_ACCEL: "tpu-v6e-slice", TPU_TOPO: "16x16", CAP: "on-demand"},
                    [], taints=[TPU_TAINT]),
        head: _rf(head, {"node.kubernetes.io/instance-type": "n2-standard-64",
                         CAP: "on-demand", POOL: "pathways-head"}, [])}
    # DRANET pools: their NICs are quota (Kueue counts claimed devices, infra/specs/kueue_dra.py)
    netdev = "netdev.google.com"
    cov = [TPU, netdev, "cpu", "memory"]
    nodes = 4 * 64  # four v6e-256 slices of 64 VMs
    nics = {netdev: nodes}  # one NIC per pod, one pod per node
    # The head pool's quota stays with the shared queue (the team names no quota for it).
    assert _kind(ev, "ClusterQueue") == {
        "pretraining": _cq("pretraining", "pretraining", [_group(
            cov, _fl(head, cov, {"cpu": 128, "memory": "512Gi"}),
            _acc(flavor, cov, TPU, 768, "v6e-256", nodes, 0.75, devices=nics))],
            cohort="trillium"),
        "evals": _cq("evals", "evals", [_group(
            cov, _fl(head, cov, {"memory": "0Gi"}, {"memory": "0Gi"}),
            _acc(flavor, cov, TPU, 256, "v6e-256", nodes, 0.25, borrow=(256, 0.25),
                 devices=nics))],
            cohort="trillium"),
    }
    assert _kind(ev, "LocalQueue") == {
        "pretraining/main": _lq("main", "pretraining", "pretraining"),
        "evals/main": _lq("main", "evals", "evals"),
    }
    kinds = Counter(o["kind"] for o in _groups(ev).values())
    assert kinds == {"ResourceFlavor": 2, "ClusterQueue": 2, "LocalQueue": 2,
                     "WorkloadPriorityClass": 5}


def test_a3mega_kueue_objects() -> None:
    ev = _evaluate("Pulumi.a3mega.yaml")
    assert _kind(ev, "Topology") == {"gke-default": {
        "apiVersion": API, "kind": "Topology", "metadata": {"name": "gke-default"},
        "spec": {"levels": [{"nodeLabel": "cloud.google.com/gce-topology-block"},
                            {"nodeLabel": "cloud.google.com/gce-topology-subblock"},
                            {"nodeLabel": "cloud.google.com/gce-topology-host"},
                            {"nodeLabel": "kubernetes.io/hostname"}]}}}
    gpu = "h100-mega-80gb-8-reservation"
    assert _kind(ev, "ResourceFlavor") == {
        gpu: _rf(gpu, {GPU_ACCEL: "nvidia-h100-mega-80gb", CAP: "reservation"}, [],
                 topology="gke-default", taints=[GPU_TAINT]),
        "system-cpu": _rf("system-cpu", {POOL: "system"}, []),
    }
    # one group: a resource may be in one resource group only; the system CPU flavor has
    # no GPUs, so a GPU pod is never given it
    cov = [GPU, "cpu", "memory"]
    assert _kind(ev, "ClusterQueue") == {
        "cluster-queue": _cq("cluster-queue", "gpu-jobs", [_group(
            cov, _fl("system-cpu", cov, {"cpu": 8, "memory": "32Gi"}),
            _acc(gpu, cov, GPU, 16, "h100-mega-80gb-8", 2))])}
    assert _kind(ev, "LocalQueue") == {"gpu-jobs/main": _lq("main", "gpu-jobs", "cluster-queue")}
    assert _kind(ev, "AdmissionCheck") == {}


def test_v5e_spot_and_v5p_reserved_queues() -> None:
    cov = [TPU, "cpu", "memory"]
    ev = _evaluate("Pulumi.v5e-spot.yaml")
    assert _kind(ev, "ResourceFlavor") == {"v5litepod-16-spot": _rf(
        "v5litepod-16-spot", {TPU_ACCEL: "tpu-v5-lite-podslice", TPU_TOPO: "4x4", CAP: "spot",
                              "cloud.google.com/gke-spot": "true"}, [SPOT_TOL],
        taints=[TPU_TAINT])}
    assert _kind(ev, "ClusterQueue") == {"cluster-queue": _cq(
        "cluster-queue", "training", [_group(
            cov, _acc("v5litepod-16-spot", cov, TPU, 32, "v5litepod-16", 8))])}
    ev = _evaluate("Pulumi.v5p-reserved.yaml")
    assert _kind(ev, "ResourceFlavor") == {"v5p-128-reservation": _rf(
        "v5p-128-reservation", {TPU_ACCEL: "tpu-v5p-slice", TPU_TOPO: "4x4x4",
                                CAP: "reservation"}, [], taints=[TPU_TAINT])}
    assert _kind(ev, "ClusterQueue") == {"cluster-queue": _cq(
        "cluster-queue", "training", [_group(
            cov, _acc("v5p-128-reservation", cov, TPU, 64, "v5p-128", 16))])}


# ----------------------------------------------------------------------------------
# Quota arithmetic per flavor

COV_TPU = [TPU, "cpu", "memory"]


def test_two_slice_types_two_flavors() -> None:
    ev = _ev(slices=[{"accelerator": "v5litepod-16", "count": 2, "capacity": "spot"},
                     {"accelerator": "v5p-128",
                      "capacity": {"mode": "reservation", "reservation": "res-1"}}])
    assert list(_kind(ev, "ResourceFlavor")) == ["v5litepod-16-spot", "v5p-128-reservation"]
    assert _kind(ev, "ClusterQueue")["cluster-queue"]["spec"]["resourceGroups"] == [_group(
        COV_TPU, _acc("v5litepod-16-spot", COV_TPU, TPU, 32, "v5litepod-16", 8),
        _acc("v5p-128-reservation", COV_TPU, TPU, 64, "v5p-128", 16))]


def test_same_slice_type_in_two_pools_shares_a_flavor() -> None:
    ev = _ev(slices=[{"name": "a", "accelerator": "v5litepod-16", "count": 1, "capacity": "spot"},
                     {"name": "b", "accelerator": "v5litepod-16", "count": 2, "capacity": "spot"}],
             queues={"teams": [{"name": "t", "quota": {"a": 16, "b": 8},
                                "borrowingLimit": {"a": 0, "b": 16}}]})
    assert list(_kind(ev, "ResourceFlavor")) == ["v5litepod-16-spot"]
    cqs = _kind(ev, "ClusterQueue")
    name = "v5litepod-16-spot"
    assert cqs["cluster-queue"]["spec"]["resourceGroups"] == [_group(
        COV_TPU, _acc(name, COV_TPU, TPU, 24, "v5litepod-16", 12, 0.5))]
    assert cqs["t"]["spec"]["resourceGroups"] == [_group(
        COV_TPU, _acc(name, COV_TPU, TPU, 24, "v5litepod-16", 12, 0.5, borrow=(16, 16 / 48)))]


def test_spot_and_reservation_are_two_flavors() -> None:
    ev = _ev(slices=[{"name": "spot", "accelerator": "v5litepod-16", "capacity": "spot"},
                     {"name": "reserved", "accelerator": "v5litepod-16", "count": 2,
                      "capacity": {"mode": "reservation", "reservation": "res-1"}}])
    flavors = _kind(ev, "ResourceFlavor")
    assert flavors == {
        "v5litepod-16-spot": _rf("v5litepod-16-spot", {
            TPU_ACCEL: "tpu-v5-lite-podslice", TPU_TOPO: "4x4", CAP: "spot",
            "cloud.google.com/gke-spot": "true"}, [SPOT_TOL], taints=[TPU_TAINT]),
        "v5litepod-16-reservation": _rf("v5litepod-16-reservation", {
            TPU_ACCEL: "tpu-v5-lite-podslice", TPU_TOPO: "4x4", CAP: "reservation"}, [],
            taints=[TPU_TAINT]),
    }
    assert _kind(ev, "ClusterQueue")["cluster-queue"]["spec"]["resourceGroups"] == [_group(
        COV_TPU, _acc("v5litepod-16-spot", COV_TPU, TPU, 16, "v5litepod-16", 4),
        _acc("v5litepod-16-reservation", COV_TPU, TPU, 32, "v5litepod-16", 8))]


def test_nap_flavors() -> None:
    ev = _evaluate("nap")
    assert _kind(ev, "ResourceFlavor") == {
        "nap-tpu-v6e-slice": _rf("nap-tpu-v6e-slice", {TPU_ACCEL: "tpu-v6e-slice"}, [],
                                 taints=[TPU_TAINT]),
        "nap-nvidia-l4": _rf("nap-nvidia-l4", {GPU_ACCEL: "nvidia-l4"}, [],
                             taints=[GPU_TAINT]),
    }
    # NAP picks the machines: CPU and memory quota is the cluster's NAP limit (defaults:
    # 1000 vCPUs, and memoryGb as parsed)
    parsed = config_mod.parse(_raw("nap")).auto_provisioning
    assert parsed is not None and parsed.cpu_max == 1000
    cpu, mem = parsed.cpu_max, f"{int(parsed.memory_gb_max * 10**9) // 2**20}Mi"
    cov = [TPU, GPU, "cpu", "memory"]
    assert _kind(ev, "ClusterQueue") == {"cluster-queue": _cq(
        "cluster-queue", "training", [_group(
            cov, _fl("nap-tpu-v6e-slice", cov, {TPU: 256, "cpu": str(cpu), "memory": mem}),
            _fl("nap-nvidia-l4", cov, {GPU: 16, "cpu": str(cpu), "memory": mem}))])}


def test_tpu_gpu_cpu_resource_groups() -> None:
    # Declared CPU, GPU, TPU; one group covering TPU, GPU, cpu, memory; CPU flavors first.
    ev = _evaluate("tpu-gpu-cpu-teams")
    cpu_accel = catalog.resolve("n2-standard-32-4")
    vcpus = int(cpu_accel.machine_type.rsplit("-", 1)[1]) * cpu_accel.vms_per_slice * 2
    memory = int(2 * cpu_accel.vms_per_slice * catalog.memory_gb(cpu_accel))
    assert (vcpus, memory) == (256, 1024)
    flavors = _kind(ev, "ResourceFlavor")
    # a CPU flavor is 'cpu-<pool name>' (here the pool is named 'cpu'), so it can never take
    # an accelerator flavor's '<accelerator>-<mode>' name
    assert list(flavors) == ["cpu-cpu", "l4-1-flex-start", "v5litepod-16-on-demand"]
    assert flavors["cpu-cpu"] == _rf("cpu-cpu", {
        "node.kubernetes.io/instance-type": "n2-standard-32", POOL: "cpu", CAP: "on-demand"},
        [])
    assert flavors["l4-1-flex-start"] == _rf("l4-1-flex-start", {
        GPU_ACCEL: "nvidia-l4", CAP: "flex-start", "cloud.google.com/gke-flex-start": "true"},
        [], taints=[GPU_TAINT])

    cov = [TPU, GPU, "cpu", "memory"]
    tpu, gpu = "v5litepod-16-on-demand", "l4-1-flex-start"

    def cq_group(cpu: tuple[Any, ...], tpu_frac: float, gpu_frac: float,
                 borrow: bool = False) -> dict[str, Any]:
        nominal = {"cpu": cpu[0], "memory": cpu[1]}
        cpu_flavor = _fl("cpu-cpu", cov, nominal,
                         {"cpu": cpu[2], "memory": cpu[3]} if borrow else None)
        b_tpu = (0, 0.0) if borrow else None
        return _group(cov, cpu_flavor,
                      _acc(tpu, cov, TPU, int(16 * tpu_frac), "v5litepod-16", 4, tpu_frac,
                           borrow=b_tpu),
                      _acc(gpu, cov, GPU, int(4 * gpu_frac), "l4-1", 4, gpu_frac,
                           borrow=b_tpu))

    assert _kind(ev, "ClusterQueue") == {
        "shared": _cq("shared", "ml", [cq_group((192, "768Gi"), 0.5, 0.5)], cohort="org"),
        "etl": _cq("etl", "etl", [cq_group((64, "256Gi", 32, "128Gi"), 0, 0, borrow=True)],
                   cohort="org"),
        "evals": _cq("evals", "eval-jobs", [cq_group((0, "0Gi"), 0.5, 0.5)], cohort="org"),
    }


def test_cpu_quota_with_fractional_memory() -> None:
    # n1-standard-2: 7.5 GB per VM; three VMs hold 22.5 GB, quota rounds down to 22Gi.
    ev = _ev(slices=[{"accelerator": "v5litepod-16"},
                     {"name": "cpu", "accelerator": "n1-standard-2-1", "count": 3}])
    [group] = _kind(ev, "ClusterQueue")["cluster-queue"]["spec"]["resourceGroups"]
    assert group["coveredResources"] == COV_TPU
    assert group["flavors"][0] == {"name": "cpu-cpu", "resources": [
        {"name": TPU, "nominalQuota": 0}, {"name": "cpu", "nominalQuota": 6},
        {"name": "memory", "nominalQuota": "22Gi"}]}


GPU_RESERVATION = {"mode": "reservation", "reservation": "r"}
# (accelerator, capacity, placement, TAS with auto): GKE labels the nodes with the
# gke-default topology for A3 High/Mega on flex-start or a reservation, for A3 Ultra and
# later on flex-start or with compact placement (infra/specs/tas.py has the sources).
TAS_AUTO = [
    ("h100-80gb-8", GPU_RESERVATION, None, True),
    ("h100-80gb-8", "flex-start", None, True),
    ("h100-80gb-8", "on-demand", None, False),
    ("h100-mega-80gb-8", "spot", None, False),
    ("h100-mega-80gb-8", "queued", None, False),
    ("h100-mega-80gb-8", GPU_RESERVATION, "none", True),
    ("h200-141gb-8", "on-demand", None, True),  # compact by default
    ("h200-141gb-8", "on-demand", "none", False),
    ("h200-141gb-8", "spot", "compact", True),
    ("h200-141gb-8", "spot", None, False),  # spot pools are not compact by default
    ("b200-8", "flex-start", None, True),
    ("b200-8", "queued", None, False),
    ("gb200-4", GPU_RESERVATION, None, True),
    ("l4-1", "flex-start", None, False),
    ("a100-40gb-8", GPU_RESERVATION, None, False),
]


@pytest.mark.parametrize("accel, capacity, placement, tas", TAS_AUTO)
def test_tas_only_where_gke_labels_the_topology(accel: str, capacity: Any,
                                                placement: str | None, tas: bool) -> None:
    pool: dict[str, Any] = {"accelerator": accel, "capacity": capacity}
    if placement:
        pool["placement"] = placement
    version = {"gkeVersion": "1.34"} if accel.startswith("gb200") else {}
    ev = _ev(slices=[pool], queues={"topologyAwareScheduling": "auto"}, **version)
    [flavor] = _kind(ev, "ResourceFlavor").values()
    assert (flavor["spec"].get("topologyName") == "gke-default") == tas
    assert bool(_kind(ev, "Topology")) == tas
    # The contract tells the renderer to ask for a topology exactly there.
    [info] = contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools
    level = ("cloud.google.com/gce-topology-subblock" if accel.startswith("gb200")
             else "cloud.google.com/gce-topology-block")  # A4X: one NVL72 domain
    assert info.kueue_topology_level == (level if tas else None)


def test_topology_aware_scheduling_modes() -> None:
    # on: every GPU flavor (the user vouches for the labels); off: none; TPUs never.
    def topo(mode: str, accel: str) -> tuple[bool, Any]:
        ev = _ev(slices=[{"accelerator": accel}], queues={"topologyAwareScheduling": mode})
        [flavor] = _kind(ev, "ResourceFlavor").values()
        return bool(_kind(ev, "Topology")), flavor["spec"].get("topologyName")
    assert topo("auto", "h200-141gb-8") == (True, "gke-default")
    assert topo("auto", "h100-80gb-8") == (False, None)  # on-demand A3 High: no labels
    assert topo("auto", "l4-1") == (False, None)
    assert topo("on", "l4-1") == (True, "gke-default")
    assert topo("off", "h200-141gb-8") == (False, None)
    assert topo("on", "v5litepod-16") == (False, None)


def test_tas_flavors_share_a_queue_with_cpu_quota_and_nap() -> None:
    """GPUDirect TAS flavors beside a plain GPU pool, the system CPU flavor and NAP flavors
    in one ClusterQueue: Kueue v0.19.2 then needs an explicit topology request on the
    workloads of the TAS flavors, which the contract asks the renderer for (and only
    for those)."""
    ev = _ev(region="us-east4", zones=["us-east4-b"],
             network={"gpuNetworksCidr": "192.168.0.0/19"},
             slices=[{"accelerator": "h100-mega-80gb-8", "count": 2, "capacity": GPU_RESERVATION},
                     {"accelerator": "h200-141gb-8", "count": 2},
                     {"accelerator": "l4-8", "count": 1}],
             nodeAutoProvisioning={"accelerators": {"nvidia-l4": 8, "nvidia-h100-80gb": 16}},
             queues={"namespace": "gpu-jobs", "cpuQuota": {"cpu": 8, "memoryGi": 32}})
    flavors = {n: f["spec"].get("topologyName") for n, f in _kind(ev, "ResourceFlavor").items()}
    assert flavors == {"h100-mega-80gb-8-reservation": "gke-default",
                       "h200-141gb-8-on-demand": "gke-default", "l4-8-on-demand": None,
                       "nap-nvidia-l4": None, "nap-nvidia-h100-80gb": None, "system-cpu": None}
    [cq] = _kind(ev, "ClusterQueue").values()
    in_queue = {f["name"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]}
    assert in_queue == set(flavors)  # one queue: TAS flavors are not alone in it
    levels = {p.name: p.kueue_topology_level
              for p in contract.load(harness.plain_outputs(ev, reveal=True)).slice_pools}
    assert levels == {"h100-mega-80gb-8": "cloud.google.com/gce-topology-block",
                      "h200-141gb-8": "cloud.google.com/gce-topology-block", "l4-8": None}
    # Every object still validates.
    for obj in _kind(ev, "ResourceFlavor").values():
        schema.validate(obj)
    schema.validate(cq)


# ----------------------------------------------------------------------------------
# Admission checks for queued provisioning


def test_queued_pool_gets_the_admission_check() -> None:
    ev = _evaluate("queued-and-spot")
    assert _kind(ev, "AdmissionCheck") == {"dws-prov": {
        "apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                 "parameters": {"apiGroup": "kueue.x-k8s.io",
                                "kind": "ProvisioningRequestConfig", "name": "dws-config"}}}}
    assert _kind(ev, "ProvisioningRequestConfig") == {"dws-config": {
        "apiVersion": API, "kind": "ProvisioningRequestConfig",
        "metadata": {"name": "dws-config"},
        "spec": {"provisioningClassName": "queued-provisioning.gke.io",
                 "managedResources": [TPU],
                 "podSetUpdates": {"nodeSelector": [{
                     "key": "autoscaling.gke.io/provisioning-request",
                     "valueFromProvisioningClassDetail": "ResizeRequestName"}]}}}}
    flavors = _kind(ev, "ResourceFlavor")
    assert flavors["v5p-64-queued"] == _rf("v5p-64-queued", {
        TPU_ACCEL: "tpu-v5p-slice", TPU_TOPO: "2x4x4", CAP: "queued",
        "cloud.google.com/gke-queued": "true"},
        [QUEUED_TOL], taints=[TPU_TAINT])
    checks = [{"name": "dws-prov", "onFlavors": ["v5p-64-queued"]}]
    cov = COV_TPU
    groups = [_group(cov, _acc("v5p-64-queued", cov, TPU, 32, "v5p-64", 16, 0.5),
                     _acc("v5litepod-16-spot", cov, TPU, 32, "v5litepod-16", 8))]
    team_groups = [_group(cov, _acc("v5p-64-queued", cov, TPU, 32, "v5p-64", 16, 0.5),
                          _acc("v5litepod-16-spot", cov, TPU, 0, "v5litepod-16", 8, 0))]
    assert _kind(ev, "ClusterQueue") == {
        "cluster-queue": _cq("cluster-queue", "training", groups, "accelstack", checks),
        "research": _cq("research", "research", team_groups, "accelstack", checks),
    }


def test_queued_gpu_and_tpu_share_one_config() -> None:
    ev = _ev(slices=[{"accelerator": "v5p-64", "capacity": "queued"},
                     {"accelerator": "l4-1", "count": 2, "capacity": "queued"}])
    [prc] = _kind(ev, "ProvisioningRequestConfig").values()
    assert prc["spec"]["managedResources"] == [TPU, GPU]
    [cq] = _kind(ev, "ClusterQueue").values()
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [
        {"name": "dws-prov", "onFlavors": ["v5p-64-queued", "l4-1-queued"]}]}


@pytest.mark.parametrize("case_name", [p.name for p in STACK_FILES] + ["nap"])
def test_no_admission_check_without_queued_pools(case_name: str) -> None:
    ev = _evaluate(case_name)
    # A dynamic slicing pool has the slice controller's check, no other
    # (tests/test_dynamic_slicing.py).
    sliced = any(p.dynamic for p in getattr(ev.config, "slices", ()))
    assert list(_kind(ev, "AdmissionCheck")) == (["tpu-slice"] if sliced else [])
    assert _kind(ev, "ProvisioningRequestConfig") == {}
    for cq in _kind(ev, "ClusterQueue").values():
        checks = cq["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", [])
        assert [c["name"] for c in checks] == (["tpu-slice"] if sliced else [])


def test_flex_start_without_queuing_gets_no_admission_check() -> None:
    # By design: GKE provisions flex-start nodes for pending pods directly (the cluster
    # autoscaler), so Kueue admits on quota alone; only queued provisioning needs a
    # ProvisioningRequest and so the dws-prov check.
    ev = _ev(slices=[{"accelerator": "v6e-8-1vm", "count": 6, "capacity": "flex-start"}])
    assert _kind(ev, "AdmissionCheck") == {}
    assert _kind(ev, "ProvisioningRequestConfig") == {}
    assert _kind(ev, "ClusterQueue") == {"cluster-queue": _cq(
        "cluster-queue", "training", [_group(
            COV_TPU, _acc("v6e-8-1vm-flex-start", COV_TPU, TPU, 48, "v6e-8-1vm", 6))])}
    assert _kind(ev, "ResourceFlavor")["v6e-8-1vm-flex-start"]["spec"]["nodeLabels"] == {
        TPU_ACCEL: "tpu-v6e-slice", TPU_TOPO: "2x4", CAP: "flex-start",
        "cloud.google.com/gke-flex-start": "true"}


# ----------------------------------------------------------------------------------
# Image cache


def _maxtext() -> dict[str, Any]:
    name = "image-cache-maxtext"
    labels = {"app.kubernetes.io/name": "image-cache", "app.kubernetes.io/instance": name,
              "app.kubernetes.io/managed-by": "accelstack"}
    tiny = {"requests": {"cpu": "1m", "memory": "8Mi"}, "limits": {"cpu": "100m",
                                                                    "memory": "32Mi"}}
    mount = [{"name": "noop", "mountPath": "/accelstack-noop"}]
    hardened = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]}}
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "accelstack-system", "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"maxUnavailable": "100%"}},
            "template": {"metadata": {"labels": labels}, "spec": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{
                        "key": POOL, "operator": "In", "values": ["v5litepod-16"]}]}]}}},
                "tolerations": [
                    {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
                     "effect": "NoSchedule"},
                    {"key": "cloud.google.com/gke-spot", "operator": "Exists",
                     "effect": "NoSchedule"},
                    {"key": "cloud.google.com/gke-queued", "operator": "Exists",
                     "effect": "NoSchedule"}],
                "terminationGracePeriodSeconds": 1,
                "automountServiceAccountToken": False,
                "securityContext": {"runAsNonRoot": True, "runAsUser": 65534,
                                    "runAsGroup": 65534,
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "volumes": [{"name": "noop", "emptyDir": {"sizeLimit": "16Mi"}}],
                "initContainers": [
                    {"name": "noop", "image": "docker.io/library/busybox:1.37.0-musl",
                     "command": ["/bin/cp", "/bin/busybox", "/accelstack-noop/true"],
                     "resources": tiny, "securityContext": hardened, "volumeMounts": mount},
                    {"name": "pull",
                     "image": "us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1",
                     "imagePullPolicy": "IfNotPresent", "command": ["/accelstack-noop/true"],
                     "resources": tiny, "securityContext": hardened, "volumeMounts": mount},
                ],
                "containers": [{"name": "idle", "image": "registry.k8s.io/pause:3.10",
                                "resources": tiny, "securityContext": hardened}],
            }},
        },
    }


def test_v5e_spot_image_cache() -> None:
    ds = _daemonsets(_evaluate("Pulumi.v5e-spot.yaml"))
    assert sorted(ds) == ["daemonset-accelstack-system-image-cache-maxtext",
                          "daemonset-accelstack-system-image-cache-python3-debian12"]
    assert ds["daemonset-accelstack-system-image-cache-maxtext"] == _maxtext()
    distroless = ds["daemonset-accelstack-system-image-cache-python3-debian12"]
    pod = distroless["spec"]["template"]["spec"]
    assert pod["initContainers"][1]["image"] == "gcr.io/distroless/python3-debian12:nonroot"


def test_cached_image_runs_no_shell(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    images = [i if isinstance(i, str) else i["image"] for i in raw.get("imageCache") or []]
    pulled = []
    for ds in _daemonsets(ev).values():
        pod = ds["spec"]["template"]["spec"]
        noop, pull = pod["initContainers"]
        # a static busybox copied into a shared emptyDir and run as `true`: no shell,
        # no utility of the cached image (works for distroless and scratch images)
        assert noop["image"] == "docker.io/library/busybox:1.37.0-musl"
        assert noop["command"] == ["/bin/cp", "/bin/busybox", "/accelstack-noop/true"]
        assert pull["command"] == ["/accelstack-noop/true"]
        assert "args" not in pull
        assert pull["volumeMounts"] == noop["volumeMounts"] == [
            {"name": "noop", "mountPath": "/accelstack-noop"}]
        assert pod["containers"] == [{"name": "idle", "image": "registry.k8s.io/pause:3.10",
                                      "resources": pull["resources"],
                                      "securityContext": pull["securityContext"]}]
        assert [t["key"] for t in pod["tolerations"]] == [
            "google.com/tpu", "nvidia.com/gpu", "kubernetes.io/arch",
            "cloud.google.com/gke-spot", "cloud.google.com/gke-queued"]
        assert all(t["effect"] == "NoSchedule" for t in pod["tolerations"])
        # GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule (A4X, C4A, T2A)
        assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
                "effect": "NoSchedule"} in pod["tolerations"]
        # hardened: no root, no capability, no escalation, read-only root, seccomp
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for c in pod["initContainers"] + pod["containers"]:
            assert c["securityContext"] == {"allowPrivilegeEscalation": False,
                                            "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}}
            assert set(c["resources"]["requests"]) == set(c["resources"]["limits"]) == {
                "cpu", "memory"}
        pulled.append(pull["image"])
    assert sorted(pulled) == sorted(images)


def test_image_cache_selects_only_listed_pools() -> None:
    ev = _evaluate("tpu-gpu-cpu-teams")
    ds = _daemonsets(ev)

    def pools(name: str) -> list[str]:
        terms = ds[name]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert len(terms) == 1 and len(terms[0]["matchExpressions"]) == 1
        expr = terms[0]["matchExpressions"][0]
        assert (expr["key"], expr["operator"]) == (POOL, "In")
        return list(expr["values"])

    # the default is every accelerator pool, in declaration order; the CPU pool is not one
    assert pools("daemonset-accelstack-system-image-cache-trainer") == ["inference", "batch"]
    assert pools("daemonset-accelstack-system-image-cache-eval") == ["inference"]


def test_changing_the_tag_updates_in_place() -> None:
    def cached(tag: str) -> tuple[Resource, dict[str, Any]]:
        ev = _ev(imageCache=[{"name": "trainer", "image": f"us-docker.pkg.dev/p/r/trainer:{tag}"}])
        [r] = ev.of_type(DAEMONSET)
        return r, harness._plain(r.inputs)

    old_r, old = cached("v1")
    new_r, new = cached("v2")
    assert old_r.urn == new_r.urn
    assert old["metadata"] == new["metadata"]

    def diff(a: Any, b: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            return [p for k in a for p in diff(a[k], b[k], path + (k,))]
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            return [p for i, (x, y) in enumerate(zip(a, b)) for p in diff(x, y, path + (i,))]
        return [] if a == b else [path]

    assert diff(old, new) == [("spec", "template", "spec", "initContainers", 1, "image")]
    assert new["spec"]["template"]["spec"]["initContainers"][1]["image"] == \
        "us-docker.pkg.dev/p/r/trainer:v2"


def test_no_daemonsets_without_image_cache() -> None:
    ev = _ev()
    assert ev.of_type(DAEMONSET) == []
    for name in ("Pulumi.a3mega.yaml", "Pulumi.v5p-reserved.yaml", "Pulumi.v6e-training.yaml"):
        assert _evaluate(name).of_type(DAEMONSET) == []


# ----------------------------------------------------------------------------------
# Secondary boot disks


def test_secondary_boot_disks() -> None:
    ev = _ev(slices=[
        {"accelerator": "v5litepod-16", "count": 2, "secondaryBootDisk": "global/images/tpu-cache"},
        {"accelerator": "l4-1", "secondaryBootDisk":
            "projects/my-ml-project/global/images/gpu-cache"},
        {"accelerator": "v6e-8-1vm"}])
    pools = {r.name: harness._plain(r.inputs) for r in ev.of_type(NODE_POOL)}
    assert sorted(pools) == ["l4-1", "system", "v5litepod-16-0", "v5litepod-16-1", "v6e-8-1vm"]
    for name in ("v5litepod-16-0", "v5litepod-16-1"):
        assert pools[name]["nodeConfig"]["secondaryBootDisks"] == [
            {"diskImage": "global/images/tpu-cache", "mode": "CONTAINER_IMAGE_CACHE"}]
    assert pools["l4-1"]["nodeConfig"]["secondaryBootDisks"] == [
        {"diskImage": "projects/my-ml-project/global/images/gpu-cache",
         "mode": "CONTAINER_IMAGE_CACHE"}]
    for name in ("v6e-8-1vm", "system"):
        assert "secondaryBootDisks" not in pools[name]["nodeConfig"]
    # the image cache on a secondary disk needs image streaming
    for name in ("v5litepod-16-0", "l4-1"):
        assert pools[name]["nodeConfig"]["gcfsConfig"] == {"enabled": True}


# ----------------------------------------------------------------------------------
# The outputs contract


def test_contract_carries_the_addons(case: tuple[dict[str, Any], Evaluation]) -> None:
    raw, ev = case
    out = contract.load(harness.plain_outputs(ev, reveal=True))
    q = _queues(raw)
    ns = q.get("namespace", "training")
    local = q.get("localQueue", "main")
    addons = raw.get("addons") or {}
    assert out.contract_version == contract.CONTRACT_VERSION
    assert out.workload_namespace == ns
    assert out.local_queues == (
        contract.LocalQueueInfo(local, ns, q.get("clusterQueue", "cluster-queue")),
        *(contract.LocalQueueInfo(local, t.get("namespace", t["name"]), t["name"])
          for t in q.get("teams", [])))
    assert out.priority_classes == ("very-low", "low", "medium", "high", "very-high")
    assert out.jobset_version == addons.get("jobsetVersion", "v0.12.0")
    assert out.kueue_version == addons.get("kueueVersion", "v0.19.2")
    assert out.cached_images == tuple(i if isinstance(i, str) else i["image"]
                                      for i in raw.get("imageCache") or [])


def test_contract_of_v6e_training_and_v5e_spot() -> None:
    out = contract.load(harness.plain_outputs(_evaluate("Pulumi.v6e-training.yaml"),
                                              reveal=True))
    assert out.workload_namespace == "pretraining"
    assert out.local_queues == (contract.LocalQueueInfo("main", "pretraining", "pretraining"),
                                contract.LocalQueueInfo("main", "evals", "evals"))
    assert (out.jobset_version, out.kueue_version) == ("v0.12.0", "v0.19.2")
    assert out.cached_images == ()
    assert out.local_queue("evals") == contract.LocalQueueInfo("main", "evals", "evals")
    out = contract.load(harness.plain_outputs(_evaluate("Pulumi.v5e-spot.yaml"), reveal=True))
    assert out.cached_images == ("us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1",
                                 "gcr.io/distroless/python3-debian12:nonroot")
    data = harness.plain_outputs(_evaluate("tpu-gpu-cpu-teams"), reveal=True)["accelstack"]
    assert data["localQueues"] == [
        {"name": "jobs", "namespace": "ml", "clusterQueue": "shared"},
        {"name": "jobs", "namespace": "etl", "clusterQueue": "etl"},
        {"name": "jobs", "namespace": "eval-jobs", "clusterQueue": "evals"}]
    assert data["jobsetVersion"] == "v0.13.0" and data["kueueVersion"] == "v0.20.1"


# ----------------------------------------------------------------------------------
# Regression tests for bugs found while writing these tests (once strict xfails)

RESERVED = ("accelstack-system, kueue-system, jobset-system, kube-system, kube-public, "
            "kube-node-lease")


def _refused(**overrides: Any) -> str:
    """The message the program stops with for a config it must refuse."""
    with pytest.raises(StackConfigError) as info:
        _ev(**overrides)
    return str(info.value)


def _no_duplicate_urns(ev: Evaluation) -> None:
    """The real engine fails a whole `pulumi up` on a duplicate URN; the mock engine does not."""
    dup = [u.split("::")[-1] for u, n in Counter(r.urn for r in ev.resources).items() if n > 1]
    assert dup == []


# Was: queues.namespace (or a team namespace) 'accelstack-system' was accepted, and
# ClusterAddons then declared two Namespace resources named namespace-accelstack-system (the
# workload namespace and the image-cache namespace): a duplicate URN. Every namespace the
# stack's add-ons or Kubernetes itself use is now refused up front.
@pytest.mark.parametrize("ns", ["accelstack-system", "kueue-system", "jobset-system",
                                "kube-system", "kube-public", "kube-node-lease"])
@pytest.mark.parametrize("queues,path", [
    (lambda ns: {"namespace": ns}, "queues.namespace"),
    (lambda ns: {"teams": [{"name": ns}]}, "queues.teams[0].namespace"),
    (lambda ns: {"teams": [{"name": "a", "namespace": ns}]}, "queues.teams[0].namespace"),
], ids=["shared", "team-name", "team-namespace"])
def test_workload_namespace_may_not_be_a_system_namespace(queues: Any, path: str,
                                                          ns: str) -> None:
    assert _refused(queues=queues(ns)) == (
        f"invalid stack config (1 problem):\n  {path}: {ns!r} is reserved for the cluster's "
        f"system components ({RESERVED}); choose another")


def test_namespaces_like_the_system_ones_are_allowed() -> None:
    # Only the exact names are reserved.
    ev = _ev(queues={"namespace": "accelstack", "teams": [{"name": "kueue"},
                                                          {"name": "system"}]},
             imageCache=["busybox:1.37"])
    _no_duplicate_urns(ev)
    assert sorted(r.name for r in ev.of_type(NAMESPACE)) == [
        "namespace-accelstack", "namespace-accelstack-system", "namespace-kueue",
        "namespace-system"]


# Was: image_cache_spec.daemonset_name truncated 'image-cache-<name>' to 63 characters, while
# the config allowed 63-character names and checked uniqueness before truncation: two names
# sharing their first 51 characters gave two DaemonSets with one name/URN. Names longer
# than 51 characters are now refused.
def test_long_cached_image_names_are_refused() -> None:
    stem = "a" * 60
    first, second = f"{stem}-x1", f"{stem}-x2"
    suffix = "is 63 characters; at most 51 (the DaemonSet is named image-cache-<name>)"
    assert _refused(imageCache=[{"name": first, "image": "busybox:1"},
                                {"name": second, "image": "busybox:2"}]) == (
        "invalid stack config (2 problems):\n"
        f"  imageCache[0].name: {first!r} {suffix}\n"
        f"  imageCache[1].name: {second!r} {suffix}")


def test_cached_image_name_length_boundary() -> None:
    longest = "b" * 50 + "1"  # 51 characters: image-cache-<name> is exactly 63
    assert _refused(imageCache=[{"name": longest + "2", "image": "busybox:1"}]) == (
        f"invalid stack config (1 problem):\n  imageCache[0].name: {longest + '2'!r} is 52 "
        "characters; at most 51 (the DaemonSet is named image-cache-<name>)")
    ev = _ev(imageCache=[{"name": longest, "image": "busybox:1"},
                         {"name": "b" * 50 + "2", "image": "busybox:2"}])
    _no_duplicate_urns(ev)
    names = sorted(d["metadata"]["name"] for d in _daemonsets(ev).values())
    assert names == [f"image-cache-{'b' * 50}1", f"image-cache-{'b' * 50}2"]
    assert all(len(n) == 63 for n in names)


# Was: kueue_spec.flavors keyed accelerator flavors '<accelerator>-<mode>' and CPU flavors by
# pool name in one dict: a CPU pool named 'v5litepod-16-spot' replaced the TPU flavor, and
# the 16 TPU chips vanished from every ClusterQueue. CPU flavors are now 'cpu-<pool>'.
def test_cpu_pool_named_like_an_accelerator_flavor() -> None:
    ev = _ev(slices=[{"accelerator": "v5litepod-16", "capacity": "spot"},
                     {"name": "v5litepod-16-spot", "accelerator": "n2-standard-32-4"}])
    flavors = _kind(ev, "ResourceFlavor")
    assert list(flavors) == ["cpu-v5litepod-16-spot", "v5litepod-16-spot"]
    assert flavors["cpu-v5litepod-16-spot"] == _rf(
        "cpu-v5litepod-16-spot", {"node.kubernetes.io/instance-type": "n2-standard-32",
                                  POOL: "v5litepod-16-spot", CAP: "on-demand"}, [])
    assert flavors["v5litepod-16-spot"] == _rf(
        "v5litepod-16-spot", {TPU_ACCEL: "tpu-v5-lite-podslice", TPU_TOPO: "4x4", CAP: "spot",
                              "cloud.google.com/gke-spot": "true"}, [SPOT_TOL],
        taints=[TPU_TAINT])
    assert _kind(ev, "ClusterQueue")["cluster-queue"]["spec"]["resourceGroups"] == [_group(
        COV_TPU, _fl("cpu-v5litepod-16-spot", COV_TPU, {"cpu": 128, "memory": "512Gi"}),
        _acc("v5litepod-16-spot", COV_TPU, TPU, 16, "v5litepod-16", 4))]


# Was: image_cache_spec.daemonset put the module constant _TINY itself (not a copy) in every
# container's resources, and one volumeMounts list in both init containers, so the rendered
# manifests aliased module state: changing one rendered DaemonSet changed every container
# and every later render.
def test_rendered_daemonsets_do_not_share_state() -> None:
    cfg = _ev(imageCache=["busybox:1.37", {"name": "other", "image": "busybox:1.36"}]).config
    first, other = image_cache_spec.daemonsets(cfg)
    pod = first["spec"]["template"]["spec"]
    original = copy.deepcopy(pod)
    pod["containers"][0]["resources"]["requests"]["cpu"] = "2"
    pod["initContainers"][0]["volumeMounts"][0]["mountPath"] = "/elsewhere"
    pod["initContainers"][0]["volumeMounts"].append({"name": "x", "mountPath": "/x"})
    try:
        assert pod["initContainers"][0]["resources"] == original["initContainers"][0]["resources"]
        assert pod["initContainers"][1] == original["initContainers"][1]
        other_pod = other["spec"]["template"]["spec"]
        assert other_pod["containers"] == original["containers"]
        assert other_pod["initContainers"][0] == original["initContainers"][0]
        again = image_cache_spec.daemonsets(cfg)[0]["spec"]["template"]["spec"]
        assert again == original
    finally:
        # should the renderer alias module state again, leave it as it was for other tests
        pod["containers"][0]["resources"]["requests"]["cpu"] = \
            original["containers"][0]["resources"]["requests"]["cpu"]
        pod["initContainers"][0]["volumeMounts"][:] = original["initContainers"][0][
            "volumeMounts"]


# ----------------------------------------------------------------------------------
# JobSet controller sizing (a transform on the release manifest's objects)


_JOBSET_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "jobset-controller-manager", "namespace": "jobset-system"},
    "spec": {"template": {"spec": {"containers": [
        {"name": "manager", "image": "registry.k8s.io/jobset/jobset:v0.12.0",
         "resources": {"requests": {"cpu": "500m", "memory": "128Mi"},
                       "limits": {"memory": "4Gi"}}},
        {"name": "kube-rbac-proxy", "image": "proxy:1"}]}}},
}


@pytest.mark.parametrize("nodes,request_mi,limit_mi", [(3, 128, 4096), (652, 652, 4096),
                                                        (2000, 2000, 8000)])
def test_jobset_controller_is_sized_for_the_nodes(nodes: int, request_mi: int,
                                                  limit_mi: int) -> None:
    sized = addons_spec.size_jobset_controller(copy.deepcopy(_JOBSET_DEPLOYMENT), nodes)
    assert sized is not None
    pod = sized["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"accelstack.dev/slice-pool": "system"}
    manager, proxy = pod["containers"]
    assert manager["resources"] == {"requests": {"cpu": "500m", "memory": f"{request_mi}Mi"},
                                    "limits": {"memory": f"{limit_mi}Mi"}}
    assert proxy == {"name": "kube-rbac-proxy", "image": "proxy:1"}
    assert _JOBSET_DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]["resources"][
        "requests"]["memory"] == "128Mi"  # the manifest's object itself is left alone


@pytest.mark.parametrize("obj", [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "jobset-controller-manager"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "other"}},
])
def test_jobset_transform_leaves_other_objects(obj: dict[str, Any]) -> None:
    assert addons_spec.size_jobset_controller(obj, 100) is None


def test_jobset_manifest_carries_the_sizing_transform() -> None:
    ev = _evaluate("Pulumi.v6e-training.yaml")
    [jobset] = [r for r in ev.of_type("kubernetes:yaml/v2:ConfigFile") if r.name == "jobset"]
    assert jobset.transforms == 1


def test_arm_pools_flavors_select_and_tolerate_arm64() -> None:
    # GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule (A4X's Grace CPUs, Axion
    # C4A): a flavor without the toleration would admit workloads whose pods never
    # schedule, so Kueue's flavor carries it and selects on the architecture.
    ev = harness.evaluate(stack_fixtures.stack_config("a4x"), "test")
    arm_tol = {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
               "effect": "NoSchedule"}
    flavors = _kind(ev, "ResourceFlavor")
    assert sorted(flavors) == ["gb200-4-nolssd-reservation", "gb200-4-reservation"]
    for name, machine in (("gb200-4-reservation", "a4x-highgpu-4g"),
                          ("gb200-4-nolssd-reservation", "a4x-highgpu-4g-nolssd")):
        spec = flavors[name]["spec"]
        assert arm_tol in spec["tolerations"]
        assert spec["nodeLabels"]["kubernetes.io/arch"] == "arm64"
        # the two A4X machines share their GPU label; the machine type tells them apart
        assert spec["nodeLabels"]["node.kubernetes.io/instance-type"] == machine
    ev = harness.evaluate(stack_fixtures.stack_config("c4a"), "test")
    [flavor] = _kind(ev, "ResourceFlavor").values()
    assert flavor["spec"]["tolerations"] == [arm_tol]
    assert flavor["spec"]["nodeLabels"]["kubernetes.io/arch"] == "arm64"


def test_auto_provisioned_arm_gpus_flavor_tolerates_arm64() -> None:
    ev = _ev(slices=[], nodeAutoProvisioning={
        "cpu": 512, "memoryGb": 2048, "accelerators": {"nvidia-gb200": 16, "nvidia-l4": 8}})
    flavors = _kind(ev, "ResourceFlavor")
    gb200, l4 = flavors["nap-nvidia-gb200"]["spec"], flavors["nap-nvidia-l4"]["spec"]
    assert gb200["nodeLabels"] == {"cloud.google.com/gke-accelerator": "nvidia-gb200",
                                   "kubernetes.io/arch": "arm64"}
    # GKE's GPU taint is the flavor's nodeTaint (workloads tolerate it themselves); the Arm
    # taint is tolerated by the flavor, so admitted pods get the toleration.
    assert gb200["tolerations"] == [{"key": "kubernetes.io/arch", "operator": "Equal",
                                     "value": "arm64", "effect": "NoSchedule"}]
    assert gb200["nodeTaints"] == l4["nodeTaints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert "tolerations" not in l4 or l4["tolerations"] == []
