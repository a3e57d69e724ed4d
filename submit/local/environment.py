"""The environment and command a container gets from the cluster, computed for one local
process: envFrom and env in the kubelet's order, ``fieldRef``s resolved against the pod's
metadata, ``$(VAR)`` references expanded, and what the Job controller and GKE's TPU webhook
add. Pure: Secret values come from the caller's environment.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from submit.local.errors import PlanError
from submit.local.hosts import LOOPBACK
from submit.local.pods import COMPLETION_INDEX_ENV, Pod

TPU_RESOURCE = "google.com/tpu"


def expand(text: str, lookup: Mapping[str, str]) -> str:
    """Expand ``$(VAR)`` as the kubelet does (k8s.io/kubernetes third_party/forked/golang/
    expansion): ``$$`` is one ``$``; a reference to an undefined variable, an unterminated
    ``$(`` and a ``$`` before anything else stay as written."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 == n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
            else:
                name = text[i + 2:close]
                out.append(lookup[name] if name in lookup else f"$({name})")
                i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)



_FIELD = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]$")


def _field_value(path: str, pod: Pod, pod_name: str, namespace: str, uid: str,
                 env_name: str) -> str:
    m = _FIELD.match(path)
    if m:
        source = pod.labels if m.group(1) == "labels" else pod.annotations
        # The downward API gives an empty string for a key the pod does not carry.
        return source.get(m.group(2), "")
    simple = {"metadata.name": pod_name, "metadata.namespace": namespace,
              "metadata.uid": uid, "spec.nodeName": "localhost",
              "spec.serviceAccountName": "default", "status.hostIP": LOOPBACK,
              "status.hostIPs": LOOPBACK, "status.podIP": LOOPBACK,
              "status.podIPs": LOOPBACK}
    if path in simple:
        return simple[path]
    raise PlanError("--from", f"env {env_name}: fieldRef {path!r} has no local value; supported: "
                    "metadata.name, metadata.namespace, metadata.uid, metadata.labels['K'], "
                    "metadata.annotations['K'], spec.nodeName, spec.serviceAccountName, "
                    "status.hostIP(s), status.podIP(s)")


def choose_container(pod_spec: dict[str, Any], wanted: str | None) -> tuple[dict[str, Any],
                                                                      list[str]]:
    containers = pod_spec.get("containers") or []
    if not containers:
        raise PlanError("--from", "the pod template has no containers")
    names = [c.get("name") for c in containers]
    name = wanted or ("main" if "main" in names else names[0])
    if name not in names:
        raise PlanError("--container", f"{name!r} is not a container of the pod; it has: "
                        f"{', '.join(str(n) for n in names)}")
    skipped = [str(n) for n in names if n != name]
    skipped += [str(c.get("name")) for c in pod_spec.get("initContainers") or []]
    return containers[names.index(name)], skipped


def _requests_tpu(container: dict[str, Any]) -> bool:
    res = container.get("resources") or {}
    return any(TPU_RESOURCE in (res.get(k) or {}) for k in ("requests", "limits"))


def container_env(container: dict[str, Any], pod: Pod, pod_name: str, namespace: str, pod_uid: str,
         cms: Mapping[str, dict[str, Any]], local_env: Mapping[str, str]
         ) -> tuple[list[tuple[str, str]], set[str]]:
    """The container's environment in the kubelet's order: envFrom, then env (each value
    expanded against the variables before it); valueFrom values are not expanded."""
    env: dict[str, str] = {}
    secret: set[str] = set()
    for src in container.get("envFrom") or []:
        prefix = src.get("prefix", "")
        if "configMapRef" in src:
            ref = src["configMapRef"]["name"]
            if ref not in cms:
                raise PlanError("--from", f"envFrom ConfigMap {ref!r} is not in the workload")
            for k, v in (cms[ref].get("data") or {}).items():
                env[prefix + k] = str(v)
        else:
            raise PlanError("--from", "envFrom secretRef has no local value; set the "
                            "variables with --env instead")
    for e in container.get("env") or []:
        name = e["name"]
        if "valueFrom" not in e:
            env[name] = expand(str(e.get("value", "")), env)
            secret.discard(name)
            continue
        vf = e["valueFrom"]
        if "fieldRef" in vf:
            env[name] = _field_value(vf["fieldRef"]["fieldPath"], pod, pod_name, namespace,
                                     pod_uid, name)
        elif "configMapKeyRef" in vf:
            ref = vf["configMapKeyRef"]
            data = (cms.get(ref["name"]) or {}).get("data") or {}
            if ref["key"] not in data:
                raise PlanError("--from", f"env {name}: ConfigMap {ref['name']!r} key "
                                f"{ref['key']!r} is not in the workload")
            env[name] = str(data[ref["key"]])
        elif "secretKeyRef" in vf:
            # A Secret lives in the cluster; locally its value comes from this shell.
            if name not in local_env:
                ref = vf["secretKeyRef"]
                raise PlanError("--secret-env", f"{name} comes from Secret "
                                f"{ref.get('name')}/{ref.get('key')}, which run-local cannot "
                                f"read: export {name} in this shell to give it a local value")
            env[name] = local_env[name]
            secret.add(name)
        else:
            raise PlanError("--from", f"env {name}: {sorted(vf)} has no local value")
    return list(env.items()), secret


def injected(pod: Pod, container: dict[str, Any], jobset: str, subdomain: str, dns: bool,
             declared: set[str]) -> list[tuple[str, str]]:
    """What the cluster adds to the container's own variables (``declared``), which win."""
    job = pod.rjob["template"]["spec"]
    out: list[tuple[str, str]] = []
    indexed = job.get("completionMode") == "Indexed"
    if indexed and COMPLETION_INDEX_ENV not in declared:
        out.append((COMPLETION_INDEX_ENV, str(pod.index)))
    completions = int(job.get("completions", job.get("parallelism", 1)))
    # GKE's TPU webhook, for an Indexed Job with a subdomain, parallelism > 1 and a
    # google.com/tpu request: TPU_WORKER_ID is the pod's index in the slice and
    # TPU_WORKER_HOSTNAMES the slice's hosts, ordered by that index
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/tpus, "TPU_WORKER_ID",
    # "TPU_WORKER_HOSTNAMES"). GKE does not publish the exact string it writes; these
    # are the pods' DNS names in the JobSet's subdomain.
    if (indexed and dns and int(job.get("parallelism", 1)) > 1
            and _requests_tpu(container)):
        job_name = f"{jobset}-{pod.rjob['name']}-{pod.job_index}"
        tpu = [("TPU_WORKER_ID", str(pod.index)),
               ("TPU_WORKER_HOSTNAMES",
                ",".join(f"{job_name}-{i}.{subdomain}" for i in range(completions)))]
        out += [(k, v) for k, v in tpu if k not in declared]
    return out
