"""The local plan: which processes a rendered JobSet becomes on this machine, and with what.

One process per pod: every replicated Job, every replica (slice) and every completion index.
Each process gets the environment the cluster would give its container, computed from the
JobSet itself:

- ``fieldRef``s resolved against the pod metadata JobSet v0.12.0 and the Job controller set
  (``jobset.sigs.k8s.io/*`` labels and annotations, ``batch.kubernetes.io/job-completion-
  index``), and ``JOB_COMPLETION_INDEX``, which the Job controller adds to Indexed Jobs;
- ``$(VAR)`` references expanded in order, as the kubelet does (``$$`` escapes, unresolved
  references stay as written), in env values and in the command;
- what GKE's TPU webhook injects into multi-host TPU Jobs (``TPU_WORKER_ID``,
  ``TPU_WORKER_HOSTNAMES``);
- hostnames of JobSet's DNS scheme (``<jobset>-<rjob>-<job>-<index>.<subdomain>``) rewritten
  to 127.0.0.1, and ports that several local processes would bind moved to distinct free
  ports, with the addresses and ``*_PORT`` variables that name them rewritten to match;
- ConfigMap volumes written under the run directory, other volumes mapped to local
  directories (``--local-mount``), and mount paths in env values and the command rewritten
  to those directories.

Pure: no process is started and no file is written here (free ports come from the caller).
What differs from the cluster is listed in ``Plan.notes`` and in the README.
"""

from __future__ import annotations

import copy
import hashlib
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from submit.local import policy

# JobSet v0.12.0: api/jobset/v1alpha2/jobset_types.go and pkg/constants/constants.go; every
# key is set both as a label and as an annotation on child Jobs and their pods
# (pkg/controllers/jobset_controller.go, labelAndAnnotateObject).
JS = "jobset.sigs.k8s.io"
JOBSET_NAME = f"{JS}/jobset-name"
JOBSET_UID = f"{JS}/jobset-uid"
REPLICATED_JOB_NAME = f"{JS}/replicatedjob-name"
REPLICATED_JOB_REPLICAS = f"{JS}/replicatedjob-replicas"
GLOBAL_REPLICAS = f"{JS}/global-replicas"
JOB_INDEX = f"{JS}/job-index"
JOB_GLOBAL_INDEX = f"{JS}/job-global-index"
JOB_KEY = f"{JS}/job-key"
RESTART_ATTEMPT = f"{JS}/restart-attempt"
GROUP_NAME = f"{JS}/group-name"
GROUP_REPLICAS = f"{JS}/group-replicas"
JOB_GROUP_INDEX = f"{JS}/job-group-index"
COORDINATOR = f"{JS}/coordinator"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
# The Job controller: the completion index annotation (and label, Kubernetes >= 1.28) and
# the JOB_COMPLETION_INDEX variable it appends to every container of an Indexed Job
# (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/).
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
TPU_RESOURCE = "google.com/tpu"
LOOPBACK = "127.0.0.1"
DEFAULT_GRACE_SECONDS = 30  # a pod's terminationGracePeriodSeconds when unset
_POD_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' random name alphabet


class PlanError(ValueError):
    """A JobSet or option run-local cannot honour; ``option`` names what to change."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


@dataclass(frozen=True)
class Options:
    run_dir: str  # logs, ConfigMap files and emptyDir directories go under it
    cwd: str  # where commands run (the image's working directory does not exist here)
    mounts: tuple[tuple[str, str], ...] = ()  # --local-mount: volume name -> local directory
    local_env: tuple[tuple[str, str], ...] = ()  # where secretKeyRef values are looked up
    container: str | None = None  # the container to run (default: "main", else the first)


@dataclass(frozen=True)
class Process:
    label: str  # "<slice>/<worker>" (prefixed by the replicated Job when there are several)
    replicated_job: str
    job_index: int
    index: int  # completion index
    hostname: str
    pod_name: str
    container: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    secret_env: tuple[str, ...]  # names whose value came from a Secret: never printed
    cwd: str
    log: str
    ports: tuple[tuple[int, int], ...]  # (container port, local port)

    def env_dict(self) -> dict[str, str]:
        return dict(self.env)


@dataclass(frozen=True)
class Plan:
    jobset: str
    namespace: str
    restart_attempt: int
    processes: tuple[Process, ...]
    files: tuple[tuple[str, str], ...]  # (path, content) to write before starting
    dirs: tuple[str, ...]  # directories to create before starting (emptyDirs, logs)
    grace_seconds: int
    policy: policy.Policy
    notes: tuple[str, ...] = field(default=())
    # JobSet dependsOn: (replicated job, the one it waits for, "Ready" or "Complete").
    depends_on: tuple[tuple[str, str, str], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The plan as data, Secret values masked (for --dry-run and golden files)."""
        return {
            "jobset": self.jobset, "namespace": self.namespace,
            "restartAttempt": self.restart_attempt, "graceSeconds": self.grace_seconds,
            "policy": self.policy.to_dict(),
            "files": [p for p, _ in self.files], "dirs": list(self.dirs),
            "processes": [{
                "label": p.label, "hostname": p.hostname, "podName": p.pod_name,
                "argv": list(p.argv), "cwd": p.cwd, "log": p.log,
                "ports": {str(c): local for c, local in p.ports},
                "env": {k: ("<secret>" if k in p.secret_env else v) for k, v in p.env},
            } for p in self.processes],
            "notes": list(self.notes),
        }


