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

from infra.catalog import pod_resources
from infra.catalog.gpudirect_release import (DAEMON_CPU_MILLI, DAEMON_MEMORY_MI, TCPX_DAEMON,
                                             TCPXO_DAEMON)
from submit.render.spec import WorkloadSpec

NVIDIA_HOST = "/home/kubernetes/bin/nvidia"
LD_PATH = "/usr/local/nvidia/lib64"
NCCL_ENV_SCRIPT = {
    "tcpxo": f"{LD_PATH}/nccl-env-profile.sh",
    "rdma": "/usr/local/gib/scripts/set_nccl_env.sh",
}
# The TCPXO daemon writes this file once its buffer manager is up (~30 s); a startup probe
# on it holds the workload back until then and fails a daemon on a bad node early
# (gpudirect-tcpxo/best-practice.md, "Setup Startup Probe for the TCPXO-daemon Sidecar"; the
# file name may not contain an underscore).
TCPXO_HEALTH_FILE = "/run/health-check"
TCPXO_ENTRYPOINT = "/fts/entrypoint_rxdm_container.sh"

# A3 High has no NCCL env script on the node, so every setting GKE documents is set here:
# the list of the pinned release's gpudirect-tcpx/nccl-config.yaml (its "GKE 1.34+"
# recommendations), the same as GKE's GPUDirect-TCPX page lists
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx).
# The TX/RX bindings pin the flow-steering queues of each data NIC to the CPU cores of its
# NUMA node on a3-highgpu-8g; the daemon programs flow steering, and NCCL waits for it.
TCPX_NCCL_ENV: tuple[tuple[str, str], ...] = (
    ("NCCL_SOCKET_IFNAME", "eth0"),
    ("NCCL_ALGO", "Ring,Tree"),
    ("NCCL_PROTO", "Simple"),
    ("NCCL_CROSS_NIC", "0"),
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    ("NCCL_P2P_PXN_LEVEL", "0"),
    ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2,eth3,eth4"),
    ("NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0"),
    ("NCCL_DYNAMIC_CHUNK_SIZE", "524288"),
    ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
    ("NCCL_P2P_PCI_CHUNKSIZE", "524288"),
    ("NCCL_P2P_NVL_CHUNKSIZE", "1048576"),
    ("NCCL_BUFFSIZE", "4194304"),
    ("NCCL_NSOCKS_PERTHREAD", "4"),
    ("NCCL_SOCKET_NTHREADS", "1"),
    ("NCCL_GPUDIRECTTCPX_TX_BINDINGS",
     "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177"),
    ("NCCL_GPUDIRECTTCPX_RX_BINDINGS",
     "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191"),
    ("NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS", "500000"),
)
# The node's GPU plumbing the pods mount from the host: volume name -> host path. Only GKE
# GPU nodes have them (driver libraries, gIB, the GPUDirect sockets and devices, and the
# sysfs the daemons program); `submit workload run-local` gives them empty stand-ins.
PLUMBING_VOLUMES: dict[str, str] = {
    "nvidia-libs": f"{NVIDIA_HOST}/lib64", "nvidia": NVIDIA_HOST,
    "gib": "/home/kubernetes/bin/gib", "tcpx-socket": "/run/tcpx",
    "aperture-devices": "/dev/aperture_devices", "sys": "/sys", "proc-sys": "/proc/sys",
}
_DAEMON_RESOURCES = {"cpu": pod_resources.cpu_quantity(DAEMON_CPU_MILLI),
                     "memory": f"{DAEMON_MEMORY_MI}Mi"}
_GPU_DEVICES = [f"/dev/nvidia{i}" for i in range(8)] + ["/dev/nvidiactl", "/dev/nvidia-uvm"]


def _interfaces(spec: WorkloadSpec) -> str:
    nics = [{"interfaceName": "eth0", "network": "default"}]
    for i, net in enumerate(spec.pool.additional_networks, start=1):
        nics.append({"interfaceName": f"eth{i}", "network": net["subnetwork"]})
    return json.dumps(nics)


def _devices(extra: list[str]) -> str:
    return "".join(f"- path: {d}\n" for d in _GPU_DEVICES + extra)


def _host_volume(name: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": PLUMBING_VOLUMES[name]}}


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
        # Requests = limits (the pod stays Guaranteed like its workload container), sized
        # as infra/catalog/gpudirect_release.py says; the workload container gives them up.
        "resources": {"requests": dict(_DAEMON_RESOURCES), "limits": dict(_DAEMON_RESOURCES)},
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
        volumes += [_host_volume(n) for n in ("nvidia-libs", "tcpx-socket", "sys", "proc-sys")]
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
        main["env"] += [{"name": k, "value": v} for k, v in TCPX_NCCL_ENV]
    elif kind == "tcpxo":
        annotations["devices.gke.io/container.tcpxo-daemon"] = _devices(
            ["/dev/dmabuf_import_helper"])
        volumes += [_host_volume(n) for n in ("nvidia", "aperture-devices", "sys", "proc-sys")]
        daemon = _daemon(
            "tcpxo-daemon", TCPXO_DAEMON,
            # Every upstream manifest makes the entrypoint executable before running it; the
            # pinned release's workloads pass --num_hops=2 alone (the NIC count is found).
            ["/bin/sh", "-c", f"chmod 755 {TCPXO_ENTRYPOINT} && "
                              f"exec {TCPXO_ENTRYPOINT} --num_hops=2"],
            ["NET_ADMIN", "NET_BIND_SERVICE"],
            [{"name": "nvidia", "mountPath": "/usr/local/nvidia"}] + sys_mounts)
        daemon["env"].append({"name": "HEALTH_CHECK_LOG_FILE", "value": TCPXO_HEALTH_FILE})
        daemon["startupProbe"] = {
            "exec": {"command": ["cat", TCPXO_HEALTH_FILE]},
            "initialDelaySeconds": 1, "periodSeconds": 5, "timeoutSeconds": 1,
            "successThreshold": 1, "failureThreshold": 6,
        }
        pod["initContainers"] = [daemon]
        main["volumeMounts"] += [{"name": "nvidia", "mountPath": "/usr/local/nvidia"},
                                 {"name": "aperture-devices",
                                  "mountPath": "/dev/aperture_devices"}]
        main["env"] += [{"name": "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY",
                         "value": "/dev/aperture_devices"},
                        {"name": "NCCL_LIB_DIR", "value": LD_PATH}]
        _wrap_command(main, NCCL_ENV_SCRIPT["tcpxo"])
    elif kind == "rdma":
        volumes += [_host_volume(n) for n in ("nvidia", "gib")]
        main["volumeMounts"] += [{"name": "nvidia", "mountPath": "/usr/local/nvidia"},
                                 {"name": "gib", "mountPath": "/usr/local/gib"}]
        _wrap_command(main, NCCL_ENV_SCRIPT["rdma"])
