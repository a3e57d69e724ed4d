"""Render a Pathways workload: the JobSet shape Google documents for Pathways on GKE.

A Pathways workload is one JobSet of two replicated jobs:

- ``pathways-head``: one pod on the stack's Pathways head pool (a CPU pool), holding the
  Pathways resource manager and the IFRT proxy as native sidecars (init containers with
  ``restartPolicy: Always``, so they start first and stop when the user's container ends)
  beside the user's ``main`` container, whose JAX talks to the proxy (JAX_PLATFORMS=proxy,
  JAX_BACKEND_TARGET=grpc://<head>:29000). ``--headless`` leaves the user container out:
  the two servers are the pod's containers and a client connects from outside through a
  port-forward to 29000.
- ``worker``: one Job per TPU slice (replicas = slices, parallelism = VMs per slice) running
  the Pathways server image, which registers with the resource manager.

Ports, flags and environment follow Google's Pathways JobSet as xpk renders it
(AI-Hypercomputer/xpk src/xpk/templates/pathways_workload_create.yaml.j2, and
cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud): resource manager
29001, proxy 29000, workers 29005; workers find the head through the JobSet coordinator
(``spec.coordinator``, JobSet v0.12 sets its address on every pod as the annotation
``jobset.sigs.k8s.io/coordinator``). Why a raw JobSet and not the PathwaysJob CRD: README,
"Pathways". Pure: imports neither pulumi nor a Kubernetes client; ``submit.render.jobset`` calls
``jobset`` and hands it its hardening step.
"""

from __future__ import annotations

from typing import Any, Callable

from infra.catalog import pod_resources
from infra.contract.outputs import SlicePoolInfo
from submit.render import mounts
from submit.render import placement
from submit.render.pathways_options import TPU_VERSIONS, PathwaysSpec
from submit.render.spec import CONFIG_MOUNT, EnvVar, WorkloadSpec

API = "jobset.x-k8s.io/v1alpha2"
HEAD_JOB = "pathways-head"
WORKER_JOB = "worker"
PROXY_PORT = 29000
RM_PORT = 29001
WORKER_PORT = 29005
TPU_PORTS = (8471, 8080)  # TPU runtime and megascale (DCN) ports
COORDINATOR = "jobset.sigs.k8s.io/coordinator"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
# The sidecars' CPU and memory: xpk's figures for them (the template above); the user's
# container gets what the head pod's share of its node (infra/catalog/pod_resources.py) leaves.
RM_CPU_MILLI, RM_MEMORY_MI = 8000, 32 * 1024
PROXY_CPU_MILLI, PROXY_MEMORY_MI = 16000, 100 * 1024
# The colocated Python sidecar on every worker (Google's "Run colocated Python with
# Pathways"; AI-Hypercomputer/pathways-utils PathwaysJobSet.add_colocated_python): a gRPC
# server on 50051 the worker reaches as its "external" sidecar, sharing a memory-backed
# directory with it. Its CPU and memory: a quarter of the worker pod's share (a choice: the
# sidecar runs host-side data loading and checkpointing beside a worker that mostly waits on
# its TPUs), requests = limits, taken from the worker's part.
SIDECAR = "colocated-python-sidecar"
SIDECAR_PORT = 50051
SIDECAR_SHM = "/tmp/sidecar"
SIDECAR_SHM_VOLUME = "sidecar-shared-memory"
SIDECAR_SHARE = 4  # the sidecar gets 1/SIDECAR_SHARE of the worker pod's CPU and memory
# Worker Job restarts: xpk gives each host four, or, with elastic slices, the slice
# restarts asked for per host (its _generate_pathways_workload_yaml).
WORKER_RESTARTS_PER_HOST = 4


def instance_type(pool: SlicePoolInfo) -> str | None:
    version = TPU_VERSIONS.get(pool.family)
    return f"{version}:{pool.topology}" if version and pool.topology else None


def head_address(name: str) -> str:
    """The head pod's stable DNS name: <jobset>-<replicatedJob>-<job>-<pod>.<jobset>."""
    return f"{name}-{HEAD_JOB}-0-0.{name}"


def port_forward_command(name: str, namespace: str) -> str:
    """What a headless workload's user runs to reach the proxy from their machine."""
    return (f"kubectl port-forward --namespace {namespace} pod/$(kubectl get pods "
            f"--namespace {namespace} -l jobset.sigs.k8s.io/jobset-name={name},"
            f"jobset.sigs.k8s.io/replicatedjob-name={HEAD_JOB} -o name | head -n 1 | "
            f"cut -d/ -f2) {PROXY_PORT}:{PROXY_PORT}")


