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
What differs from the cluster is listed in ``Plan.notes`` and in the README. Each step has a
module beside this one: pods.py (the pods and their metadata), environment.py (env and
command), volumes.py (mounts), hosts.py (DNS names and ports); errors.py holds PlanError.
"""

from __future__ import annotations

import copy
import re
import uuid
from typing import Any, Callable, Sequence

from infra.record import field, record
from submit.local import policy
from submit.local.environment import choose_container, container_env, expand, injected
from submit.local.errors import PlanError
from submit.local.hosts import Hosts, port_map, port_vars
from submit.local.pods import Pod, dns_enabled, pod_suffix, pods_of, subdomain_of
from submit.local.volumes import is_local_checkpoint, local_mounts, rewrite_paths

DEFAULT_GRACE_SECONDS = 30  # a pod's terminationGracePeriodSeconds when unset


@record
class Options:
    run_dir: str  # logs, ConfigMap files and emptyDir directories go under it
    cwd: str  # where commands run (the image's working directory does not exist here)
    mounts: tuple[tuple[str, str], ...] = ()  # --local-mount: volume name -> local directory
    local_env: tuple[tuple[str, str], ...] = ()  # where secretKeyRef values are looked up
    container: str | None = None  # the container to run (default: "main", else the first)


@record
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


@record
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


# -- the workload -----------------------------------------------------------------------------


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


# -- the plan ---------------------------------------------------------------------------------


def build(objects: Sequence[Any], opts: Options, restart_attempt: int,
          free_port: Callable[[], int], source: str = "--from") -> Plan:
    """The processes of one attempt of the workload (restart_attempt = JobSet restarts)."""
    js, cms = split_objects(objects, source)
    name = js["metadata"]["name"]
    ns = js["metadata"].get("namespace", "default")
    js_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"accelstack-local/{ns}/{name}"))
    pods = pods_of(js, restart_attempt, js_uid)
    # Ports several local processes would bind: each (pod, port) gets a free port of its own.
    pod_ports = [(pod.hostname, _declared_ports(pod, opts.container)) for pod in pods]
    mapping = port_map(pod_ports, free_port)
    subdomain, dns = subdomain_of(js), dns_enabled(js)
    w = _Workload(
        name=name, namespace=ns, uid=js_uid, attempt=restart_attempt, cms=cms, opts=opts,
        subdomain=subdomain, dns=dns, several_rjobs=len(js["spec"]["replicatedJobs"]) > 1,
        hosts=Hosts([p.hostname for p in pods] if dns else [], subdomain, ns, mapping))
    files: dict[str, str] = {}
    dirs: list[str] = [f"{opts.run_dir}/logs"]
    notes: set[str] = set()
    processes = [_process(w, pod, ports, files, dirs, notes)
                 for pod, (_, ports) in zip(pods, pod_ports)]
    return Plan(jobset=name, namespace=ns, restart_attempt=restart_attempt,
                processes=tuple(processes), files=tuple(sorted(files.items())),
                dirs=tuple(dict.fromkeys(dirs)), grace_seconds=_grace_seconds(pods),
                policy=policy.from_jobset(js), notes=tuple(sorted(notes)),
                depends_on=tuple((str(rj["name"]), str(d["name"]), str(d["status"]))
                                 for rj in js["spec"]["replicatedJobs"]
                                 for d in rj.get("dependsOn") or []))


@record
class _Workload:
    """What every pod's process is computed against."""
    name: str
    namespace: str
    uid: str
    attempt: int
    cms: dict[str, dict[str, Any]]
    opts: Options
    subdomain: str
    dns: bool
    several_rjobs: bool
    hosts: Hosts


def _pod_spec(pod: Pod) -> dict[str, Any]:
    return pod.rjob["template"]["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def _declared_ports(pod: Pod, container: str | None) -> list[int]:
    c, _ = choose_container(_pod_spec(pod), container)
    return [int(p.get("hostPort") or p["containerPort"]) for p in c.get("ports") or []]


def _grace_seconds(pods: Sequence[Pod]) -> int:
    """The last pod template's terminationGracePeriodSeconds that is set."""
    grace = DEFAULT_GRACE_SECONDS
    for pod in pods:
        grace = int(_pod_spec(pod).get("terminationGracePeriodSeconds", grace))
    return grace


def _process(w: _Workload, pod: Pod, ports: list[int], files: dict[str, str],
             dirs: list[str], notes: set[str]) -> Process:
    """One pod's process; its ConfigMap files, directories and notes are added to the
    workload's."""
    container, skipped = choose_container(_pod_spec(pod), w.opts.container)
    for s in skipped:
        notes.add(f"container {s} is not run (only {container['name']} runs locally)")
    pod_name = f"{pod.hostname}-{pod_suffix(f'{w.uid}/{pod.hostname}/{w.attempt}')}"
    pod_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, pod_name))
    env, secret = container_env(container, pod, pod_name, w.namespace, pod_uid, w.cms,
                                dict(w.opts.local_env))
    declared = {k for k, _ in env}
    env += injected(pod, container, w.name, w.subdomain, w.dns, declared)
    # The command sees every variable of the pod spec (not HOSTNAME, set below by the
    # container runtime, which the kubelet's expansion does not know).
    lookup = dict(env)
    cmd = [expand(str(a), lookup) for a in
           list(container.get("command") or []) + list(container.get("args") or [])]
    if "HOSTNAME" not in declared:
        env.insert(0, ("HOSTNAME", pod.hostname))
    if not cmd:
        raise PlanError("--command", "the container has no command: run-local runs the "
                        "command on this machine and cannot use the image's entrypoint")
    stand_ins: set[str] = set()
    mounts = local_mounts(_pod_spec(pod), container, pod, w.cms, dict(w.opts.mounts),
                          w.opts.run_dir, files, dirs, stand_ins)
    if stand_ins:
        notes.add(f"GPU node volumes {', '.join(sorted(stand_ins))} are empty stand-in "
                  "directories (the node's drivers and GPUDirect files exist only on GKE "
                  "GPU nodes; pass --local-mount NAME=DIR to use your own)")
    if any(is_local_checkpoint(v) for v in _pod_spec(pod).get("volumes") or []):
        notes.add("the multi-tier checkpointing volume is a directory per process, kept "
                  "across restarts; checkpoints are not replicated to other slices nor "
                  "backed up to the bucket (docs/checkpointing.md)")
    moved = port_vars(env, w.hosts)
    env = [(k, moved.get(k) or rewrite_paths(w.hosts.rewrite(v), mounts))
           if k not in secret else (k, v) for k, v in env]
    label = f"{pod.job_index}/{pod.index}"
    if w.several_rjobs:
        label = f"{pod.rjob['name']}:{label}"
    return Process(
        label=label, replicated_job=pod.rjob["name"], job_index=pod.job_index,
        index=pod.index, hostname=pod.hostname, pod_name=pod_name,
        container=str(container["name"]), argv=tuple(
            rewrite_paths(w.hosts.rewrite(a), mounts) for a in cmd),
        env=tuple(env), secret_env=tuple(sorted(secret)), cwd=w.opts.cwd,
        log=f"{w.opts.run_dir}/logs/{pod.hostname}.attempt-{w.attempt}.log",
        ports=tuple((p, w.hosts.ports[(pod.hostname, p)]) for p in dict.fromkeys(ports)))
