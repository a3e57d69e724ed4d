"""`--mount`: stores in a workload's pods, checked before anything is sent.

The GCS FUSE names the renderer writes (driver, pod annotations, volume attributes,
mount options) are checked against the driver's documented names in
tests/reference/gcsfuse-names.yaml; every refusal exits 2 naming --mount and sends nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import stack_fixtures
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.contract.outputs import StoreInfo, load
from submit.render import mounts
from submit.cli.app import main
from submit.render.jobset import render
from submit.render.build import build_spec
from submit.render.spec import SpecError
from submit_cli import run
from test_render_golden import CASES, load_case, pod_of

REFERENCE = Path(__file__).resolve().parent / "reference" / "gcsfuse-names.yaml"
REFERENCE_SHA256 = "b1af8122b0a4c1a4aeb41b6dfc6f7a20ed5fa33e646c4239eecc7cbfaad21256"
MOUNT_CASES = [c for c in CASES if "mount" in load_case(c)[1]]
NS = "pretraining"
CREATE = ["create", "--workload", "w1", "--accelerator", "v6e-256", "--image", "python:3.12"]


def names() -> dict[str, Any]:
    return yaml.safe_load(REFERENCE.read_text())  # type: ignore[no-any-return]


def test_reference_names_are_the_recorded_ones() -> None:
    assert hashlib.sha256(REFERENCE.read_bytes()).hexdigest() == REFERENCE_SHA256


def test_there_are_mount_cases() -> None:
    assert {c.name for c in MOUNT_CASES} == {"gcs-read-only", "gcs-read-write", "filestore",
                                            "v6e-multislice-mounts", "gcs-local-ssd",
                                            "gcs-local-ssd-two-datasets", "pathways-mounts"}


def _rendered(case: Path) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    stack, args = load_case(case)
    spec = build_spec(stack_fixtures.outputs(stack), **args)
    js = render(spec)[-1]
    return spec, js, pod_of(js)


@pytest.mark.parametrize("case", MOUNT_CASES, ids=[c.name for c in MOUNT_CASES])
def test_gcsfuse_names_are_the_drivers(case: Path) -> None:
    ref = names()
    _, _, pod = _rendered(case)
    annotations = pod["metadata"].get("annotations", {})
    for key in annotations:
        if key.startswith("gke-gcsfuse/"):
            assert key in ref["annotations"], key
    for vol in pod["spec"]["volumes"]:
        csi = vol.get("csi")
        if csi is None:
            continue
        assert csi["driver"] == ref["driver"]
        assert set(csi["volumeAttributes"]) <= set(ref["volumeAttributes"])
        for option in csi["volumeAttributes"]["mountOptions"].split(","):
            key = option if ":" not in option else option.rsplit(":", 1)[0]
            assert key in ref["mountOptions"], option
        assert annotations["gke-gcsfuse/volumes"] == "true"


@pytest.mark.parametrize("case", MOUNT_CASES, ids=[c.name for c in MOUNT_CASES])
def test_mounts_read_as_asked(case: Path) -> None:
    stack, args = load_case(case)
    outputs = stack_fixtures.outputs(stack)
    spec, js, pod = _rendered(case)
    p = pod["spec"]
    [main_c] = p["containers"]
    volumes = {v["name"]: v for v in p["volumes"]}
    mounted = {m["name"]: m for m in main_c["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in main_c["env"]}
    host = bool(p.get("hostNetwork"))
    assert host == mounts.uses_host_network(spec.pool.kind, spec.pool.vms_per_slice,
                                            spec.replicas)
    assert p["serviceAccountName"] == outputs.storage.service_accounts[spec.namespace]
    assert p["automountServiceAccountToken"] is False
    assert len(args["mount"]) == len(spec.mounts)
    for item, m in zip(args["mount"], spec.mounts):
        store = outputs.storage.store(m.store)
        assert store is not None and item.split(":")[0] == m.store
        vol, vm = volumes[f"store-{m.store}"], mounted[f"store-{m.store}"]
        ro = item.endswith(":ro")
        assert vm["mountPath"] == m.path == env[m.env_name]
        assert vm.get("readOnly", False) is ro
        if store.kind == "gcs":
            attrs = vol["csi"]["volumeAttributes"]
            assert attrs["bucketName"] == store.source
            assert vol["csi"]["readOnly"] is ro
            assert ("hostNetworkPodKSA" in attrs) == host
            if host:
                assert attrs["hostNetworkPodKSA"] == "true"
            options = attrs["mountOptions"].split(",")
            expected = list(mounts.READ_ONLY_OPTIONS if ro else mounts.READ_WRITE_OPTIONS)
            cache = mounts.file_cache_mib(spec.mounts, spec.pool.local_ssd_gib)
            if ro and cache:
                expected += [f"file-cache:max-size-mb:{cache}",
                             *mounts.FILE_CACHE_OPTIONS]
            assert options == expected
        else:
            assert vol["persistentVolumeClaim"]["claimName"] == store.source
            assert vol["persistentVolumeClaim"].get("readOnly", False) is ro
    gcs = any(m.kind == "gcs" for m in spec.mounts)
    ann = pod["metadata"].get("annotations", {})
    assert ("gke-gcsfuse/volumes" in ann) == gcs


@pytest.mark.parametrize("case", MOUNT_CASES, ids=[c.name for c in MOUNT_CASES])
def test_file_cache_only_on_local_ssd(case: Path) -> None:
    # The file cache is on exactly when the pool's nodes have Local SSD ephemeral storage
    # and a GCS mount is read-only; then the pod bounds the sidecar's cache volume.
    spec, _, pod = _rendered(case)
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    cached = [m for m in spec.mounts if m.kind == "gcs" and m.read_only]
    on = bool(cached) and spec.pool.local_ssd_gib > 0
    assert (mounts.CACHE_VOLUME in volumes) == on
    assert (mounts.CACHE_VOLUME in names()["volumes"])
    sizes = []
    for m in spec.mounts:
        if m.kind != "gcs":
            continue
        options = volumes[m.volume_name]["csi"]["volumeAttributes"]["mountOptions"]
        found = re.findall(r"file-cache:max-size-mb:(\d+)", options)
        assert bool(found) == (on and m.read_only), m.store
        sizes += [int(x) for x in found]
    if on:
        limit = volumes[mounts.CACHE_VOLUME]["emptyDir"]["sizeLimit"]
        assert limit.endswith("Mi") and "medium" not in volumes[mounts.CACHE_VOLUME]["emptyDir"]
        volume_mib = int(limit[:-2])
        # half the node's Local SSD; the mounts' caches fit in it with room to spare
        assert volume_mib == spec.pool.local_ssd_gib * 1024 // 2
        assert len(sizes) == len(cached) and len(set(sizes)) == 1
        assert sum(sizes) <= volume_mib * 0.9


def test_file_cache_size_rule() -> None:
    ro = mounts.Mount("d", "gcs", "b", "/mnt/d", True)
    rw = mounts.Mount("c", "gcs", "c", "/mnt/c", False)
    claim = mounts.Mount("f", "filestore", "f", "/mnt/f", True)
    assert mounts.cache_volume_mib(6000) == 3_072_000  # A3 Mega: 16 x 375 GiB
    assert mounts.file_cache_mib([ro], 6000) == 2_764_800
    assert mounts.file_cache_mib([ro, rw, claim], 12_000) == 5_529_600  # only ro GCS
    assert mounts.file_cache_mib([ro, ro], 12_000) == 2_764_800
    assert mounts.file_cache_mib([ro], 0) == 0  # boot disk only: no cache
    assert mounts.file_cache_mib([rw, claim], 12_000) == 0


def test_env_names() -> None:
    m = mounts.Mount("train-data", "gcs", "b", "/mnt/train-data", True)
    assert (m.env_name, m.volume_name) == ("ACCELSTACK_MOUNT_TRAIN_DATA", "store-train-data")


def test_every_golden_agrees_on_host_network() -> None:
    for case in CASES:
        spec, _, pod = _rendered(case)
        assert bool(pod["spec"].get("hostNetwork")) == mounts.uses_host_network(
            spec.pool.kind, spec.pool.vms_per_slice, spec.replicas), case.name


# ----------------------------------------------------------------------------------
# The CLI: refusals exit 2 and send nothing; a mount reaches the cluster


pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    """The v6e-training example stack: datasets (read-only for pretraining and evals) and
    checkpoints (read-write for pretraining only)."""
    return stacks.write_outputs(tmp_path / "v6e.json", "v6e-training", server.kubeconfig())


def refused(message: str) -> str:
    return ("Usage: main workload create [OPTIONS]\n"
            "Try 'main workload create --help' for help.\n\n"
            f"Error: Invalid value for '--mount': {message}\n")


@pytest.mark.parametrize("args,message", [
    (["--mount", "nope"], "'nope' is not a store of the stack; its stores: datasets, "
     "checkpoints"),
    (["--namespace", "evals", "--mount", "checkpoints:ro"],
     "store 'checkpoints' grants namespace 'evals' no access; namespaces with access: "
     "pretraining"),
    (["--mount", "datasets"], "'datasets' mounts store 'datasets' read-write, but namespace "
     "'pretraining' may only read it; add :ro"),
    (["--mount", "datasets:rw"], "'datasets:rw' mounts store 'datasets' read-write, but "
     "namespace 'pretraining' may only read it; add :ro"),
    (["--mount", "datasets:/data:ro", "--mount", "checkpoints:/data"],
     "'checkpoints:/data': /data is already where store 'datasets' is mounted; give each "
     "mount its own path"),
    (["--mount", "checkpoints", "--mount", "checkpoints:/ckpt"],
     "store 'checkpoints' is mounted twice; mount it once"),
    (["--mount", "checkpoints:/dev/shm"], "'checkpoints:/dev/shm': /dev/shm overlaps "
     "/dev/shm, which accelstack already mounts there; choose another path"),
    (["--mount", "checkpoints:/etc/accelstack"], "'checkpoints:/etc/accelstack': "
     "/etc/accelstack overlaps /etc/accelstack/config, which accelstack already mounts "
     "there; choose another path"),
    (["--mount", "checkpoints:ckpt"], "'ckpt' is not an absolute path such as "
     "/mnt/checkpoints (letters, digits, '-', '_', '.' and '/'; not / itself)"),
    (["--mount", "checkpoints:/"], "'/' is not an absolute path such as /mnt/checkpoints "
     "(letters, digits, '-', '_', '.' and '/'; not / itself)"),
    (["--mount", "checkpoints:/a/../b"], "'/a/../b' is not an absolute path such as "
     "/mnt/checkpoints (letters, digits, '-', '_', '.' and '/'; not / itself)"),
    (["--mount", "checkpoints:/a:/b"], "'checkpoints:/a:/b' is not STORE[:PATH][:ro|:rw]"),
])
def test_refused_before_anything_is_sent(outputs: Path, server: FakeApiServer,
                                         args: list[str], message: str) -> None:
    result = run(outputs, *CREATE, *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == refused(message)
    assert server.state.requests == []


def test_gcs_on_host_network_needs_a_recent_gke(tmp_path: Path,
                                                server: FakeApiServer) -> None:
    path = stacks.write_outputs(tmp_path / "old.json", "v6e-training", server.kubeconfig())
    data = json.loads(path.read_text())
    data["accelstack"]["storage"]["gkeVersion"] = "1.33.2-gke.1000000"
    path.write_text(json.dumps(data))
    result = run(path, *CREATE, "--mount", "datasets:ro")
    assert result.exit_code == 2 and server.state.requests == []
    assert result.stderr == refused(
        "'datasets:ro': this job runs on the hosts' network (multi-host TPU), where Cloud "
        "Storage FUSE needs GKE 1.33.3-gke.1226000 or later; the stack pins "
        "1.33.2-gke.1000000; use a single-host job or a Filestore, Parallelstore or Lustre "
        "store")
    data["accelstack"]["storage"]["gkeVersion"] = "1.33.3-gke.1226000"
    path.write_text(json.dumps(data))
    assert run(path, *CREATE, "--mount", "datasets:ro", "--dry-run").exit_code == 0


def test_a_mount_reaches_the_cluster(outputs: Path, server: FakeApiServer) -> None:
    result = run(outputs, *CREATE, "--mount", "datasets:ro", "--mount", "checkpoints")
    assert (result.exit_code, result.stdout) == (0, "")
    [sent] = [r for r in server.state.requests if r.method == "PATCH"]
    expected = render(build_spec(load(stacks.outputs("v6e-training")), workload="w1",
                                 accelerator="v6e-256", image="python:3.12",
                                 mount=["datasets:ro", "checkpoints"]))[-1]
    body = dict(sent.body)
    body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "uid"}
    assert body == expected
    pod = expected["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "accelstack-workload"
    assert {e["name"]: e["value"] for e in pod["containers"][0]["env"]
            if e["name"].startswith(mounts.ENV_PREFIX)} == {
        "ACCELSTACK_MOUNT_DATASETS": "/mnt/datasets",
        "ACCELSTACK_MOUNT_CHECKPOINTS": "/mnt/checkpoints"}

    # describe reads the mounts back from the live JobSet.
    server.state.requests.clear()
    shown = run(outputs, "describe", "w1")
    assert shown.exit_code == 0, shown.stderr
    assert ("Mounts:\n"
            "  /mnt/datasets: datasets (gs://my-ml-project-datasets, read-only)\n"
            "  /mnt/checkpoints: checkpoints (gs://my-ml-project-trillium-checkpoints, "
            "read-write)\n") in shown.stdout


def test_describe_shows_a_claim() -> None:
    spec = build_spec(stack_fixtures.outputs("g2"), workload="w", accelerator="l4-8",
                      image="busybox:1.37", mount=["scratch:/scratch:ro"])
    assert mounts.describe_lines(render(spec)[-1]) == [
        "Mounts:", "  /scratch: scratch (claim scratch, read-only)"]


def test_a_contract_without_storage_keeps_the_default_account(tmp_path: Path,
                                                              server: FakeApiServer) -> None:
    path = stacks.write_outputs(tmp_path / "bare.json", "v6e-training", server.kubeconfig())
    data = json.loads(path.read_text())
    del data["accelstack"]["storage"]
    path.write_text(json.dumps(data))
    result = run(path, *CREATE, "--dry-run")
    assert result.exit_code == 0
    assert "serviceAccountName" not in result.stdout
    result = run(path, *CREATE, "--mount", "datasets:ro")
    assert result.stderr == refused("'datasets' is not a store of the stack; its stores: none")


def test_the_readme_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/storage.md: the job that reads datasets and writes
    checkpoints, through --stack (a fake `pulumi` serves the example stack's outputs)."""
    from fakes.pulumi_cli import install

    install(tmp_path, monkeypatch).stack("v6e-training", stacks.outputs("v6e-training"))
    readme = (Path(__file__).resolve().parents[1] / "docs" / "storage.md").read_text()
    command = ("--mount datasets:ro --mount checkpoints \\\n    --command 'python3 -m "
               "MaxText.train base.yml dataset_path=$ACCELSTACK_MOUNT_DATASETS "
               "base_output_directory=$ACCELSTACK_MOUNT_CHECKPOINTS'")
    assert command in readme
    result = CliRunner().invoke(main, [
        "workload", "--stack", "v6e-training", "create", "--workload", "pretrain",
        "--accelerator", "v6e-256", "--num-slices", "4",
        "--image", "us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1",
        "--mount", "datasets:ro", "--mount", "checkpoints", "--command",
        "python3 -m MaxText.train base.yml dataset_path=$ACCELSTACK_MOUNT_DATASETS "
        "base_output_directory=$ACCELSTACK_MOUNT_CHECKPOINTS", "--dry-run"])
    assert result.exit_code == 0, result.output
    [js] = list(yaml.safe_load_all(result.stdout))
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["dshm", "store-datasets",
                                                  "store-checkpoints"]
    assert all(v["csi"]["volumeAttributes"]["hostNetworkPodKSA"] == "true"
               for v in pod["volumes"][1:])


