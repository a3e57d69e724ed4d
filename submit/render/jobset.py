"""Render a workload as a JobSet (and its config ConfigMap): a pure function of the spec.

One replicated Job per workload: for TPUs one Job per slice (replicas = slices,
parallelism = completions = VMs per slice, one slice per node pool), for GPUs and CPUs
one Job of N nodes. Node selectors, tolerations and resource names come from the stack's
outputs contract, so the pods land exactly on the pools the stack declares; the Kueue
labels put the JobSet in the stack's queue. Every container is hardened (no privilege
escalation, capabilities dropped, seccomp RuntimeDefault, no service-account token unless
asked for). ``--dry-run`` and a real submit both call ``render``. Must not import a
Kubernetes client or pulumi.
"""

from __future__ import annotations

from typing import Any

from infra.catalog import pod_resources
from submit.render import placement
from submit.render.spec import CONFIG_MOUNT, EnvVar, WorkloadSpec

API = "jobset.x-k8s.io/v1alpha2"
CONTAINER = "main"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOBSET_ANN = "jobset.sigs.k8s.io"
TPU_PORTS = (8471, 8080)  # TPU runtime and multislice (megascale) ports
COORDINATOR_PORT = 6002
# JAX's coordinator port on Cloud TPU, the one its own TPU cluster detection picks
# (jax/_src/clusters/cloud_tpu_cluster.py: coordinator_port = '8482' in jax 0.10; older
# releases used 8476); distinct from the TPU runtime's 8471 and megascale's 8080, which
# share the host's network on multi-host slices.
JAX_TPU_COORDINATOR_PORT = 8482
FAIL_FAST_RULE = "failFastOnUserErrors"
ARCH_LABEL = "kubernetes.io/arch"


def config_map_name(spec: WorkloadSpec) -> str:
    return f"{spec.name}-config"


def _field(path: str) -> dict[str, Any]:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}


def _annotation(key: str) -> str:
    return f"metadata.annotations['{key}']"


def _env_var(var: EnvVar) -> dict[str, Any]:
    if var.secret is not None:
        return {"name": var.name,
                "valueFrom": {"secretKeyRef": {"name": var.secret, "key": var.secret_key}}}
    return {"name": var.name, "value": var.value}


def _topology_env(spec: WorkloadSpec) -> list[dict[str, Any]]:
    """What the job's processes need to find each other (beyond what GKE injects)."""
    env: list[dict[str, Any]] = [
        {"name": "JOBSET_NAME", **_field(_annotation(f"{JOBSET_ANN}/jobset-name"))},
        {"name": "REPLICATED_JOB_NAME", **_field(_annotation(f"{JOBSET_ANN}/replicatedjob-name"))},
    ]
    coordinator = "$(JOBSET_NAME)-$(REPLICATED_JOB_NAME)-0-0.$(JOBSET_NAME)"
    # Launchers written for xpk read JAX_COORDINATOR_ADDRESS (jax.distributed.initialize()
    # reads it as given, so it is host:port) and JAX_COORDINATOR_PORT.
    jax_port = JAX_TPU_COORDINATOR_PORT if spec.pool.kind == "tpu" else COORDINATOR_PORT
    env += [{"name": "JAX_COORDINATOR_ADDRESS", "value": f"{coordinator}:{jax_port}"},
            {"name": "JAX_COORDINATOR_PORT", "value": str(jax_port)}]
    if spec.pool.kind == "tpu":
        # GKE injects TPU_WORKER_ID and TPU_WORKER_HOSTNAMES for the slice; multislice JAX
        # also needs the slice count, this slice's index and one coordinator for all slices.
        if spec.replicas > 1:
            env += [
                {"name": "MEGASCALE_NUM_SLICES",
                 **_field(_annotation(f"{JOBSET_ANN}/replicatedjob-replicas"))},
                {"name": "MEGASCALE_SLICE_ID", **_field(_annotation(f"{JOBSET_ANN}/job-index"))},
                {"name": "MEGASCALE_COORDINATOR_ADDRESS", "value": coordinator},
            ]
        return env
    env += [
        {"name": "NNODES", "value": str(spec.parallelism)},
        {"name": "NODE_RANK",
         **_field(_annotation("batch.kubernetes.io/job-completion-index"))},
        {"name": "COORDINATOR_ADDRESS", "value": coordinator},
        {"name": "COORDINATOR_PORT", "value": str(COORDINATOR_PORT)},
    ]
    if spec.pool.kind == "gpu":
        env.append({"name": "GPUS_PER_NODE", "value": str(spec.pool.chips_per_vm)})
    return env


