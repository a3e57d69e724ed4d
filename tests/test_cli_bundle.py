"""`submit workload create --script-dir DIR --base-image IMAGE`: the CLI contract, against a
real registry on loopback and the fake API server."""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from click.testing import CliRunner, Result

from fake_apiserver import FakeApiServer
from fakes import stacks
from infra.preview import harness
from oci_registry import RegistryServer, serve
from submit.bundle.registry import INSECURE_ENV
from submit.cli.app import main

ACCEPT = "application/vnd.oci.image.manifest.v1+json"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "plain")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, registry: RegistryServer) -> None:
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR",
                "ACCELSTACK_IMAGE_REPOSITORY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(INSECURE_ENV, registry.host)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "my-trainer"
    (root / "out").mkdir(parents=True)
    (root / "train.py").write_text("print('hi')\n")
    (root / "out" / "ckpt").write_text("ignored")
    (root / ".gitignore").write_text("out/\n")
    return root


_A4X_RAW: dict[str, Any] = {
    "project": "test-project", "region": "us-central1", "zones": ["us-central1-b"],
    "clusterName": "arm", "gkeVersion": "1.34", "slices": [{"accelerator": "gb200-4", "count": 2, "capacity": {
        "mode": "reservation", "reservation": "gb200"}}],
    "registry": {"create": True},
}


def _outputs(tmp_path: Path, server: FakeApiServer, repository: str | None,
             name: str = "multi") -> Path:
    if name == "a4x":
        data = harness.plain_outputs(harness.evaluate(copy.deepcopy(_A4X_RAW), "arm"),
                                     reveal=True)
    else:
        data = stacks.outputs(name)
    data["accelstack"]["kubeconfig"] = server.kubeconfig()
    data["accelstack"]["imageRepository"] = repository
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(data))
    return path