# -- $(VAR) expansion ---------------------------------------------------------------------


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


# -- scale-down -----------------------------------------------------------------------------


def parse_shape(text: str) -> tuple[int, int]:
    """``--scale-down`` values: ``SLICESxHOSTS`` (replicas x pods per replica), e.g. 2x2."""
    m = re.fullmatch(r"([1-9][0-9]*)x([1-9][0-9]*)", text.strip())
    if not m:
        raise PlanError("--scale-down", f"{text!r} is not SLICESxHOSTS (replicas x pods per "
                        "replica), such as 2x2 or 1x2")
    return int(m.group(1)), int(m.group(2))


def scale_down(jobset: dict[str, Any], replicas: int, pods: int) -> dict[str, Any]:
    """The same JobSet with at most ``replicas`` Jobs per replicated Job and at most ``pods``
    pods per Job. Refuses to scale up. The caller renders anew from the spec when it can
    (literal values such as NNODES then match); for an exported file, NNODES is updated
    when it holds the old pod count."""
    js = copy.deepcopy(jobset)
    for rj in js["spec"]["replicatedJobs"]:
        old_r = int(rj.get("replicas", 1))
        job = rj["template"]["spec"]
        old_p = int(job.get("parallelism", 1))
        if replicas > old_r or pods > old_p:
            raise PlanError("--scale-down", f"{replicas}x{pods} is larger than replicated job "
                            f"{rj['name']!r} ({old_r}x{old_p}); it can only shrink a workload")
        rj["replicas"] = replicas
        job["parallelism"] = pods
        if "completions" in job:
            job["completions"] = pods
        for c in job["template"]["spec"].get("containers", []):
            for e in c.get("env", []):
                if e.get("name") == "NNODES" and e.get("value") == str(old_p):
                    e["value"] = str(pods)
    return js


# -- the plan ---------------------------------------------------------------------------------


def split_objects(objects: Sequence[Any], source: str) -> tuple[dict[str, Any],
                                                                 dict[str, dict[str, Any]]]:
    """The JobSet and the ConfigMaps (by name) of a rendered or exported workload."""
    jobsets = [o for o in objects if isinstance(o, dict) and o.get("kind") == "JobSet"]
    kinds = [o.get("kind") if isinstance(o, dict) else type(o).__name__ for o in objects]
    if len(jobsets) != 1 or any(k not in ("JobSet", "ConfigMap") for k in kinds):
        raise PlanError(source, f"must hold one JobSet (and optionally ConfigMaps), not {kinds}")
    _check(jobsets[0], source)
    cms = {}
    for o in objects:
        if o.get("kind") == "ConfigMap":
            name = (o.get("metadata") or {}).get("name")
            if not isinstance(name, str) or not isinstance(o.get("data", {}), dict):
                raise PlanError(source, "a ConfigMap has no metadata.name or its data is not "
                                "a mapping")
            cms[name] = o
    return jobsets[0], cms


def _check(js: dict[str, Any], source: str) -> None:
    """The fields the plan reads, so that a hand-edited file fails with its path."""
    def need(value: Any, kind: type, path: str) -> Any:
        if not isinstance(value, kind) or (kind is list and not value):
            raise PlanError(source, f"the JobSet has no valid {path}")
        return value

    need(need(js.get("metadata"), dict, "metadata").get("name"), str, "metadata.name")
    rjobs = need(need(js.get("spec"), dict, "spec").get("replicatedJobs"), list,
                 "spec.replicatedJobs")
    for i, rj in enumerate(rjobs):
        path = f"spec.replicatedJobs[{i}]"
        need(need(rj, dict, path).get("name"), str, f"{path}.name")
        job = need(need(rj.get("template"), dict, f"{path}.template").get("spec"), dict,
                   f"{path}.template.spec")
        pod = need(need(job.get("template"), dict, f"{path}.template.spec.template").get(
            "spec"), dict, f"{path}.template.spec.template.spec")
        for j, c in enumerate(need(pod.get("containers"), list,
                                   f"{path}.template.spec.template.spec.containers")):
            need(need(c, dict, f"{path}...containers[{j}]").get("name"), str,
                 f"{path}...containers[{j}].name")


