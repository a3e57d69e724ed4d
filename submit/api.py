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
``.message`` says what is allowed), a bad ``stack``, ``outputs_file`` or ``project_dir``
included; outputs that cannot be read are a ``stack_outputs`` ``OutputsError``; anything
the cluster answers is a ``ClusterError``. No message ever
holds an env value, a secret or the kubeconfig.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from infra.contract.outputs import StackOutputs
from infra.record import field_names, record, replace
from submit.api_apply import (
    AFTER as AFTER, DONE_STATES, HELD_QUEUE as HELD_QUEUE, OWNED_KINDS as OWNED_KINDS,
    QUEUE_LABEL as QUEUE_LABEL, ClusterError as ClusterError, Submitted as Submitted, _call,
    hold as hold, submit as submit)
from submit.render import check as _check
from submit.render import option_checks
from submit.render import spec as sp
from submit.render.build import build_spec
from submit.render.spec import SpecError as BadInput
from submit.render.spec import WorkloadSpec
from submit.cluster.stack_outputs import OptionError, read

__all__ = ["BadInput", "ClusterError", "Workload", "Session", "Submitted", "Status",
           "load_outputs", "connect", "submit", "status", "wait", "hold", "release",
           "OWNED_KINDS", "QUEUE_LABEL", "AFTER", "HELD_QUEUE"]


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
    termination_grace_period: str | int | None = None  # seconds, or 90s, 2m (a duration)
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
    # --goodput: the run's name and log as variables (submit/goodput/plan.py), checked
    # against the stack's roles by build_spec
    goodput: bool = False

    def replace(self, **changes: Any) -> "Workload":
        """A copy with some options changed (``base.replace(name="b", num_slices=2)``)."""
        return replace(self, **changes)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``submit.render.build.build_spec``."""
        out = {name: getattr(self, name) for name in field_names(self)}
        out["workload"] = out.pop("name")
        if self.goodput:  # the run name and log the library keys on, before the user's own
            from submit.goodput import plan

            out["env"] = plan.env(self.name) + tuple(self.env)
        return out

    def check(self) -> None:
        """Every check that needs no stack (raises BadInput)."""
        option_checks.check_options(**self.options())

    def spec(self, outputs: StackOutputs, node_version: str | None = None) -> WorkloadSpec:
        """The checked, frozen spec for this stack (raises BadInput). ``node_version``: the
        GKE version the pool's nodes report, when known (version floors of --mount)."""
        if self.image is None and not (self.pathways and self.headless):
            raise BadInput("--image", "is required (the Python API does not build images)")
        return build_spec(outputs, **self.options(), node_version=node_version)

    def render(self, outputs: StackOutputs,
               node_version: str | None = None) -> list[dict[str, Any]]:
        """The objects to apply, in order (ConfigMap, ComputeDomain, then the JobSet)."""
        return self.verdict(outputs, node_version).rendered()

    def verdict(self, outputs: StackOutputs, node_version: str | None = None
                ) -> _check.Verdict:
        """The one check path (submit/render/check.py): the rendered objects, or the
        refusal, as for every command that sends a workload."""
        if self.image is None and not (self.pathways and self.headless):
            return _check.Verdict(refusals=(BadInput(
                "--image", "is required (the Python API does not build images)"),))
        return _check.workload(outputs, self.options(), node_version)


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
    """The stack's outputs contract, from `pulumi stack output` or a JSON file. A bad
    ``stack``, ``outputs_file`` or ``project_dir`` is a BadInput naming the option, as every
    bad value given to this module is; what the outputs themselves hold that is wrong is
    an ``OutputsError`` (submit/cluster/stack_outputs.py)."""
    try:
        return read(stack, outputs_file, project_dir)
    except OptionError as e:
        raise BadInput(e.option or "--stack", str(e)) from None


def connect(outputs: StackOutputs) -> Any:
    """A ``submit.cluster.kube.Cluster`` for the stack's cluster (imports the Kubernetes client)."""
    return _call(lambda: _cluster_class()(outputs.kubeconfig))


def _cluster_class() -> Any:
    from submit.cluster.kube import Cluster

    return Cluster


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
