"""Every render is admitted by Kueue onto exactly its own pool's flavor.

The stack's ClusterQueues and ResourceFlavors (under the mock engine) and the JobSets the
submitter renders from the same stack's outputs are checked against Kueue v0.19.2's rules,
written out here from its source:

- pkg/webhooks/clusterqueue_webhook.go validateResourceGroups: a resource is covered by
  one resource group only, a flavor appears in one group only, and each flavor lists the
  group's coveredResources in order;
- pkg/scheduler/flavorassigner/flavorassigner.go: a pod set gets one flavor per resource
  group, the first in order whose nodeTaints the pod tolerates (with the flavor's own
  tolerations), whose nodeLabels satisfy the pod's node selector restricted to the
  flavor's own label keys, and whose quota holds every requested resource of the group.

So a workload that Kueue would leave pending, or admit onto another pool's flavor (and
inject that flavor's labels, so its pods never schedule), fails here.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schema
from conftest import MINIMAL, STACK_FILES, evaluate_shipped
from infra.contract import outputs as contract
from infra.preview import harness
from infra.specs import kueue as kueue_spec
from infra.catalog import pod_resources
from infra.preview.harness import Evaluation
from submit.render import jobset as render
from submit.render.build import build_spec

MIXED: dict[str, dict[str, Any]] = {
    # GPUDirect pools beside a CPU pool, NAP and CPU quota on the system pool.
    "gpudirect-cpu-quota-nap": {
        "slices": [{"name": "mega", "accelerator": "h100-mega-80gb-8", "count": 2},
                   {"name": "cpu", "accelerator": "n2-standard-32-4"},
                   {"name": "v5e", "accelerator": "v5litepod-16", "count": 2}],
        "network": {"gpuNetworksCidr": "192.168.0.0/20"},
        "nodeAutoProvisioning": {"accelerators": {"nvidia-l4": 8}},
        "queues": {"cpuQuota": {"cpu": 16, "memoryGi": 64}}},
    # The same without CPU quota: the queue must still cover cpu and memory.
    "tpu-gpu-no-cpu-quota": {
        "slices": [{"name": "v5p", "accelerator": "v5p-64", "count": 2},
                   {"name": "l4", "accelerator": "l4-4", "count": 3, "capacity": "spot"},
                   {"name": "v6e", "accelerator": "v6e-8-1vm", "count": 2,
                    "capacity": "flex-start"}]},
    "queued-and-teams": {
        "slices": [{"name": "q", "accelerator": "v5p-64", "count": 2, "capacity": "queued"},
                   {"name": "a2", "accelerator": "a100-40gb-8", "count": 2}],
        "queues": {"cpuQuota": {"cpu": 8, "memoryGi": 32},
                   "teams": [{"name": "research", "quota": {"q": 32, "a2": 8}}]}},
}
MIXED["pools-and-classes"] = {
    # Fixed pools and slice classes of the same shapes side by side, teams on both.
    "region": "us-east5", "zones": ["us-east5-b"],
    "slices": [{"name": "v6e", "accelerator": "v6e-16", "count": 2},
               {"name": "v6e-spot", "accelerator": "v6e-64", "count": 1, "capacity": "spot"},
               {"name": "l4", "accelerator": "l4-1", "count": 2}],
    "sliceClasses": [
        {"name": "burst", "shapes": ["v6e-16", "v6e-64"], "capacity": ["spot", "on-demand"],
         "limits": {"chips": 128}},
        {"name": "l4-burst", "shapes": ["l4-1"], "capacity": ["spot"], "limits": {"chips": 4}}],
    "queues": {"teams": [{"name": "evals", "quota": {"burst": 64, "v6e": 16}}]}}
CASES = [p.name for p in STACK_FILES] + list(MIXED)
CLASS_LABEL = "cloud.google.com/compute-class"  # GKE's node label of a ComputeClass's nodes


def own_flavor(flavors: dict[str, dict[str, Any]], pool: Any) -> str:
    """The flavor a pool's (or a class shape's) pods belong on: a fixed pool's labels are
    its pods' selector; a class's flavor names the class and asks nothing the pods do not."""
    selector = dict(pool.node_selector)
    if not pool.compute_class:
        [own] = [n for n, f in flavors.items() if f["spec"]["nodeLabels"] == selector]
        return own
    [own] = [n for n, f in flavors.items()
             if f["spec"]["nodeLabels"].get(CLASS_LABEL) == pool.compute_class
             and f["spec"]["nodeLabels"].items() <= selector.items()]
    return own


def _evaluate(case: str) -> Evaluation:
    if case in MIXED:
        raw = copy.deepcopy(MINIMAL)
        raw.update(copy.deepcopy(MIXED[case]))
        return harness.evaluate(raw, case)
    [path] = [p for p in STACK_FILES if p.name == case]
    return evaluate_shipped(path)


def _quantity(value: Any, resource: str) -> float:
    text = str(value)
    if resource == "cpu":
        milli = pod_resources.cpu_milli(text)
        assert milli is not None, text
        return milli / 1000
    if resource == "memory":
        mi = pod_resources.memory_mi(text)
        assert mi is not None, text
        return mi
    return float(text)


def check_resource_groups(cq: dict[str, Any]) -> None:
    """Kueue v0.19.2's ClusterQueue validation of resource groups."""
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for group in cq["spec"]["resourceGroups"]:
        covered = group["coveredResources"]
        assert not seen_resources & set(covered), f"resource in two groups: {covered}"
        seen_resources |= set(covered)
        for flavor in group["flavors"]:
            assert flavor["name"] not in seen_flavors, f"flavor twice: {flavor['name']}"
            seen_flavors.add(flavor["name"])
            assert [r["name"] for r in flavor["resources"]] == covered, flavor


