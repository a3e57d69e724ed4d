"""GPUDirect as one release: the installers the stack applies and the daemons the pods run
come from one upstream commit, and move together or not at all."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

import stack_fixtures
from conftest import MINIMAL
from infra.config import stack as config_mod
from infra.catalog import gpudirect_release as rel
from infra.specs import network as network_spec
from submit.render.jobset import render
from submit.render.build import build_spec

# What each manifest of container-engine-accelerators names at the pinned commit
# (git show 992db81:<path> | grep image:), copied here so a change of the table that does
# not come with a new commit, or a new commit without its images, fails.
UPSTREAM_AT_COMMIT = {
    "992db81257553607f1477945f1b3219632991829": {
        "nri_device_injector/nri-device-injector.yaml": (
            "gcr.io/gke-release/nri-device-injector@sha256:"
            "6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970",),
        "gpudirect-tcpx/nccl-tcpx-installer.yaml": (
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",),
        "gpudirect-tcpxo/nccl-tcpxo-installer.yaml": (
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",),
        "gpudirect-rdma/nccl-rdma-installer.yaml": (
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1",),
        "gpudirect-rdma/nccl-rdma-installer-a4x.yaml": (
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0",),
        # The daemons of the same commit's workloads (nccl-test-latest.yaml of each kind).
        "daemons": (
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"),
    },
}
# TCPXO installer -> daemon, as gpudirect-tcpxo/README.md pairs them per release ("The
# tcpxo-daemon version is coupled with the NCCL plugin installer version").
TCPXO_RELEASES = {"v1.0.15": "v1.0.21", "v1.0.14": "v1.0.20"}


def _tag(image: str) -> str:
    return image.rsplit(":", 1)[1]


def test_the_table_is_what_the_pinned_commit_ships() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", rel.COMMIT)
    facts = UPSTREAM_AT_COMMIT[rel.COMMIT]
    for component in rel.all_components():
        assert component.images == facts[component.path], component.key
        assert component.url == (f"https://raw.githubusercontent.com/{rel.REPO}/{rel.COMMIT}/"
                                 f"{component.path}")
    assert (rel.TCPX_DAEMON, rel.TCPXO_DAEMON) == facts["daemons"]


def test_tcpxo_daemon_goes_with_its_installer() -> None:
    [plugin] = rel.TCPXO_INSTALLER.images
    assert TCPXO_RELEASES[_tag(plugin)] == _tag(rel.TCPXO_DAEMON)


def _cfg(**overrides: Any) -> config_mod.StackConfig:
    raw = copy.deepcopy(MINIMAL)
    raw.update(overrides)
    return config_mod.parse(raw)


@pytest.mark.parametrize("accel, paths", [
    ("h100-80gb-8", ["gpudirect-tcpx/nccl-tcpx-installer.yaml",
                     "nri_device_injector/nri-device-injector.yaml"]),
    ("h100-mega-80gb-8", ["gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
                          "nri_device_injector/nri-device-injector.yaml"]),
    ("h200-141gb-8", ["gpudirect-rdma/nccl-rdma-installer.yaml"]),
    ("b200-8", ["gpudirect-rdma/nccl-rdma-installer.yaml"]),
    ("gb200-4", ["gpudirect-rdma/nccl-rdma-installer-a4x.yaml"]),
    ("l4-8", []),
])
def test_installers_come_from_the_pinned_commit(accel: str, paths: list[str]) -> None:
    capacity = {"mode": "reservation", "reservation": "r"}
    cfg = _cfg(slices=[{"accelerator": accel, "capacity": capacity}], gkeVersion="1.34")
    urls = network_spec.nccl_installer_urls(cfg)
    assert urls == [rel.RAW + p for p in paths]
    assert not any("/master/" in u for u in urls)


@pytest.mark.parametrize("stack, accel, container, image", [
    ("a3mega", "h100-mega-80gb-8", "tcpxo-daemon", rel.TCPXO_DAEMON),
    ("a3high", "h100-80gb-8", "tcpx-daemon", rel.TCPX_DAEMON),
])
def test_pods_run_the_daemon_of_the_release(stack: str, accel: str, container: str,
                                            image: str) -> None:
    spec = build_spec(stack_fixtures.outputs(stack), workload="w", accelerator=accel,
                      num_nodes=2, image="busybox:1.36", command="true")
    pod = render(spec)[-1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    [daemon] = pod["initContainers"]
    assert (daemon["name"], daemon["image"]) == (container, image)
