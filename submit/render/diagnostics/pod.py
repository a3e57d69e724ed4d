"""Diagnostics in a rendered pod template, in place: env variables of the main container,
emptyDir volumes and native sidecars (init containers with ``restartPolicy: Always``, which
start before the main container and are stopped after it ends, so the pod still completes:
Kubernetes "Sidecar containers", enabled by default from 1.29 and GA in 1.33).

Both sidecars run a POSIX shell script in a pinned busybox image; the scripts are data here
and tests/test_diagnostics.py runs them with /bin/sh. They take little: their requests come
out of the main container's, so the pod as a whole asks what infra/catalog/pod_resources.py
sized (and Kueue counts) and stays Guaranteed (requests = limits).
"""

from __future__ import annotations

from typing import Any

from infra.contract.tensorboard import TensorboardInfo
from submit.render import mounts
from submit.render.diagnostics.options import STORE_MOUNT, XLA_DUMP_FLAG, XLA_FLAGS, \
    Diagnostics

# Docker Hub's official busybox image (hub.docker.com/_/busybox), a fixed release tag: the
# musl build is static, and has the sh, tail, cp, find, wc and sleep the scripts use. The
# same pin as infra/specs/image_cache.py. `submit workload create` runs it by digest when it
# resolves tags (docs/diagnostics.md).
SIDECAR_IMAGE = "docker.io/library/busybox:1.37.0-musl"

# cloud-tpu-diagnostics writes its traces under /tmp/debugging (STACK_TRACE_DIR_DEFAULT in
# AI-Hypercomputer/cloud-tpu-monitoring-debugging pip_package/cloud_tpu_diagnostics/src/
# util/default.py; the README's "Scenario 3": stack_trace_to_cloud=True keeps them there).
TRACE_DIR = "/tmp/debugging"
TRACE_CONTAINER = "stack-traces"
TRACE_VOLUME = "stack-traces"
DUMP_DIR = "/tmp/accelstack/xla-dump"  # XLA writes here (an emptyDir), the sidecar copies it
DUMP_CONTAINER = "xla-dump-upload"
DUMP_VOLUME = "xla-dump"
DUMP_STORE_VOLUME = "xla-dump-store"
DUMP_INTERVAL_SECONDS = 60
# Bounds of the two emptyDirs (on the node's ephemeral storage; the kubelet evicts a pod that
# passes one): traces are text, a few KiB a dump; XLA dumps of large programs reach GBs.
TRACE_SIZE_LIMIT = "1Gi"
DUMP_SIZE_LIMIT = "32Gi"
# Requests = limits per sidecar (millicores, MiB): a tail and a copy loop.
TRACE_RESOURCES = (50, 32)
DUMP_RESOURCES = (100, 64)

# libtpu's and TensorFlow/XLA's C++ logging (docs/diagnostics.md says what each does): the
# variables xpk's --enable-debug-logs sets, with the same values.
# --tensorboard: where the job writes TensorBoard logs. AIP_TENSORBOARD_LOG_DIR is the name
# Vertex AI custom training gives the same directory ("Use Vertex AI TensorBoard with custom
# training"), so code written for Vertex finds it here too.
TENSORBOARD_ENV = ("TENSORBOARD_LOG_DIR", "AIP_TENSORBOARD_LOG_DIR")
# --tensorboard on a stack with a Vertex AI TensorBoard instance: what MaxText reads to upload
# its logs there (AI-Hypercomputer/maxtext MaxText/vertex_tensorboard.py,
# VertexTensorboardManager). TENSORBOARD_PROJECT, TENSORBOARD_REGION, TENSORBOARD_NAME (the
# instance's display name, which cloud-accelerator-diagnostics looks the instance up by) and
# EXPERIMENT_NAME take precedence over its config keys vertex_tensorboard_project and
# vertex_tensorboard_region and its run_name. M_USE_VERTEX_TENSORBOARD sets its
# use_vertex_tensorboard key (pyconfig: a key K is overridden by the variable M_<K in upper
# case>), with which process 0 finds the instance, creates the experiment when it is missing
# and starts the uploader; without it the experiment must exist beforehand.
VERTEX_PROJECT_ENV = "TENSORBOARD_PROJECT"
VERTEX_REGION_ENV = "TENSORBOARD_REGION"
VERTEX_NAME_ENV = "TENSORBOARD_NAME"
VERTEX_EXPERIMENT_ENV = "EXPERIMENT_NAME"
VERTEX_SWITCH_ENV = ("M_USE_VERTEX_TENSORBOARD", "true")
# The instance's resource name, for the job's own code (read by describe).
VERTEX_RESOURCE_ENV = "VERTEX_TENSORBOARD"
DEBUG_LOG_ENV = (
    ("TPU_STDERR_LOG_LEVEL", "0"),
    ("TPU_MIN_LOG_LEVEL", "0"),
    ("TF_CPP_MIN_LOG_LEVEL", "0"),
    ("TPU_VMODULE", "real_program_continuator=1"),
)

