"""accelstack's Python API: build a workload, render it, submit it, read and wait for it.

The `submit` command line is a thin layer over this module, so a script gets exactly what
the CLI does, checks and messages included. A sweep in Python::

    from submit import api

    session = api.Session(outputs_file="outputs.json")     # or stack="dev"
    base = api.Workload(name="lr", accelerator="v5litepod-16", image="python:3.12",
                        command="python train.py")
    names = []
    for i, lr in enumerate(["1e-4", "3e-4", "1e-3"]):
        trial = base.replace(name=f"lr-{i}", env=(f"LR={lr}",))
        names.append(session.submit(trial).name)
    failed = [n for n in names if session.wait(n, timeout=7200).state != "Completed"]

Importing this module, building, checking and rendering load neither pulumi nor the
Kubernetes client (tests/test_layers.py): the client is imported on the first call that
talks to the cluster, and `pulumi` runs only when a Session reads a stack's outputs.

Errors: a bad value is a ``BadInput`` (``.option`` names the option, as the CLI does,
``.message`` says what is allowed); a problem reading the outputs is a ``stack_outputs``
``OutputsError``; anything the cluster answers is a ``ClusterError``. No message ever
holds an env value, a secret or the kubeconfig.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Sequence

from infra.contract.outputs import StackOutputs
from infra.record import field_names, record, replace
from submit.render import spec as sp
from submit.render.build import build_spec
from submit.render.jobset import render as _render
from submit.render.spec import SpecError as BadInput
from submit.render.spec import WorkloadSpec
from submit.cluster.stack_outputs import read

__all__ = ["BadInput", "ClusterError", "Workload", "Session", "Submitted", "Status",
           "load_outputs", "connect", "submit", "status", "wait", "hold", "release",
           "OWNED_KINDS", "QUEUE_LABEL", "AFTER", "HELD_QUEUE"]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# A held workload (--after, or an experiment's trial beyond its --max-running): the JobSet
# is created suspended and WITHOUT the queue-name label, its queue kept in HELD_QUEUE.
# Kueue manages only jobs that carry the label (manageJobsWithoutQueueName is false, the
# default, in the Configuration infra/specs/addons.py renders; "jobs without the
# kueue.x-k8s.io/queue-name label are ignored", Red Hat build of Kueue docs, "Configuring
# label policies for jobs"), so Kueue neither admits nor unsuspends it; `release` adds the
# label while the JobSet is still suspended (Kueue's jobframework.ValidateJobOnUpdate
# checks the queue name's immutability only for a job that is not suspended; review of
# kubernetes-sigs/kueue PR #13293) and Kueue queues it as any other workload. Not tried on
# a live cluster here.
AFTER = "accelstack.dev/after"
HELD_QUEUE = "accelstack.dev/held-queue"
OWNED_KINDS = ("ConfigMap", "ComputeDomain")  # applied before the JobSet, then owned by it
DONE_STATES = ("Completed", "Failed")


class ClusterError(Exception):
    """What the cluster answered (or did not); the message says what to do."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@record