def _annotation(key: str) -> dict[str, Any]:
    return {"valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{key}']"}}}


def _env_var(var: EnvVar) -> dict[str, Any]:
    if var.secret is not None:
        return {"name": var.name,
                "valueFrom": {"secretKeyRef": {"name": var.secret, "key": var.secret_key}}}
    return {"name": var.name, "value": var.value}


def _amounts(cpu_milli: int, memory_mi: int, extra: dict[str, str] | None = None
             ) -> dict[str, Any]:
    amounts = {**(extra or {}), "cpu": pod_resources.cpu_quantity(cpu_milli),
               "memory": f"{memory_mi}Mi"}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _sidecars(spec: WorkloadSpec, pw: PathwaysSpec) -> list[dict[str, Any]]:
    proxy_args = [f"--server_port={PROXY_PORT}",
                  f"--resource_manager_address=$(PATHWAYS_HEAD):{RM_PORT}",
                  f"--gcs_scratch_location={pw.scratch}"]
    proxy_args += list(pw.proxy_args)  # --pathways-proxy-arg
    if pw.elastic_slices:
        # Slices that may fail and come back without failing the job (the proxy's flag).
        proxy_args.append(f"--num_elastic_slices={pw.elastic_slices}")
    proxy = {
        "name": "pathways-proxy", "image": pw.proxy_image, "args": proxy_args,
        "env": [{"name": "PATHWAYS_HEAD", **_annotation(COORDINATOR)}],
        "ports": [{"containerPort": PROXY_PORT, "protocol": "TCP"}],
        "resources": _amounts(PROXY_CPU_MILLI, PROXY_MEMORY_MI),
    }
    rm = {
        "name": "pathways-rm", "image": pw.server_image,
        "args": [f"--server_port={RM_PORT}", f"--gcs_scratch_location={pw.scratch}",
                 "--node_type=resource_manager", f"--instance_count={spec.replicas}",
                 f"--instance_type={instance_type(spec.pool)}", *pw.server_args],
        "env": [{"name": "REPLICATED_JOB_NAME",
                 **_annotation("jobset.sigs.k8s.io/replicatedjob-name")},
                {"name": "JOBSET_NAME", **_annotation("jobset.sigs.k8s.io/jobset-name")},
                {"name": "HOST_ADDRESS", **_annotation(COORDINATOR)},
                # The head runs on a CPU VM: no TPU metadata to query.
                {"name": "TPU_SKIP_MDS_QUERY", "value": "true"}],
        "ports": [{"containerPort": RM_PORT, "protocol": "TCP"},
                  {"containerPort": RM_PORT + 1, "protocol": "TCP"}],
        "resources": _amounts(RM_CPU_MILLI, RM_MEMORY_MI),
    }
    if not pw.headless:
        # Native sidecars: started before the user's container, stopped after it ends.
        for c in (proxy, rm):
            c["restartPolicy"] = "Always"
    return [proxy, rm]


def _main(spec: WorkloadSpec, pw: PathwaysSpec) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "main", "image": spec.image}
    if spec.command is not None:
        c["command"] = ["/bin/sh", "-c", spec.command]
    env: list[dict[str, Any]] = [
        # JAX's IFRT proxy backend: jax.devices() lists every chip of every slice.
        {"name": "JAX_PLATFORMS", "value": "proxy"},
        {"name": "JAX_BACKEND_TARGET", "value": f"grpc://{head_address(spec.name)}:{PROXY_PORT}"},
        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
    ]
    user = {v.name for v in spec.env}
    env = [e for e in env if e["name"] not in user] + [_env_var(v) for v in spec.env]
    if spec.config_file_name:
        env.append({"name": "ACCELSTACK_CONFIG",
                    "value": f"{CONFIG_MOUNT}/{spec.config_file_name}"})
    if spec.local_checkpoint is not None:  # the controller names the workers' directory
        from submit.render import checkpointing  # late: --local-checkpoint-dir only

        # Orbax names the replicator's job JOBSET_NAME when the code gives no run_name.
        env += [e for e in [*checkpointing.env(spec.local_checkpoint),
                            {"name": "JOBSET_NAME",
                             **_annotation("jobset.sigs.k8s.io/jobset-name")}]
                if e["name"] not in user]
    c["env"] = env
    share = pod_resources.pod_share(pw.head_pool.machine_type)
    if share is not None:
        c["resources"] = _amounts(share.cpu_milli - RM_CPU_MILLI - PROXY_CPU_MILLI,
                                  share.memory_mi - RM_MEMORY_MI - PROXY_MEMORY_MI)
    if spec.capabilities:
        c["securityContext"] = {"capabilities": {"add": list(spec.capabilities)}}
    c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if spec.config_file_name:
        c["volumeMounts"].append({"name": "config", "mountPath": CONFIG_MOUNT,
                                  "readOnly": True})
    return c


