"""Pathways end to end: the stack section under the mock engine, the contract, the rendered
JobSet (golden cases read here, schema-checked) and the CLI's headless hint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import schema
import stack_fixtures
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.preview import harness
from infra.specs import kueue as kueue_spec
from infra.catalog import pod_resources
from infra.config.pathways import DEFAULT_PROXY_IMAGE, DEFAULT_SERVER_IMAGE
from submit.render import pathways
from submit.cli.app import main
from submit.render.jobset import render
from submit.render.build import build_spec
from submit.render.spec import SpecError

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.name.startswith("pathways-"))
IMAGE = "us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1"


def _case(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    data = yaml.safe_load((GOLDEN / name / "input.yaml").read_text())
    [js] = list(yaml.safe_load_all((GOLDEN / name / "expected.yaml").read_text()))
    return data["args"], js


def test_golden_cases_cover_the_modes() -> None:
    assert {"pathways-batch", "pathways-headless", "pathways-multislice-elastic",
            "pathways-mounts"} <= set(CASES)


def w_pool_machine(out: Any) -> str:
    return str(next(p.machine_type for p in out.slice_pools if p.kind == "tpu"))


@pytest.mark.parametrize("name", CASES)
def test_pathways_golden_reads_as_asked(name: str) -> None:
    args, js = _case(name)
    schema.validate(js)
    out = stack_fixtures.outputs("v6e-pathways")
    spec = build_spec(out, **args)
    assert render(spec) == [js]
    body = js["spec"]
    head, worker = body["replicatedJobs"]
    assert (head["name"], worker["name"]) == ("pathways-head", "worker")
    assert body["coordinator"] == {"replicatedJob": "pathways-head", "jobIndex": 0,
                                   "podIndex": 0}
    assert body["startupPolicy"] == {"startupPolicyOrder": "InOrder"}
    assert body["failurePolicy"]["restartStrategy"] == "Recreate"
    headless = bool(args.get("headless"))
    assert ("successPolicy" in body) is not headless

    hpod = head["template"]["spec"]["template"]["spec"]
    head_pool = out.pool("pathways-head")
    assert head_pool is not None and hpod["nodeSelector"] == dict(head_pool.node_selector)
    sidecars = hpod["containers"] if headless else hpod["initContainers"]
    assert [c["name"] for c in sidecars] == ["pathways-proxy", "pathways-rm"]
    proxy, rm = sidecars
    server_image = args.get("pathways_server_image", DEFAULT_SERVER_IMAGE)
    assert proxy["image"] == args.get("pathways_proxy_image", DEFAULT_PROXY_IMAGE)
    assert rm["image"] == server_image
    # A run's extra flags come last, after accelstack's (--pathways-*-arg).
    assert rm["args"][len(rm["args"]) - len(args.get("pathways_server_arg", [])):] == \
        args.get("pathways_server_arg", [])
    assert proxy["args"][len(proxy["args"]) - len(args.get("pathways_proxy_arg", [])):] == \
        args.get("pathways_proxy_arg", [])
    assert all(("restartPolicy" in c) is not headless for c in sidecars)
    slices = args.get("num_slices", 1)
    assert f"--instance_count={slices}" in rm["args"]
    assert "--instance_type=tpuv6e:4x4" in rm["args"]
    elastic = args.get("elastic_slices")
    assert (f"--num_elastic_slices={elastic}" in proxy["args"]) is bool(elastic)
    if not headless:
        [main_c] = hpod["containers"]
        env = {e["name"]: e.get("value") for e in main_c["env"]}
        assert env["JAX_PLATFORMS"] == "proxy"
        assert env["JAX_BACKEND_TARGET"] == (
            f"grpc://{args['workload']}-pathways-head-0-0.{args['workload']}:29000")
        # The head pod's requests are the node's pod share, split between the three.
        total_cpu = sum(pod_resources.cpu_milli(c["resources"]["requests"]["cpu"]) or 0
                        for c in sidecars + [main_c])
        share = pod_resources.pod_share("n2-standard-64")
        assert share is not None and total_cpu == share.cpu_milli
    wpod = worker["template"]["spec"]["template"]["spec"]
    assert worker["replicas"] == slices
    assert worker["template"]["spec"]["parallelism"] == 4
    [w] = wpod["containers"]
    assert w["image"] == server_image
    assert w["args"][len(w["args"]) - len(args.get("pathways_worker_arg", [])):] == \
        args.get("pathways_worker_arg", [])
    colocated = args.get("pathways_colocated_python_image")
    if colocated:  # the colocated Python sidecar: a native sidecar sharing memory with it
        [side] = wpod["initContainers"]
        assert (side["name"], side["image"], side["restartPolicy"]) == (
            "colocated-python-sidecar", colocated, "Always")
        assert side["ports"] == [{"containerPort": 50051, "protocol": "TCP"}]
        assert {"--sidecar_name=external",
                "--cloud_pathways_sidecar_shm_directory=/tmp/sidecar"} <= set(w["args"])
        assert side["volumeMounts"] == w["volumeMounts"] == [
            {"name": "sidecar-shared-memory", "mountPath": "/tmp/sidecar"}]
        share = pod_resources.pod_share(w_pool_machine(out))
        assert share is not None
        assert sum(pod_resources.cpu_milli(c["resources"]["requests"]["cpu"]) or 0
                   for c in (w, side)) == share.cpu_milli
    else:
        assert "initContainers" not in wpod
    names = {e["name"] for e in w["env"]}
    assert {"MEGASCALE_NUM_SLICES", "MEGASCALE_SLICE_ID", "MEGASCALE_COORDINATOR_ADDRESS",
            "PATHWAYS_HEAD"} <= names
    assert "--resource_manager_address=$(PATHWAYS_HEAD):29001" in w["args"]
    assert w["resources"]["limits"]["google.com/tpu"] == "4"
    for pod in (hpod, wpod):
        assert pod["hostNetwork"] is True
        assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
        assert pod["automountServiceAccountToken"] is False
        for c in pod.get("initContainers", []) + pod["containers"]:
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_mounts_land_in_the_user_container() -> None:
    _, js = _case("pathways-mounts")
    hpod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    [main_c] = hpod["containers"]
    assert {"name": "ACCELSTACK_MOUNT_DATASETS", "value": "/mnt/datasets"} in main_c["env"]
    assert any(m["mountPath"] == "/mnt/datasets" and m.get("readOnly")
               for m in main_c["volumeMounts"])


def test_stack_under_mocks_declares_head_pool_flavor_and_scratch_access() -> None:
    ev = harness.evaluate(stack_fixtures.stack_config("v6e-pathways"), "v6e-pathways")
    pools = {r.name: r.inputs for r in ev.of_type("gcp:container/nodePool:NodePool")}
    head = pools["pathways-head"]
    assert head["nodeConfig"]["machineType"] == "n2-standard-64"
    assert head["nodeConfig"]["labels"]["accelstack.dev/slice-pool"] == "pathways-head"
    [grant] = [r.inputs for r in ev.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
               if r.name == "pathways-scratch"]
    assert grant["bucket"] == "my-ml-project-pathways"
    assert grant["role"] == "roles/storage.objectUser"
    assert grant["member"].startswith("serviceAccount:")
    flavors = {f.name: f for f in kueue_spec.flavors(ev.config)}
    assert flavors["cpu-pathways-head"].quota == 64
    cq = [o for o in kueue_spec.kueue_objects(ev.config) if o["kind"] == "ClusterQueue"][0]
    names = [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]]
    assert "cpu-pathways-head" in names
    out = stack_fixtures.outputs("v6e-pathways")
    assert out.pathways is not None and out.pathways.head_pool == "pathways-head"
    assert out.pathways.scratch == "gs://my-ml-project-pathways/scratch"


@pytest.mark.parametrize("args, option, fragment", [
    ({"accelerator": "v6e-16", "elastic_slices": 3, "num_slices": 2}, "--elastic-slices",
     "3 is more than the 2 slices"),
    ({"accelerator": "v6e-16", "workload": "a" * 40}, "--workload", "at most"),
])
def test_pathways_rules_needing_the_stack(args: dict[str, Any], option: str,
                                          fragment: str) -> None:
    opts: dict[str, Any] = {"workload": "pw", "image": IMAGE, "pathways": True, **args}
    with pytest.raises(SpecError) as e:
        build_spec(stack_fixtures.outputs("v6e-pathways"), **opts)
    assert e.value.option == option and fragment in e.value.message


def test_pathways_refuses_a_single_host_pool() -> None:
    out = stack_fixtures.outputs("v6e-pathways")
    # A CPU pool is no TPU slice: the head pool itself is refused as a worker pool.
    with pytest.raises(SpecError) as e:
        build_spec(out, workload="pw", accelerator="n2-standard-64-1", image=IMAGE,
                   pathways=True)
    assert e.value.option == "--accelerator"
    assert "is not a multi-host TPU slice" in e.value.message


def test_headless_submit_prints_the_port_forward(tmp_path: Path, server: FakeApiServer
                                                 ) -> None:
    outputs = stacks.write_outputs(tmp_path / "v6e.json", "v6e-training", server.kubeconfig())
    result = CliRunner().invoke(main, [
        "workload", "--outputs", str(outputs), "create", "--workload", "pw-nb",
        "--accelerator", "v6e-256", "--num-slices", "4", "--pathways", "--headless"])
    assert result.exit_code == 0, result.output
    command = pathways.port_forward_command("pw-nb", "pretraining")
    assert command in result.stdout
    assert "JAX_BACKEND_TARGET=grpc://localhost:29000" in result.stdout
    [body] = [r.body for r in server.state.requests if r.method == "PATCH"]
    assert body["spec"]["replicatedJobs"][1]["replicas"] == 4


def test_the_readme_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/pathways.md: the batch job, through --stack (a fake `pulumi` serves the
    example stack's outputs)."""
    from fakes.pulumi_cli import install

    install(tmp_path, monkeypatch).stack("v6e-training", stacks.outputs("v6e-training"))
    readme = (Path(__file__).resolve().parents[1] / "docs" / "pathways.md").read_text()
    assert ("submit workload --stack v6e-training create --workload pw-train --accelerator "
            "v6e-256 \\\n    --num-slices 4 --pathways --image us-docker.pkg.dev/my-ml-project/"
            "training/maxtext:2026.11.1 \\\n    --command 'python3 -m MaxText.train "
            "MaxText/configs/base.yml'") in readme
    result = CliRunner().invoke(main, [
        "workload", "--stack", "v6e-training", "create", "--workload", "pw-train",
        "--accelerator", "v6e-256", "--num-slices", "4", "--pathways", "--image",
        "us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1", "--command",
        "python3 -m MaxText.train MaxText/configs/base.yml", "--dry-run"])
    assert result.exit_code == 0, result.output
    [js] = list(yaml.safe_load_all(result.stdout))
    schema.validate(js)
    head, worker = js["spec"]["replicatedJobs"]
    assert worker["replicas"] == 4
    assert worker["template"]["spec"]["parallelism"] == 64
    rm = head["template"]["spec"]["template"]["spec"]["initContainers"][1]
    assert "--instance_type=tpuv6e:16x16" in rm["args"]
    assert "--gcs_scratch_location=gs://my-ml-project-pathways/trillium" in rm["args"]


