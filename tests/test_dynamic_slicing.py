"""Dynamic slicing (TPU7x sub-blocks joined into slices by GKE's slice controller), end to
end: the catalog's shapes, each refusal of the stack file (exit 2, one FILE:LINE line),
what the shipped tpu7x-dynamic stack declares (sub-block node pools, the slice controller,
Kueue's Topology, flavor and AdmissionCheck, validated against the pinned CRDs), the
contract entries, the render rule, and `describe` reading the Slices through the fake API
server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import evaluate_shipped
from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.catalog import tables as catalog
from infra.preview import cli as preview
from infra.preview import harness
from infra.specs import dynamic_slicing as dynamic_spec
from schema import validate
from submit.cli.app import main
from submit_cli import run

ROOT = Path(__file__).resolve().parents[1]
STACK = ROOT / "stacks" / "Pulumi.tpu7x-dynamic.yaml"
NS = "pretraining"
IMAGE = "us-docker.pkg.dev/my-ml-project/r/maxtext:1"


# -- the catalog ------------------------------------------------------------------------

@pytest.mark.parametrize("name,sub_blocks", [
    ("tpu7x-4x4x4", 1), ("tpu7x-4x4x8", 2), ("tpu7x-4x8x8", 4), ("tpu7x-8x8x8", 8),
    ("tpu7x-4x4x36", 9), ("tpu7x-12x12x16", 36), ("tpu7x-16x24x24", 144),
    ("tpu7x-2x2x4", None), ("tpu7x-2x4x4", None), ("v5p-4x4x4", None), ("v6e-16x16", None),
    ("l4-1", None)])
def test_catalog_counts_sub_blocks(name: str, sub_blocks: int | None) -> None:
    entry = catalog.resolve(name)
    assert catalog.sub_blocks(entry) == sub_blocks
    assert entry.to_dict()["subBlocks"] == sub_blocks


def test_catalog_sub_block_is_a_16_vm_cube() -> None:
    sb = catalog.sub_block_accelerator("tpu7x")
    assert sb is not None and (sb.topology, sb.vms_per_slice, sb.chips) == ("4x4x4", 16, 64)
    assert catalog.sub_block_accelerator("v5p") is None
    # every TPU7x shape with sides that are multiples of 4 is at most 144 sub-blocks
    gen = catalog.generation("tpu7x")
    assert max(catalog.sub_blocks(a) or 0 for a in catalog.all_accelerators()
               if a.family == "tpu7x") == gen.max_sub_blocks == 144


# -- the stack file and its refusals ------------------------------------------------------

BASE = STACK.read_text().splitlines()


def _line(text: str) -> int:
    """The 1-based line of the shipped stack that holds ``text``."""
    return next(i + 1 for i, ln in enumerate(BASE) if text in ln)


def _edit(sub: dict[str, str] | None = None, extra: tuple[str, ...] = ()) -> str:
    lines = list(BASE)
    for old, new in (sub or {}).items():
        lines[_line(old) - 1] = new
    return "\n".join(lines + list(extra)) + "\n"


def _refused(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(text)
    result = CliRunner().invoke(preview.main, [str(path), "--outputs", str(tmp_path / "o.json")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    assert not (tmp_path / "o.json").exists()
    lines = result.stderr.splitlines()
    assert lines and all(ln.startswith(f"{path}:") for ln in lines), lines
    return [ln.removeprefix(f"{path}:") for ln in lines]


REFUSALS = [
    ("channel", {"accelstack:releaseChannel: RAPID": "  accelstack:releaseChannel: REGULAR"},
     (), "dynamicSlicing:", ["slices[0].dynamicSlicing: dynamic slicing needs the RAPID "
                             "release channel", "releaseChannel is REGULAR"]),
    ("version", {"accelstack:releaseChannel: RAPID":
                 "  accelstack:releaseChannel: RAPID\n  accelstack:gkeVersion: 1.35.1-gke.100"},
     (), "dynamicSlicing:", ["needs GKE 1.35.2-gke.1842000 or later", "gkeVersion is "
                             "1.35.1-gke.100"]),
    ("image", {"shapes: [4x4x4": "        shapes: [4x4x4, 4x4x8, 4x8x8]\n"
               "        imageType: UBUNTU_CONTAINERD"}, (), "imageType",
     ["slices[0].dynamicSlicing.imageType: 'UBUNTU_CONTAINERD': dynamic slicing needs "
      "Container-Optimized OS nodes", "allowed: COS_CONTAINERD"]),
    ("sub-block-twice", {"subBlocks: [sub-block-1, sub-block-2, sub-block-3, sub-block-4]":
                         "            subBlocks: [sub-block-1, sub-block-2, sub-block-1, "
                         "sub-block-4]"}, (), "subBlocks: [sub-block-1",
     ["slices[0].dynamicSlicing.reservationBlocks[0].subBlocks[2]: sub-block "
      "'ironwood-block-1/sub-block-1' is already used by slices[0].dynamicSlicing."
      "reservationBlocks[0].subBlocks[0]"]),
    ("not-a-multiple", {"shapes: [4x4x4": "        shapes: [4x4x4, 4x4x6]"}, (),
     "shapes: [4x4x4", ["slices[0].dynamicSlicing.shapes[1]: '4x4x6' is not a dynamic slice "
                        "shape: 4i x 4j x 4k"]),
    ("decreasing", {"shapes: [4x4x4": "        shapes: [8x4x4]"}, (),
     "shapes: [8x4x4", ["'8x4x4' is not a dynamic slice shape", "i <= j <= k"]),
    ("too-many-sub-blocks", {"shapes: [4x4x4": "        shapes: [4x4x4, 8x8x8]"}, (),
     "shapes: [4x4x4", ["slices[0].dynamicSlicing.shapes[1]: '8x8x8' joins 8 sub-blocks; "
                        "the pool declares at most 4 in one reservation block"]),
    ("not-a-sub-block", {"accelerator: tpu7x-4x4x4": "      accelerator: tpu7x-4x4x8"}, (),
     "accelerator: tpu7x", ["slices[0].accelerator: 'tpu7x-256': a dynamic slicing pool "
                            "holds sub-blocks; set accelerator to tpu7x-4x4x4"]),
    ("not-reservation", {"mode: reservation": "        mode: spot"}, (),
     "reservation: ironwood", ["slices[0].capacity.reservation: spot pools do not consume "
                               "reservations"]),
    ("count-differs", {"accelerator: tpu7x-4x4x4": "      accelerator: tpu7x-4x4x4\n"
                       "      count: 3"}, (), "count: 3",
     ["slices[0].count: 3 differs from the 8 sub-blocks listed"]),
    ("old-kueue", {}, ("  accelstack:addons:", "    kueueVersion: v0.14.0"),
     "kueueVersion", ["addons.kueueVersion: 'v0.14.0': a dynamic slicing pool needs "
                      "v0.15.2 or later"]),
]


@pytest.mark.parametrize("sub,extra,at,fragments", [c[1:] for c in REFUSALS],
                         ids=[c[0] for c in REFUSALS])
def test_refusals(tmp_path: Path, sub: dict[str, str], extra: tuple[str, ...], at: str,
                  fragments: list[str]) -> None:
    text = _edit(sub, extra)
    first = _refused(tmp_path, text)[0]
    line = next(i + 1 for i, ln in enumerate(text.splitlines()) if at in ln)
    assert first.startswith(f"{line}:"), (first, line)
    for fragment in fragments:
        assert fragment in first, (fragment, first)


def test_a_sub_block_in_two_pools_is_refused(tmp_path: Path) -> None:
    second = ["    - name: ironwood-b", "      accelerator: tpu7x-4x4x4",
              "      capacity: {mode: reservation, reservation: ironwood-all-capacity}",
              "      dynamicSlicing:", "        reservationBlocks:",
              "          - {name: ironwood-block-2, subBlocks: [sub-block-4]}",
              "        shapes: [4x4x4]"]
    lines = list(BASE)
    at = _line("accelstack:queues:") - 1
    text = "\n".join(lines[:at] + second + lines[at:]) + "\n"
    [problem] = _refused(tmp_path, text)
    assert "slices[1].dynamicSlicing.reservationBlocks[0].subBlocks[0]: sub-block " \
           "'ironwood-block-2/sub-block-4' is already used by slices[0]" in problem


# -- what the shipped stack declares ------------------------------------------------------

@pytest.fixture(scope="module")
def evaluated() -> harness.Evaluation:
    return evaluate_shipped(STACK)


def _of(ev: harness.Evaluation, type_: str) -> list[dict[str, Any]]:
    return [r.inputs for r in ev.of_type(type_)]


def _kueue(ev: harness.Evaluation) -> list[dict[str, Any]]:
    return [o for r in _of(ev, "kubernetes:yaml/v2:ConfigGroup") for o in r.get("objs", [])
            if o["apiVersion"].startswith("kueue.x-k8s.io/")]


def test_stack_declares_sub_block_pools(evaluated: harness.Evaluation) -> None:
    [cluster] = _of(evaluated, "gcp:container/cluster:Cluster")
    assert cluster["addonsConfig"]["sliceControllerConfig"] == {"enabled": True}
    assert cluster["releaseChannel"] == {"channel": "RAPID"}
    policies = _of(evaluated, "gcp:compute/resourcePolicy:ResourcePolicy")
    assert len(policies) == 8
    assert all(p["workloadPolicy"] == {
        "type": "HIGH_THROUGHPUT", "acceleratorTopology": "4x4x4",
        "acceleratorTopologyMode": "PROVISION_ONLY"} for p in policies)
    pools = {p["name"]: p for p in _of(evaluated, "gcp:container/nodePool:NodePool")
             if p["name"].startswith("ironwood-")}
    assert sorted(pools) == [f"ironwood-{i}" for i in range(8)]
    paths = [p["nodeConfig"]["reservationAffinity"]["values"] for p in pools.values()]
    assert paths[0] == ["ironwood-all-capacity/reservationBlocks/ironwood-block-1/"
                        "reservationSubBlocks/sub-block-1"]
    assert paths[7] == ["ironwood-all-capacity/reservationBlocks/ironwood-block-2/"
                        "reservationSubBlocks/sub-block-4"]
    assert len({p[0] for p in paths}) == 8  # one pool per sub-block
    for p in pools.values():
        assert p["nodeCount"] == 16 and p["nodeConfig"]["machineType"] == "tpu7x-standard-4t"
        assert p["nodeConfig"]["imageType"] == "COS_CONTAINERD"
        assert "tpuTopology" not in p["placementPolicy"]  # the workload policy instead


def test_kueue_objects_validate_and_gate_the_flavor(evaluated: harness.Evaluation) -> None:
    objs = _kueue(evaluated)
    for obj in objs:
        validate(obj)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    [topology] = [t for t in by_kind["Topology"] if t["metadata"]["name"] == "tpu-sub-blocks"]
    assert [lv["nodeLabel"] for lv in topology["spec"]["levels"]] == [
        "cloud.google.com/gce-topology-block", "cloud.google.com/gke-tpu-partition-4x4x4-id",
        "kubernetes.io/hostname"]
    [check] = by_kind["AdmissionCheck"]
    assert check["spec"] == {"controllerName": "accelerator.gke.io/slice"}
    [flavor] = [f for f in by_kind["ResourceFlavor"]
                if f["metadata"]["name"] == "ironwood-sub-blocks"]
    assert flavor["spec"]["topologyName"] == "tpu-sub-blocks"
    assert "cloud.google.com/gke-tpu-topology" not in flavor["spec"]["nodeLabels"]
    assert by_kind["ClusterQueue"]
    for cq in by_kind["ClusterQueue"]:
        assert {"name": "tpu-slice", "onFlavors": ["ironwood-sub-blocks"]} in \
            cq["spec"]["admissionChecksStrategy"]["admissionChecks"]
        [entry] = [f for g in cq["spec"]["resourceGroups"] for f in g["flavors"]
                   if f["name"] == "ironwood-sub-blocks"]
        tpu = next(r for r in entry["resources"] if r["name"] == "google.com/tpu")
        assert tpu["nominalQuota"] == 8 * 64  # 64 chips per sub-block pool


def test_every_team_queue_gates_the_flavor(tmp_path: Path) -> None:
    # With teams, each ClusterQueue offers the sub-block flavor, so each carries the slice
    # controller's check: a queue without it would admit a workload before its slice is.
    path = tmp_path / "Pulumi.teams.yaml"
    path.write_text(_edit(extra=("    teams:", "      - name: evals", "        namespace: evals",
                                 "        quota: {ironwood: 128}")))
    objs = _kueue(harness.evaluate_file(path))
    queues = [o for o in objs if o["kind"] == "ClusterQueue"]
    assert sorted(q["metadata"]["name"] for q in queues) == ["evals", "pretraining"]
    for cq in queues:
        validate(cq)
        assert {"name": "tpu-slice", "onFlavors": ["ironwood-sub-blocks"]} in \
            cq["spec"]["admissionChecksStrategy"]["admissionChecks"], cq["metadata"]["name"]
    quota = {q["metadata"]["name"]: next(
        r["nominalQuota"] for g in q["spec"]["resourceGroups"] for f in g["flavors"]
        if f["name"] == "ironwood-sub-blocks" for r in f["resources"]
        if r["name"] == "google.com/tpu") for q in queues}
    assert quota == {"pretraining": 8 * 64 - 128, "evals": 128}


def test_contract_offers_each_shape(evaluated: harness.Evaluation) -> None:
    data = harness.plain_outputs(evaluated, reveal=True)["accelstack"]
    entries = [p for p in data["slicePools"] if p["name"] == "ironwood"]
    assert [(e["accelerator"], e["sliceTopology"], e["sliceCount"], e["vmsPerSlice"])
            for e in entries] == [("tpu7x-128", "4x4x4", 8, 16), ("tpu7x-256", "4x4x8", 4, 32),
                                  ("tpu7x-512", "4x8x8", 2, 64)]
    # One workload's slices share a block of four sub-blocks.
    assert [e["blockSliceCount"] for e in entries] == [4, 2, 1]
    for e in entries:
        assert e["nodePools"] == [f"ironwood-{i}" for i in range(8)]
        assert "cloud.google.com/gke-tpu-topology" not in e["nodeSelector"]


def test_no_slice_controller_without_dynamic_pools() -> None:
    ev = evaluate_shipped(ROOT / "stacks" / "Pulumi.v5p-reserved.yaml")
    [cluster] = _of(ev, "gcp:container/cluster:Cluster")
    assert "sliceControllerConfig" not in cluster["addonsConfig"]
    assert not [o for o in _kueue(ev) if o["kind"] == "AdmissionCheck"]


# -- the render rule ----------------------------------------------------------------------

pytestmark = pytest.mark.usefixtures("no_stack_env")


@pytest.fixture
def outputs(tmp_path: Path, server: FakeApiServer) -> Path:
    return stacks.write_outputs(tmp_path / "tpu7x.json", "tpu7x-dynamic", server.kubeconfig())


def _render(outputs: Path, *args: str) -> dict[str, Any]:
    result = run(outputs, "create", "--dry-run", "--no-resolve-image", "--image", IMAGE,
                 *args, "-o", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    [js] = [o for o in (data if isinstance(data, list) else [data]) if o["kind"] == "JobSet"]
    return dict(js)


def test_a_4x8x8_render_asks_for_the_slice_and_pins_nothing(outputs: Path) -> None:
    js = _render(outputs, "--workload", "llm", "--accelerator", "tpu7x-4x8x8")
    assert "alpha.jobset.sigs.k8s.io/exclusive-topology" not in \
        (js["metadata"].get("annotations") or {})
    [rj] = js["spec"]["replicatedJobs"]
    job = rj["template"]["spec"]
    assert job["parallelism"] == job["completions"] == 256 // 4
    pod_meta, pod = job["template"]["metadata"], job["template"]["spec"]
    assert pod_meta["annotations"] == {"cloud.google.com/gke-tpu-slice-topology": "4x8x8"}
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu7x",
                                   "accelstack.dev/capacity": "reservation",
                                   "accelstack.dev/slice-pool": "ironwood"}
    assert pod["containers"][0]["resources"]["limits"]["google.com/tpu"] == "4"
    validate(js)


def test_each_shape_renders_its_own_topology(outputs: Path) -> None:
    for shape, pods in (("4x4x4", 16), ("4x4x8", 32)):
        js = _render(outputs, "--workload", f"w{shape}", "--accelerator", f"tpu7x-{shape}")
        job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert job["parallelism"] == pods
        assert job["template"]["metadata"]["annotations"] == {
            "cloud.google.com/gke-tpu-slice-topology": shape}


def test_the_slice_name_rule() -> None:
    from submit.render import dynamic_slicing as ds
    # "pretraining-jobset-<18>-abcde-slice" is exactly 49.
    assert ds.slice_name_length("pretraining", "x" * 18, "slice") == 49
    assert ds.max_name("pretraining", "slice") == 18
    assert ds.max_name("default", "slice") == 22


def test_render_refusals(outputs: Path) -> None:
    # GKE's slice controller names the Slice <ns>-<Kueue workload>-<pod set>, Kueue's
    # workload is jobset-<name>-<5 hex>, the pod set is the replicated job ("slice"), and a
    # Slice's name has at most 49 characters: in "pretraining" that leaves 18.
    result = run(outputs, "create", "--dry-run", "--no-resolve-image", "--image", IMAGE,
                 "--workload", "a-workload-name-of-28-charsx", "--accelerator", "tpu7x-4x8x8")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert ("'a-workload-name-of-28-charsx' is 28 characters; a workload on a dynamic slice "
            "(4x8x8) in namespace 'pretraining' may have at most 18: GKE names its Slice "
            "<namespace>-jobset-<workload>-<hash>-slice (59 characters here), and a Slice's "
            "name has at most 49") in result.stderr
    result = run(outputs, "create", "--dry-run", "--no-resolve-image", "--image", IMAGE,
                 "--workload", "a-name-of-19-charsx", "--accelerator", "tpu7x-4x8x8")
    assert result.exit_code == 2 and "is 19 characters" in result.stderr
    js = _render(outputs, "--workload", "a-name-of-18-chars", "--accelerator", "tpu7x-4x8x8")
    assert js["metadata"]["name"] == "a-name-of-18-chars"
    result = run(outputs, "create", "--dry-run", "--no-resolve-image", "--image", IMAGE,
                 "--workload", "big", "--accelerator", "tpu7x-8x8x8")
    assert result.exit_code == 2 and "tpu7x-8x8x8" in result.stderr
    result = run(outputs, "create", "--dry-run", "--no-resolve-image", "--image", IMAGE,
                 "--workload", "three", "--accelerator", "tpu7x-4x8x8", "--num-slices", "3")
    assert result.exit_code == 2 and "3 is more than the 2 tpu7x-512 slices" in result.stderr
    # The pool makes two 4x8x8 slices, one per block, but one workload's slices share a
    # block: two of them in one workload could never be placed.
    result = run(outputs, "create", "--dry-run", "--no-resolve-image", "--image", IMAGE,
                 "--workload", "two", "--accelerator", "tpu7x-4x8x8", "--num-slices", "2")
    assert result.exit_code == 2
    assert ("'--num-slices': 2 is more than the 1 4x8x8 slices one reservation block of pool "
            "ironwood makes; a workload's dynamic slices all come from one block") \
        in result.stderr
    js = _render(outputs, "--workload", "two", "--accelerator", "tpu7x-4x4x8",
                 "--num-slices", "2")  # two 4x4x8 slices fill one block's four sub-blocks
    assert js["spec"]["replicatedJobs"][0]["replicas"] == 2


def test_accelerators_lists_the_pools_shapes(outputs: Path) -> None:
    result = CliRunner().invoke(main, ["accelerators", "--outputs", str(outputs), "-o", "json"])
    assert result.exit_code == 0, result.output
    rows = [r for r in json.loads(result.stdout) if r["pool"] == "ironwood"]
    assert [(r["topology"], r["slices"]) for r in rows] == [("4x4x4", 8), ("4x4x8", 4),
                                                           ("4x8x8", 2)]
    # Each shape says it is a dynamic slice, how many sub-blocks it joins, of how many.
    assert [(r["sliceTopology"], r["subBlocksPerSlice"], r["subBlocks"],
             r["slicesPerWorkload"]) for r in rows] == [
        ("4x4x4", 1, 8, 4), ("4x4x8", 2, 8, 2), ("4x8x8", 4, 8, 1)]


def test_accelerators_table_shows_the_dynamic_shapes(outputs: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["accelerators", "--outputs", str(outputs)])
    assert result.exit_code == 0, result.output
    header, *lines = result.stdout.splitlines()
    assert header.split()[-4:] == ["SLICE", "SUB-BLOCKS/SLICE", "SUB-BLOCKS",
                                   "SLICES/WORKLOAD"]
    assert "DYNAMIC SLICE" in header
    assert [ln.split()[-4:] for ln in lines if ln.startswith("ironwood ")] == [
        ["4x4x4", "1", "8", "4"], ["4x4x8", "2", "8", "2"], ["4x8x8", "4", "8", "1"]]
    # A stack without dynamic slicing pools keeps its columns.
    fixed = stacks.write_outputs(tmp_path / "fixed.json", "v6e-training")
    result = CliRunner().invoke(main, ["accelerators", "--outputs", str(fixed)])
    assert result.exit_code == 0, result.output
    assert "DYNAMIC SLICE" not in result.stdout and "SUB-BLOCKS" not in result.stdout
    result = CliRunner().invoke(main, ["accelerators", "--outputs", str(fixed), "-o", "json"])
    assert not any("sliceTopology" in r for r in json.loads(result.stdout))


# -- describe reads the Slices ------------------------------------------------------------

def _workload(*conditions: tuple[str, str, str, str],
              checks: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "jobset-llm-1a2b3", "namespace": NS, "ownerReferences": [
                {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "llm",
                 "uid": "uid-llm"}]},
            "status": {"conditions": [{"type": t, "status": s, "reason": r, "message": m}
                                      for t, s, r, m in conditions],
                       "admissionChecks": checks or []}}


def _slice(name: str, reason: str, message: str = "", wl: str = "jobset-llm-1a2b3",
           ids: tuple[str, ...] = ("p-a", "p-b", "p-c", "p-d")) -> dict[str, Any]:
    # The shape of the Slice reference's example, with the slice controller's owner
    # annotations.
    return {"apiVersion": "accelerator.gke.io/v1beta1", "kind": "Slice",
            "metadata": {"name": name, "annotations": {dynamic_slices_ns(): NS,
                                                       dynamic_slices_name(): wl}},
            "spec": {"type": "tpu7x", "topology": "4x8x8", "partitionIds": list(ids)},
            "status": {"conditions": [{"type": "Ready", "status": "True" if reason == "ACTIVE"
                                       else "False", "reason": reason, "message": message,
                                       "lastTransitionTime": "2026-11-27T00:00:00Z"}]}}


def dynamic_slices_ns() -> str:
    return "slice.accelerator.gke.io/owner-workload-namespace"


def dynamic_slices_name() -> str:
    return "slice.accelerator.gke.io/owner-workload-name"


RESERVED = ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue")
ADMITTED = ("Admitted", "True", "Admitted", "The workload is admitted")


def _verdict(result: Result) -> str:
    assert result.exit_code == 0, result.output
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("Verdict: ")]
    return line.removeprefix("Verdict: ")


def test_describe_shows_the_slice_and_its_sub_blocks(outputs: Path,
                                                      server: FakeApiServer) -> None:
    assert run(outputs, "create", "--workload", "llm", "--accelerator", "tpu7x-4x8x8",
               "--image", IMAGE, "--no-resolve-image").exit_code == 0
    st = server.state
    st.jobsets[(NS, "llm")]["metadata"]["uid"] = "uid-llm"
    pending_check = [{"name": "tpu-slice", "state": "Pending", "message": "1 ACTIVATING"}]

    # no slice controller on the cluster: said, and describe still answers
    st.workloads[NS] = [_workload(RESERVED, checks=pending_check)]
    result = run(outputs, "describe", "llm")
    assert "Dynamic slice: 4x8x8, joined from 4x4x4 sub-blocks" in result.stdout
    assert "  not known: the cluster does not serve Slices" in result.stdout
    assert _verdict(result).startswith("waiting for capacity: admission check tpu-slice")

    # quota reserved, the Slice is being connected; another workload's Slice is not shown
    st.slices = [_slice("pretraining-jobset-llm-1a2b3-slice-0", "ACTIVATING"),
                 _slice("other", "ACTIVE", wl="jobset-other-9z9z9")]
    result = run(outputs, "describe", "llm")
    assert ("  pretraining-jobset-llm-1a2b3-slice-0: 4x8x8, ACTIVATING (GKE is connecting "
            "the sub-blocks)") in result.stdout
    assert "    sub-blocks (partition ids): p-a, p-b, p-c, p-d" in result.stdout
    assert "other" not in result.stdout
    assert _verdict(result) == ("waiting for its slice: pretraining-jobset-llm-1a2b3-slice-0 "
                                "is ACTIVATING (GKE is connecting the sub-blocks)")

    # the slice failed to form
    st.slices = [_slice("pretraining-jobset-llm-1a2b3-slice-0", "FAILED",
                        "selected nodes are not part of the same reservation block")]
    result = run(outputs, "describe", "llm")
    assert _verdict(result) == (
        "slice pretraining-jobset-llm-1a2b3-slice-0 FAILED: selected nodes are not part of "
        "the same reservation block; Kueue will place the workload on other sub-blocks")

    # formed and admitted: the verdict is Kueue's; -o json carries the Slices
    st.slices = [_slice("pretraining-jobset-llm-1a2b3-slice-0", "ACTIVE")]
    st.workloads[NS] = [_workload(RESERVED, ADMITTED, checks=[
        {"name": "tpu-slice", "state": "Ready", "message": "1 ACTIVE"}])]
    result = run(outputs, "describe", "llm")
    assert _verdict(result) == "admitted: pods are starting or running"
    result = run(outputs, "describe", "llm", "-o", "json")
    assert json.loads(result.stdout)["slices"] == [{
        "name": "pretraining-jobset-llm-1a2b3-slice-0", "type": "tpu7x", "topology": "4x8x8",
        "partitionIds": ["p-a", "p-b", "p-c", "p-d"], "state": "ACTIVE", "message": None}]
    assert [r.path for r in st.requests if "accelerator.gke.io" in r.path][-1] == \
        "/apis/accelerator.gke.io/v1beta1/slices"

    # an account that may not list Slices
    st.forbidden.add("slices")
    result = run(outputs, "describe", "llm", "-o", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["slices"] is None


def test_describe_of_a_fixed_pool_reads_no_slices(tmp_path: Path, server: FakeApiServer) -> None:
    out = stacks.write_outputs(tmp_path / "v5p.json", "v5p-reserved", server.kubeconfig())
    assert run(out, "create", "--workload", "fixed", "--accelerator", "v5p-128", "--image",
               IMAGE, "--no-resolve-image").exit_code == 0
    result = run(out, "describe", "fixed")
    assert result.exit_code == 0 and "Dynamic slice" not in result.stdout, result.output
    assert not [r for r in server.state.requests if "accelerator.gke.io" in r.path]
    assert dynamic_spec.CONTROLLER == "accelerator.gke.io/slice"


# Every state a Slice's Ready condition names (submit/state/slices.py MEANING), and a Slice
# with no condition yet: what describe prints for it, and what the verdict says while the
# workload waits (quota reserved, the slice check pending). None: the verdict is Kueue's.
SLICE_STATES = [
    ("SliceNotCreated", "", "GKE is checking the sub-blocks", "waiting"),
    ("SliceCreationFailed", "partition overlap", "GKE refused the sub-blocks it was given",
     "failed"),
    ("ACTIVATING", "", "GKE is connecting the sub-blocks", "waiting"),
    ("ACTIVE", "", "connected", None),
    ("ACTIVE_DEGRADED", "", "usable, but a sub-block is degraded", None),
    ("FAILED", "ICI links down", "GKE could not connect the sub-blocks", "failed"),
    ("DEACTIVATING", "", "being taken apart", "waiting"),
    ("INCOMPLETE", "", "about to be deleted", "waiting"),
    (None, "", "not ready", "waiting"),
]


@pytest.mark.parametrize("reason,message,meaning,verdict", SLICE_STATES,
                         ids=[str(s[0]) for s in SLICE_STATES])
def test_describe_and_why_in_each_slice_state(outputs: Path, server: FakeApiServer,
                                              reason: str | None, message: str, meaning: str,
                                              verdict: str | None) -> None:
    assert run(outputs, "create", "--workload", "llm", "--accelerator", "tpu7x-4x8x8",
               "--image", IMAGE, "--no-resolve-image").exit_code == 0
    st = server.state
    st.jobsets[(NS, "llm")]["metadata"]["uid"] = "uid-llm"
    st.workloads[NS] = [_workload(RESERVED, checks=[
        {"name": "tpu-slice", "state": "Pending", "message": "waiting for the slice"}])]
    name = "pretraining-jobset-llm-1a2b3-slice-0"
    sl = _slice(name, reason or "ACTIVATING", message)
    if reason is None:
        del sl["status"]  # made, not yet reconciled: no Ready condition
    elif reason in ("ACTIVE", "ACTIVE_DEGRADED"):
        sl["status"]["conditions"][0]["status"] = "True"
    st.slices = [sl]
    result = run(outputs, "describe", "llm")
    shown = reason or "unknown"
    line = f"  {name}: 4x8x8, {shown}" + (f" ({meaning})" if reason else "") \
        + (f": {message}" if message else "")
    assert line in result.stdout.splitlines(), result.stdout
    assert "    sub-blocks (partition ids): p-a, p-b, p-c, p-d" in result.stdout
    said = _verdict(result)
    if verdict == "waiting":
        assert said == f"waiting for its slice: {name} is {shown} ({meaning})"
    elif verdict == "failed":
        assert said == (f"slice {name} {reason}: {message}; Kueue will place the workload on "
                        "other sub-blocks")
    else:  # a working slice explains nothing: Kueue's own verdict stands
        assert "slice" not in said.split(":")[0], said
    data = json.loads(run(outputs, "describe", "llm", "-o", "json").stdout)
    assert [(s["name"], s["state"], s["partitionIds"]) for s in data["slices"]] == [
        (name, shown, ["p-a", "p-b", "p-c", "p-d"])]
