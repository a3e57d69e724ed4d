"""Pathways pass-through and the colocated Python sidecar (docs/pathways.md): a run's own
server and proxy images and extra flags, and the sidecar from the stack's pinned image
(pathways.images.colocatedPython, exported as pathways.colocatedPythonImage) or the run's.
Refusals name the option and come before anything is sent."""

from __future__ import annotations

from typing import Any

import pytest

import stack_fixtures
from infra.config import stack as config_mod
from infra.config.errors import ConfigError
from infra.contract.outputs import load
from infra.preview import harness
from infra.record import replace
from submit.render.build import build_spec
from submit.render.jobset import render
from submit.render.option_checks import check_options
from submit.render.spec import SpecError

IMAGE = "us-docker.pkg.dev/my-ml-project/training/maxtext:2026.11.1"
SIDECAR = "us-docker.pkg.dev/my-ml-project/training/sidecar:2026.11.1"
BASE: dict[str, Any] = {"workload": "pw", "accelerator": "v6e-16", "image": IMAGE,
                        "pathways": True}


def _refused(**opts: Any) -> tuple[str, str]:
    with pytest.raises(SpecError) as e:
        check_options(**{**BASE, **opts})
    return e.value.option, e.value.message


@pytest.mark.parametrize("opts, option, message", [
    ({"pathways": False, "pathways_server_arg": ["--x=1"]}, "--pathways-server-arg",
     "applies to Pathways workloads only; add --pathways"),
    ({"pathways": False, "pathways_colocated_python": True}, "--pathways-colocated-python",
     "applies to Pathways workloads only; add --pathways"),
    ({"pathways_worker_arg": ["x=1"]}, "--pathways-worker-arg",
     "'x=1' is not one flag such as --name=value (give the option once per flag)"),
    ({"pathways_proxy_arg": ["--a=1 --b=2"]}, "--pathways-proxy-arg",
     "'--a=1 --b=2' is not one flag such as --name=value (give the option once per flag)"),
    ({"pathways_worker_arg": ["--resource_manager_address=elsewhere:1"]},
     "--pathways-worker-arg", "'--resource_manager_address=elsewhere:1': accelstack sets "
     "--resource_manager_address itself (from the stack and the workload's shape); it may "
     "not be set again"),
    ({"pathways_server_arg": ["--instance_count=9"]}, "--pathways-server-arg",
     "'--instance_count=9': accelstack sets --instance_count itself (from the stack and the "
     "workload's shape); it may not be set again"),
    ({"pathways_proxy_image": "Proxy:1"}, "--pathways-proxy-image", None),
])
def test_refused_without_the_stack(opts: dict[str, Any], option: str,
                                   message: str | None) -> None:
    got_option, got_message = _refused(**opts)
    assert got_option == option
    if message is not None:
        assert got_message == message


def test_colocated_python_needs_an_image() -> None:
    with pytest.raises(SpecError) as e:
        build_spec(stack_fixtures.outputs("v6e-pathways"), **BASE,
                   pathways_colocated_python=True)
    assert (e.value.option, e.value.message) == (
        "--pathways-colocated-python", "stack 'v6e-pathways' pins no colocated Python image "
        "(pathways.images.colocatedPython); give --pathways-colocated-python-image IMAGE")


def test_the_stack_pins_the_sidecar_image_and_exports_it() -> None:
    raw = stack_fixtures.stack_config("v6e-pathways")
    raw["pathways"]["images"] = {"colocatedPython": SIDECAR}
    ev = harness.evaluate(raw, "v6e-pathways")
    assert ev.config.pathways is not None
    assert ev.config.pathways.colocated_python_image == SIDECAR
    out = stack_fixtures.outputs("v6e-pathways")
    assert out.pathways is not None
    pinned = replace(out, pathways=replace(out.pathways, colocated_python_image=SIDECAR))
    data = pinned.to_dict()
    assert data["pathways"]["colocatedPythonImage"] == SIDECAR
    assert load(data).pathways.colocated_python_image == SIDECAR  # type: ignore[union-attr]
    # Without the key the contract reads and prints as before.
    assert "colocatedPythonImage" not in out.to_dict()["pathways"]
    js = render(build_spec(pinned, **BASE, pathways_colocated_python=True))[-1]
    worker = js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    assert [(c["name"], c["image"]) for c in worker["initContainers"]] == [
        ("colocated-python-sidecar", SIDECAR)]
    # A run's image wins over the stack's.
    other = SIDECAR.replace("2026.11.1", "2026.11.2")
    js = render(build_spec(pinned, **BASE, pathways_colocated_python_image=other))[-1]
    worker = js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    assert worker["initContainers"][0]["image"] == other


def test_the_stack_key_is_checked() -> None:
    raw = stack_fixtures.stack_config("v6e-pathways")
    raw["pathways"]["images"] = {"colocatedPython": "us-docker.pkg.dev/p/r/sidecar:latest"}
    with pytest.raises(ConfigError) as e:
        config_mod.parse(raw)
    assert "pathways.images.colocatedPython: 'us-docker.pkg.dev/p/r/sidecar:latest' uses " \
        ":latest" in str(e.value)