def _user_env_wins(container: dict[str, Any], user: set[str]) -> None:
    """A variable the user set replaces one of the same name accelstack would set (the
    API server refuses a container with two variables of one name)."""
    env = container["env"]
    user_entries = {e["name"]: e for e in env if e["name"] in user}
    out, seen = [], set()
    for e in env:
        name = e["name"]
        if name in seen:
            continue
        seen.add(name)
        out.append(user_entries.get(name, e))
    container["env"] = out


def _resources(spec: WorkloadSpec) -> dict[str, Any]:
    """The pod's chips, CPU and memory: requests = limits, CPU and memory sized from the
    machine type by infra.catalog.pod_resources (the rule Kueue's quotas use too), unless
    --cpu/--memory override them."""
    pool = spec.pool
    amounts: dict[str, str] = {}
    if pool.resource_name:
        amounts[pool.resource_name] = str(pool.chips_per_vm)
    # Less a GPUDirect sidecar, and a multi-tier checkpointing RAM disk on the pool's nodes.
    reserved = pool.checkpointing.ram_disk_mi if pool.checkpointing else 0
    share = pod_resources.container_share(pool.machine_type, reserved)
    cpu = spec.cpu or (share.cpu if share else None)
    memory = spec.memory or (share.memory if share else None)
    if cpu:
        amounts["cpu"] = cpu
    if memory:
        amounts["memory"] = memory
    if not amounts:
        return {}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _container(spec: WorkloadSpec) -> dict[str, Any]:
    pool = spec.pool
    c: dict[str, Any] = {"name": CONTAINER, "image": spec.image}
    if spec.command is not None:
        c["command"] = ["/bin/sh", "-c", spec.command]
    env = _topology_env(spec) + [_env_var(v) for v in spec.env]
    if spec.config_file_name:
        env.append({"name": "ACCELSTACK_CONFIG",
                    "value": f"{CONFIG_MOUNT}/{spec.config_file_name}"})
    c["env"] = env
    if pool.kind == "tpu":
        c["ports"] = [{"containerPort": p} for p in TPU_PORTS + (JAX_TPU_COORDINATOR_PORT,)]
    elif spec.parallelism > 1:
        c["ports"] = [{"containerPort": COORDINATOR_PORT}]
    if spec.capabilities:
        # What the user asked back (--add-capability); _harden drops every other one.
        c["securityContext"] = {"capabilities": {"add": list(spec.capabilities)}}
    resources = _resources(spec)
    if resources:
        c["resources"] = resources
    mounts: list[dict[str, Any]] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if spec.config_file_name:
        mounts.append({"name": "config", "mountPath": CONFIG_MOUNT, "readOnly": True})
    c["volumeMounts"] = mounts
    return c


