"""The container's volumes on this machine: --local-mount directories, ConfigMap files
written under the run directory, an emptyDir directory per pod, and mount paths in env values
and the command rewritten to those directories. Pure: files and directories are listed for
the runner to create.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from submit.local.errors import PlanError
from submit.local.pods import Pod
from submit.render.checkpointing import DRIVER as CHECKPOINT_DRIVER
from submit.render.gpu_net import NCCL_ENV_SCRIPT, PLUMBING_VOLUMES


def is_plumbing(volume: Mapping[str, Any]) -> bool:
    """A hostPath volume the renderer adds for a GPU node's plumbing (submit.render.gpu_net):
    same name and host path. The user's own hostPath volumes are not."""
    path = (volume.get("hostPath") or {}).get("path")
    return path is not None and PLUMBING_VOLUMES.get(str(volume.get("name"))) == path


def is_local_checkpoint(volume: Mapping[str, Any]) -> bool:
    """The multi-tier checkpointing volume --local-checkpoint-dir adds."""
    return (volume.get("csi") or {}).get("driver") == CHECKPOINT_DRIVER


def local_mounts(pod_spec: dict[str, Any], container: dict[str, Any], pod: Pod,
                 cms: Mapping[str, dict[str, Any]], mounts: Mapping[str, str], run_dir: str,
                 files: dict[str, str], dirs: list[str], stand_ins: set[str] | None = None
                 ) -> list[tuple[str, str]]:
    """(mount path, local directory) for each of the container's mounts; ``mounts`` are the
    --local-mount directories by volume name. ConfigMap files go into ``files`` and emptyDir
    directories into ``dirs``; GPU plumbing volumes get an empty directory each (also in
    ``dirs``), and their names go into ``stand_ins``."""
    volumes = {v["name"]: v for v in pod_spec.get("volumes") or []}
    out = []
    for m in container.get("volumeMounts") or []:
        name, path = m["name"], m["mountPath"]
        vol = volumes.get(name, {})
        if name in mounts:
            local = mounts[name]
        elif "configMap" in vol:
            ref = vol["configMap"]["name"]
            if ref not in cms:
                raise PlanError("--from", f"volume {name!r}: ConfigMap {ref!r} is not in the "
                                "workload")
            local = f"{run_dir}/volumes/{name}"
            data = cms[ref].get("data") or {}
            items = vol["configMap"].get("items")
            pairs = [(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]
            for key, rel in pairs:
                files[f"{local}/{rel}"] = str(data[key])
        elif "emptyDir" in vol and path == "/dev/shm":
            continue  # this machine's /dev/shm, shared by every local process
        elif "emptyDir" in vol:
            local = f"{run_dir}/volumes/{pod.hostname}/{name}"  # one per pod
            dirs.append(local)
        elif is_local_checkpoint(vol):
            # Multi-tier checkpointing's RAM tier: a directory per process, kept across
            # restarts (no peer replication, no backup: Plan.notes says so).
            local = f"{run_dir}/volumes/{pod.hostname}/{name}"
            dirs.append(local)
        elif is_plumbing(vol):
            # The node's drivers and GPUDirect files exist only on a GKE GPU node, and the
            # sidecars that use them are not run here: an empty directory stands in.
            local = f"{run_dir}/volumes/{pod.hostname}/{name}"
            dirs.append(local)
            for script in NCCL_ENV_SCRIPT.values():  # the command sources it: keep it there
                if script.startswith(path.rstrip("/") + "/"):
                    files[local + script[len(path.rstrip("/")):]] = (
                        "# run-local stand-in for the NCCL settings of a GKE GPU node\n")
            if stand_ins is not None:
                stand_ins.add(name)
        else:
            kinds = sorted(k for k in vol if k != "name") or ["undefined"]
            raise PlanError("--local-mount", f"volume {name!r} ({', '.join(kinds)}) mounted at "
                            f"{path} has no local directory: pass --local-mount {name}=DIR")
        if m.get("subPath"):
            local = f"{local}/{m['subPath']}"
        out.append((path.rstrip("/") or "/", local))
    return out


def rewrite_paths(text: str, mounts: Sequence[tuple[str, str]]) -> str:
    """Each mount path in ``text`` (a whole path or a path's start) made its local directory,
    in one pass: a local directory is never rewritten again, even when it lies under another
    mount path (a run directory under /tmp, with a volume mounted at /tmp)."""
    if not mounts:
        return text
    local: dict[str, str] = {}
    for path, directory in mounts:
        local.setdefault(path, directory)
    alternatives = "|".join(re.escape(p) for p in sorted(local, key=len, reverse=True))
    pattern = rf"(?<![\w.-])(?:{alternatives})(?=/|$|[\s:;,'\"=)])"
    return re.sub(pattern, lambda m: local[m.group(0)], text)