def _pod_suffix(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(_POD_SUFFIX_CHARS[b % len(_POD_SUFFIX_CHARS)] for b in digest[:5])


@dataclass(frozen=True)
class _Pod:
    rjob: dict[str, Any]
    job_index: int
    index: int
    hostname: str
    labels: dict[str, str]
    annotations: dict[str, str]


def _pods(js: dict[str, Any], attempt: int, uid: str) -> list[_Pod]:
    name, ns = js["metadata"]["name"], js["metadata"].get("namespace", "default")
    rjobs = js["spec"]["replicatedJobs"]
    total = sum(int(r.get("replicas", 1)) for r in rjobs)
    js_ann = js["metadata"].get("annotations") or {}
    coordinator = js["spec"].get("coordinator")
    subdomain = _subdomain(js)
    pods = []
    global_base = 0
    group_base: dict[str, int] = {}
    for rj in rjobs:
        replicas = int(rj.get("replicas", 1))
        group = rj.get("groupName", "default")
        group_total = sum(int(r.get("replicas", 1)) for r in rjobs
                          if r.get("groupName", "default") == group)
        job = rj["template"]["spec"]
        tpl_meta = job["template"].get("metadata") or {}
        completions = int(job.get("completions", job.get("parallelism", 1)))
        for j in range(replicas):
            job_name = f"{name}-{rj['name']}-{j}"
            keys = {
                JOBSET_NAME: name, JOBSET_UID: uid, REPLICATED_JOB_NAME: rj["name"],
                RESTART_ATTEMPT: str(attempt), REPLICATED_JOB_REPLICAS: str(replicas),
                GLOBAL_REPLICAS: str(total), JOB_INDEX: str(j),
                JOB_KEY: hashlib.sha1(f"{ns}/{job_name}".encode()).hexdigest(),
                JOB_GLOBAL_INDEX: str(global_base + j), GROUP_NAME: group,
                GROUP_REPLICAS: str(group_total),
                JOB_GROUP_INDEX: str(group_base.get(group, 0) + j),
            }
            if coordinator:
                keys[COORDINATOR] = (f"{name}-{coordinator['replicatedJob']}-"
                                     f"{coordinator.get('jobIndex', 0)}-"
                                     f"{coordinator.get('podIndex', 0)}.{subdomain}")
            job_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{uid}/{job_name}/{attempt}"))
            for i in range(completions):
                labels = {**(tpl_meta.get("labels") or {}), **keys,
                          "batch.kubernetes.io/controller-uid": job_uid,
                          "batch.kubernetes.io/job-name": job_name,
                          "controller-uid": job_uid, "job-name": job_name}
                annotations = {**(tpl_meta.get("annotations") or {}), **keys}
                if EXCLUSIVE_TOPOLOGY in js_ann:
                    annotations[EXCLUSIVE_TOPOLOGY] = js_ann[EXCLUSIVE_TOPOLOGY]
                if job.get("completionMode") == "Indexed":
                    labels[COMPLETION_INDEX] = annotations[COMPLETION_INDEX] = str(i)
                pods.append(_Pod(rj, j, i, f"{job_name}-{i}", labels, annotations))
        global_base += replicas
        group_base[group] = group_base.get(group, 0) + replicas
    return pods


def _subdomain(js: dict[str, Any]) -> str:
    net = js["spec"].get("network") or {}
    return str(net.get("subdomain") or js["metadata"]["name"])


def _dns_enabled(js: dict[str, Any]) -> bool:
    # JobSet defaults enableDNSHostnames to true (api/jobset/v1alpha2 defaulting).
    net = js["spec"].get("network") or {}
    return net.get("enableDNSHostnames", True) is not False


_FIELD = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]$")


