"""An image given by tag is submitted by digest (issue 26): resolved with the bundler's
registry client against Debian's docker-registry on loopback (tests/oci_registry.py), the
tag kept in the pod annotation; --no-resolve-image keeps the tag; a plain --dry-run contacts
no registry (issue 34) and says the tag is pinned at submit; --dry-run --resolve-image and
--export resolve when the registry answers and say so when it does not; a real submit that
cannot resolve sends nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from click.testing import CliRunner, Result

from fake_apiserver import FakeApiServer
from fakes import stacks
from oci_registry import RegistryServer, seed_image, serve
from submit.bundle.registry import INSECURE_ENV
from submit.cli.app import main
from submit.render.jobset import IMAGE_TAG

CLOSED = "127.0.0.1:9"  # the discard port: nothing listens on loopback


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "plain")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, registry: RegistryServer) -> None:
    monkeypatch.delenv("ACCELSTACK_RESOLVE_IMAGE")  # conftest turns resolution off
    monkeypatch.setenv(INSECURE_ENV, f"{registry.host},{CLOSED}")


def _index_digest(registry: RegistryServer) -> str:
    r = registry.get("base/python", "manifests", "3.11",
                     accept="application/vnd.oci.image.index.v1+json")
    return str(r.headers["Docker-Content-Digest"])


def _create(outputs: Path, image: str, *args: str) -> Result:
    return CliRunner().invoke(main, [
        "workload", "--outputs", str(outputs), "create", "--workload", "w1",
        "--accelerator", "v5litepod-16", "--image", image, "--command", "true", *args])


def _pods(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [rj["template"]["spec"]["template"] for o in objs if o["kind"] == "JobSet"
            for rj in o["spec"]["replicatedJobs"]]


def test_a_dry_run_renders_the_tag_by_digest(tmp_path: Path, registry: RegistryServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    image = f"{registry.host}/base/python:3.11"
    r = _create(outputs, image, "--dry-run", "--resolve-image")
    assert r.exit_code == 0, r.output
    pinned = f"{registry.host}/base/python@{_index_digest(registry)}"
    pod, = _pods([yaml.safe_load(r.stdout)])
    assert pod["spec"]["containers"][0]["image"] == pinned
    assert pod["metadata"]["annotations"][IMAGE_TAG] == image
    assert r.stderr == f"image {image} resolved to {pinned}\n"


def test_a_plain_dry_run_contacts_no_registry(tmp_path: Path) -> None:
    import socket

    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    with socket.socket() as listener:  # a registry that notes every connection
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        image = f"127.0.0.1:{listener.getsockname()[1]}/team/trainer:v1"
        r = _create(outputs, image, "--dry-run")
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"image {image}: the tag is pinned to its digest at submit "
                        "(--resolve-image pins it now)\n")
    pod, = _pods([yaml.safe_load(r.stdout)])
    assert pod["spec"]["containers"][0]["image"] == image


def test_an_export_still_pins_where_the_registry_answers(tmp_path: Path,
                                                         registry: RegistryServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    image = f"{registry.host}/base/python:3.11"
    r = _create(outputs, image, "--dry-run", "--export", str(tmp_path / "w.yaml"))
    assert r.exit_code == 0, r.output
    pinned = f"{registry.host}/base/python@{_index_digest(registry)}"
    assert yaml.safe_load((tmp_path / "w.yaml").read_text())["spec"]["replicatedJobs"][0][
        "template"]["spec"]["template"]["spec"]["containers"][0]["image"] == pinned


def test_no_resolve_image_keeps_the_tag(tmp_path: Path, registry: RegistryServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    image = f"{registry.host}/base/python:3.11"
    r = _create(outputs, image, "--dry-run", "--no-resolve-image")
    assert r.exit_code == 0, r.output
    pod, = _pods([yaml.safe_load(r.stdout)])
    assert pod["spec"]["containers"][0]["image"] == image
    assert IMAGE_TAG not in (pod["metadata"].get("annotations") or {})


def test_a_dry_run_keeps_the_tag_when_the_registry_is_unreachable(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    r = _create(outputs, f"{CLOSED}/team/trainer:latest", "--dry-run", "--resolve-image")
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"image {CLOSED}/team/trainer:latest: not resolved to a digest, the "
                        f"tag is kept (cannot reach registry {CLOSED}: ConnectionError)\n")
    pod, = _pods([yaml.safe_load(r.stdout)])
    assert pod["spec"]["containers"][0]["image"] == f"{CLOSED}/team/trainer:latest"


def test_a_submit_that_cannot_resolve_sends_nothing(tmp_path: Path,
                                                   server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    r = _create(outputs, f"{CLOSED}/team/trainer:latest")
    assert r.exit_code == 1
    assert r.stderr == (f"Error: cannot resolve --image {CLOSED}/team/trainer:latest to a "
                        f"digest: cannot reach registry {CLOSED}: ConnectionError; pass "
                        "--no-resolve-image to submit the tag as it is\n")
    assert not server.state.requests


def test_a_submit_runs_the_digest(tmp_path: Path, server: FakeApiServer,
                                  registry: RegistryServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    image = f"{registry.host}/base/python:3.11"
    r = _create(outputs, image)
    assert r.exit_code == 0, r.output
    pod, = _pods([server.state.jobsets[("training", "w1")]])
    assert pod["spec"]["containers"][0]["image"] == \
        f"{registry.host}/base/python@{_index_digest(registry)}"
    assert pod["metadata"]["annotations"][IMAGE_TAG] == image


def test_an_unknown_tag_is_a_bad_image(tmp_path: Path, registry: RegistryServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    r = _create(outputs, f"{registry.host}/base/python:9.9", "--dry-run", "--resolve-image")
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--image': {registry.host}/base/python:9.9 not found: check "
        "the image name and the tag (or push the image first)")


def test_every_trial_runs_the_same_bytes(tmp_path: Path, registry: RegistryServer) -> None:
    # Two tags swept over four trials: each tag resolved once, every trial of a tag gets
    # its digest.
    digest_a, _ = seed_image(registry, "team/trainer", "a", "amd64")
    digest_b, _ = seed_image(registry, "team/trainer", "b", "arm64")
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"name: s\nworkload: {{accelerator: v5litepod-16, image: "
                     f"'{registry.host}/team/trainer:a', command: 'true'}}\nsweep:\n"
                     f"  env.LR: ['1', '2']\n  image: ['{registry.host}/team/trainer:a', "
                     f"'{registry.host}/team/trainer:b']\n")
    r = CliRunner().invoke(main, ["experiment", "--outputs", str(outputs), "create",
                                  str(sweep), "--dry-run", "-o", "json",
                                  "--resolve-image"])
    assert r.exit_code == 0, r.output
    objs = json.loads(r.stdout)["items"]  # a List, as `create`; the trial table: stderr
    images = [p["spec"]["containers"][0]["image"] for p in _pods(objs)]
    a, b = (f"{registry.host}/team/trainer@{d}" for d in (digest_a, digest_b))
    assert images == [a, b, a, b]
    assert r.stderr.count(" resolved to ") == 2


def test_a_group_runs_each_roles_image_by_digest(tmp_path: Path,
                                                 registry: RegistryServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "multi")
    group = tmp_path / "g.yaml"
    group.write_text(f"name: g\nworkload: {{image: '{registry.host}/base/python:3.11'}}\n"
                     "roles:\n  trainer: {accelerator: v5litepod-16, pool: v5e-spot, "
                     "command: 'true'}\n  evaluator: {accelerator: l4-1, pool: l4, "
                     f"image: '{registry.host}/base/docker-amd64:1', command: 'true'}}\n")
    r = CliRunner().invoke(main, ["workload", "--outputs", str(outputs), "create-group",
                                  str(group), "--dry-run", "--resolve-image"])
    assert r.exit_code == 0, r.output
    pods = _pods(list(yaml.safe_load_all(r.stdout)))
    assert [p["metadata"]["annotations"][IMAGE_TAG] for p in pods] == [
        f"{registry.host}/base/python:3.11", f"{registry.host}/base/docker-amd64:1"]
    assert all("@sha256:" in p["spec"]["containers"][0]["image"] for p in pods)


def test_the_python_api_submits_the_tag_by_digest(tmp_path: Path, server: FakeApiServer,
                                                  registry: RegistryServer) -> None:
    from submit import api

    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    session = api.Session(outputs_file=str(outputs))
    image = f"{registry.host}/base/python:3.11"
    session.submit(api.Workload(name="w1", accelerator="v5litepod-16", image=image,
                                command="true"))
    pod, = _pods([server.state.jobsets[("training", "w1")]])
    assert pod["spec"]["containers"][0]["image"] == \
        f"{registry.host}/base/python@{_index_digest(registry)}"
    assert pod["metadata"]["annotations"][IMAGE_TAG] == image
    # resolve_image=False keeps the tag; a registry that cannot answer sends nothing.
    session.submit(api.Workload(name="w2", accelerator="v5litepod-16", image=image,
                                command="true"), resolve_image=False)
    pod, = _pods([server.state.jobsets[("training", "w2")]])
    assert pod["spec"]["containers"][0]["image"] == image
    sent = len(server.state.requests)
    with pytest.raises(api.BadInput, match="cannot resolve .* to a digest.*resolve_image=False"):
        session.submit(api.Workload(name="w3", accelerator="v5litepod-16",
                                    image=f"{CLOSED}/team/trainer:latest", command="true"))
    assert len(server.state.requests) == sent and ("training", "w3") not in \
        server.state.jobsets


def test_a_session_runs_one_digest_per_tag_even_when_the_tag_moves(
        tmp_path: Path, server: FakeApiServer, registry: RegistryServer) -> None:
    from submit import api

    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    session = api.Session(outputs_file=str(outputs))
    first, _ = seed_image(registry, "team/sweep", "latest", "amd64")
    image = f"{registry.host}/team/sweep:latest"
    base = api.Workload(name="t0", accelerator="v5litepod-16", image=image, command="true")
    session.submit(base)
    moved, _ = seed_image(registry, "team/sweep", "latest", "arm64")  # the tag moves
    assert moved != first
    session.submit(base.replace(name="t1"))
    for name in ("t0", "t1"):
        pod, = _pods([server.state.jobsets[("training", name)]])
        assert pod["spec"]["containers"][0]["image"] == f"{registry.host}/team/sweep@{first}"
    # A new session resolves the tag anew.
    api.Session(outputs_file=str(outputs)).submit(base.replace(name="t2"))
    pod, = _pods([server.state.jobsets[("training", "t2")]])
    assert pod["spec"]["containers"][0]["image"] == f"{registry.host}/team/sweep@{moved}"


def test_the_api_follows_the_cli_s_environment_switch(
        tmp_path: Path, server: FakeApiServer, registry: RegistryServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from submit import api, image_pins
    from submit.cli import image_pin

    assert image_pins.RESOLVE_IMAGE_ENV == image_pin.ENV
    monkeypatch.setenv(image_pins.RESOLVE_IMAGE_ENV, "off")
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    image = f"{registry.host}/base/python:3.11"
    api.Session(outputs_file=str(outputs)).submit(
        api.Workload(name="w5", accelerator="v5litepod-16", image=image, command="true"))
    pod, = _pods([server.state.jobsets[("training", "w5")]])
    assert pod["spec"]["containers"][0]["image"] == image