@given(st.from_regex(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?", fullmatch=True))
def test_any_store_name_gives_valid_kubernetes_and_env_names(name: str) -> None:
    m = mounts.Mount(name, "gcs", "b", f"/mnt/{name}", False)
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", m.volume_name)
    assert len(m.volume_name) <= 63
    assert re.fullmatch(r"[A-Z_][A-Z0-9_]*", m.env_name)


# ----------------------------------------------------------------------------------
# Parallelstore and Managed Lustre (issue 22)

def _with_stores(name: str, *extra: StoreInfo) -> Any:
    out = stack_fixtures.outputs(name)
    return dataclasses.replace(out, storage=dataclasses.replace(
        out.storage, stores=out.storage.stores + extra))


FAST = StoreInfo("fast", "parallelstore", "fast", {"training": "read-write"})
LFS = StoreInfo("lfs", "lustre", "lfs", {"training": "read-write", "gpu-jobs": "read-write"})


# Was: pods mounting a Parallelstore claim carried no gke-parallelstore/volumes annotation,
# so the driver's sidecar (the "pod" mount mode the PVs use) was never asked for.
def test_a_parallelstore_mount_asks_for_the_drivers_sidecar() -> None:
    spec = build_spec(_with_stores("g2", FAST), workload="w", accelerator="l4-8",
                      image="busybox:1.37", mount=["fast"])
    js = render(spec)[-1]
    meta = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
    assert meta["annotations"] == {"gke-parallelstore/volumes": "true"}
    assert pod_of(js)["spec"]["volumes"][-1] == {
        "name": "store-fast", "persistentVolumeClaim": {"claimName": "fast"}}


# Was: nothing stopped a Lustre mount on TPU or CPU nodes (Secure Boot: GKE mounts Managed
# Lustre on GPU machine types only) or on nodes older than its floors.
def test_lustre_mounts_only_from_gpu_pools() -> None:
    with pytest.raises(SpecError) as e:
        build_spec(_with_stores("cpu", LFS), workload="w", accelerator="n2-standard-32-4",
                   image="busybox:1.37", mount=["lfs"])
    assert e.value.message == (
        "'lfs': Managed Lustre cannot be mounted on this job's CPU nodes: GKE mounts it on "
        "Secure Boot nodes (every accelstack pool) of GPU machine types only; use a GPU "
        "pool, or a Parallelstore, Filestore or Cloud Storage store")
    spec = build_spec(_with_stores("g2", LFS), workload="w", accelerator="l4-8",
                      image="busybox:1.37", mount=["lfs"])
    assert spec.mounts[0].kind == "lustre"
    with pytest.raises(SpecError) as e:
        build_spec(_with_stores("g2", LFS), workload="w", accelerator="l4-8",
                   image="busybox:1.37", mount=["lfs"], node_version="v1.33.2-gke.4654000")
    assert e.value.message == ("'lfs': Managed Lustre needs GKE 1.33.2-gke.4655000 or later "
                               "on these nodes; its nodes run 1.33.2-gke.4654000")


def _node(pool: str, version: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n-{pool}", "labels": {
                "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                "cloud.google.com/gke-tpu-topology": "16x16",
                "accelstack.dev/capacity": "on-demand"}},
            "status": {"nodeInfo": {
                "kubeletVersion": version, "kubeProxyVersion": version,
                "architecture": "amd64", "bootID": "b", "containerRuntimeVersion":
                "containerd://2.0.4", "kernelVersion": "6.6.87+", "machineID": "m",
                "operatingSystem": "linux", "osImage": "Container-Optimized OS from Google",
                "systemUUID": "u"}}}


# Was: at submit time the floors saw only a pinned gkeVersion; the nodes' own version is
# now read from the cluster (submit/cluster/kube.py) where the submitter may list nodes.
def test_submit_checks_the_version_the_nodes_report(outputs: Path,
                                                     server: FakeApiServer) -> None:
    server.state.nodes = [_node("a", "v1.34.0-gke.1000000"), _node("b", "v1.33.2-gke.1000000")]
    result = run(outputs, *CREATE, "--mount", "datasets:ro")
    assert result.exit_code == 2
    assert result.stderr == refused(
        "'datasets:ro': this job runs on the hosts' network (multi-host TPU), where Cloud "
        "Storage FUSE needs GKE 1.33.3-gke.1226000 or later; its nodes run "
        "1.33.2-gke.1000000; use a single-host job or a Filestore, Parallelstore or Lustre "
        "store")
    assert [(r.method, r.path) for r in server.state.requests] == [("GET", "/api/v1/nodes")]
    # A submitter who may not list nodes falls back to the pinned version (none here).
    server.state.requests.clear()
    server.state.forbidden.add("nodes")
    assert run(outputs, *CREATE, "--mount", "datasets:ro").exit_code == 0