def _tolerates(taint: dict[str, str], tolerations: list[dict[str, Any]]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value") == taint["value"]:
            return True
    return False


def pod_requests(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod's requests as Kueue counts them (the API's effective pod requests): the sum of
    its containers and native sidecars (init containers with restartPolicy Always)."""
    total: dict[str, float] = {}
    parts = list(pod["containers"]) + [c for c in pod.get("initContainers", [])
                                       if c.get("restartPolicy") == "Always"]
    for c in parts:
        for r, v in ((c.get("resources") or {}).get("requests") or {}).items():
            total[r] = total.get(r, 0) + _quantity(v, r)
    return {r: (f"{v}Mi" if r == "memory" else str(round(v, 3))) for r, v in total.items()}


def assign(cq: dict[str, Any], flavors: dict[str, dict[str, Any]], pod: dict[str, Any],
           pods: int, extra: dict[str, int] | None = None) -> dict[str, str]:
    """resource -> flavor name, as Kueue assigns a pod set of ``pods`` pods (or raises);
    ``extra``: the pod's DRA device requests by quota resource (tests/test_kueue_dra.py)."""
    requests = {**pod_requests(pod), **(extra or {})}
    out: dict[str, str] = {}
    for group in cq["spec"]["resourceGroups"]:
        wanted = [r for r in group["coveredResources"] if r in requests]
        if not wanted:
            continue
        for entry in group["flavors"]:
            spec = flavors[entry["name"]]["spec"]
            tols = list(pod.get("tolerations", [])) + list(spec.get("tolerations", []))
            if not all(_tolerates(t, tols) for t in spec.get("nodeTaints", [])):
                continue
            labels = spec.get("nodeLabels", {})
            selector = {k: v for k, v in pod.get("nodeSelector", {}).items() if k in labels}
            if any(labels[k] != v for k, v in selector.items()):
                continue
            quota = {r["name"]: _quantity(r["nominalQuota"], r["name"])
                     for r in entry["resources"]}
            if all(_quantity(requests[r], r) * pods <= quota[r] for r in wanted):
                out.update({r: entry["name"] for r in wanted})
                break
        else:
            raise AssertionError(f"no flavor admits {requests} x {pods} in {cq['metadata']}")
    assert set(out) == set(requests), f"resources no group covers: {set(requests) - set(out)}"
    return out


@pytest.mark.parametrize("case", CASES)
def test_every_render_is_admitted_on_its_own_pools_flavor(case: str) -> None:
    ev = _evaluate(case)
    objs = kueue_spec.kueue_objects(ev.config)
    flavors = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceFlavor"}
    cqs = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ClusterQueue"}
    for cq in cqs.values():
        check_resource_groups(cq)
    for obj in objs:
        schema.validate(obj)
    outputs = contract.load(harness.plain_outputs(ev, reveal=True))
    lq = outputs.local_queues[0]
    whole: dict[str, dict[str, float]] = {}  # flavor -> what every pool behind it requests
    for pool in outputs.slice_pools:
        spec = build_spec(outputs, workload="w", accelerator=pool.accelerator, pool=pool.name,
                          image="us-docker.pkg.dev/p/r/img:1", namespace=lq.namespace)
        [jobset] = [o for o in render.render(spec) if o["kind"] == "JobSet"]
        [rj] = jobset["spec"]["replicatedJobs"]
        pod = rj["template"]["spec"]["template"]["spec"]
        main = pod["containers"][0]["resources"]
        assert {"cpu", "memory"} <= set(main["requests"]), main
        assert main["limits"] == main["requests"]
        requests = pod_requests(pod)
        pods = rj["replicas"] * rj["template"]["spec"]["parallelism"]
        own = own_flavor(flavors, pool)
        for cq in cqs.values():  # every queue that holds quota of the pool admits it there
            entry = next(e for g in cq["spec"]["resourceGroups"] for e in g["flavors"]
                         if e["name"] == own)
            if all(_quantity(r["nominalQuota"], r["name"]) > 0 for r in entry["resources"]
                   if r["name"] in requests):
                assigned = assign(cq, flavors, pod, pods)
                assert set(assigned.values()) == {own}, (pool.name, assigned)
        nodes = pool.slice_count * pool.vms_per_slice
        total = whole.setdefault(own, {})
        for r, v in requests.items():
            if pool.compute_class or pool.slice_topology:
                # a class's shapes share its quota, a dynamic slicing pool's shapes its
                # sub-blocks: the largest counts
                total[r] = max(total.get(r, 0), _quantity(v, r) * nodes)
            else:
                total[r] = total.get(r, 0) + _quantity(v, r) * nodes
    # the cohort's quota of a pool's flavor holds every pod the pool's nodes can run
    for name, total in whole.items():
        if name.startswith("cpu-"):
            continue  # CPU pools: quota is the VMs' vCPUs, above the pods' share
        quota: dict[str, float] = {}
        for cq in cqs.values():
            for g in cq["spec"]["resourceGroups"]:
                for e in g["flavors"]:
                    if e["name"] == name:
                        for r in e["resources"]:
                            quota[r["name"]] = (quota.get(r["name"], 0)
                                                + _quantity(r["nominalQuota"], r["name"]))
        for r, v in total.items():
            assert v <= quota[r] + 1e-6 and quota[r] - v <= 0.01 * v + 1, (name, r, v, quota)


def test_cpu_only_pod_never_gets_an_accelerator_flavor() -> None:
    # A pod asking only for CPU and memory, without node selector or tolerations (a user's
    # own Job), is given a CPU flavor, never an accelerator flavor it does not tolerate.
    ev = _evaluate("gpudirect-cpu-quota-nap")
    objs = kueue_spec.kueue_objects(ev.config)
    flavors = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceFlavor"}
    [cq] = [o for o in objs if o["kind"] == "ClusterQueue"]
    pod = {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    assert set(assign(cq, flavors, pod, 1).values()) <= {"cpu-cpu", "system-cpu"}
    pod_many = {"containers": [{"resources": {"requests": {"cpu": "1000", "memory": "1Gi"}}}]}
    with pytest.raises(AssertionError, match="no flavor admits"):
        assign(cq, flavors, pod_many, 1)  # beyond the CPU flavors: pending, not a TPU node


def test_accelerator_pod_never_gets_the_system_cpu_flavor() -> None:
    ev = _evaluate("gpudirect-cpu-quota-nap")
    objs = kueue_spec.kueue_objects(ev.config)
    [cq] = [o for o in objs if o["kind"] == "ClusterQueue"]
    [group] = cq["spec"]["resourceGroups"]
    [system] = [f for f in group["flavors"] if f["name"] == "system-cpu"]
    chips = {r["name"]: r["nominalQuota"] for r in system["resources"]}
    assert chips["google.com/tpu"] == chips["nvidia.com/gpu"] == 0


def _pod_of(outputs: contract.StackOutputs, pool: Any, slices: int = 1
            ) -> tuple[dict[str, Any], int]:
    spec = build_spec(outputs, workload="w", accelerator=pool.accelerator, pool=pool.name,
                      image="us-docker.pkg.dev/p/r/img:1",
                      namespace=outputs.local_queues[0].namespace,
                      num_slices=slices if pool.kind == "tpu" else None)
    [jobset] = [o for o in render.render(spec) if o["kind"] == "JobSet"]
    [rj] = jobset["spec"]["replicatedJobs"]
    return (rj["template"]["spec"]["template"]["spec"],
            rj["replicas"] * rj["template"]["spec"]["parallelism"])


def test_class_and_pool_pods_never_take_each_others_flavor() -> None:
    # Kueue tries the next flavor when one has no room (flavorassigner.go), so a class pod
    # that does not fit its class's quota must not fall onto a fixed pool of the same
    # shape (its pods would then select the pool's labels and the class: no node has
    # both), nor a fixed pool's pod onto a class.
    ev = _evaluate("pools-and-classes")
    objs = kueue_spec.kueue_objects(ev.config)
    flavors = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceFlavor"}
    [cq] = [o for o in objs if o["kind"] == "ClusterQueue" and
            o["metadata"]["name"] == "cluster-queue"]
    outputs = contract.load(harness.plain_outputs(ev, reveal=True))
    [burst16] = [p for p in outputs.slice_pools
                 if p.compute_class == "burst" and p.accelerator == "v6e-16"]
    [fixed16] = [p for p in outputs.slice_pools if p.name == "v6e"]
    pod, pods = _pod_of(outputs, burst16)
    assert set(assign(cq, flavors, pod, pods).values()) == {"class-burst"}
    # the shared queue holds 64 of the class's chips: 8 v6e-16 slices do not fit there,
    # and the 32 chips of the fixed v6e-16 pool would hold two of them, but are not taken
    with pytest.raises(AssertionError, match="no flavor admits"):
        assign(cq, flavors, pod, pods * 8)
    pod, pods = _pod_of(outputs, fixed16)
    assert set(assign(cq, flavors, pod, pods).values()) == {"v6e-16-on-demand"}
    with pytest.raises(AssertionError, match="no flavor admits"):
        assign(cq, flavors, pod, pods * 3)  # beyond the pool: pending, not on the class
