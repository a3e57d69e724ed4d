"""Job groups: one workload of several roles, rendered as one JobSet of several replicated
jobs. Pure: reads the group file, checks it, renders; no cluster.

The file (YAML)::

    name: train-eval
    workload:                 # what every role shares: any `create` option
      image: python:3.12
      priority: high
    roles:                    # one block per role, in any order
      trainer:
        accelerator: v5litepod-16
        count: 2              # slices (TPU) or nodes (GPU/CPU)
        command: python train.py
      evaluator:
        accelerator: l4-1
        command: python eval.py
        env: {EVAL_EVERY: "100"}
        depends-on: {trainer: Ready}   # start once every trainer pod is ready

Kueue admits a JobSet as one Workload with a PodSet per replicated job, so the roles are
gang-scheduled: quota for all of them or none. ``depends-on`` is JobSet's ``dependsOn``
(v0.12.0 CRD, ../shared/reference/crds): a replicated job is created only once the one it
names is ``Ready`` (all its pods ready) or ``Complete``; JobSet allows one dependency per
replicated job and none on the first, so roles are ordered so that each comes after the
one it depends on, and a cycle is an error.

Options that are the JobSet's rather than a role's (namespace, queue, priority,
max-restarts, restart-on-exit-codes, ttl, config-file) are allowed only under
``workload``. Every role's pods get ``ACCELSTACK_ROLE``, ``ACCELSTACK_ROLES``,
``ACCELSTACK_COORDINATOR`` (the first role's first pod) and ``ACCELSTACK_<ROLE>_HOSTS``
(each role's pod hostnames, comma-separated), beside what a single workload gets (whose
JAX coordinator is the role's own first pod: each role is its own JAX program).
"""

from __future__ import annotations

import re
from typing import Any

from infra.catalog import tables as catalog
from infra.contract.outputs import StackOutputs
from infra.record import field, record
from submit import api
from submit.render import spec as sp
from submit.experiment.expand import ExperimentError as GroupError
from submit.experiment.expand import OPTIONS, _construct, _option, unknown
from submit.render.jobset import EXCLUSIVE_TOPOLOGY

__all__ = ["GroupError", "Group", "Role", "load", "render_group"]

TOP_KEYS = ("name", "workload", "roles")
JOBSET_LEVEL = ("namespace", "queue", "priority", "max-restarts", "restart-on-exit-codes",
                "ttl", "config-file")
ROLE_KEYS = tuple(o for o in OPTIONS if o not in JOBSET_LEVEL) + ("count", "depends-on")
DEPENDS_STATUS = ("Ready", "Complete")  # the CRD's enum for dependsOn[].status
ROLES = "accelstack.dev/roles"  # annotation: the roles, in order
_ROLE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")


@record
class Role:
    name: str
    options: dict[str, Any]
    count: int | None
    depends_on: tuple[str, str] | None  # (role, Ready|Complete)
    line: int


@record
class Group:
    name: str
    file: str
    shared: dict[str, Any]
    roles: tuple[Role, ...]  # dependencies first
    lines: dict[str, int] = field(default_factory=dict)  # key path -> line

    def line_of(self, role: Role, option: str) -> int | None:
        """Where the value behind a bad option of ``role`` was written: the role's key (its
        ``count`` for slices and nodes), else the shared one under workload, else the role."""
        key = option.lstrip("-")
        keys = ("count", key) if key in ("num-slices", "num-nodes") else (key,)
        for k in keys:
            if f"roles.{role.name}.{k}" in self.lines:
                return self.lines[f"roles.{role.name}.{k}"]
        return self.lines.get(f"workload.{key}") or role.line or None