class Workload:
    """A workload as `submit workload create` takes it: every option by its Python name
    (``--num-slices`` is ``num_slices``); ``None`` means the CLI's default."""

    name: str
    accelerator: str
    image: str | None = None
    command: str | None = None
    pool: str | None = None
    num_slices: int | None = None
    num_nodes: int | None = None
    env: tuple[str, ...] = ()  # KEY=VALUE
    env_file: str | None = None
    secret_env: tuple[str, ...] = ()  # NAME=SECRET/KEY
    priority: str | None = None
    max_restarts: int = sp.DEFAULT_MAX_RESTARTS
    restart_on_exit_codes: str | None = None
    ttl: str | int | None = None
    termination_grace_period: int | None = None
    config_file: str | None = None
    shm_size: str | None = None
    cpu: str | None = None
    memory: str | None = None
    namespace: str | None = None
    queue: str | None = None
    mount_service_account_token: bool = False
    add_capability: tuple[str, ...] = ()
    mount: tuple[str, ...] = ()  # STORE[:PATH][:ro] (submit/render/mounts.py)
    pathways: bool = False  # a Pathways JobSet (submit/render/pathways.py)
    headless: bool = False  # with pathways: no user container
    elastic_slices: int | None = None  # with pathways: slices that may fail and come back
    fleet_worker: str | None = None  # a fleet: only this worker (docs/fleets.md)
    fleet_region: str | None = None  # a fleet: only the workers of this region
    local_checkpoint_dir: str | None = None  # multi-tier checkpointing's RAM tier
    stack_traces: bool = False  # the stack-trace sidecar (docs/diagnostics.md)
    xla_dump: str | None = None  # STORE[:PATH]: XLA dumps uploaded to a store
    debug_logs: bool = False  # libtpu's debug log levels
    tensorboard: str | None = None  # STORE[:PATH]: the workload's TensorBoard log folder
    image_pull_secret: tuple[str, ...] = ()  # Secrets the kubelet pulls the images with
    # With pathways: the run's images and extra flags (docs/pathways.md)
    pathways_server_image: str | None = None
    pathways_proxy_image: str | None = None
    pathways_colocated_python: bool = False  # the stack's colocated Python sidecar
    pathways_colocated_python_image: str | None = None
    pathways_server_arg: tuple[str, ...] = ()
    pathways_proxy_arg: tuple[str, ...] = ()
    pathways_worker_arg: tuple[str, ...] = ()
    parallel_containers: int | None = None  # TPU7x: N containers per VM (docs/submitting.md)
    ml_diagnostics: bool = False  # the JobSet labeled for ML Diagnostics' webhook

    def replace(self, **changes: Any) -> "Workload":
        """A copy with some options changed (``base.replace(name="b", num_slices=2)``)."""
        return replace(self, **changes)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``submit.render.build.build_spec``."""
        out = {name: getattr(self, name) for name in field_names(self)}
        out["workload"] = out.pop("name")
        return out

    def check(self) -> None:
        """Every check that needs no stack (raises BadInput)."""
        sp.check_options(**self.options())

    def spec(self, outputs: StackOutputs, node_version: str | None = None) -> WorkloadSpec:
        """The checked, frozen spec for this stack (raises BadInput). ``node_version``: the
        GKE version the pool's nodes report, when known (version floors of --mount)."""
        if self.image is None and not (self.pathways and self.headless):
            raise BadInput("--image", "is required (the Python API does not build images)")
        return build_spec(outputs, **self.options(), node_version=node_version)

    def render(self, outputs: StackOutputs,
               node_version: str | None = None) -> list[dict[str, Any]]:
        """The objects to apply, in order (ConfigMap, ComputeDomain, then the JobSet)."""
        return _render(self.spec(outputs, node_version))


@record
class Submitted:
    name: str
    namespace: str
    queue: str | None
    held: bool = False  # created suspended, waiting for `release`


@record
class Status:
    name: str
    admission: str  # Kueue: NotQueued, Pending, QuotaReserved, Admitted, Evicted, Finished
    state: str  # JobSet: Pending, Running, Suspended, Completed, Failed
    restarts: int
    message: str = ""  # why it failed
    held: bool = False

    @property
    def done(self) -> bool:
        return self.state in DONE_STATES


def load_outputs(stack: str | None = None, outputs_file: str | None = None,
                 project_dir: str = ".") -> StackOutputs:
    """The stack's outputs contract, from `pulumi stack output` or a JSON file."""
    return read(stack, outputs_file, project_dir)


def connect(outputs: StackOutputs) -> Any:
    """A ``submit.cluster.kube.Cluster`` for the stack's cluster (imports the Kubernetes client)."""
    return _call(lambda: _cluster_class()(outputs.kubeconfig))