def test_scratch_can_be_a_cloud_storage_store() -> None:
    raw = stack_fixtures.stack_config("v6e-pathways")
    raw["storage"]["stores"].append({"name": "scratch", "kind": "gcs",
                                     "access": {"pretraining": "read-write"}})
    raw["pathways"]["scratch"] = "store:scratch/pathways"
    ev = harness.evaluate(raw, "v6e-pathways")
    assert ev.config.pathways is not None
    bucket = ev.config.storage.store("scratch").bucket  # type: ignore[union-attr]
    assert ev.config.pathways.scratch == f"gs://{bucket}/pathways"
    [grant] = [r.inputs for r in ev.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
               if r.name == "pathways-scratch"]
    assert grant["bucket"] == bucket


def test_scratch_store_must_be_cloud_storage() -> None:
    from infra.config import stack as config_mod
    from infra.config.errors import ConfigError

    raw = stack_fixtures.stack_config("v6e-pathways")
    raw["storage"]["stores"].append({"name": "share", "kind": "filestore", "tier": "ZONAL",
                                     "capacityGb": 1024, "access": {"pretraining": "read-write"}})
    raw["pathways"]["scratch"] = "store:share"
    with pytest.raises(ConfigError) as e:
        config_mod.parse(raw)
    assert "pathways.scratch: 'store:share': store 'share' is not a Cloud Storage bucket" in str(
        e.value)
