"""What each GPUDirect family's pods carry, checked against its page (and the pinned
upstream release): NCCL variables, the receive-datapath daemon and its probe, NVLink."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schema
import stack_fixtures
from infra.catalog import pod_resources
from submit.render import gpu_net
from submit.render.jobset import render
from submit.render.build import build_spec


def _objs(stack: str, accel: str, nodes: int = 2, command: str | None = "python train.py"
          ) -> list[dict[str, Any]]:
    spec = build_spec(stack_fixtures.outputs(stack), workload="w", accelerator=accel,
                      num_nodes=nodes, image="busybox:1.36", command=command)
    return render(spec)


def _pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    js = objs[-1]
    return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container["env"]}


# GKE's GPUDirect-TCPX page and the pinned release's gpudirect-tcpx/nccl-config.yaml.
TCPX_DOCUMENTED = {
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_ALGO": "Ring,Tree",
    "NCCL_PROTO": "Simple",
    "NCCL_CROSS_NIC": "0",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_PXN_LEVEL": "0",
    "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "eth1,eth2,eth3,eth4",
    "NCCL_GPUDIRECTTCPX_CTRL_DEV": "eth0",
    "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_BUFFSIZE": "4194304",
    "NCCL_NSOCKS_PERTHREAD": "4",
    "NCCL_SOCKET_NTHREADS": "1",
    "NCCL_GPUDIRECTTCPX_TX_BINDINGS":
        "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177",
    "NCCL_GPUDIRECTTCPX_RX_BINDINGS":
        "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191",
    "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "500000",
}


def test_a3_high_sets_the_whole_documented_nccl_list() -> None:
    objs = _objs("a3high", "h100-80gb-8")
    main = _pod(objs)["containers"][0]
    nccl = {k: v for k, v in _env(main).items() if k.startswith("NCCL_")}
    assert nccl == TCPX_DOCUMENTED
    # no env script on A3 High nodes: the command runs as given
    assert main["command"] == ["/bin/sh", "-c", "python train.py"]
    assert _env(main)["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"


def test_a3_high_nccl_list_without_a_command_too() -> None:
    main = _pod(_objs("a3high", "h100-80gb-8", command=None))["containers"][0]
    assert {k for k in _env(main) if k.startswith("NCCL_")} == set(TCPX_DOCUMENTED)


def test_tcpxo_daemon_runs_its_entrypoint_through_a_shell_and_probes_its_health() -> None:
    pod = _pod(_objs("a3mega", "h100-mega-80gb-8"))
    [daemon] = pod["initContainers"]
    # gpudirect-tcpxo/nccl-test-latest.yaml at the pinned commit: chmod, then run.
    assert daemon["command"] == [
        "/bin/sh", "-c", "chmod 755 /fts/entrypoint_rxdm_container.sh && "
        "exec /fts/entrypoint_rxdm_container.sh --num_hops=2"]
    assert daemon["restartPolicy"] == "Always"  # a native sidecar: its probe gates the app
    # gpudirect-tcpxo/best-practice.md: the file is named by HEALTH_CHECK_LOG_FILE
    # (no underscore in it) and the probe reads it.
    assert _env(daemon)["HEALTH_CHECK_LOG_FILE"] == "/run/health-check"
    assert "_" not in _env(daemon)["HEALTH_CHECK_LOG_FILE"]
    assert daemon["startupProbe"] == {
        "exec": {"command": ["cat", "/run/health-check"]}, "initialDelaySeconds": 1,
        "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 6}


def test_tcpxo_pods_source_the_installed_profile() -> None:
    main = _pod(_objs("a3mega", "h100-mega-80gb-8"))["containers"][0]
    env = _env(main)
    # gpudirect-tcpxo/README.md: NCCL_LIB_DIR and nccl-env-profile.sh carry the settings
    # of the installed release; GKE's page adds the LLCM device directory.
    assert env["NCCL_LIB_DIR"] == "/usr/local/nvidia/lib64"
    assert env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"
    assert main["command"][-1].startswith(". /usr/local/nvidia/lib64/nccl-env-profile.sh; ")


@pytest.mark.parametrize("stack, accel", [("a3ultra", "h200-141gb-8"), ("a4", "b200-8"),
                                          ("a4x", "gb200-4")])
def test_rdma_pods_source_gib_settings(stack: str, accel: str) -> None:
    main = _pod(_objs(stack, accel))["containers"][0]
    # GKE's A3 Ultra / A4 / A4X pages: source the gIB script the installer puts on the node.
    assert main["command"][-1].startswith(". /usr/local/gib/scripts/set_nccl_env.sh; ")
    assert _env(main)["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert {m["mountPath"] for m in main["volumeMounts"]} >= {"/usr/local/nvidia",
                                                              "/usr/local/gib"}


def test_multi_node_a4x_shares_one_compute_domain() -> None:
    objs = _objs("a4x", "gb200-4", nodes=4)
    assert [o["kind"] for o in objs] == ["ComputeDomain", "JobSet"]
    cd = objs[0]
    pod = _pod(objs)
    template = cd["spec"]["channel"]["resourceClaimTemplate"]["name"]
    assert cd["metadata"]["namespace"] == objs[1]["metadata"]["namespace"]
    # v25.12.0 computedomain.go: with IMEXDaemonsWithDNSNames (the default) "this is
    # recommended to be set to zero"; the field is deprecated.
    assert cd["spec"]["numNodes"] == 0
    assert pod["resourceClaims"] == [{"name": "compute-domain-channel",
                                      "resourceClaimTemplateName": template}]
    assert pod["containers"][0]["resources"]["claims"] == [{"name": "compute-domain-channel"}]
    for obj in objs:
        schema.validate(obj)
    # the pod itself, as the API server's core schema (with DRA's claims) sees it, also at
    # Kubernetes 1.34, the first release serving resource.k8s.io/v1
    as_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod}
    schema.validate(as_pod)
    import kubernetes_validate

    kubernetes_validate.validate(schema.drop_nulls(as_pod), "1.34.0", strict=True)
    bad = copy.deepcopy(as_pod)
    bad["spec"]["resourceClaims"][0]["resourceClaimTemplate"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.34.0", strict=True)


def test_compute_domain_schema_is_strict() -> None:
    cd = _objs("a4x", "gb200-4", nodes=2)[0]
    cd["spec"]["numNode"] = 2  # a typo must fail
    with pytest.raises(AssertionError, match="numNode"):
        schema.validate(cd)


def test_one_a4x_node_or_other_gpus_need_no_compute_domain() -> None:
    assert [o["kind"] for o in _objs("a4x", "gb200-4", nodes=1)] == ["JobSet"]
    assert "resourceClaims" not in _pod(_objs("a4", "b200-8"))
    assert gpu_net.TCPX_DAEMON.endswith(":v2.0.12")


# ----------------------------------------------------------------------------------
# Multislice needs multi-host slices (GKE's Multislice page).


def test_multislice_on_single_host_slices_is_refused() -> None:
    from submit.render.spec import SpecError

    outputs = stack_fixtures.outputs("v5e-single-host")
    with pytest.raises(SpecError) as info:
        build_spec(outputs, workload="w", accelerator="v5litepod-8-1vm", num_slices=2,
                   image="busybox:1.36")
    assert str(info.value) == (
        "--num-slices: 2: v5litepod-8-1vm is a single-host slice, and GKE's Multislice "
        "supports only multi-host TPU slice node pools; run one slice per workload, or use a "
        "multi-host slice")
    one = build_spec(outputs, workload="w", accelerator="v5litepod-8-1vm", num_slices=1,
                     image="busybox:1.36")
    assert (one.replicas, one.parallelism) == (1, 1)


@pytest.mark.parametrize("stack, accel, machine", [("a3mega", "h100-mega-80gb-8", "a3-megagpu-8g"),
                                                   ("a3high", "h100-80gb-8", "a3-highgpu-8g")])
def test_gpudirect_daemons_are_sized_and_the_pod_keeps_its_share(stack: str, accel: str,
                                                                 machine: str) -> None:
    # container-engine-accelerators@992db812 gpudirect-tcpx/nccl-test-latest-autopilot.yaml:
    # the daemon requests cpu 1 and memory 2Gi (Autopilot makes limits equal requests).
    pod = _pod(_objs(stack, accel))
    [daemon] = pod["initContainers"]
    sized = {"cpu": "1", "memory": "2048Mi"}
    assert daemon["resources"] == {"requests": sized, "limits": sized}
    # The workload container gives the daemon's part up: together they ask the pod's share
    # of the node, the figure Kueue's quota holds per node (infra/specs/kueue.py).
    share = pod_resources.pod_share(machine)
    assert share is not None
    main = pod["containers"][0]["resources"]["requests"]
    assert pod_resources.cpu_milli(main["cpu"]) == share.cpu_milli - 1000
    assert pod_resources.memory_mi(main["memory"]) == share.memory_mi - 2048
    assert pod_resources.check_request(machine, share.cpu, None) == (
        "--cpu", f"{share.cpu!r} is more than a pod on {machine} can have: at most "
        f"{pod_resources.cpu_quantity(share.cpu_milli - 1000)} (node allocatable less 10% for "
        "DaemonSets and the GPUDirect daemon's share)")