def _pod_spec(spec: WorkloadSpec) -> dict[str, Any]:
    pool = spec.pool
    shm: dict[str, Any] = {"medium": "Memory"}
    if spec.shm_size:
        shm["sizeLimit"] = spec.shm_size
    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": shm}]
    if spec.config_file_name:
        volumes.append({"name": "config", "configMap": {"name": config_map_name(spec)}})
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "nodeSelector": dict(pool.node_selector),
        "containers": [_container(spec)],
        "volumes": volumes,
    }
    if pool.tolerations:
        pod["tolerations"] = [dict(t) for t in pool.tolerations]
    if pool.node_selector.get(ARCH_LABEL) == "arm64":
        # Arm hosts (A4X, C4A): a required node affinity on kubernetes.io/arch, beside the
        # contract's selector and Arm toleration (GKE: prepare-arm-workloads-for-deployment;
        # xpk's arm_gpu_workload_crate template tolerates the same taint).
        pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": ARCH_LABEL, "operator": "In", "values": ["arm64"]}]}]}}}
    if pool.kind == "tpu" and (pool.vms_per_slice > 1 or spec.replicas > 1):
        # Multislice traffic runs over the hosts' network (DCN).
        pod["hostNetwork"] = True
        pod["dnsPolicy"] = "ClusterFirstWithHostNet"
    if spec.termination_grace_seconds is not None:
        pod["terminationGracePeriodSeconds"] = spec.termination_grace_seconds
    # No Kubernetes API credentials in the pod unless the job asked for them.
    pod["automountServiceAccountToken"] = spec.mount_service_account_token
    pod["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    return pod


def _harden(pod: dict[str, Any]) -> None:
    """Every container: no privilege escalation and no capability but those a component
    added (the GPUDirect daemons' NET_ADMIN, see gpu_net). Root and a writable root
    filesystem stay: typical training images need both (README, Security)."""
    for c in pod.get("initContainers", []) + pod["containers"]:
        added = (c.get("securityContext") or {}).get("capabilities", {}).get("add")
        caps: dict[str, Any] = {"drop": ["ALL"]}
        if added:
            caps["add"] = list(added)
        c["securityContext"] = {**(c.get("securityContext") or {}),
                                "allowPrivilegeEscalation": False, "capabilities": caps}


def _job_spec(spec: WorkloadSpec, pod: dict[str, Any], pod_meta: dict[str, Any]
              ) -> dict[str, Any]:
    job: dict[str, Any] = {
        "parallelism": spec.parallelism,
        "completions": spec.parallelism,
        "completionMode": "Indexed",
        "backoffLimit": 0,  # a failed pod fails its Job; the JobSet decides what restarts
        "template": {"metadata": pod_meta, "spec": pod},
    }
    if spec.retriable_exit_codes:
        # Any other non-zero exit fails the Job with reason PodFailurePolicy, which the
        # JobSet's fail-fast rule turns into a failed JobSet; retriable codes exhaust the
        # backoff limit instead and the JobSet restarts (up to --max-restarts). A pod
        # killed by a disruption (Spot preemption, node maintenance) counts as retriable
        # whatever its exit code: the first matching rule wins.
        exits: dict[str, Any] = {"containerName": CONTAINER, "operator": "NotIn",
                                 "values": list(spec.retriable_exit_codes)}
        if spec.parallel_containers > 1:
            # Every one of the N containers (Job API: a rule without containerName applies
            # to all containers).
            del exits["containerName"]
        job["podFailurePolicy"] = {"rules": [
            {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onExitCodes": exits},
        ]}
    return job


def jobset(spec: WorkloadSpec) -> dict[str, Any]:
    js = _jobset(spec)
    if spec.ml_diagnostics:  # --ml-diagnostics: on Pathways JobSets too
        from submit.render.diagnostics import ml_diagnostics  # late: that option only

        return ml_diagnostics.label(js)
    return js


def _jobset(spec: WorkloadSpec) -> dict[str, Any]:
    if spec.pathways is not None:  # --pathways: head and workers (submit/render/pathways.py)
        from submit.render import pathways  # late: Pathways workloads only

        return _pull_secrets(pathways.jobset(spec, spec.pathways, _harden), spec)
    pool = spec.pool
    labels = {
        "kueue.x-k8s.io/queue-name": spec.queue,
        "app.kubernetes.io/managed-by": "accelstack",
        "accelstack.dev/accelerator": pool.accelerator,
        "accelstack.dev/slice-pool": pool.name,
    }
    if spec.priority:
        labels["kueue.x-k8s.io/priority-class"] = spec.priority
    annotations: dict[str, str] = {}
    if pool.kind == "tpu" and pool.vms_per_slice > 1 and not pool.slice_topology:
        # One slice per node pool: each multi-host slice is a node pool of its own (a
        # dynamic slice spans node pools: submit/render/dynamic_slicing.py).
        annotations[EXCLUSIVE_TOPOLOGY] = "cloud.google.com/gke-nodepool"
    pod = _pod_spec(spec)
    pod_meta: dict[str, Any] = {"labels": {"accelstack.dev/workload": spec.name}}
    if pool.kind == "gpu":  # late: GPUDirect networking is GPU pools' own
        from submit.render import gpu_net

        gpu_net.decorate(spec, pod, pod_meta)
    placement.decorate(spec, pod, pod_meta)
    if pool.slice_topology:  # late: dynamic slicing pools only
        from submit.render import dynamic_slicing

        dynamic_slicing.decorate(spec, pod_meta)
    if pool.dranet:  # late: pools that run DRANET only
        from submit.render import dranet

        dranet.decorate(spec, pod)
    if spec.mounts:  # late: workloads with --mount only
        from submit.render import mounts

        mounts.decorate(pod, pod_meta, spec.mounts, spec.service_account,
                        spec.pool.local_ssd_gib)
    elif spec.service_account:
        # The namespace's job account, stores or not (mounts.decorate sets it with them).
        pod["serviceAccountName"] = spec.service_account
    if spec.local_checkpoint is not None:  # late: --local-checkpoint-dir only
        from submit.render import checkpointing

        checkpointing.decorate(pod, spec.pool, spec.local_checkpoint)
    if spec.diagnostics is not None:  # late: --stack-traces, --xla-dump, --debug-logs only
        from submit.render.diagnostics import pod as diagnostics

        diagnostics.decorate(pod, pod_meta, spec.diagnostics, spec.name)
    _harden(pod)
    _user_env_wins(pod["containers"][0], {v.name for v in spec.env})
    if spec.parallel_containers > 1:  # late: --parallel-containers (TPU7x) only
        from submit.render import parallel_containers

        parallel_containers.split(pod, spec.parallel_containers)
    failure: dict[str, Any] = {"maxRestarts": spec.max_restarts}
    if spec.retriable_exit_codes:
        failure["rules"] = [{"name": FAIL_FAST_RULE, "action": "FailJobSet",
                             "onJobFailureReasons": ["PodFailurePolicy"]}]
    body: dict[str, Any] = {
        "failurePolicy": failure,
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "replicatedJobs": [{
            "name": spec.replicated_job,
            "replicas": spec.replicas,
            "template": {"spec": _job_spec(spec, pod, pod_meta)},
        }],
    }
    if spec.ttl_seconds is not None:
        body["ttlSecondsAfterFinished"] = spec.ttl_seconds
    if spec.managed_by is not None:
        body["managedBy"] = spec.managed_by
    meta: dict[str, Any] = {"name": spec.name, "namespace": spec.namespace, "labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return _pull_secrets({"apiVersion": API, "kind": "JobSet", "metadata": meta, "spec": body},
                         spec)


def _pull_secrets(js: dict[str, Any], spec: WorkloadSpec) -> dict[str, Any]:
    """--image-pull-secret: every pod of every replicated Job pulls with these Secrets
    (never an empty list or a null name)."""
    if spec.image_pull_secrets:
        for rj in js["spec"]["replicatedJobs"]:
            rj["template"]["spec"]["template"]["spec"]["imagePullSecrets"] = [
                {"name": n} for n in spec.image_pull_secrets]
    return js


def config_map(spec: WorkloadSpec) -> dict[str, Any] | None:
    if spec.config_file_name is None:
        return None
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": config_map_name(spec), "namespace": spec.namespace,
                     "labels": {"app.kubernetes.io/managed-by": "accelstack",
                                "accelstack.dev/workload": spec.name}},
        "data": {spec.config_file_name: spec.config_file_data},
    }


def render(spec: WorkloadSpec) -> list[dict[str, Any]]:
    """The objects to apply, in order: the config ConfigMap and the A4X ComputeDomain (if
    any), then the JobSet."""
    cm = config_map(spec)
    cd = placement.compute_domain(spec)
    return ([cm] if cm else []) + ([cd] if cd else []) + [jobset(spec)]


IMAGE_TAG = "accelstack.dev/image-tag"  # pod annotation: the image as given, by tag


def pin_images(objs: list[dict[str, Any]], pins: dict[str, str]) -> None:
    """Run each image given by tag (a key of ``pins``) by its digest (the value), and keep
    the tag in the pod template's IMAGE_TAG annotation for people (`kubectl describe pod`)."""
    for obj in objs:
        if obj.get("kind") != "JobSet":
            continue
        for rj in obj["spec"]["replicatedJobs"]:
            pod = rj["template"]["spec"]["template"]
            for c in [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]:
                given = c.get("image")
                if given in pins and pins[given] != given:
                    c["image"] = pins[given]
                    pod.setdefault("metadata", {}).setdefault("annotations", {})[
                        IMAGE_TAG] = given