def _cluster_class() -> Any:
    from submit.cluster.kube import Cluster

    return Cluster


def _call(fn: Callable[[], Any]) -> Any:
    from submit.cluster.kube import KubeError

    try:
        return fn()
    except KubeError as e:
        raise ClusterError(str(e)) from None


def _env_values(node: Any, under_env: bool = False) -> list[str]:
    """The env values in rendered objects (user data that may be secret)."""
    if isinstance(node, dict):
        if under_env and isinstance(node.get("value"), str) and len(node["value"]) >= 4:
            return [node["value"]]
        return [v for k, child in node.items() for v in _env_values(child, k == "env")]
    if isinstance(node, list):
        return [v for child in node for v in _env_values(child, under_env)]
    return []


def _jobset(objs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objs if o["kind"] == "JobSet")


def hold(objs: list[dict[str, Any]], after: str | None = None) -> list[dict[str, Any]]:
    """The objects with the JobSet held: suspended, out of Kueue until ``release``.

    Kueue v0.19.2 has no workload dependencies (kubernetes-sigs/kueue issue #11024 and its
    KEP, PR #11064, are still open), so accelstack holds the JobSet itself (see AFTER)."""
    out: list[dict[str, Any]] = json.loads(json.dumps(objs))
    js = _jobset(out)
    labels = js["metadata"].setdefault("labels", {})
    annotations = js["metadata"].setdefault("annotations", {})
    annotations[HELD_QUEUE] = labels.pop(QUEUE_LABEL)
    if after:
        annotations[AFTER] = after
    js["spec"]["suspend"] = True
    return out


def submit(cluster: Any, objs: list[dict[str, Any]], replace: bool = False,
           waiting: Callable[[float], None] = time.sleep) -> Submitted:
    """Apply rendered objects; refuse to overwrite a live workload unless ``replace``
    (``waiting`` sleeps while the old one is deleted: a CLI shows progress there).

    Nothing is half-applied: a JobSet the cluster refuses leaves no ConfigMap or
    ComputeDomain behind. No message quotes an env value."""
    values = sorted(_env_values(objs), key=len, reverse=True)
    try:
        return _submit(cluster, objs, replace, waiting)
    except ClusterError as e:
        message = e.message
        for value in values:
            message = message.replace(value, "[redacted]")
        if message == e.message:
            raise
        raise ClusterError(message) from None


def _submit(cluster: Any, objs: list[dict[str, Any]], replace: bool,
            waiting: Callable[[float], None]) -> Submitted:
    js = _jobset(objs)
    ns, name = js["metadata"]["namespace"], js["metadata"]["name"]
    existing = _call(lambda: cluster.get_jobset(ns, name))
    if existing is not None:
        if not replace:
            raise ClusterError(
                f"workload {name} already exists in namespace {ns}; delete it with `submit "
                f"workload delete {name}`, or pass --replace to delete and recreate it")
        _call(lambda: cluster.delete_jobset(ns, name))
        for _ in range(120):  # foreground deletion: wait until it is gone
            if _call(lambda: cluster.get_jobset(ns, name)) is None:
                break
            waiting(1)
        for cm in (o for o in objs if o["kind"] == "ConfigMap"):
            # Its owner is gone; do not apply onto an object being garbage-collected.
            cm_name = cm["metadata"]["name"]
            _call(lambda: cluster.delete_config_map(ns, cm_name))
        for cd in (o for o in objs if o["kind"] == "ComputeDomain"):
            # A ComputeDomain's spec is immutable; the new workload gets a new one.
            cd_name = cd["metadata"]["name"]
            _call(lambda: cluster.delete_compute_domain(ns, cd_name))
    applied_owned: list[tuple[str, str]] = []
    created: str | None = None  # the JobSet, once the cluster took it
    for obj in objs:
        try:
            applied = _call(lambda obj=obj: cluster.apply(obj))  # type: ignore[misc]
            if obj["kind"] in OWNED_KINDS:
                applied_owned.append((obj["kind"], obj["metadata"]["name"]))
            if obj["kind"] == "JobSet":
                created = name
                uid = (applied.get("metadata") or {}).get("uid")
                for cm in (o for o in objs if o["kind"] in OWNED_KINDS):
                    # The ConfigMap (and an A4X ComputeDomain) go when the JobSet goes.
                    owned = json.loads(json.dumps(cm))
                    owned["metadata"]["ownerReferences"] = [{
                        "apiVersion": obj["apiVersion"], "kind": "JobSet", "name": name,
                        "uid": uid, "blockOwnerDeletion": False}]
                    _call(lambda owned=owned: cluster.apply(owned))  # type: ignore[misc]
        except ClusterError:
            # Nothing half-applied: a refused JobSet, or one whose ConfigMap could not be
            # given its owner, takes back what this call made.
            _take_back(cluster, ns, applied_owned, created)
            raise
    labels = js["metadata"].get("labels") or {}
    annotations = js["metadata"].get("annotations") or {}
    held = HELD_QUEUE in annotations
    return Submitted(name, ns, annotations[HELD_QUEUE] if held else labels.get(QUEUE_LABEL),
                     held)


