"""What each GPUDirect machine type needs in its pods, beside the GPUs themselves.

A3 High (GPUDirect-TCPX) and A3 Mega (GPUDirect-TCPXO) run a receive-datapath daemon
beside the workload (a native sidecar) and take their data NICs through GKE
multi-networking; A3 Ultra, A4 and A4X (GPUDirect-RDMA) take a gVNIC and RDMA NICs and
load NCCL's RDMA plugin from the node. The NIC-to-network mapping comes from the stack's
outputs contract (one GKE Network object per data subnet, named after the subnet). The
NCCL plugin installers and these Network objects are part of the stack's add-ons.
G2 and A2 need nothing beyond their GPUs. Pure; no Kubernetes client.
"""

from __future__ import annotations

import json
from typing import Any

from submit.spec import WorkloadSpec

TCPX_DAEMON = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12"
TCPXO_DAEMON = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.15"
NVIDIA_HOST = "/home/kubernetes/bin/nvidia"
LD_PATH = "/usr/local/nvidia/lib64"
NCCL_ENV_SCRIPT = {
    "tcpxo": f"{LD_PATH}/nccl-env-profile.sh",
    "rdma": "/usr/local/gib/scripts/set_nccl_env.sh",
}
_GPU_DEVICES = [f"/dev/nvidia{i}" for i in range(8)] + ["/dev/nvidiactl", "/dev/nvidia-uvm"]


def _interfaces(spec: WorkloadSpec) -> str:
    nics = [{"interfaceName": "eth0", "network": "default"}]
    for i, net in enumerate(spec.pool.additional_networks, start=1):
        nics.append({"interfaceName": f"eth{i}", "network": net["subnetwork"]})
    return json.dumps(nics)


def _devices(extra: list[str]) -> str:
    return "".join(f"- path: {d}\n" for d in _GPU_DEVICES + extra)


def _host_volume(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


def _main(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["containers"][0]  # type: ignore[no-any-return]


def _wrap_command(main: dict[str, Any], script: str) -> None:
    # NCCL's settings for the fabric come from a script the plugin installer puts on the
    # node; source it before the user's command.
    if "command" in main:
        main["command"] = ["/bin/sh", "-c", f". {script}; {main['command'][-1]}"]
    main["env"].append({"name": "NCCL_ENV_SCRIPT", "value": script})


def _daemon(name: str, image: str, command: list[str], caps: list[str],
            mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name, "image": image, "imagePullPolicy": "Always",
        "restartPolicy": "Always",  # a native sidecar: runs beside the workload, ends with it
        "command": command,
        # The receive-datapath daemon programs the data NICs' flow steering and queues,
        # which needs NET_ADMIN (TCPXO also binds a privileged port: NET_BIND_SERVICE), as
        # in container-engine-accelerators' gpudirect-tcpx(o) manifests; render.py drops
        # every other capability.
        "securityContext": {"capabilities": {"add": caps}},
        "env": [{"name": "LD_LIBRARY_PATH", "value": LD_PATH}],
        "volumeMounts": mounts,
    }


def decorate(spec: WorkloadSpec, pod: dict[str, Any], pod_meta: dict[str, Any]) -> None:
    """Add the networking the pool's machine type needs to the pod (in place)."""
    kind = spec.pool.networking
    if spec.pool.kind != "gpu" or kind == "none":
        return
    annotations = pod_meta.setdefault("annotations", {})
    annotations["networking.gke.io/default-interface"] = "eth0"
    annotations["networking.gke.io/interfaces"] = _interfaces(spec)
    main = _main(pod)
    main["env"].append({"name": "LD_LIBRARY_PATH", "value": LD_PATH})
    volumes = pod["volumes"]
    sys_mounts = [{"name": "sys", "mountPath": "/hostsysfs"},
                  {"name": "proc-sys", "mountPath": "/hostprocsysfs"}]
    if kind == "tcpx":
        annotations["devices.gke.io/container.tcpx-daemon"] = _devices([])
        volumes += [_host_volume("nvidia-libs", f"{NVIDIA_HOST}/lib64"),
                    _host_volume("tcpx-socket", "/run/tcpx"),
                    _host_volume("sys", "/sys"), _host_volume("proc-sys", "/proc/sys")]
        pod["initContainers"] = [_daemon(
            "tcpx-daemon", TCPX_DAEMON,
            ["/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset", "a3vm",
             "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx", "--setup_param",
             "--verbose 128 2 0 "],
            ["NET_ADMIN"],
            [{"name": "nvidia-libs", "mountPath": LD_PATH},
             {"name": "tcpx-socket", "mountPath": "/run/tcpx"}] + sys_mounts)]
        main["volumeMounts"] += [{"name": "nvidia-libs", "mountPath": LD_PATH},
                                 {"name": "tcpx-socket", "mountPath": "/tmp"}]
        nics = ",".join(f"eth{i}" for i in range(1, len(spec.pool.additional_networks) + 1))
        main["env"] += [{"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
                        {"name": "NCCL_GPUDIRECTTCPX_CTRL_DEV", "value": "eth0"},
                        {"name": "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "value": nics}]
    elif kind == "tcpxo":
        annotations["devices.gke.io/container.tcpxo-daemon"] = _devices(
            ["/dev/dmabuf_import_helper"])
        volumes += [_host_volume("nvidia", NVIDIA_HOST),
                    _host_volume("aperture-devices", "/dev/aperture_devices"),
                    _host_volume("sys", "/sys"), _host_volume("proc-sys", "/proc/sys")]
        nic_count = len(spec.pool.additional_networks)
        pod["initContainers"] = [_daemon(
            "tcpxo-daemon", TCPXO_DAEMON,
            ["/fts/entrypoint_rxdm_container.sh", "--num_hops=2", f"--num_nics={nic_count}",
             "--uid=",
             "--alsologtostderr"],
            ["NET_ADMIN", "NET_BIND_SERVICE"],
            [{"name": "nvidia", "mountPath": "/usr/local/nvidia"}] + sys_mounts)]
        main["volumeMounts"] += [{"name": "nvidia", "mountPath": "/usr/local/nvidia"},
                                 {"name": "aperture-devices",
                                  "mountPath": "/dev/aperture_devices"}]
        main["env"] += [{"name": "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY",
                         "value": "/dev/aperture_devices"},
                        {"name": "NCCL_LIB_DIR", "value": LD_PATH}]
        _wrap_command(main, NCCL_ENV_SCRIPT["tcpxo"])
    elif kind == "rdma":
        volumes += [_host_volume("nvidia", NVIDIA_HOST),
                    _host_volume("gib", "/home/kubernetes/bin/gib")]
        main["volumeMounts"] += [{"name": "nvidia", "mountPath": "/usr/local/nvidia"},
                                 {"name": "gib", "mountPath": "/usr/local/gib"}]
        _wrap_command(main, NCCL_ENV_SCRIPT["rdma"])