# One line each (the CLI's YAML is the same from libyaml and PyYAML's emitters only for
# single-line strings: tests/test_cli_output.py).
# Stream every trace file to the container's stdout (GKE sends it to Cloud Logging), each
# new file once from its first line; files appear when a process starts diagnose(). On
# SIGTERM (the kubelet stops native sidecars after the main container ends) stop at once.
TRACE_SCRIPT = (
    'dir="${TRACE_DIR:?}"; seen=" "; pids=""; '
    "trap 'kill $pids 2>/dev/null; exit 0' TERM INT; "
    'while :; do '
    'for f in "$dir"/*; do '
    '[ -f "$f" ] || continue; '
    'case "$seen" in *" $f "*) continue ;; esac; '
    'seen="$seen$f "; '
    'tail -n +1 -F "$f" & pids="$pids $!"; '
    'done; '
    'sleep 5 & wait $!; '
    'done')

# Copy the dump folder to the store every DUMP_INTERVAL seconds (files that are new or
# whose size changed), and once more when the kubelet stops the sidecar, which it does
# after the main container ends however it ended: a crash's dumps are uploaded too.
DUMP_SCRIPT = (
    'src="${DUMP_DIR:?}"; '
    'dest="${DUMP_STORE:?}/${DUMP_FOLDER:?}/attempt-${RESTART_ATTEMPT:-0}/'
    'slice-${SLICE:-0}-worker-${WORKER:-0}"; '
    'upload() { (cd "$src" && find . -type f) | while IFS= read -r f; do '
    'if [ ! -f "$dest/$f" ] || [ "$(wc -c < "$src/$f")" != "$(wc -c < "$dest/$f")" ]; '
    'then mkdir -p "$dest/$(dirname "$f")" && cp "$src/$f" "$dest/$f"; fi; '
    'done; }; '
    "trap 'upload; exit 0' TERM INT; "
    'while :; do sleep "${DUMP_INTERVAL:-60}" & wait $!; upload; done')


def vertex_env(board: TensorboardInfo, workload: str) -> list[tuple[str, str]]:
    """The variables of an upload to ``board``, the workload's name as its experiment: a
    Kubernetes name, within what Vertex AI admits as an experiment id (1-128 characters of
    [a-z], [0-9] and '-': tensorboards.experiments.create, tensorboardExperimentId;
    cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.tensorboards.experiments/create)."""
    return [(VERTEX_PROJECT_ENV, board.project), (VERTEX_REGION_ENV, board.region),
            (VERTEX_NAME_ENV, board.display_name), (VERTEX_EXPERIMENT_ENV, workload),
            VERTEX_SWITCH_ENV, (VERTEX_RESOURCE_ENV, board.name)]


def _amounts(cpu_milli: int, memory_mi: int) -> dict[str, Any]:
    amounts = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mi}Mi"}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _field(path: str) -> dict[str, Any]:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}


def _sidecar(name: str, script: str, env: list[dict[str, Any]],
             mounts_: list[dict[str, Any]], resources: tuple[int, int]) -> dict[str, Any]:
    return {
        "name": name, "image": SIDECAR_IMAGE,
        "restartPolicy": "Always",  # a native sidecar: beside the main container, ends with it
        "command": ["/bin/sh", "-c", script],
        "env": env,
        "resources": _amounts(*resources),
        "volumeMounts": mounts_,
    }