def _take_back(cluster: Any, ns: str, owned: list[tuple[str, str]], jobset: str | None
               ) -> None:
    """Delete what a failed submit applied (the JobSet, when it was created), quietly: the
    error that stopped the submit is the one to report."""
    deletes: list[Callable[[], Any]] = []
    if jobset is not None:
        deletes.append(lambda: cluster.delete_jobset(ns, jobset))
    for kind, name in owned:
        delete = cluster.delete_config_map if kind == "ConfigMap" else cluster.delete_compute_domain
        deletes.append(lambda d=delete, n=name: d(ns, n))  # type: ignore[misc]
    for fn in deletes:
        try:
            _call(fn)
        except ClusterError:
            pass


def status_of(js: dict[str, Any], kueue: list[dict[str, Any]]) -> Status:
    """A JobSet's Status, given the namespace's Kueue workloads (pure)."""
    from submit.state import status as st  # late: reading a cluster's state only

    row = st.summary(js, kueue, now=time.time())
    held = HELD_QUEUE in ((js.get("metadata") or {}).get("annotations") or {})
    state = "Held" if held and row["state"] in ("Suspended", "Pending") else row["state"]
    message = st.failure_message(js) if state == "Failed" else ""
    return Status(row["name"], row["admission"], state, int(row["restarts"] or 0), message,
                  held)


def status(cluster: Any, namespace: str, name: str) -> Status:
    """The workload's admission and state (raises ClusterError if it does not exist)."""
    js = _call(lambda: cluster.get_jobset(namespace, name))
    if js is None:
        raise ClusterError(f"workload {name} not found in namespace {namespace}")
    return status_of(js, _call(lambda: cluster.list_workloads(namespace)))


def wait(cluster: Any, namespace: str, name: str, timeout: float = 3600,
         interval: float = 10.0, on_change: Callable[[Status], None] | None = None) -> Status:
    """Follow the workload (a watch, read afresh every ``interval`` seconds: see
    submit/cluster/watch.py) until it is Completed or Failed, or ``timeout`` seconds pass;
    the last Status either way (check ``.done``). ``on_change`` sees each new state."""
    from submit.cluster.watch import follow

    last = None
    now: Status | None = None
    changes = follow(cluster, namespace, name, timeout, interval)
    while (js := _call(lambda: next(changes, False))) is not False:
        if js is None:
            raise ClusterError(f"workload {name} not found in namespace {namespace}")
        now = status_of(js, _call(lambda: cluster.list_workloads(namespace)))
        key = (now.admission, now.state, now.restarts)
        if key != last and on_change is not None:
            on_change(now)
        last = key
        if now.done:
            return now
    if now is None:  # not reached: follow yields the JobSet at least once
        raise ClusterError(f"workload {name} not found in namespace {namespace}")
    return now