def _host_pod(pool: SlicePoolInfo, spec: WorkloadSpec, restart: str) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "restartPolicy": restart,
        # Workers reach the head, and each other across slices, over the hosts' network.
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "nodeSelector": dict(pool.node_selector),
    }
    if pool.tolerations:
        pod["tolerations"] = [dict(t) for t in pool.tolerations]
    if spec.termination_grace_seconds is not None:
        pod["terminationGracePeriodSeconds"] = spec.termination_grace_seconds
    pod["automountServiceAccountToken"] = False
    pod["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    return pod


def _head(spec: WorkloadSpec, pw: PathwaysSpec,
          harden: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    pod = _host_pod(pw.head_pool, spec, "Never")
    pod_meta: dict[str, Any] = {"labels": {"accelstack.dev/workload": spec.name}}
    sidecars = _sidecars(spec, pw)
    if pw.headless:
        pod["containers"] = sidecars
    else:
        pod["initContainers"] = sidecars
        pod["containers"] = [_main(spec, pw)]
        shm: dict[str, Any] = {"medium": "Memory"}
        if spec.shm_size:
            shm["sizeLimit"] = spec.shm_size
        pod["volumes"] = [{"name": "dshm", "emptyDir": shm}]
        if spec.config_file_name:
            pod["volumes"].append({"name": "config",
                                   "configMap": {"name": f"{spec.name}-config"}})
        mounts.decorate(pod, pod_meta, spec.mounts, spec.service_account)
    if spec.mount_service_account_token:
        pod["automountServiceAccountToken"] = True
    harden(pod)
    return {"name": HEAD_JOB, "replicas": 1, "template": {"spec": {
        "parallelism": 1, "completions": 1, "completionMode": "Indexed",
        "backoffLimit": 0, "template": {"metadata": pod_meta, "spec": pod}}}}


def _worker(spec: WorkloadSpec, pw: PathwaysSpec,
            harden: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    pool = spec.pool
    pod = _host_pod(pool, spec, "OnFailure")
    pod_meta: dict[str, Any] = {"labels": {"accelstack.dev/workload": spec.name}}
    amounts: dict[str, str] = {}
    if pool.resource_name:
        amounts[pool.resource_name] = str(pool.chips_per_vm)
    # Less a multi-tier checkpointing RAM disk on the pool's nodes, as Kueue counts it.
    reserved = pool.checkpointing.ram_disk_mi if pool.checkpointing else 0
    share = pod_resources.pod_share(pool.machine_type, reserved)
    cpu, memory = (share.cpu_milli, share.memory_mi) if share else (0, 0)
    if pw.colocated_python_image and share:
        cpu, memory = cpu - cpu // SIDECAR_SHARE, memory - memory // SIDECAR_SHARE
    resources = (_amounts(cpu, memory, amounts) if share
                 else {"requests": dict(amounts), "limits": dict(amounts)})
    args = [f"--server_port={WORKER_PORT}",
            f"--resource_manager_address=$(PATHWAYS_HEAD):{RM_PORT}",
            f"--gcs_scratch_location={pw.scratch}"]
    if pw.colocated_python_image:
        args += ["--sidecar_name=external", f"--cloud_pathways_sidecar_shm_directory={SIDECAR_SHM}"]
    pod["containers"] = [{
        "name": "pathways-worker", "image": pw.server_image,
        "args": args + list(pw.worker_args),  # --pathways-worker-arg last
        "env": [
            {"name": "TPU_MIN_LOG_LEVEL", "value": "0"},
            {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "0"},
            {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
            {"name": "MEGASCALE_GRPC_ENABLE_XOR_TRACER", "value": "false"},
            {"name": "MEGASCALE_NUM_SLICES",
             **_annotation("jobset.sigs.k8s.io/replicatedjob-replicas")},
            {"name": "JOBSET_NAME", **_annotation("jobset.sigs.k8s.io/jobset-name")},
            {"name": "REPLICATED_JOB_NAME",
             **_annotation("jobset.sigs.k8s.io/replicatedjob-name")},
            {"name": "MEGASCALE_SLICE_ID", **_annotation("jobset.sigs.k8s.io/job-index")},
            {"name": "PATHWAYS_HEAD", **_annotation(COORDINATOR)},
            {"name": "MEGASCALE_COORDINATOR_ADDRESS", **_annotation(COORDINATOR)},
        ],
        "ports": [{"containerPort": p, "protocol": "TCP"}
                  for p in (WORKER_PORT, WORKER_PORT + 1) + TPU_PORTS],
        # xpk mounts the host's /tmp into the worker; the container's own writable /tmp
        # serves without giving the pod a path on the node.
        "resources": resources,
    }]
    if pw.colocated_python_image:
        _colocated_python(pod, pw.colocated_python_image, share)
    if spec.local_checkpoint is not None:  # checked: only with the sidecar
        from submit.render import checkpointing

        checkpointing.decorate_pathways_worker(pod, pool, spec.local_checkpoint)
    placement.decorate(spec, pod, pod_meta)
    harden(pod)
    per_host = max(1, spec.max_restarts) if pw.elastic_slices else WORKER_RESTARTS_PER_HOST
    return {"name": WORKER_JOB, "replicas": spec.replicas, "template": {
        # One slice per node pool: each multi-host slice is a node pool of its own.
        "metadata": {"annotations": {EXCLUSIVE_TOPOLOGY: "cloud.google.com/gke-nodepool"}},
        "spec": {"parallelism": spec.parallelism, "completions": spec.parallelism,
                 "completionMode": "Indexed",
                 "backoffLimit": per_host * spec.parallelism,
                 "template": {"metadata": pod_meta, "spec": pod}}}}


def _colocated_python(pod: dict[str, Any], image: str,
                      share: pod_resources.PodShare | None) -> None:
    """The colocated Python sidecar beside the worker (a native sidecar: it starts first and
    ends with the worker), and the memory-backed directory they share."""
    pod["volumes"] = pod.get("volumes", []) + [
        {"name": SIDECAR_SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
    mount = {"name": SIDECAR_SHM_VOLUME, "mountPath": SIDECAR_SHM}
    pod["containers"][0]["volumeMounts"] = [dict(mount)]
    sidecar: dict[str, Any] = {
        "name": SIDECAR, "image": image, "restartPolicy": "Always",
        "env": [{"name": "GRPC_SERVER_ADDRESS", "value": f"0.0.0.0:{SIDECAR_PORT}"},
                {"name": "CLOUD_PATHWAYS_SIDECAR_SHM_DIRECTORY", "value": SIDECAR_SHM}],
        "ports": [{"containerPort": SIDECAR_PORT, "protocol": "TCP"}],
        "volumeMounts": [dict(mount)],
    }
    if share is not None:
        sidecar["resources"] = _amounts(share.cpu_milli // SIDECAR_SHARE,
                                        share.memory_mi // SIDECAR_SHARE)
    pod["initContainers"] = [sidecar]


def jobset(spec: WorkloadSpec, pw: PathwaysSpec,
           harden: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    labels = {
        "kueue.x-k8s.io/queue-name": spec.queue,
        "app.kubernetes.io/managed-by": "accelstack",
        "accelstack.dev/accelerator": spec.pool.accelerator,
        "accelstack.dev/slice-pool": spec.pool.name,
        "accelstack.dev/pathways": "headless" if pw.headless else "batch",
    }
    if spec.priority:
        labels["kueue.x-k8s.io/priority-class"] = spec.priority
    body: dict[str, Any] = {
        "coordinator": {"replicatedJob": HEAD_JOB, "jobIndex": 0, "podIndex": 0},
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        # Any failure recreates every pod: the resource manager and the workers start over
        # together (the failure policy of Google's Pathways JobSet).
        "failurePolicy": {"maxRestarts": spec.max_restarts, "restartStrategy": "Recreate"},
        # The head first, so that its address answers when the workers start.
        "startupPolicy": {"startupPolicyOrder": "InOrder"},
        "replicatedJobs": [_head(spec, pw, harden), _worker(spec, pw, harden)],
    }
    if not pw.headless:
        # Done when the user's program is done; the workers never finish on their own.
        body["successPolicy"] = {"operator": "All", "targetReplicatedJobs": [HEAD_JOB]}
    if spec.ttl_seconds is not None:
        body["ttlSecondsAfterFinished"] = spec.ttl_seconds
    meta = {"name": spec.name, "namespace": spec.namespace, "labels": labels}
    return {"apiVersion": API, "kind": "JobSet", "metadata": meta, "spec": body}
