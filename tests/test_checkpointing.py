"""GKE multi-tier checkpointing: the stack key and its refusals, what the program declares
(add-on, CheckpointConfiguration validated against the controller's CRD, the driver's
bucket grant, memory left for pods and Kueue), and `--local-checkpoint-dir` in the render,
`describe`, `accelerators` and run-local."""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pulumi
import pytest
from click.testing import CliRunner

import doc_pages
import schema
from conftest import ROOT
from infra.catalog import pod_resources
from infra.catalog.tables import vm_shape
from infra.config import checkpointing as rules
from infra.config import stack as config
from infra.config.errors import ConfigError
from infra.config.stack_file import load as load_stack_file
from infra.contract import outputs as contract
from infra.contract.outputs import StackOutputs
from infra.preview import cli as preview
from infra.preview import harness
from infra.specs import checkpointing as spec
from infra.specs import kueue
from submit import api
from submit.cli.app import main as submit_main
from submit.render import checkpointing as render_ckpt
from submit.render.spec import SpecError
from submit.state import checkpointing as state_ckpt

STACK_FILE = ROOT / "stacks" / "Pulumi.v6e-mtc.yaml"
V6E = "ct6e-standard-4t"


def _raw() -> dict[str, Any]:
    return copy.deepcopy(load_stack_file(STACK_FILE).raw)


@lru_cache(maxsize=1)
def _evaluation() -> harness.Evaluation:
    return harness.evaluate(_raw(), "v6e-mtc")


@lru_cache(maxsize=1)
def _outputs() -> StackOutputs:
    return contract.load(harness.plain_outputs(_evaluation(), reveal=True))


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config.parse(raw)
    return info.value.problems


# ----------------------------------------------------------------------------------
# The stack key


def test_ram_disk_follows_the_documented_rule() -> None:
    cfg = config.parse(_raw())
    assert cfg.checkpointing is not None
    # 840 GB over the 16 hosts of a v6e-64 slice, twice, plus 15% (MaxText's sizing rule).
    expected = 2 * 840e9 / 2**20 / 16 * 1.15
    assert cfg.checkpointing.ram_disk("v6e-spot") == pytest.approx(expected, abs=1)
    assert rules.ram_disk_for(840e9 / 2**20, 16) == cfg.checkpointing.ram_disk("v6e-spot")
    assert cfg.checkpointing.bucket == "my-ml-project-trillium-mtc-checkpoints"
    assert cfg.checkpointing.backup_interval_minutes == 30


def test_a_fixed_ram_disk_is_taken_as_given() -> None:
    raw = _raw()
    del raw["checkpointing"]["checkpointSize"]
    raw["checkpointing"]["ramDisk"] = "60Gi"
    cfg = config.parse(raw)
    assert cfg.checkpointing is not None and cfg.checkpointing.ram_disk("v6e-spot") == 61440


