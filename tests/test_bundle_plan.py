"""The bundle plan (pure): which files, the reproducible layer, the image around it."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from infra.contract.outputs import SlicePoolInfo
from submit.bundle import files, plan
from submit.bundle.plan import BundleError, Platform


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


TREE = {
    "train.py": "print('hi')\n",
    "lib/model.py": "x = 1\n",
    "lib/__pycache__/model.cpython-311.pyc": "junk",
    "data/big.bin": "big",
    "data/keep.txt": "keep",
    "logs/run.log": "log",
    "notes.md": "notes",
    "sub/.gitignore": "*.tmp\n!important.tmp\n",
    "sub/a.tmp": "tmp",
    "sub/important.tmp": "kept by negation",
    "sub/b.txt": "b",
    ".gitignore": "__pycache__/\n/logs/\ndata/*\n!data/keep.txt\n",
    ".dockerignore": "# comment\nnotes.md\n**/*.bin\n",
    ".git/config": "[core]",
}


def _names(root: Path) -> list[str]:
    return [e.rel for e in plan.collect(root)]


def test_collect_honours_gitignore_at_every_level_and_the_ignore_file(tmp_path: Path) -> None:
    root = _tree(tmp_path, TREE)
    assert _names(root) == [
        ".dockerignore", ".gitignore", "data", "data/keep.txt", "lib", "lib/model.py",
        "sub", "sub/.gitignore", "sub/b.txt", "sub/important.tmp", "train.py"]


def test_accelstackignore_wins_over_dockerignore(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a.py": "", "b.py": "", ".dockerignore": "a.py\n",
                            ".accelstackignore": "b.py\n"})
    assert _names(root) == [".accelstackignore", ".dockerignore", "a.py"]


@pytest.mark.parametrize("pattern, ignored, kept", [
    ("build", ["build/x.py", "build"], ["src/build/x.py"]),  # anchored at the root
    ("**/build", ["build/x.py", "src/build/x.py"], ["builds/x.py"]),
    ("*.py\n!keep.py", ["a.py"], ["keep.py", "a.txt", "src/b.py"]),  # root level only
    ("src/*.txt", ["src/a.txt"], ["src/d/a.txt", "a.txt"]),
    ("/docs", ["docs/a.md"], ["src/docs/a.md"]),
    ("dat?.csv", ["data.csv"], ["dataa.csv"]),
    ("[ab].log", ["a.log", "b.log"], ["c.log"]),
])
def test_dockerignore_semantics(tmp_path: Path, pattern: str, ignored: list[str],
                                kept: list[str]) -> None:
    rules = files._DockerIgnore(pattern.splitlines())
    for rel in ignored:
        assert rules.ignored(rel), (pattern, rel)
    for rel in kept:
        assert not rules.ignored(rel), (pattern, rel)


def test_symlinks_are_kept_as_links_and_modes_are_normalised(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"run.sh": "#!/bin/sh\n", "a.py": ""})
    os.chmod(root / "run.sh", 0o700)
    os.chmod(root / "a.py", 0o600)
    os.symlink("a.py", root / "link.py")
    os.symlink("/etc/passwd", root / "outside")
    buf = io.BytesIO()
    plan.write_layer(root, plan.collect(root), buf)
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(buf.getvalue()))) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert list(members) == ["app", "app/a.py", "app/link.py", "app/outside", "app/run.sh"]
    assert members["app/run.sh"].mode == 0o755 and members["app/a.py"].mode == 0o644
    assert members["app/link.py"].issym() and members["app/link.py"].linkname == "a.py"
    assert members["app/outside"].linkname == "/etc/passwd"
    for m in members.values():
        assert (m.uid, m.gid, m.uname, m.gname, m.mtime) == (0, 0, "", "", plan.MTIME)


def test_layer_is_reproducible_across_copies_times_and_owners(tmp_path: Path) -> None:
    a = _tree(tmp_path / "a", TREE)
    b = _tree(tmp_path / "b", dict(reversed(list(TREE.items()))))
    os.utime(b / "train.py", (1_700_000_000, 1_700_000_000))
    out_a, out_b = io.BytesIO(), io.BytesIO()
    la = plan.write_layer(a, plan.collect(a), out_a)
    lb = plan.write_layer(b, plan.collect(b), out_b)
    assert out_a.getvalue() == out_b.getvalue()
    assert la == lb
    assert la.digest == plan.digest_of(out_a.getvalue())
    assert la.size == len(out_a.getvalue())
    assert la.diff_id == plan.digest_of(gzip.decompress(out_a.getvalue()))
    (b / "train.py").write_text("print('changed')\n")
    assert plan.write_layer(b, plan.collect(b), io.BytesIO()).digest != la.digest


def test_nested_workdir_gets_parent_directories(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"x.py": ""})
    buf = io.BytesIO()
    plan.write_layer(root, plan.collect(root), buf, workdir="/opt/code")
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(buf.getvalue()))) as tar:
        assert [(m.name, m.isdir()) for m in tar.getmembers()] == [
            ("opt", True), ("opt/code", True), ("opt/code/x.py", False)]


def test_collect_rejects_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="is not a directory"):
        plan.collect(tmp_path / "nope")


INDEX = {"schemaVersion": 2, "mediaType": plan.OCI_INDEX, "manifests": [
    {"mediaType": plan.OCI_MANIFEST, "digest": "sha256:" + "a" * 64, "size": 1,
     "platform": {"os": "linux", "architecture": "amd64"}},
    {"mediaType": plan.OCI_MANIFEST, "digest": "sha256:" + "b" * 64, "size": 1,
     "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
    {"mediaType": plan.OCI_MANIFEST, "digest": "sha256:" + "c" * 64, "size": 1,
     "platform": {"os": "unknown", "architecture": "unknown"}},
]}


def test_pick_manifest_by_platform() -> None:
    assert plan.pick_manifest(INDEX, Platform("linux", "amd64"), "b")["digest"][7] == "a"
    assert plan.pick_manifest(INDEX, Platform("linux", "arm64"), "b")["digest"][7] == "b"


def test_pick_manifest_says_what_the_base_has() -> None:
    only_amd = {**INDEX, "manifests": [INDEX["manifests"][0], INDEX["manifests"][2]]}
    with pytest.raises(BundleError) as e:
        plan.pick_manifest(only_amd, Platform("linux", "arm64"), "python:3.11")
    assert str(e.value) == (
        "base image python:3.11 has no linux/arm64 image (it has linux/amd64); the pool's "
        "machines need linux/arm64: choose a base image published for it")


def test_single_manifest_of_another_platform_is_refused() -> None:
    with pytest.raises(BundleError, match="is linux/amd64, but the pool's machines need "
                                          "linux/arm64"):
        plan.check_config_platform({"os": "linux", "architecture": "amd64"},
                                   Platform("linux", "arm64"), "img")


LAYER = plan.Layer("sha256:" + "1" * 64, 123, "sha256:" + "2" * 64, 3)


@pytest.mark.parametrize("docker", [False, True])
def test_new_config_and_manifest_keep_the_base_format(docker: bool) -> None:
    base_config = json.dumps({
        "architecture": "amd64", "os": "linux", "config": {"Env": ["A=1"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "0" * 64]},
        "history": [{"created_by": "base"}]}).encode()
    config = plan.new_config(base_config, LAYER)
    cfg = json.loads(config)
    assert cfg["config"] == {"Env": ["A=1"], "WorkingDir": "/app"}
    assert cfg["rootfs"]["diff_ids"] == ["sha256:" + "0" * 64, LAYER.diff_id]
    assert cfg["history"][-1]["created_by"] == plan.CREATED_BY
    base_manifest = {
        "schemaVersion": 2,
        "mediaType": plan.DOCKER_MANIFEST if docker else plan.OCI_MANIFEST,
        "config": {"mediaType": plan.DOCKER_CONFIG if docker else plan.OCI_CONFIG,
                   "digest": "sha256:" + "9" * 64, "size": 10},
        "layers": [{"mediaType": "x", "digest": "sha256:" + "8" * 64, "size": 5}]}
    m = json.loads(plan.new_manifest(base_manifest, config, LAYER, "docker.io/library/b",
                                     "sha256:" + "7" * 64))
    assert m["config"] == {"mediaType": plan.DOCKER_CONFIG if docker else plan.OCI_CONFIG,
                           "digest": "sha256:" + hashlib.sha256(config).hexdigest(),
                           "size": len(config)}
    assert m["layers"][0] == base_manifest["layers"][0]
    assert m["layers"][1] == {
        "mediaType": plan.DOCKER_LAYER_GZIP if docker else plan.OCI_LAYER_GZIP,
        "digest": LAYER.digest, "size": LAYER.size}
    if docker:
        assert "annotations" not in m
    else:
        assert m["annotations"]["org.opencontainers.image.base.digest"] == "sha256:" + "7" * 64


def test_schema1_manifests_are_refused() -> None:
    with pytest.raises(BundleError, match="not supported"):
        plan.new_manifest({"schemaVersion": 1}, b"{}", LAYER)


def test_content_tag_is_a_valid_tag_naming_the_digest() -> None:
    tag = plan.content_tag(b"{}")
    assert tag == "sha256-" + hashlib.sha256(b"{}").hexdigest() and len(tag) <= 128


def _pool(kind: str, family: str, machine: str) -> SlicePoolInfo:
    return SlicePoolInfo(name="p", accelerator="x", kind=kind, family=family, topology=None,
                         machine_type=machine, chips_per_vm=1, vms_per_slice=1, slice_count=1,
                         capacity_mode="on-demand", node_pools=("p",), zones=("z",),
                         node_selector={}, tolerations=(), resource_name=None,
                         networking="none")


@pytest.mark.parametrize("kind, family, machine, arch", [
    ("gpu", "a4x", "a4x-highgpu-4g", "arm64"),
    ("gpu", "a3-mega", "a3-megagpu-8g", "amd64"),
    ("tpu", "v5p", "ct5p-hightpu-4t", "amd64"),
    ("cpu", "cpu", "c4a-standard-8", "arm64"),
    ("cpu", "cpu", "n2-standard-32", "amd64"),
])
def test_pool_platform(kind: str, family: str, machine: str, arch: str) -> None:
    assert plan.pool_platform(_pool(kind, family, machine)) == Platform("linux", arch)


def test_package_name(tmp_path: Path) -> None:
    d = tmp_path / "My_Project.v2"
    d.mkdir()
    assert plan.package_name(d) == "my-project-v2"


GOLDEN_TREE = {"train.py": "print('hi')\n", "pkg/__init__.py": "", "pkg/model.py": "W = 1\n"}
# The uncompressed digest of GOLDEN_TREE's layer: pinned so that a change to the tar format
# (order, modes, owners, times, headers) shows up here, not as a cache miss in a registry.
GOLDEN_DIFF_ID = "sha256:fbf120eafdcea1fc8accd030d66d11f0d2f2721afa349ddb59936b012978cd23"


def test_layer_digest_is_pinned(tmp_path: Path) -> None:
    root = _tree(tmp_path, GOLDEN_TREE)
    layer = plan.write_layer(root, plan.collect(root), io.BytesIO())
    assert layer.diff_id == GOLDEN_DIFF_ID