def _field_value(path: str, pod: _Pod, pod_name: str, namespace: str, uid: str,
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


def _container(pod_spec: dict[str, Any], wanted: str | None) -> tuple[dict[str, Any],
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


def _env(container: dict[str, Any], pod: _Pod, pod_name: str, namespace: str, pod_uid: str,
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


def _volumes(pod_spec: dict[str, Any], container: dict[str, Any], pod: _Pod,
             cms: Mapping[str, dict[str, Any]], opts: Options,
             files: dict[str, str], dirs: list[str]) -> list[tuple[str, str]]:
    """(mount path, local directory) for each of the container's mounts."""
    mounts = dict(opts.mounts)
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
            local = f"{opts.run_dir}/volumes/{name}"
            data = cms[ref].get("data") or {}
            items = vol["configMap"].get("items")
            pairs = [(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]
            for key, rel in pairs:
                files[f"{local}/{rel}"] = str(data[key])
        elif "emptyDir" in vol and path == "/dev/shm":
            continue  # this machine's /dev/shm, shared by every local process
        elif "emptyDir" in vol:
            local = f"{opts.run_dir}/volumes/{pod.hostname}/{name}"  # one per pod
            dirs.append(local)
        else:
            kinds = sorted(k for k in vol if k != "name") or ["undefined"]
            raise PlanError("--local-mount", f"volume {name!r} ({', '.join(kinds)}) mounted at "
                            f"{path} has no local directory: pass --local-mount {name}=DIR")
        if m.get("subPath"):
            local = f"{local}/{m['subPath']}"
        out.append((path.rstrip("/") or "/", local))
    return out


def _rewrite_paths(text: str, mounts: Sequence[tuple[str, str]]) -> str:
    for path, local in sorted(mounts, key=lambda m: -len(m[0])):
        text = re.sub(rf"(?<![\w.-]){re.escape(path)}(?=/|$|[\s:;,'\"=)])",
                      lambda _m, local=local: local, text)  # type: ignore[misc]
    return text


class _Hosts:
    """Rewrites the JobSet's pod DNS names (and the ports they are reached on) to loopback."""

    def __init__(self, hostnames: Sequence[str], subdomain: str, namespace: str,
                 ports: Mapping[tuple[str, int], int]) -> None:
        self.ports = ports
        alts = "|".join(re.escape(h) for h in sorted(hostnames, key=len, reverse=True))
        sub, ns = re.escape(subdomain), re.escape(namespace)
        self.pattern = re.compile(
            rf"(?<![\w.-])({alts})\.{sub}(?:\.{ns}(?:\.svc(?:\.cluster\.local)?)?)?"
            rf"(?::(\d+))?(?![\w-])") if hostnames else None

    def rewrite(self, text: str) -> str:
        if self.pattern is None:
            return text

        def sub(m: re.Match[str]) -> str:
            if m.group(2) is None:
                return LOOPBACK
            port = int(m.group(2))
            return f"{LOOPBACK}:{self.ports.get((m.group(1), port), port)}"
        return self.pattern.sub(sub, text)

    def host_of(self, text: str) -> str | None:
        m = self.pattern.search(text) if self.pattern else None
        return m.group(1) if m else None


def _port_vars(env: list[tuple[str, str]], hosts: _Hosts) -> dict[str, str]:
    """``X_PORT`` values to move with the address they go with (``X_ADDRESS``, ``X_ADDR`` or
    ``X_HOST`` or ``X`` naming a pod, e.g. COORDINATOR_ADDRESS/COORDINATOR_PORT, MASTER_ADDR/
    MASTER_PORT)."""
    values = dict(env)
    out = {}
    for name, value in env:
        if not name.endswith("_PORT") or not value.isdigit():
            continue
        prefix = name[:-len("_PORT")]
        for suffix in ("_ADDRESS", "_ADDR", "_HOST", ""):
            host = hosts.host_of(values.get(prefix + suffix, ""))
            if host is not None and (host, int(value)) in hosts.ports:
                out[name] = str(hosts.ports[(host, int(value))])
                break
    return out


def build(objects: Sequence[Any], opts: Options, restart_attempt: int,
          free_port: Callable[[], int], source: str = "--from") -> Plan:
    """The processes of one attempt of the workload (restart_attempt = JobSet restarts)."""
    js, cms = split_objects(objects, source)
    name = js["metadata"]["name"]
    ns = js["metadata"].get("namespace", "default")
    js_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"accelstack-local/{ns}/{name}"))
    pods = _pods(js, restart_attempt, js_uid)
    subdomain = _subdomain(js)
    dns = _dns_enabled(js)
    several_rjobs = len(js["spec"]["replicatedJobs"]) > 1
    notes: set[str] = set()

    # Ports several local processes would bind: each (pod, port) gets a free port of its own.
    declared: dict[int, int] = {}
    pod_ports: list[list[int]] = []
    for pod in pods:
        c, _ = _container(pod.rjob["template"]["spec"]["template"]["spec"], opts.container)
        ps = [int(p.get("hostPort") or p["containerPort"]) for p in c.get("ports") or []]
        pod_ports.append(ps)
        for p in ps:
            declared[p] = declared.get(p, 0) + 1
    mapping: dict[tuple[str, int], int] = {}
    for pod, ps in zip(pods, pod_ports):
        for p in ps:
            mapping[(pod.hostname, p)] = free_port() if declared[p] > 1 else p
    hosts = _Hosts([p.hostname for p in pods] if dns else [], subdomain, ns, mapping)

    processes: list[Process] = []
    files: dict[str, str] = {}
    dirs: list[str] = [f"{opts.run_dir}/logs"]
    grace = DEFAULT_GRACE_SECONDS
    local_env = dict(opts.local_env)
    for pod in pods:
        job = pod.rjob["template"]["spec"]
        pod_spec = job["template"]["spec"]
        grace = int(pod_spec.get("terminationGracePeriodSeconds", grace))
        container, skipped = _container(pod_spec, opts.container)
        for s in skipped:
            notes.add(f"container {s} is not run (only {container['name']} runs locally)")
        pod_name = f"{pod.hostname}-{_pod_suffix(f'{js_uid}/{pod.hostname}/{restart_attempt}')}"
        pod_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, pod_name))
        env, secret = _env(container, pod, pod_name, ns, pod_uid, cms, local_env)
        names = {k for k, _ in env}
        indexed = job.get("completionMode") == "Indexed"
        if indexed and COMPLETION_INDEX_ENV not in names:
            env.append((COMPLETION_INDEX_ENV, str(pod.index)))
        completions = int(job.get("completions", job.get("parallelism", 1)))
        # GKE's TPU webhook, for an Indexed Job with a subdomain, parallelism > 1 and a
        # google.com/tpu request: TPU_WORKER_ID is the pod's index in the slice and
        # TPU_WORKER_HOSTNAMES the slice's hosts, ordered by that index
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/tpus, "TPU_WORKER_ID",
        # "TPU_WORKER_HOSTNAMES"). GKE does not publish the exact string it writes; these
        # are the pods' DNS names in the JobSet's subdomain.
        if (indexed and dns and int(job.get("parallelism", 1)) > 1
                and _requests_tpu(container)):
            job_name = f"{name}-{pod.rjob['name']}-{pod.job_index}"
            tpu = [("TPU_WORKER_ID", str(pod.index)),
                   ("TPU_WORKER_HOSTNAMES",
                    ",".join(f"{job_name}-{i}.{subdomain}" for i in range(completions)))]
            env += [(k, v) for k, v in tpu if k not in names]
        # The command sees every variable of the pod spec (not HOSTNAME, set below by the
        # container runtime, which the kubelet's expansion does not know).
        lookup = dict(env)
        cmd = [expand(str(a), lookup) for a in
               list(container.get("command") or []) + list(container.get("args") or [])]
        if "HOSTNAME" not in names:
            env.insert(0, ("HOSTNAME", pod.hostname))
        if not cmd:
            raise PlanError("--command", "the container has no command: run-local runs the "
                            "command on this machine and cannot use the image's entrypoint")
        mounts = _volumes(pod_spec, container, pod, cms, opts, files, dirs)
        port_vars = _port_vars(env, hosts)
        env = [(k, port_vars.get(k) or _rewrite_paths(hosts.rewrite(v), mounts))
               if k not in secret else (k, v) for k, v in env]
        argv = tuple(_rewrite_paths(hosts.rewrite(a), mounts) for a in cmd)
        label = f"{pod.job_index}/{pod.index}"
        if several_rjobs:
            label = f"{pod.rjob['name']}:{label}"
        processes.append(Process(
            label=label, replicated_job=pod.rjob["name"], job_index=pod.job_index,
            index=pod.index, hostname=pod.hostname, pod_name=pod_name,
            container=str(container["name"]), argv=argv,
            env=tuple(env), secret_env=tuple(sorted(secret)), cwd=opts.cwd,
            log=f"{opts.run_dir}/logs/{pod.hostname}.attempt-{restart_attempt}.log",
            ports=tuple((p, mapping[(pod.hostname, p)]) for p in
                        dict.fromkeys(pod_ports[len(processes)]))))
    return Plan(jobset=name, namespace=ns, restart_attempt=restart_attempt,
                processes=tuple(processes), files=tuple(sorted(files.items())),
                dirs=tuple(dict.fromkeys(dirs)), grace_seconds=grace,
                policy=policy.from_jobset(js), notes=tuple(sorted(notes)),
                depends_on=tuple((str(rj["name"]), str(d["name"]), str(d["status"]))
                                 for rj in js["spec"]["replicatedJobs"]
                                 for d in rj.get("dependsOn") or []))