@pytest.mark.parametrize("change,fragment", [
    (lambda r: r["checkpointing"].update(pools=["v6e-spt"]),
     "checkpointing.pools[0]: 'v6e-spt' names no slice pool of this stack; did you mean "
     "v6e-spot?"),
    (lambda r: r["slices"][0].update(count=1),
     "checkpointing.pools[0]: pool 'v6e-spot' has 1 slice; checkpoints are replicated "
     "across slices, so it needs 2 or more"),
    (lambda r: r["slices"].__setitem__(0, {"name": "v6e-spot", "accelerator": "tpu7x-4x4x4",
                                          "count": 2, "capacity": "spot"}),
     "pool 'v6e-spot' is tpu7x-128; multi-tier checkpointing is documented for TPU v4, "
     "v5e, v5p, v6e"),
    (lambda r: r["checkpointing"].update(store="datasets"),
     "checkpointing.store: 'datasets' is not a Cloud Storage store of storage.stores"),
    (lambda r: r["storage"]["stores"][0].update(hierarchicalNamespace=False),
     "checkpointing.store: store 'checkpoints' has no hierarchical namespace"),
    (lambda r: r["checkpointing"].update(ramDisk="60Gi"),
     "checkpointing: give exactly one of ramDisk (per node) and checkpointSize"),
    (lambda r: r["checkpointing"].update(checkpointSize="lots"),
     "checkpointing.checkpointSize: 'lots' is not a memory size"),
    (lambda r: r["checkpointing"].update(checkpointSize="8T"),
     "checkpointing: a RAM disk of 1096726Mi on pool 'v6e-spot' does not fit beside the pod"),
    (lambda r: r["checkpointing"].update(backupIntervalMinutes=0),
     "checkpointing.backupIntervalMinutes: 0 is not a number of minutes (1 or more)"),
    (lambda r: r.update(gkeVersion="1.32.3-gke.1170000", releaseChannel=None),
     "checkpointing: multi-tier checkpointing needs GKE 1.32.4-gke.1415000 or later; "
     "gkeVersion is 1.32.3-gke.1170000"),
    (lambda r: r["slices"].append({"name": "v6e-more", "accelerator": "v6e-64", "count": 2,
                                   "capacity": "spot"}),
     "checkpointing.pools: pool 'v6e-spot' shares its slice type and capacity with pool "
     "'v6e-more', which is not listed"),
    (lambda r: r["checkpointing"].update(ramdisk="1Gi"),
     "checkpointing.ramdisk: unknown key; did you mean ramDisk?"),
    (lambda r: r["checkpointing"].update(pools=[]),
     "checkpointing.pools: is empty; name the slice pools"),
    (lambda r: (r.update(sliceClasses=[{"name": "burst", "shapes": ["v6e-64"],
                                        "capacity": ["spot"], "limits": {"slices": 2}}]),
                r["checkpointing"].update(pools=["v6e-spot", "burst"])),
     "checkpointing.pools[1]: 'burst' is a slice class; multi-tier checkpointing is "
     "documented only on node pools the stack creates, not on node pools GKE auto-creates "
     "for a ComputeClass; name a slice pool (slices) instead"),
], ids=["unknown-pool", "one-slice", "unsupported-tpu", "not-gcs", "no-hns", "both-sizes", "bad-size", "does-not-fit", "zero-interval", "old-gke", "shared-flavor",
        "typo", "no-pools", "slice-class"])
def test_refusals(change: Any, fragment: str) -> None:
    raw = _raw()
    raw["storage"]["stores"].append({"name": "datasets", "kind": "filestore", "tier": "ZONAL",
                                     "capacityGb": 1024,
                                     "access": {"pretraining": "read-only"}})
    change(raw)
    problems = _problems(raw)
    assert any(fragment in p for p in problems), problems


def test_refusal_names_file_and_line(tmp_path: Path) -> None:
    text = STACK_FILE.read_text().replace("backupIntervalMinutes: 30",
                                          "backupIntervalMinutes: 0")
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(text)
    line = text.splitlines().index("    backupIntervalMinutes: 0") + 1
    result = CliRunner().invoke(preview.main, [str(path), "--quiet"])
    assert result.exit_code == 2
    assert (f"{path}:{line}: checkpointing.backupIntervalMinutes: 0 is not a number of "
            "minutes (1 or more)") in result.output
    assert "Traceback" not in result.output


def test_a_pools_stack_refuses_the_key() -> None:
    from infra.config.errors import ConfigError as Error
    from infra.config.pools import parse_pools

    with pytest.raises(Error) as info:
        parse_pools({"onCluster": {"stack": "host"}, "checkpointing": {}}, "extra")
    assert any(p.startswith("checkpointing: is a setting of the cluster")
               for p in info.value.problems)


# ----------------------------------------------------------------------------------
# What the program declares


def test_cluster_turns_the_add_on_on() -> None:
    cluster = _evaluation().of_type("gcp:container/cluster:Cluster")[0]
    assert cluster.inputs["addonsConfig"]["highScaleCheckpointingConfig"] == {"enabled": True}
    assert cluster.inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert cluster.inputs["workloadIdentityConfig"]["workloadPool"] == "my-ml-project.svc.id.goog"
    assert not cluster.inputs.get("enableAutopilot")  # MTC does not run on Autopilot