def decorate(pod: dict[str, Any], pod_meta: dict[str, Any], diag: Diagnostics,
             workload: str) -> None:
    """Add ``diag`` to the rendered pod template of ``workload`` (its first container is the
    main one)."""
    main = pod["containers"][0]
    sidecars: list[dict[str, Any]] = []
    if diag.debug_logs:
        set_by_user = {e["name"] for e in main["env"]}
        main["env"] += [{"name": k, "value": v} for k, v in DEBUG_LOG_ENV
                        if k not in set_by_user]
    board = diag.tensorboard_dir(workload)
    if board is not None:
        main["env"] += [{"name": k, "value": board} for k in TENSORBOARD_ENV]
    if board is not None and diag.vertex is not None:
        set_by_user = {e["name"] for e in main["env"]}
        main["env"] += [{"name": k, "value": v} for k, v in vertex_env(diag.vertex, workload)
                        if k not in set_by_user]
    if diag.stack_traces:
        pod["volumes"].append({"name": TRACE_VOLUME, "emptyDir": {"sizeLimit": TRACE_SIZE_LIMIT}})
        main["volumeMounts"].append({"name": TRACE_VOLUME, "mountPath": TRACE_DIR})
        sidecars.append(_sidecar(
            TRACE_CONTAINER, TRACE_SCRIPT, [{"name": "TRACE_DIR", "value": TRACE_DIR}],
            [{"name": TRACE_VOLUME, "mountPath": TRACE_DIR, "readOnly": True}],
            TRACE_RESOURCES))
    dump = diag.xla_dump
    if dump is not None:
        _xla_flags(main)
        pod["volumes"] += [
            {"name": DUMP_VOLUME, "emptyDir": {"sizeLimit": DUMP_SIZE_LIMIT}},
            mounts.store_volume(dump.mount, bool(pod.get("hostNetwork")), DUMP_STORE_VOLUME)]
        main["volumeMounts"].append({"name": DUMP_VOLUME, "mountPath": DUMP_DIR})
        _store_driver(pod_meta, dump.mount.kind)
        js = "jobset.sigs.k8s.io"
        sidecars.append(_sidecar(DUMP_CONTAINER, DUMP_SCRIPT, [
            {"name": "DUMP_DIR", "value": DUMP_DIR},
            {"name": "DUMP_STORE", "value": STORE_MOUNT},
            {"name": "DUMP_FOLDER", "value": dump.folder_of(workload)},
            {"name": "DUMP_INTERVAL", "value": str(DUMP_INTERVAL_SECONDS)},
            {"name": "RESTART_ATTEMPT", **_field(f"metadata.annotations['{js}/restart-attempt']")},
            {"name": "SLICE", **_field(f"metadata.annotations['{js}/job-index']")},
            {"name": "WORKER", **_field(
                "metadata.annotations['batch.kubernetes.io/job-completion-index']")},
        ], [{"name": DUMP_VOLUME, "mountPath": DUMP_DIR, "readOnly": True},
            {"name": DUMP_STORE_VOLUME, "mountPath": STORE_MOUNT}], DUMP_RESOURCES))
    if sidecars:
        _give_up(main, sidecars)
        pod["initContainers"] = pod.get("initContainers", []) + sidecars


def _store_driver(pod_meta: dict[str, Any], kind: str) -> None:
    """The CSI driver's sidecar, asked for as a --mount of the store asks for it
    (submit/render/mounts.py says why each annotation)."""
    if kind == "gcs":
        annotations = pod_meta.setdefault("annotations", {})
        annotations[mounts.GCSFUSE_VOLUMES] = "true"
        for key in mounts.GCSFUSE_LIMITS:
            annotations[key] = "0"
    elif kind == "parallelstore":
        pod_meta.setdefault("annotations", {})[mounts.PARALLELSTORE_VOLUMES] = "true"


def _xla_flags(main: dict[str, Any]) -> None:
    """Add --xla_dump_to to the main container's XLA_FLAGS, keeping the user's flags (their
    entry is the one that stays: jobset._user_env_wins)."""
    flag = f"{XLA_DUMP_FLAG}={DUMP_DIR}"
    for e in main["env"]:
        if e["name"] == XLA_FLAGS and "value" in e:
            e["value"] = f"{e['value']} {flag}".strip()
            return
    main["env"].append({"name": XLA_FLAGS, "value": flag})


def _give_up(main: dict[str, Any], sidecars: list[dict[str, Any]]) -> None:
    """The sidecars' requests come out of the main container's CPU and memory (requests =
    limits), so the pod asks what it did without them."""
    res = main.get("resources")
    if not res:
        return
    cpu = sum(_milli(s["resources"]["requests"]["cpu"]) for s in sidecars)
    mem = sum(_mi(s["resources"]["requests"]["memory"]) for s in sidecars)
    for part in ("requests", "limits"):
        amounts = res.get(part) or {}
        if "cpu" in amounts and _milli(amounts["cpu"]) > cpu:
            amounts["cpu"] = f"{_milli(amounts['cpu']) - cpu}m"
        if "memory" in amounts and _mi(amounts["memory"]) > mem:
            amounts["memory"] = f"{_mi(amounts['memory']) - mem}Mi"


def _milli(cpu: str) -> int:
    """Millicores of a CPU quantity of the shapes the render writes or --cpu accepts
    (submit/render/spec.py: 30, 2.5, 3500m)."""
    return int(cpu[:-1]) if cpu.endswith("m") else round(float(cpu) * 1000)


_BINARY = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 ** 2}
_DECIMAL = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _mi(memory: str) -> int:
    """Whole MiB (rounded down) of a memory quantity of the shapes --memory accepts
    (submit/render/spec.py: a number with Ki, Mi, Gi, Ti, k, M, G or T, or bytes)."""
    for suffix, mib in _BINARY.items():
        if memory.endswith(suffix):
            return int(float(memory[:-2]) * mib)
    for suffix, scale in _DECIMAL.items():
        if memory.endswith(suffix):
            return int(float(memory[:-1]) * scale / 2**20)
    return int(float(memory) / 2**20)