def release(cluster: Any, namespace: str, name: str) -> str:
    """Hand a held workload to Kueue: put its queue label back (the JobSet stays suspended
    until Kueue admits it, as any new workload). Returns the queue."""
    js = _call(lambda: cluster.get_jobset(namespace, name))
    if js is None:
        raise ClusterError(f"workload {name} not found in namespace {namespace}")
    annotations = (js.get("metadata") or {}).get("annotations") or {}
    queue = annotations.get(HELD_QUEUE)
    if queue is None:
        raise ClusterError(f"workload {name} is not held (it was not created with --after "
                           "or by an experiment's --max-running)")
    patch = {"metadata": {"labels": {QUEUE_LABEL: queue},
                          "annotations": {HELD_QUEUE: None}}}
    _call(lambda: cluster.patch_jobset(namespace, name, patch))
    return str(queue)


class Session:
    """A stack's outputs and cluster, each loaded on first use: the CLI's context."""

    def __init__(self, stack: str | None = None, outputs_file: str | None = None,
                 project_dir: str = ".", *, outputs: StackOutputs | None = None) -> None:
        self.stack = stack
        self.outputs_file = outputs_file
        self.project_dir = project_dir
        self._outputs = outputs
        self._cluster: Any = None
        self._pins: dict[str, str] = {}  # image tag -> the digest this session runs

    @property
    def outputs(self) -> StackOutputs:
        if self._outputs is None:
            self._outputs = load_outputs(self.stack, self.outputs_file, self.project_dir)
        return self._outputs

    @property
    def cluster(self) -> Any:
        if self._cluster is None:
            self._cluster = connect(self.outputs)
        return self._cluster

    def namespace(self, namespace: str | None = None) -> str:
        return namespace or self.outputs.workload_namespace

    def render(self, workload: Workload) -> list[dict[str, Any]]:
        return workload.render(self.outputs)

    def submit(self, workload: Workload | list[dict[str, Any]], replace: bool = False,
               after: str | None = None, resolve_image: bool | None = None) -> Submitted:
        """Render (if given a Workload) and apply; ``after``: hold it until `release`.
        A Workload's image given by tag runs by its digest, resolved now with the bundler's
        registry client (the tag kept in a pod annotation), as `submit workload create`
        does, so every worker and restart runs the same bytes. A tag is resolved once per
        session: every trial of a sweep submitted through it runs the same image even if
        the tag moves meanwhile. ``resolve_image=False`` keeps the tag; by default the
        environment's ACCELSTACK_RESOLVE_IMAGE decides, as for the CLI (on unless 0, false,
        no or off)."""
        objs = self.render(workload) if isinstance(workload, Workload) else workload
        if resolve_image is None:
            from submit.image_pins import resolve_by_default  # late: a real submit only

            resolve_image = resolve_by_default()
        if resolve_image and isinstance(workload, Workload) and workload.image:
            from submit.image_pins import pin_image

            objs = pin_image(objs, workload.image, self._pins)
        if after is not None:
            objs = hold(objs, after)
        return submit(self.cluster, objs, replace)

    def status(self, name: str, namespace: str | None = None) -> Status:
        return status(self.cluster, self.namespace(namespace), name)

    def wait(self, name: str, namespace: str | None = None, timeout: float = 3600,
             interval: float = 10.0, on_change: Callable[[Status], None] | None = None
             ) -> Status:
        return wait(self.cluster, self.namespace(namespace), name, timeout, interval,
                    on_change)

    def release(self, name: str, namespace: str | None = None) -> str:
        return release(self.cluster, self.namespace(namespace), name)

    def delete(self, name: str, namespace: str | None = None) -> None:
        ns = self.namespace(namespace)
        _call(lambda: self.cluster.delete_jobset(ns, name))