def run(outputs: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "create",
                                       "--workload", "w1", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _jobset_image(objs: list[dict[str, Any]]) -> str:
    js = next(o for o in objs if o["kind"] == "JobSet")
    rj = js["spec"]["replicatedJobs"][0]
    return str(rj["template"]["spec"]["template"]["spec"]["containers"][0]["image"])


def test_create_pushes_and_runs_the_image_by_digest(tmp_path: Path, server: FakeApiServer,
                                                    registry: RegistryServer,
                                                    code: Path) -> None:
    outputs = _outputs(tmp_path, server, f"{registry.host}/workloads")
    res = run(outputs, "--accelerator", "v5litepod-16", "--pool", "v5e-spot",
              "--script-dir", str(code), "--base-image", f"{registry.host}/base/python:3.11",
              "--command", "python train.py")
    assert res.exit_code == 0, res.output
    applied = [r.body for r in server.state.requests
               if r.method == "PATCH" and "/jobsets/" in r.path]
    image = _jobset_image(applied)
    assert image.startswith(f"{registry.host}/workloads/my-trainer@sha256:")
    digest = image.split("@")[1]
    m = registry.get("workloads/my-trainer", "manifests", digest, ACCEPT)
    assert m.status_code == 200
    assert res.stderr.startswith(f"image {image} (2 files, linux/amd64; blobs: 2 uploaded, "
                                 "1 mounted, 0 already there)\n")


def test_dry_run_prints_the_digest_and_pushes_nothing(tmp_path: Path, server: FakeApiServer,
                                                      registry: RegistryServer,
                                                      code: Path) -> None:
    outputs = _outputs(tmp_path, server, None)
    res = run(outputs, "--accelerator", "l4-1", "--script-dir", str(code),
              "--base-image", f"{registry.host}/base/python:3.11", "--dry-run",
              "--image-repository", f"{registry.host}/dry")
    assert res.exit_code == 0, res.output
    image = _jobset_image(list(yaml.safe_load_all(res.stdout)))
    assert image.startswith(f"{registry.host}/dry/my-trainer@sha256:")
    assert res.stderr.endswith(f"image {image} (2 files, linux/amd64; not pushed: "
                               "--dry-run)\n")
    assert registry.get("dry/my-trainer", "manifests", image.split("@")[1],
                        ACCEPT).status_code == 404
    assert server.state.requests == []


def test_a4x_pool_gets_the_arm64_image(tmp_path: Path, server: FakeApiServer,
                                       registry: RegistryServer, code: Path) -> None:
    outputs = _outputs(tmp_path, server, f"{registry.host}/arm", name="a4x")
    res = run(outputs, "--accelerator", "gb200-4", "--script-dir", str(code),
              "--base-image", f"{registry.host}/base/python:3.11", "--dry-run")
    assert res.exit_code == 0, res.output
    assert "linux/arm64" in res.stderr
    res = run(outputs, "--accelerator", "gb200-4", "--script-dir", str(code),
              "--base-image", f"{registry.host}/base/docker-amd64:1", "--dry-run")
    assert res.exit_code == 2
    assert res.stderr.endswith(
        f"Error: Invalid value for '--base-image': base image {registry.host}/base/"
        "docker-amd64:1 is linux/amd64, but the pool's machines need linux/arm64: choose a "
        "base image published for linux/arm64\n")


@pytest.mark.parametrize("args, code_, message", [
    (["--script-dir", "{code}"], 2, "Invalid value for '--base-image': is required with "
                                    "--script-dir"),
    (["--base-image", "python:3.11"], 2, "Invalid value for '--base-image': needs "
                                         "--script-dir (the directory to add to it)"),
    (["--image", "python:3.11", "--script-dir", "{code}", "--base-image", "python:3.11"], 2,
     "Invalid value for '--image': cannot be used with --script-dir (the image is built from "
     "--base-image and the directory)"),
    ([], 2, "pass --image, or --script-dir with --base-image"),
    (["--script-dir", "{code}", "--base-image", "Python 3", "--image-repository", "{host}/w"],
     2, "Invalid value for '--base-image': 'Python 3' is not a container image reference "
        "([registry/]repository[:tag][@sha256:digest], lowercase repository)"),
    (["--script-dir", "{code}", "--base-image", "{host}/base/python:3.11",
      "--image-repository", "{host}/w:latest"], 2,
     "Invalid value for '--image-repository': '{host}/w:latest' is an image, not a "
     "repository: drop the tag"),
    (["--script-dir", "{code}", "--base-image", "{host}/base/python:3.11"], 2,
     "Invalid value for '--script-dir': stack 'multi' has no workload image repository: add "
     "`registry:` to its config and run `pulumi up`, or pass --image-repository"),
    (["--script-dir", "{code}", "--base-image", "{host}/base/python:9", "--image-repository",
      "{host}/w"], 1, "{host}/base/python:9 not found: check the image name and the tag (or "
                      "push the image first)"),
])
def test_errors(tmp_path: Path, server: FakeApiServer, registry: RegistryServer, code: Path,
                args: list[str], code_: int, message: str) -> None:
    outputs = _outputs(tmp_path, server, None)
    fill = {"code": str(code), "host": registry.host}
    res = run(outputs, "--accelerator", "l4-1", *[a.format(**fill) for a in args])
    assert res.exit_code == code_, res.output
    assert res.stderr.endswith(f"Error: {message.format(**fill)}\n")
    assert server.state.requests == []


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_progress_draws_a_bar_per_upload(monkeypatch: pytest.MonkeyPatch) -> None:
    from submit.cli.bundle import TerminalProgress

    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    p = TerminalProgress()
    advance = p.start("script directory", 200)
    advance(100)
    advance(100)
    p.finish()
    out = tty.getvalue()
    assert "uploading script directory" in out and "100%" in out


def _experiment(outputs: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, ["experiment", "--outputs", str(outputs), "create",
                                       *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def test_an_experiment_bundles_once_for_every_trial(tmp_path: Path, server: FakeApiServer,
                                                    registry: RegistryServer,
                                                    code: Path) -> None:
    outputs = _outputs(tmp_path, server, f"{registry.host}/workloads")
    sweep = tmp_path / "lr.yaml"
    sweep.write_text("name: lr\nworkload:\n  accelerator: l4-1\n  command: python train.py\n"
                     "sweep:\n  env.LR: [0.1, 0.01, 0.001]\n")
    res = _experiment(outputs, str(sweep), "--script-dir", str(code), "--base-image",
                      f"{registry.host}/base/python:3.11", "--dry-run")
    assert res.exit_code == 0, res.output
    images = {_jobset_image([o]) for o in yaml.safe_load(res.stdout)["items"]
              if o["kind"] == "JobSet"}
    assert len(images) == 1 and next(iter(images)).startswith(
        f"{registry.host}/workloads/my-trainer@sha256:")
    assert res.stderr.count("image ") == 1  # one bundle for the three trials
    assert server.state.requests == []


def test_an_experiment_with_script_dir_names_no_image(tmp_path: Path, server: FakeApiServer,
                                                      registry: RegistryServer,
                                                      code: Path) -> None:
    outputs = _outputs(tmp_path, server, f"{registry.host}/workloads")
    sweep = tmp_path / "lr.yaml"
    sweep.write_text("name: lr\nworkload:\n  accelerator: l4-1\n  image: python:3.12\n"
                     "  command: python train.py\n")
    res = _experiment(outputs, str(sweep), "--script-dir", str(code), "--base-image",
                      f"{registry.host}/base/python:3.11")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        f"Error: Invalid value for 'FILE': {sweep}:4: workload.image: cannot be used with "
        "--script-dir (the image is built from --base-image and the directory)")
    assert server.state.requests == []