def test_no_add_on_without_the_key() -> None:
    raw = _raw()
    del raw["checkpointing"]
    cluster = harness.evaluate(raw, "plain").of_type("gcp:container/cluster:Cluster")[0]
    assert "highScaleCheckpointingConfig" not in cluster.inputs["addonsConfig"]


def test_checkpoint_configuration_validates_against_the_crd() -> None:
    [res] = _evaluation().of_type("kubernetes:checkpointing.gke.io/v1:CheckpointConfiguration")
    obj = {k: res.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
    schema.validate(obj)
    s = obj["spec"]
    assert s["cloudStorageBucketName"] == "my-ml-project-trillium-mtc-checkpoints"
    assert s["nodeSelector"] == {"accelstack.dev/slice-pool": "v6e-spot"}
    assert s["inMemoryVolumeSize"] == "115157Mi"
    assert "mountOptions" not in s  # not a field of the CRD (xpk writes it)


def test_the_crd_refuses_a_field_it_does_not_have() -> None:
    obj = spec.configurations(config.parse(_raw()))[0]
    obj["spec"]["mountOptions"] = ["implicit-dirs"]
    with pytest.raises(AssertionError, match="mountOptions"):
        schema.validate(obj)


def test_configurations_never_overlap() -> None:
    raw = _raw()
    raw["slices"].append({"name": "v6e-more", "accelerator": "v6e-64", "count": 2,
                          "capacity": "spot"})
    raw["checkpointing"]["pools"] = ["v6e-spot", "v6e-more"]
    selectors = [c["spec"]["nodeSelector"] for c in spec.configurations(config.parse(raw))]
    assert selectors == [{"accelstack.dev/slice-pool": "v6e-spot"},
                         {"accelstack.dev/slice-pool": "v6e-more"}]
    # Each configuration selects the nodes of exactly one pool, by the labels the program
    # puts on them: the controller gives a node a second configuration covers no driver.
    evaluation = harness.evaluate(raw, "two-mtc-pools")
    labels = {r.name: r.inputs["nodeConfig"]["labels"]
              for r in evaluation.of_type("gcp:container/nodePool:NodePool")}
    for res in evaluation.of_type("kubernetes:checkpointing.gke.io/v1:CheckpointConfiguration"):
        selector = res.inputs["spec"]["nodeSelector"].items()
        assert len([n for n, have in labels.items() if selector <= have.items()]) == 2, (
            res.name, labels)  # the two slices' node pools of one pool


def test_driver_may_use_the_bucket() -> None:
    grant = _evaluation().named("checkpointing-driver")
    assert grant.inputs == {
        "bucket": "my-ml-project-trillium-mtc-checkpoints", "role": "roles/storage.objectUser",
        "member": "principal://iam.googleapis.com/projects/123456789012/locations/global/"
                  "workloadIdentityPools/my-ml-project.svc.id.goog/subject/ns/"
                  "gke-managed-checkpointing/sa/gke-checkpointing-multitier-node"}
    bucket = _evaluation().of_type("gcp:storage/bucket:Bucket")[0]
    assert bucket.inputs["hierarchicalNamespace"] == {"enabled": True}


def _existing_bucket() -> dict[str, Any]:
    raw = _raw()
    raw["storage"]["stores"][0] = {"name": "checkpoints", "kind": "gcs", "create": False,
                                   "bucket": "theirs", "access": {"pretraining": "read-write"}}
    return raw


def test_an_existing_bucket_with_hierarchical_namespace_is_read_and_used() -> None:
    cfg = config.parse(_existing_bucket())
    assert cfg.checkpointing is not None and cfg.checkpointing.existing_bucket
    evaluation = harness.evaluate(_existing_bucket(), "existing")
    assert evaluation.named("checkpointing-driver").inputs["bucket"] == "theirs"
    [res] = evaluation.of_type("kubernetes:checkpointing.gke.io/v1:CheckpointConfiguration")
    assert res.inputs["spec"]["cloudStorageBucketName"] == "theirs"
    assert not evaluation.of_type("gcp:storage/bucket:Bucket")


def test_an_existing_bucket_without_it_stops_the_update(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.components.checkpointing import CheckpointBucketError

    monkeypatch.setattr(harness._Mocks, "flat_buckets", frozenset({"theirs"}))
    with pytest.raises(CheckpointBucketError) as info:
        harness.evaluate(_existing_bucket(), "existing-flat")
    assert isinstance(info.value, pulumi.RunError)  # printed as one line, no traceback
    assert str(info.value) == (
        "checkpointing.store: bucket 'theirs' has no hierarchical namespace, which "
        "multi-tier checkpointing's backups need and an existing bucket cannot be given; "
        "name a bucket created with one, or let the stack create the store (create: true, "
        "hierarchicalNamespace: true)")
    assert str(info.value) in doc_pages.text("docs/checkpointing.md")  # the page shows it


def test_pod_share_and_quota_leave_the_ram_disk() -> None:
    cfg = config.parse(_raw())
    ram = cfg.checkpointing.ram_disk("v6e-spot") if cfg.checkpointing else 0
    full = pod_resources.pod_share(V6E)
    less = pod_resources.pod_share(V6E, ram)
    assert full is not None and less is not None
    assert full.memory_mi - ram - 64 < less.memory_mi <= full.memory_mi - ram
    [flavor] = [f for f in kueue.flavors(cfg) if f.resource == "google.com/tpu"]
    assert flavor.memory_mi == less.memory_mi * 32  # two slices of 16 nodes
    [pool] = _outputs().slice_pools
    assert pool.checkpointing is not None
    assert pool.checkpointing.pod_memory_mi == less.memory_mi
    assert pool.checkpointing.ram_disk_mi == ram


def test_a_fleet_manager_quota_leaves_the_ram_disk() -> None:
    # A fleet counts a worker's pool as the worker's own Kueue does: less the RAM disk.
    from infra.specs.fleet import manager

    cfg = config.parse(_raw())
    [own] = [f for f in kueue.flavors(cfg) if f.resource == "google.com/tpu"]
    [fleet] = manager.flavors({"east": _outputs()})
    assert fleet.memory_mi == own.memory_mi


def test_a_pathways_worker_leaves_the_ram_disk() -> None:
    # Without --local-checkpoint-dir too: the RAM disk is taken on every node of the pool.
    raw = _raw()
    raw["pathways"] = {"enabled": True, "scratch": "gs://my-ml-project-pathways/scratch"}
    outputs = contract.load(harness.plain_outputs(harness.evaluate(raw, "mtc-pathways"),
                                                  reveal=True))
    [pool] = [p for p in outputs.slice_pools if p.checkpointing is not None]
    assert pool.checkpointing is not None
    objs = _workload(local_checkpoint_dir=None, pathways=True).render(outputs)
    js = next(o for o in objs if o["kind"] == "JobSet")
    [worker] = [c for rj in js["spec"]["replicatedJobs"]
                for c in rj["template"]["spec"]["template"]["spec"]["containers"]
                if c["name"] == "pathways-worker"]
    assert worker["resources"]["requests"]["memory"] == f"{pool.checkpointing.pod_memory_mi}Mi"


def test_contract_without_the_key_loads() -> None:
    data = harness.plain_outputs(_evaluation(), reveal=True)
    data = copy.deepcopy(data)
    data["accelstack"]["slicePools"][0].pop("checkpointing")
    assert contract.load(data).slice_pools[0].checkpointing is None
    data["accelstack"]["slicePools"][0]["checkpointing"] = {"bucket": "b", "ramDiskMi": -1}
    with pytest.raises(contract.ContractError, match=r"checkpointing.ramDiskMi: -1"):
        contract.load(data)


# ----------------------------------------------------------------------------------
# --local-checkpoint-dir


def _workload(**changes: Any) -> api.Workload:
    base = api.Workload(name="ckpt", accelerator="v6e-64", image="python:3.12",
                        command="python train.py", num_slices=2, local_checkpoint_dir="/local")
    return base.replace(**changes)


def _pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    js = next(o for o in objs if o["kind"] == "JobSet")
    return dict(js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"])


def test_render_mounts_the_ram_tier_with_memory_that_fits() -> None:
    objs = _workload().render(_outputs())
    for obj in objs:
        schema.validate(obj)
    pod = _pod(objs)
    assert {"name": "local-checkpoint",
            "csi": {"driver": "multitier-checkpoint.csi.storage.gke.io"}} in pod["volumes"]
    main = pod["containers"][0]
    assert {"name": "local-checkpoint", "mountPath": "/local"} in main["volumeMounts"]
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["ACCELSTACK_LOCAL_CHECKPOINT_DIR"] == "/local"
    assert env["ACCELSTACK_CHECKPOINT_BACKUP_INTERVAL_MINUTES"] == "30"
    assert pod["nodeSelector"]["accelstack.dev/slice-pool"] == "v6e-spot"
    [pool] = _outputs().slice_pools
    assert pool.checkpointing is not None
    memory = main["resources"]["requests"]["memory"]
    assert memory == f"{pool.checkpointing.pod_memory_mi}Mi"
    # the pod and the RAM disk together fit the node's allocatable
    shape = vm_shape(V6E)
    assert shape is not None and pool.checkpointing.pod_memory_mi is not None
    node = pod_resources.allocatable(shape)
    assert pool.checkpointing.pod_memory_mi + pool.checkpointing.ram_disk_mi < node.memory_mi


def test_without_the_option_nothing_is_mounted() -> None:
    pod = _pod(_workload(local_checkpoint_dir=None).render(_outputs()))
    assert all("csi" not in v for v in pod["volumes"])
    # the RAM disk is taken on every node of the pool: the pod still leaves it free
    [pool] = _outputs().slice_pools
    assert pool.checkpointing is not None
    assert (pod["containers"][0]["resources"]["requests"]["memory"]
            == f"{pool.checkpointing.pod_memory_mi}Mi")


@pytest.mark.parametrize("changes,option,fragment", [
    ({"num_slices": 1}, "--num-slices", "1: multi-tier checkpointing replicates checkpoints "
                                        "across slices, so it needs --num-slices 2 or more"),
    ({"local_checkpoint_dir": "local"}, "--local-checkpoint-dir",
     "'local' is not an absolute directory below /"),
    ({"local_checkpoint_dir": "/dev/shm/ckpt"}, "--local-checkpoint-dir",
     "'/dev/shm/ckpt' overlaps /dev/shm"),
    ({"memory": "590000Mi"}, "--memory", "and the 115157Mi checkpoint RAM disk"),
])
def test_render_refusals(changes: dict[str, Any], option: str, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        _workload(**changes).render(_outputs())
    assert info.value.option == option and fragment in info.value.message


def test_refused_on_a_pool_without_it() -> None:
    from stack_fixtures import outputs

    with pytest.raises(SpecError) as info:
        _workload(accelerator="v6e-256").render(outputs("v6e-multislice"))
    assert info.value.option == "--local-checkpoint-dir"
    assert info.value.message.startswith("pool 'v6e-256' has no multi-tier checkpointing "
                                         "(pools with it: none)")


def test_refused_on_pathways() -> None:
    tier = render_ckpt.LocalCheckpoint("/local")
    with pytest.raises(SpecError, match="colocated Python"):
        render_ckpt.check(tier.path, _outputs(), _outputs().slice_pools[0], 2, pathways=True,
                          taken=())


def _pathways_data() -> dict[str, Any]:
    raw = _raw()
    raw["pathways"] = {"enabled": True, "scratch": "gs://my-ml-project-pathways/scratch"}
    return harness.plain_outputs(harness.evaluate(raw, "mtc-pathways"), reveal=True)


def _pathways_outputs() -> StackOutputs:
    return contract.load(_pathways_data())


def test_cli_refuses_pathways_without_the_sidecar(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text(json.dumps(_pathways_data()))
    result = CliRunner().invoke(submit_main, [
        "workload", "create", "--outputs", str(out), "--workload", "ckpt", "--accelerator",
        "v6e-64", "--num-slices", "2", "--image", "python:3.12", "--command", "true",
        "--pathways", "--local-checkpoint-dir", "/local", "--dry-run"])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for '--local-checkpoint-dir': with --pathways, add "
        "--pathways-colocated-python: on Pathways, Orbax writes the checkpoints from the "
        "colocated Python sidecar of each worker")


def test_pathways_mounts_the_ram_tier_in_the_colocated_python_sidecar() -> None:
    outputs = _pathways_outputs()
    [pool] = [p for p in outputs.slice_pools if p.checkpointing is not None]
    assert pool.checkpointing is not None
    objs = _workload(pathways=True,
                     pathways_colocated_python_image="us-docker.pkg.dev/p/r/sidecar:1"
                     ).render(outputs)
    js = next(o for o in objs if o["kind"] == "JobSet")
    schema.validate(js)
    jobs = {rj["name"]: rj["template"]["spec"]["template"]["spec"]
            for rj in js["spec"]["replicatedJobs"]}
    worker, head = jobs["worker"], jobs["pathways-head"]
    assert {"name": "local-checkpoint", "csi": {"driver": render_ckpt.DRIVER}} \
        in worker["volumes"]
    [sidecar] = worker["initContainers"]
    assert {"name": "local-checkpoint", "mountPath": "/local"} in sidecar["volumeMounts"]
    # The C++ worker does no checkpoint I/O; the head (a CPU node without the driver) none.
    [server] = worker["containers"]
    assert all(m["name"] != "local-checkpoint" for m in server.get("volumeMounts", []))
    assert all(v["name"] != "local-checkpoint" for v in head.get("volumes", []))
    assert worker["nodeSelector"][render_ckpt.POOL_LABEL] == pool.name
    # The controller (the user's program on the head) names the directory to Orbax.
    [main] = head["containers"]
    assert {"name": render_ckpt.DIR_ENV, "value": "/local"} in main["env"]
    assert "JOBSET_NAME" in {e["name"] for e in main["env"]}
    # The RAM disk still leaves the workers' memory (worker + sidecar within the share).
    share = pod_resources.pod_share(pool.machine_type, pool.checkpointing.ram_disk_mi)
    assert share is not None
    mi = [int(c["resources"]["requests"]["memory"].removesuffix("Mi"))
          for c in (server, sidecar)]
    assert sum(mi) <= share.memory_mi


def test_cli_refusal_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text(json.dumps(harness.plain_outputs(_evaluation(), reveal=True)))
    result = CliRunner().invoke(submit_main, [
        "workload", "create", "--outputs", str(out), "--workload", "ckpt", "--accelerator",
        "v6e-64", "--image", "python:3.12", "--command", "true",
        "--local-checkpoint-dir", "/local", "--dry-run"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for '--num-slices': 1: multi-tier checkpointing replicates "
        "checkpoints across slices, so it needs --num-slices 2 or more")


def test_accelerators_show_what_is_left(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text(json.dumps(harness.plain_outputs(_evaluation(), reveal=True)))
    result = CliRunner().invoke(submit_main, ["accelerators", "--outputs", str(out),
                                              "-o", "json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)
    [pool] = _outputs().slice_pools
    assert pool.checkpointing is not None
    assert row["checkpointRamDisk"] == f"{pool.checkpointing.ram_disk_mi}Mi"
    assert row["podMemory"] == f"{pool.checkpointing.pod_memory_mi}Mi"


def test_describe_shows_the_tiers() -> None:
    objs = _workload().render(_outputs())
    js = next(o for o in objs if o["kind"] == "JobSet")
    lines = state_ckpt.describe_lines(js, _outputs().slice_pools[0])
    assert lines == [
        "Checkpoint tiers (GKE multi-tier checkpointing):",
        "  1 local RAM: /local on every node, 115157Mi each (pool v6e-spot)",
        "  2 peer RAM: replicated to the other slices (2 slices)",
        "  3 backup: gs://my-ml-project-trillium-mtc-checkpoints, every 30 minutes"]
    plain = next(o for o in _workload(local_checkpoint_dir=None).render(_outputs())
                 if o["kind"] == "JobSet")
    assert state_ckpt.describe_lines(plain, _outputs().slice_pools[0]) == []


def test_run_local_gives_each_process_a_directory(tmp_path: Path) -> None:
    from submit.local import plan as local_plan

    objs = [local_plan.scale_down(o, 2, 1) if o["kind"] == "JobSet" else o
            for o in _workload().render(_outputs())]
    ports = iter(range(20000, 21000))
    plan = local_plan.build(objs, local_plan.Options(run_dir=str(tmp_path), cwd="."), 0,
                            lambda: next(ports))
    dirs = [p.env_dict()["ACCELSTACK_LOCAL_CHECKPOINT_DIR"] for p in plan.processes]
    assert dirs == [f"{tmp_path}/volumes/ckpt-slice-0-0/local-checkpoint",
                    f"{tmp_path}/volumes/ckpt-slice-1-0/local-checkpoint"]
    assert set(dirs) <= set(plan.dirs)
    assert any("multi-tier checkpointing volume is a directory per process" in n
               for n in plan.notes)


def _outputs_file(tmp_path: Path) -> Path:
    out = tmp_path / "out.json"
    out.write_text(json.dumps(harness.plain_outputs(_evaluation(), reveal=True)))
    return out


def _jobsets(text: str) -> list[dict[str, Any]]:
    import yaml

    # An experiment's dry-run prints its trials' table first, then the objects.
    docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    items = [i for d in docs for i in (d["items"] if d.get("kind") == "List" else [d])]
    return [i for i in items if i["kind"] == "JobSet"]


def test_an_experiment_takes_the_option(tmp_path: Path) -> None:
    exp = tmp_path / "sweep.yaml"
    exp.write_text("name: mtc-sweep\n"
                   "workload: {accelerator: v6e-64, image: python:3.12, command: python t.py,\n"
                   "           num-slices: 2, local-checkpoint-dir: /local}\n"
                   "sweep:\n  env.LR: ['1e-4', '3e-4']\n")
    result = CliRunner().invoke(submit_main, ["experiment", "create", str(exp), "--outputs",
                                              str(_outputs_file(tmp_path)), "--dry-run"])
    assert result.exit_code == 0, result.output
    jobsets = _jobsets(result.stdout)
    assert len(jobsets) == 2
    for js in jobsets:
        assert state_ckpt.local_dir(js) == "/local"


def test_a_job_group_takes_the_option(tmp_path: Path) -> None:
    group = tmp_path / "group.yaml"
    group.write_text("name: mtc-group\nworkload: {image: python:3.12}\nroles:\n"
                     "  trainer: {accelerator: v6e-64, count: 2, command: python t.py,\n"
                     "            local-checkpoint-dir: /local}\n")
    result = CliRunner().invoke(submit_main, ["workload", "--outputs",
                                              str(_outputs_file(tmp_path)), "create-group",
                                              str(group), "--dry-run"])
    assert result.exit_code == 0, result.output
    [js] = _jobsets(result.stdout)
    assert state_ckpt.local_dir(js) == "/local"


def test_describe_reads_a_jobset_without_templates() -> None:
    js = {"metadata": {"name": "x"}, "spec": {"replicatedJobs": [{"name": "slice"}]}}
    assert state_ckpt.describe_lines(js, None) == []


def test_describe_command_shows_the_tiers(tmp_path: Path, server: Any,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from fakes import stacks

    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    out = stacks.write_outputs(tmp_path / "v6e-mtc.json", "v6e-mtc", server.kubeconfig())
    pre = ["workload", "--outputs", str(out)]
    created = CliRunner().invoke(submit_main, [
        *pre, "create", "--workload", "ckpt", "--accelerator", "v6e-64", "--num-slices", "2",
        "--image", "python:3.12", "--command", "true", "--local-checkpoint-dir", "/local"])
    assert created.exit_code == 0, created.output
    result = CliRunner().invoke(submit_main, [*pre, "describe", "ckpt"])
    assert result.exit_code == 0, result.output
    assert ("Checkpoint tiers (GKE multi-tier checkpointing):\n"
            "  1 local RAM: /local on every node, 115157Mi each (pool v6e-spot)\n"
            "  2 peer RAM: replicated to the other slices (2 slices)\n"
            "  3 backup: gs://my-ml-project-trillium-mtc-checkpoints, every 30 minutes\n"
            "Verdict: ") in result.output
