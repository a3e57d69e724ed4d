"""The GPUDirect release the stack installs: one upstream commit, its manifests and images.

GKE's GPUDirect pages apply the NCCL plugin installers (and the NRI device injector) from
GoogleCloudPlatform/container-engine-accelerators, and the workload pods run the
receive-datapath daemon (TCPX, TCPXO) beside NCCL. Upstream couples them: "The
tcpxo-daemon version is coupled with the NCCL plugin installer version"
(gpudirect-tcpxo/README.md). So the manifests are read from one pinned commit, never from
``master``, and the images the pods run are the ones that commit ships, all in the one
table below. tests/test_gpudirect_release.py holds the images each manifest of that
commit names (a copy of the facts, with their source) and fails when this table drifts.

Pure data: imported by the Pulumi program (installer URLs) and by the submitter (daemon
images); it must not import pulumi or a Kubernetes client.
"""

from __future__ import annotations

from infra.record import record

REPO = "GoogleCloudPlatform/container-engine-accelerators"
# HEAD of master on 2026-06-09 ("bump tcpxo-daemon version to 1.0.21"), which carries the
# TCPXO release of Jan 9, 2026 (gpudirect-tcpxo/README.md: installer v1.0.15 with daemon
# v1.0.21).
COMMIT = "992db81257553607f1477945f1b3219632991829"
RAW = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/"


@record
class Component:
    """One manifest of the release and the images it runs (or that go with it)."""

    key: str
    path: str  # in the repository, at COMMIT
    images: tuple[str, ...]  # images the manifest itself names

    @property
    def url(self) -> str:
        return RAW + self.path


_GAR = "us-docker.pkg.dev/gce-ai-infra"
NRI = Component(
    "nri", "nri_device_injector/nri-device-injector.yaml",
    ("gcr.io/gke-release/nri-device-injector@sha256:"
     "6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970",))
TCPX_INSTALLER = Component(
    "tcpx", "gpudirect-tcpx/nccl-tcpx-installer.yaml",
    (f"{_GAR}/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",))
TCPXO_INSTALLER = Component(
    "tcpxo", "gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
    (f"{_GAR}/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",))
RDMA_INSTALLER = Component(
    "rdma", "gpudirect-rdma/nccl-rdma-installer.yaml",
    (f"{_GAR}/gpudirect-gib/nccl-plugin-gib:v1.1.1",))
RDMA_A4X_INSTALLER = Component(
    "rdma-a4x", "gpudirect-rdma/nccl-rdma-installer-a4x.yaml",
    (f"{_GAR}/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0",))

# The receive-datapath daemons the pods run beside the workload, as the same commit's
# example workloads pin them (gpudirect-tcpx/nccl-test-latest.yaml,
# gpudirect-tcpxo/nccl-test-latest.yaml; TCPXO README, release of Jan 9, 2026).
TCPX_DAEMON = f"{_GAR}/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12"
TCPXO_DAEMON = f"{_GAR}/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
# What each daemon sidecar requests, and its limits (CPU millicores, memory MiB). The one
# figure upstream gives is the same commit's Autopilot workload,
# gpudirect-tcpx/nccl-test-latest-autopilot.yaml: the tcpx-daemon requests cpu 1 and
# memory 2Gi (and 10Gi of ephemeral storage); Autopilot sets limits equal to requests, so
# that is also the ceiling the daemon is known to run under. No TCPXO manifest of the
# commit (nor its standard-cluster TCPX ones) sizes the daemon, so TCPXO gets the same.
# The workload container gives these up from its share of the node
# (infra/catalog/pod_resources.py container_share), so the pod still fits its quota.
DAEMON_CPU_MILLI = 1000
DAEMON_MEMORY_MI = 2048
# The networking kinds whose pods run a daemon sidecar.
DAEMON_NETWORKING = ("tcpx", "tcpxo")

# networking kind (or "rdma-a4x") -> the manifests GKE's pages apply for it, in order.
INSTALLERS: dict[str, tuple[Component, ...]] = {
    "tcpx": (TCPX_INSTALLER, NRI),
    "tcpxo": (TCPXO_INSTALLER, NRI),
    "rdma": (RDMA_INSTALLER,),
    "rdma-a4x": (RDMA_A4X_INSTALLER,),
}


def installer_key(networking: str, family: str) -> str:
    """A4X hosts are arm64 and take the arm64 build of the RDMA installer."""
    return "rdma-a4x" if networking == "rdma" and family == "a4x" else networking


def all_components() -> tuple[Component, ...]:
    return (NRI, TCPX_INSTALLER, TCPXO_INSTALLER, RDMA_INSTALLER, RDMA_A4X_INSTALLER)