def load(file: str, text: str) -> Group:
    import yaml

    try:
        node = yaml.compose(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        raise GroupError(file, mark.line + 1 if mark else None, f"not YAML: {e.problem}") from None
    lines: dict[str, int] = {}
    data = _construct(node, "", lines, file) if node is not None else None
    if not isinstance(data, dict):
        raise GroupError(file, 1, "must be a mapping with name, workload and roles")

    def bad(path: str, message: str) -> GroupError:
        return GroupError(file, lines.get(path), f"{path}: {message}")

    for key in data:
        if key not in TOP_KEYS:
            raise bad(key, unknown("key", key, TOP_KEYS))
    name = data.get("name")
    if not isinstance(name, str):
        raise GroupError(file, None, "name: give the workload's name")
    try:
        sp.check_workload_name(name, "name", new=True)
    except sp.SpecError as e:
        raise bad("name", e.message) from None
    shared_raw = data.get("workload") or {}
    if not isinstance(shared_raw, dict):
        raise bad("workload", "give a mapping of create options")
    shared = {k: _option(k, v, f"workload.{k}", bad, file) for k, v in shared_raw.items()}
    roles_raw = data.get("roles")
    if not isinstance(roles_raw, dict) or not roles_raw:
        raise GroupError(file, lines.get("roles"), "roles: give one block per role")
    roles: list[Role] = []
    for role, block in roles_raw.items():
        path = f"roles.{role}"
        if not _ROLE.match(role) or len(role) > 20:
            raise bad(path, f"{role!r} is not a role name (lowercase letters, digits and '-', "
                      "starting with a letter, at most 20 characters)")
        if not isinstance(block, dict):
            raise bad(path, "give a mapping of the role's options")
        opts: dict[str, Any] = {}
        count = None
        depends = None
        for key, value in block.items():
            kpath = f"{path}.{key}"
            if key in JOBSET_LEVEL:
                raise bad(kpath, "is the whole JobSet's: set it under workload")
            if key not in ROLE_KEYS:
                raise bad(kpath, unknown("option", key, ROLE_KEYS))
            if key == "count":
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise bad(kpath, f"{value!r} is not a whole number from 1")
                count = value
            elif key == "depends-on":
                if isinstance(value, str):
                    value = {value: "Ready"}
                if not isinstance(value, dict) or len(value) != 1:
                    raise bad(kpath, "give one role and its status, such as {trainer: Ready} "
                              "(JobSet supports one dependency per replicated job)")
                (other, status), = value.items()
                if status not in DEPENDS_STATUS:
                    raise bad(kpath, f"{status!r} is not one of {', '.join(DEPENDS_STATUS)}")
                if other not in roles_raw or other == role:
                    raise bad(kpath, f"{other!r} is not another role; roles: "
                              f"{', '.join(roles_raw)}")
                depends = (str(other), str(status))
            else:
                opts[key] = _option(key, value, kpath, bad, file)
        merged = {**shared, **opts}
        if "env" in opts and "env" in shared:
            merged["env"] = tuple(shared["env"]) + tuple(opts["env"])
        for required in ("accelerator", "image"):
            if required not in merged:
                raise bad(path, f"{required} is required (in the role or under workload)")
        roles.append(Role(role, merged, count, depends, lines.get(path, 0)))
    return Group(name, file, shared, tuple(_ordered(roles, file)), lines)


def _ordered(roles: list[Role], file: str) -> list[Role]:
    """Roles with each after the one it depends on (file order otherwise); a cycle fails."""
    by_name = {r.name: r for r in roles}
    for r in roles:
        seen = [r.name]
        cur = r
        while cur.depends_on is not None:
            nxt = cur.depends_on[0]
            if nxt in seen:
                cycle = " -> ".join(seen[seen.index(nxt):] + [nxt])
                raise GroupError(file, r.line, f"roles.{r.name}.depends-on: dependency cycle "
                                 f"({cycle})")
            seen.append(nxt)
            cur = by_name[nxt]
    out: list[Role] = []
    placed: set[str] = set()
    while len(out) < len(roles):
        for r in roles:
            if r.name not in placed and (r.depends_on is None or r.depends_on[0] in placed):
                out.append(r)
                placed.add(r.name)
                break
    if out[0].depends_on is not None:  # unreachable: some role has no dependency
        raise GroupError(file, out[0].line, "every role depends on another")
    return out


def _workload(group: Group, role: Role) -> api.Workload:
    kwargs = {k.replace("-", "_"): v for k, v in role.options.items()}
    if role.count is not None:
        try:
            kind = catalog.resolve(str(role.options["accelerator"])).kind
        except catalog.UnknownAccelerator as e:
            raise sp.SpecError("--accelerator", str(e)) from None
        kwargs["num_slices" if kind == "tpu" else "num_nodes"] = role.count
    return api.Workload(name=group.name, **kwargs)


def _hosts(name: str, role: str, replicas: int, parallelism: int) -> list[str]:
    return [f"{name}-{role}-{j}-{i}.{name}" for j in range(replicas) for i in range(parallelism)]


def render_group(group: Group, outputs: StackOutputs) -> list[dict[str, Any]]:
    """The group's objects: its config ConfigMap (if any), then one JobSet of one
    replicated job per role. Raises GroupError naming the role."""
    specs: list[tuple[Role, sp.WorkloadSpec]] = []
    objects: list[list[dict[str, Any]]] = []
    for role in group.roles:
        try:
            verdict = _workload(group, role).verdict(outputs)  # the one check path
            verdict.rendered()  # its first refusal, raised
            assert verdict.spec is not None
            spec = verdict.spec
        except sp.SpecError as e:
            raise GroupError(group.file, group.line_of(role, e.option),
                             f"roles.{role.name}: {e.option}: {e.message}") from None
        budget = 63 - len(f"-{role.name}-{spec.replicas - 1}-{spec.parallelism - 1}") \
            - sp.POD_NAME_SUFFIX
        if len(group.name) > budget:
            raise GroupError(group.file, role.line or None,
                             f"roles.{role.name}: the name {group.name!r} is {len(group.name)} "
                             f"characters; with this role's {spec.replicas} x "
                             f"{spec.parallelism} pods it may have at most {budget} so that "
                             "every pod name stays within 63 characters")
        specs.append((role, spec))
        objects.append(verdict.rendered())
    checkpointing = [r.name for r, s in specs if s.local_checkpoint is not None]
    if checkpointing and len(specs) > 1:
        # GKE's multi-tier checkpointing controller serves ranks only to a JobSet of exactly
        # one replicated job: its rank server skips any other ("replicated job count %d, not
        # 1. Assuming not a checkpointing job": GoogleCloudPlatform/high-scale-checkpointing-
        # controller pkg/idfile/ranks_server.go HandleJobset, read at commit 3b9737b), so
        # Orbax would wait for an init file that never comes.
        role = next(r for r, _ in specs if r.name == checkpointing[0])
        raise GroupError(group.file, group.line_of(role, "--local-checkpoint-dir"), f"roles.{role.name}: --local-checkpoint-dir needs a "
                         f"workload of one role: the multi-tier checkpointing controller "
                         f"serves ranks only to a JobSet of exactly one replicated job, and "
                         f"this group has {len(specs)} (give the checkpointing role a "
                         "workload of its own)")
    env = [{"name": "ACCELSTACK_ROLES", "value": ",".join(r.name for r, _ in specs)},
           {"name": "ACCELSTACK_COORDINATOR",
            "value": _hosts(group.name, specs[0][0].name, 1, 1)[0]}]
    for role, spec in specs:
        key = re.sub(r"[^A-Z0-9]", "_", role.name.upper())
        env.append({"name": f"ACCELSTACK_{key}_HOSTS",
                    "value": ",".join(_hosts(group.name, role.name, spec.replicas,
                                             spec.parallelism))})
    extra: list[dict[str, Any]] = []
    jobs: list[dict[str, Any]] = []
    js: dict[str, Any] = {}
    for (role, spec), objs in zip(specs, objects):
        one = objs[-1]
        for obj in objs[:-1]:
            if obj not in extra:
                if any(o["kind"] == obj["kind"] and o["metadata"]["name"] ==
                       obj["metadata"]["name"] for o in extra):
                    raise GroupError(group.file, role.line or None,
                                     f"roles.{role.name}: needs a second {obj['kind']} "
                                     f"{obj['metadata']['name']}; a group holds one")
                extra.append(obj)
        rj = one["spec"]["replicatedJobs"][0]
        rj["name"] = role.name
        annotations = one["metadata"].get("annotations") or {}
        if EXCLUSIVE_TOPOLOGY in annotations and len(specs) > 1:
            # Per replicated job, not the JobSet's: a CPU or GPU role must not get a node
            # pool per Job (JobSet concepts, "Exclusive Job to topology placement": the
            # annotation goes on the JobSet or on a ReplicatedJob's template metadata).
            rj["template"]["metadata"] = {"annotations": {
                EXCLUSIVE_TOPOLOGY: annotations[EXCLUSIVE_TOPOLOGY]}}
        if role.depends_on is not None:
            rj["dependsOn"] = [{"name": role.depends_on[0], "status": role.depends_on[1]}]
        pod = rj["template"]["spec"]["template"]
        pod["metadata"].setdefault("labels", {})["accelstack.dev/role"] = role.name
        container = pod["spec"]["containers"][0]
        user = {v.name for v in spec.env}
        container["env"] += [e for e in [{"name": "ACCELSTACK_ROLE", "value": role.name}] + env
                             if e["name"] not in user]
        jobs.append(rj)
        if not js:
            js = one
    js["spec"]["replicatedJobs"] = jobs
    annotations = js["metadata"].get("annotations") or {}
    if len(specs) > 1:
        # A one-role group keeps it on the JobSet, as `create` renders the same workload.
        annotations.pop(EXCLUSIVE_TOPOLOGY, None)
    if annotations:
        js["metadata"]["annotations"] = annotations
    else:
        js["metadata"].pop("annotations", None)
    js["metadata"].setdefault("annotations", {})[ROLES] = ",".join(r.name for r, _ in specs)
    return extra + [js]
