"""Slice classes: the config rules, the ComputeClass objects (against the schema written
from GKE's reference), the cluster's auto-provisioning limits, the Kueue flavors and
quotas, and the contract the submitter reads, all under the mock engine."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schema
from conftest import MINIMAL, STACK_FILES, evaluate_shipped
from infra.config.errors import ConfigError
from infra.config.stack import parse
from infra.contract import outputs as contract
from infra.preview import harness
from infra.specs import kueue as kueue_spec
from infra.config.slice_classes import needs_cluster_autoprovisioning as autoscaling_needed
from infra.specs.slice_classes import computeclass

CLUSTER = "gcp:container/cluster:Cluster"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"

BURST = {"name": "burst", "shapes": ["v6e-16", "v6e-64"],
         "capacity": [{"mode": "reservation", "reservation": "projects/shared-res/reservations/v6e-a",
                       "zone": "us-east5-b"}, "spot", "on-demand"],
         "limits": {"chips": 128, "slices": 4}}


def _raw(**over: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw.update({"region": "us-east5", "zones": ["us-east5-b"],
                "slices": [{"name": "fixed", "accelerator": "v6e-16", "count": 1}],
                "sliceClasses": [copy.deepcopy(BURST)]})
    raw.update(over)
    return raw


def _problems(**over: Any) -> list[str]:
    with pytest.raises(ConfigError) as e:
        parse(_raw(**over))
    return e.value.problems


def _with_class(**fields: Any) -> dict[str, Any]:
    cls = copy.deepcopy(BURST)
    cls.update(fields)
    return cls


# ---------------------------------------------------------------- config


def test_a_class_parses_with_its_limits_and_priorities() -> None:
    cfg = parse(_raw())
    [cls] = cfg.slice_classes
    assert [s.name for s in cls.shapes] == ["v6e-16", "v6e-64"]
    assert [c.mode for c in cls.capacity] == ["reservation", "spot", "on-demand"]
    assert cls.capacity[0].reservation == "v6e-a" and cls.capacity[0].project == "shared-res"
    assert (cls.max_chips, cls.max_slices) == (128, 4)
    assert cls.max_pods_per_node == 15


@pytest.mark.parametrize("fields, fragments", [
    ({"shapes": ["v6e-17"]}, ["sliceClasses[0].shapes[0]", "v6e-17"]),
    ({"shapes": ["n2-standard-32-1"]}, ["CPU shape"]),
    ({"shapes": ["h100-mega-80gb-8"]}, ["GPUDirect", "additional node networks"]),
    ({"shapes": ["tpu7x-4x4x4"]}, ["workload policy"]),
    ({"shapes": ["v6e-16", "l4-1"]}, ["mixes gpu, tpu"]),
    ({"shapes": ["l4-1", "l4-2"]}, ["GPU class offers one"]),
    ({"capacity": ["queued"]}, ["queued provisioning is a fixed-pool mode"]),
    ({"capacity": ["spott"]}, ["did you mean spot?"]),
    ({"capacity": ["spot", "spot"]}, ["already listed"]),
    ({"capacity": ["flex-start"]}, ["multi-host slice", "single-host"]),
    ({"shapes": ["v6e-8-1vm"], "capacity": ["flex-start"], "zones": ["us-east5-b"]}, []),
    ({"shapes": ["v4-8"], "capacity": ["flex-start"]}, ["flex-start does not support v4-8"]),
    ({"capacity": [{"mode": "reservation", "reservation": "r", "zone": "us-east5-a"}]},
     ["is not one of the class's zones"]),
    ({"capacity": [{"mode": "spot", "reservation": "r"}]}, ["reservation entries only"]),
    ({"limits": {"chips": 32}}, ["below one slice of v6e-64"]),
    ({"limits": {"slices": 0}}, ["below one slice"]),
    ({"limits": {}}, ["sets neither chips nor slices"]),
    ({"name": "gke-burst"}, ["cannot begin with 'gke'"]),
    ({"name": "fixed"}, ["already the name of a slice pool"]),
    ({"nodes": {"maxPodsPerNode": 300}}, ["outside 8-256"]),
    ({"nodes": {"taints": [{"key": "google.com/tpu", "value": "x"}]}}, ["belongs to GKE"]),
    ({"nodes": {"idleMinutes": 0}}, ["outside 1-1440"]),
    ({"nodes": {"secondaryBootDisk": "images/x"}}, ["is not a disk image"]),
    ({"zones": ["us-east5-c"]}, ["is not one of the stack's zones"]),
    ({"colour": "red"}, ["sliceClasses[0].colour: unknown key"]),
])
def test_config_refuses_what_gke_would(fields: dict[str, Any], fragments: list[str]) -> None:
    raw = _raw(sliceClasses=[_with_class(**fields)])
    if not fragments:
        parse(raw)  # the control case parses
        return
    with pytest.raises(ConfigError) as e:
        parse(raw)
    text = "\n".join(e.value.problems)
    for fragment in fragments:
        assert fragment in text, text


def test_flex_start_zone_and_version_are_checked() -> None:
    v6e_single = {"shapes": ["v6e-8-1vm"], "capacity": ["flex-start"]}
    [p] = _problems(region="us-central1", zones=["us-central1-b"], slices=[],
                    sliceClasses=[_with_class(**v6e_single, limits={"slices": 1})])
    assert "offered in asia-northeast1-b, us-east5-a, us-east5-b" in p
    problems = _problems(gkeVersion="1.33.0-gke.1000000",
                         sliceClasses=[_with_class(**v6e_single, limits={"slices": 1})])
    assert any("flex-start needs GKE 1.33.0-gke.1712000" in p for p in problems)


def test_versions_gate_classes_and_reservations() -> None:
    problems = _problems(gkeVersion="1.31.1-gke.100")
    text = "\n".join(problems)
    assert "slice classes need GKE 1.33.2-gke.1111000" in text
    assert "reservations in a ComputeClass need GKE 1.31.1-gke.2105000" in text
    parse(_raw(gkeVersion="1.33.2-gke.1111000"))


def test_secure_boot_is_checked_against_the_pinned_version_or_the_channel_default() -> None:
    # RAPID's default (1.36.4) and a pin at the floor take the field: on by default.
    assert parse(_raw(releaseChannel="RAPID")).slice_classes[0].secure_boot
    assert parse(_raw(gkeVersion="1.36.3-gke.1244000")).slice_classes[0].secure_boot
    # REGULAR's default (1.35.7) and an older pin do not: left off by default ...
    assert not parse(_raw()).slice_classes[0].secure_boot
    assert not parse(_raw(gkeVersion="1.36.3-gke.1000000")).slice_classes[0].secure_boot
    # ... and refused when asked for.
    cls = _with_class(nodes={"secureBoot": True})
    [p] = _problems(sliceClasses=[cls])
    assert p.startswith("sliceClasses[0].nodes.secureBoot: Secure Boot on a class's pools")
    assert "needs GKE 1.36.3-gke.1244000 or later; the REGULAR channel's default version" in p
    [p] = _problems(gkeVersion="1.35.9-gke.100", sliceClasses=[cls])
    assert "gkeVersion is 1.35.9-gke.100" in p
    assert parse(_raw(releaseChannel="RAPID", sliceClasses=[cls])).slice_classes[0].secure_boot
    off = _with_class(nodes={"secureBoot": False})
    assert not parse(_raw(releaseChannel="RAPID", sliceClasses=[off])).slice_classes[0].secure_boot
    # The object carries the field only when on.
    for raw, present in ((_raw(), False), (_raw(releaseChannel="RAPID"), True)):
        obj = computeclass.compute_class(parse(raw).slice_classes[0], service_account="n@p")
        assert ("shieldedInstanceConfig" in obj["spec"]["nodePoolAutoCreation"]) is present


def test_team_quotas_may_name_a_class() -> None:
    cfg = parse(_raw(queues={"teams": [{"name": "evals", "quota": {"burst": 64}}]}))
    assert dict(cfg.queues.teams[0].quota) == {"burst": 64}
    [p] = _problems(queues={"teams": [{"name": "evals", "quota": {"burst": 256}}]})
    assert "more than the 128 chips" in p


# ---------------------------------------------------------------- objects


def _class_objects(ev: harness.Evaluation) -> dict[str, dict[str, Any]]:
    return {r.name: harness._plain(r.inputs) for r in ev.of_type(COMPUTE_CLASS)}


def test_compute_class_objects_validate_and_try_capacity_in_order() -> None:
    ev = harness.evaluate(_raw(), "classes")
    [obj] = _class_objects(ev).values()
    full = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"],
            "spec": obj["spec"]}
    schema.validate(full)
    spec = obj["spec"]
    assert spec["nodePoolAutoCreation"]["enabled"] is True
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert spec["nodePoolConfig"]["serviceAccount"].endswith(".iam.gserviceaccount.com")
    rules = spec["priorities"]
    assert [(r["tpu"]["topology"], "reservations" in r, r.get("spot")) for r in rules] == [
        ("4x4", True, None), ("8x8", True, None), ("4x4", False, True), ("8x8", False, True),
        ("4x4", False, False), ("8x8", False, False)]
    assert rules[0]["reservations"] == {"affinity": "Specific", "specific": [
        {"name": "v6e-a", "project": "shared-res", "zones": ["us-east5-b"]}]}
    # GKE refuses location.zones on a rule with specific reservations; other rules keep it.
    assert ["location" in r for r in rules] == [False, False, True, True, True, True]
    assert rules[2]["location"] == {"zones": ["us-east5-b"]}
    assert rules[0]["tpu"] == {"type": "tpu-v6e-slice", "count": 4, "topology": "4x4"}
    assert all(r["nodeLabels"] == {"accelstack.dev/capacity": "class"} for r in rules)
    # v6e hosts boot from Hyperdisk only: a created pool left to GKE's pd-balanced default
    # would be refused by Compute Engine.
    assert all(r["storage"]["bootDiskType"] == "hyperdisk-balanced" for r in rules)


def test_every_created_pool_boots_from_a_disk_its_machine_takes() -> None:
    from infra.catalog import boot_disks

    seen = 0
    for path in STACK_FILES:
        ev = evaluate_shipped(path)
        objs = {o["metadata"]["name"]: o for o in _class_objects(ev).values()}
        for cls in ev.config.slice_classes:
            rules = objs[cls.name]["spec"]["priorities"]
            # priorities: each capacity entry, then each shape within it
            for i, rule in enumerate(rules):
                machine = cls.shapes[i % len(cls.shapes)].machine_type
                assert rule["storage"]["bootDiskType"] in (boot_disks.allowed(machine) or ()), \
                    (path.name, cls.name, machine)
                seen += 1
    assert seen


def _gke_accepts(obj: dict[str, Any]) -> None:
    """Rules GKE holds a ComputeClass to beyond its schema: no location.zones on a rule
    with specific reservations (the class goes into an error state: "contains priorities
    using location config with specific reservations enabled"; google/skills
    gke-compute-classes references/compute-class-debug.md)."""
    for i, rule in enumerate(obj["spec"]["priorities"]):
        if (rule.get("reservations") or {}).get("affinity") == "Specific":
            assert "zones" not in (rule.get("location") or {}), (obj["metadata"]["name"], i)


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_example_stacks_compute_classes_validate(path: Any) -> None:
    ev = evaluate_shipped(path)
    for obj in _class_objects(ev).values():
        schema.validate(obj)
        _gke_accepts(obj)
        if ev.config.release_channel == "RAPID" or ev.config.gke_version:
            # Secure Boot where the stack's version takes it (v6e-burst: RAPID)
            assert "shieldedInstanceConfig" in obj["spec"]["nodePoolAutoCreation"]
    assert bool(_class_objects(ev)) == bool(ev.config.slice_classes)


def test_schema_refuses_what_the_reference_does() -> None:
    cfg = parse(_raw())
    obj = computeclass.compute_class(cfg.slice_classes[0], service_account="n@p.iam.gserviceaccount.com")
    schema.validate(obj)
    bad = copy.deepcopy(obj)
    bad["spec"]["priorities"][0]["tpu"]["chips"] = 4
    with pytest.raises(Exception, match="chips"):
        schema.validate(bad)
    bad = copy.deepcopy(obj)
    del bad["spec"]["whenUnsatisfiable"]
    with pytest.raises(Exception, match="whenUnsatisfiable"):
        schema.validate(bad)
    bad = copy.deepcopy(obj)
    bad["spec"]["priorities"][0]["maxPodsPerNode"] = 300
    with pytest.raises(Exception, match="300"):
        schema.validate(bad)


def test_cluster_autoprovisioning_covers_the_classes_unless_the_version_does_not_need_it(
        ) -> None:
    ev = harness.evaluate(_raw(), "classes")
    ca = harness._plain(ev.of_type(CLUSTER)[0].inputs)["clusterAutoscaling"]
    assert ca["enabled"] is True
    limits = {x["resourceType"]: x["maximum"] for x in ca["resourceLimits"]}
    # the fixed v6e-16 pool (16 chips) and the class's 128 chips
    assert limits["tpu-v6e-slice"] == 16 + 128
    # the class's hosts: 128 chips / 4 per VM = 32 ct6e-standard-4t VMs of 180 vCPUs
    assert limits["cpu"] >= 32 * 180 and limits["memory"] >= 32 * 720
    ev = harness.evaluate(_raw(gkeVersion="1.33.3-gke.1136000"), "classes")
    ca = harness._plain(ev.of_type(CLUSTER)[0].inputs)["clusterAutoscaling"]
    assert ca["enabled"] is False
    # a minor-only pin may resolve to an older patch: the safe side
    assert autoscaling_needed("1.33") and not autoscaling_needed("1.34")
    assert autoscaling_needed("1.33.2-gke.1111000")


def test_kueue_flavor_and_quota_equal_the_class_limits() -> None:
    cfg = parse(_raw(queues={"teams": [{"name": "evals", "quota": {"burst": 32}}]}))
    objs = kueue_spec.kueue_objects(cfg)
    [flavor] = [o for o in objs if o["kind"] == "ResourceFlavor"
                and o["metadata"]["name"] == "class-burst"]
    assert flavor["spec"]["nodeLabels"] == {"cloud.google.com/compute-class": "burst",
                                            "accelstack.dev/capacity": "class"}
    quotas = {}
    for cq in (o for o in objs if o["kind"] == "ClusterQueue"):
        for f in cq["spec"]["resourceGroups"][0]["flavors"]:
            if f["name"] == "class-burst":
                quotas[cq["metadata"]["name"]] = {r["name"]: r["nominalQuota"]
                                                  for r in f["resources"]}["google.com/tpu"]
    assert quotas == {"cluster-queue": 96, "evals": 32}
    for o in objs:
        schema.validate(o)


def test_contract_lists_each_shape_of_a_class_and_loads_without_classes() -> None:
    ev = harness.evaluate(_raw(), "classes")
    data = harness.plain_outputs(ev, reveal=True)
    outputs = contract.load(data)
    entries = [p for p in outputs.slice_pools if p.compute_class]
    assert [(p.name, p.accelerator, p.slice_count, p.node_pools) for p in entries] == [
        ("burst", "v6e-16", 4, ()), ("burst", "v6e-64", 2, ())]
    assert entries[0].node_selector == {
        "cloud.google.com/compute-class": "burst", "accelstack.dev/capacity": "class",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4"}
    assert {"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "burst",
            "effect": "NoSchedule"} in entries[0].tolerations
    # The class has a Spot tier: GKE taints the Spot nodes it creates.
    spot = {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true",
            "effect": "NoSchedule"}
    assert spot in entries[0].tolerations
    flavor = kueue_spec.kueue_objects(parse(_raw()))
    [f] = [o for o in flavor if o["metadata"]["name"] == "class-burst"]
    assert spot in f["spec"]["tolerations"]
    assert spot not in f["spec"]["nodeTaints"]  # the class's other tiers are not Spot
    no_spot = parse(_raw(sliceClasses=[_with_class(capacity=["on-demand"])]))
    [f] = [o for o in kueue_spec.kueue_objects(no_spot)
           if o["metadata"]["name"] == "class-burst"]
    assert spot not in f["spec"].get("tolerations", [])
    [info] = outputs.slice_classes
    assert (info.name, info.capacity, info.max_chips, info.max_slices) == (
        "burst", ("reservation:v6e-a", "spot", "on-demand"), 128, 4)
    # a contract written before classes existed still loads
    old = copy.deepcopy(data)
    old["accelstack"].pop("sliceClasses")
    old["accelstack"]["slicePools"] = [p for p in old["accelstack"]["slicePools"]
                                       if "computeClass" not in p]
    loaded = contract.load(old)
    assert loaded.slice_classes == () and all(not p.compute_class for p in loaded.slice_pools)


# -- a newcomer's paste (issue 42) --------------------------------------------------------------

def test_one_mistake_is_one_error() -> None:
    # flex-start on a class of two multi-host shapes, and a team quota naming that class:
    # the entry's error, once, and not the quota's "names no slice pool" after it.
    queues = {"namespace": "research", "teams": [
        {"name": "evals", "namespace": "evals", "quota": {"burst": 64}}]}
    problems = _problems(sliceClasses=[_with_class(capacity=["spot", "flex-start"])],
                         queues=queues)
    assert problems == [
        "sliceClasses[0].capacity[1].mode: v6e-16, v6e-64 are multi-host slices; GKE "
        "documents flex-start for single-host TPU slices only "
        "(https://cloud.google.com/kubernetes-engine/docs/concepts/dws): give flex-start a "
        "class of single-host shapes of its own"]


def test_the_docs_example_class_holds_when_pasted(tmp_path: Any) -> None:
    import re
    from pathlib import Path

    from conftest import ROOT

    page = (ROOT / "docs" / "slice-classes.md").read_text()
    block = re.search(r"## Declaring a class\n\n```yaml\n(.*?)```", page, re.S)
    assert block is not None
    stack = (ROOT / "stacks" / "Pulumi.v6e-burst.yaml").read_text()
    start, end = stack.index("  accelstack:sliceClasses:"), stack.index("  accelstack:addons:")
    pasted = "".join(f"  {line}\n" if line else "\n" for line in block.group(1).splitlines())
    path = Path(tmp_path) / "Pulumi.pasted.yaml"
    path.write_text(stack[:start] + pasted + stack[end:])
    ev = harness.evaluate_file(path)  # raises with FILE:LINE problems if refused
    classes = [r.inputs["metadata"]["name"] for r in ev.resources if r.type == COMPUTE_CLASS]
    assert sorted(classes) == ["burst", "short"]
