"""A workload as the user asked for it, checked against the stack before anything is sent.

``build_spec`` turns the CLI's raw option values and the stack's outputs contract into a
frozen WorkloadSpec, or raises SpecError naming the option, the value and what is allowed.
Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from infra import catalog, pod_resources
from infra.contract import SlicePoolInfo, StackOutputs
from infra.images import image_problem
from submit import mounts as mounts_mod

CONFIG_MOUNT = "/etc/accelstack/config"  # where --config-file lands in every container
REPLICATED_JOB = {"tpu": "slice", "gpu": "worker", "cpu": "worker"}
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_SECRET = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_CPU = re.compile(r"^([0-9]+(\.[0-9]{1,3})?|[0-9]+m)\Z")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?\Z")
MAX_CONFIG_BYTES = 1024 * 1024 - 4096  # a ConfigMap holds at most 1 MiB


class SpecError(ValueError):
    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None = None
    secret: str | None = None
    secret_key: str | None = None


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    namespace: str
    queue: str
    pool: SlicePoolInfo
    replicas: int  # slices (TPU) or 1 (GPU/CPU)
    parallelism: int  # pods per replica: VMs per slice, or nodes
    image: str
    command: str | None
    env: tuple[EnvVar, ...] = ()
    priority: str | None = None
    max_restarts: int = 0
    retriable_exit_codes: tuple[int, ...] = ()
    ttl_seconds: int | None = None
    termination_grace_seconds: int | None = None
    config_file_name: str | None = None
    config_file_data: str | None = None
    shm_size: str | None = None
    cpu: str | None = None  # requests per pod (Kueue counts them against CPU quotas)
    memory: str | None = None
    labels: tuple[tuple[str, str], ...] = field(default=())
    mounts: tuple[mounts_mod.Mount, ...] = ()  # --mount, checked (submit/mounts.py)
    service_account: str | None = None  # the namespace's job account, from the contract

    @property
    def replicated_job(self) -> str:
        return REPLICATED_JOB[self.pool.kind]


POD_NAME_SUFFIX = 6  # the "-abcde" the Job controller appends to each pod's name


def hostname_budget(replicas: int, parallelism: int, kind: str) -> int:
    """The longest workload name JobSet accepts for this shape.

    Pod hostnames are <jobset>-<replicatedJob>-<jobIndex>-<podIndex>; JobSet's admission
    webhook requires that plus the pod's random suffix to stay within 63 characters.
    """
    suffix = f"-{REPLICATED_JOB[kind]}-{replicas - 1}-{parallelism - 1}"
    return 63 - len(suffix) - POD_NAME_SUFFIX


def _positive(option: str, value: int | None, minimum: int = 0) -> None:
    if value is not None and value < minimum:
        raise SpecError(option, f"{value} is below {minimum}")


def parse_env(items: Sequence[str], option: str = "--env") -> list[EnvVar]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SpecError(option, f"{item!r} is not KEY=VALUE")
        if not _ENV_NAME.match(name):
            raise SpecError(option, f"{name!r} is not a valid environment variable name "
                            "(letters, digits, '_', '-' and '.', not starting with a digit)")
        out.append(EnvVar(name, value))
    return out


def parse_env_file(path: str) -> list[EnvVar]:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise SpecError("--env-file", f"cannot read {path}: {e.strerror}") from None
    out = []
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("export "):
            text = text[len("export "):].lstrip()
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not _ENV_NAME.match(name):
            raise SpecError("--env-file", f"{path}:{n}: {line!r} is not KEY=VALUE with a valid "
                            "variable name")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append(EnvVar(name, value))
    return out


def parse_secret_env(items: Sequence[str]) -> list[EnvVar]:
    out = []
    for item in items:
        name, sep, ref = item.partition("=")
        secret, slash, key = ref.partition("/")
        if not sep or not slash or not name or not secret or not key:
            raise SpecError("--secret-env", f"{item!r} is not NAME=SECRET/KEY")
        if not _ENV_NAME.match(name):
            raise SpecError("--secret-env", f"{name!r} is not a valid environment variable name")
        if not _SECRET.match(secret) or len(secret) > 253:
            raise SpecError("--secret-env", f"{secret!r} is not a Secret name (a DNS-1123 "
                            "subdomain)")
        if not _SECRET_KEY.match(key):
            raise SpecError("--secret-env", f"{key!r} is not a Secret key (letters, digits, "
                            "'-', '_' and '.')")
        out.append(EnvVar(name, secret=secret, secret_key=key))
    return out


def parse_exit_codes(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    codes = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or not 1 <= int(part) <= 255:
            raise SpecError("--restart-on-exit-codes", f"{part!r} is not an exit code from 1 "
                            "to 255 (give a comma-separated list such as 42,43)")
        codes.append(int(part))
    return tuple(sorted(set(codes)))


def pick_pool(outputs: StackOutputs, accelerator: str, pool_name: str | None) -> SlicePoolInfo:
    try:
        accel = catalog.resolve(accelerator)
    except catalog.UnknownAccelerator as e:
        raise SpecError("--accelerator", str(e)) from None
    pools = [p for p in outputs.slice_pools if p.accelerator == accel.name]
    have = ", ".join(sorted({p.accelerator for p in outputs.slice_pools})) or "none"
    if not pools:
        raise SpecError("--accelerator", f"{accelerator!r} ({accel.name}) is not a slice type "
                        f"of stack {outputs.stack!r}; it has: {have}")
    if pool_name is not None:
        chosen = [p for p in pools if p.name == pool_name]
        if not chosen:
            names = ", ".join(p.name for p in pools)
            raise SpecError("--pool", f"{pool_name!r} is not a {accel.name} pool of stack "
                            f"{outputs.stack!r}; its {accel.name} pools: {names}")
        return chosen[0]
    if len(pools) > 1:
        names = ", ".join(f"{p.name} ({p.capacity_mode})" for p in pools)
        raise SpecError("--pool", f"stack {outputs.stack!r} has several {accel.name} pools; "
                        f"choose one of: {names}")
    return pools[0]


def build_spec(
    outputs: StackOutputs, *, workload: str, accelerator: str, image: str,
    command: str | None = None, num_slices: int | None = None, num_nodes: int | None = None,
    pool: str | None = None, namespace: str | None = None, queue: str | None = None,
    env: Sequence[str] = (), env_file: str | None = None, secret_env: Sequence[str] = (),
    priority: str | None = None, max_restarts: int = 0, restart_on_exit_codes: str | None = None,
    ttl: int | None = None, termination_grace_period: int | None = None,
    config_file: str | None = None, shm_size: str | None = None,
    cpu: str | None = None, memory: str | None = None, mount: Sequence[str] = (),
) -> WorkloadSpec:
    """Check every option against the stack and return the workload to render."""
    chosen = pick_pool(outputs, accelerator, pool)
    dws = chosen.capacity_mode in ("flex-start", "queued")
    if chosen.kind == "tpu":
        if num_nodes is not None:
            raise SpecError("--num-nodes", f"applies to GPU and CPU pools; {chosen.accelerator} "
                            "is a TPU slice: use --num-slices")
        replicas = 1 if num_slices is None else num_slices
        parallelism = chosen.vms_per_slice
        if replicas < 1:
            raise SpecError("--num-slices", f"{replicas} is below 1")
        if replicas > chosen.slice_count and not dws:
            raise SpecError("--num-slices", f"{replicas} is more than the {chosen.slice_count} "
                            f"{chosen.accelerator} slices pool {chosen.name} has")
    else:
        if num_slices is not None:
            raise SpecError("--num-slices", f"applies to TPU slices; {chosen.accelerator} is a "
                            f"{chosen.kind.upper()} pool: use --num-nodes")
        replicas, parallelism = 1, 1 if num_nodes is None else num_nodes
        limit = chosen.slice_count * chosen.vms_per_slice
        if parallelism < 1:
            raise SpecError("--num-nodes", f"{parallelism} is below 1")
        if parallelism > limit and not dws:
            raise SpecError("--num-nodes", f"{parallelism} is more than the {limit} nodes pool "
                            f"{chosen.name} can hold")

    budget = hostname_budget(replicas, parallelism, chosen.kind)
    if not DNS_1035.match(workload):
        raise SpecError("--workload", f"{workload!r} is not a DNS-1035 label (lowercase letters,"
                        " digits and '-', starting with a letter and ending with a letter or "
                        "digit)")
    if len(workload) > budget:
        raise SpecError("--workload", f"{workload!r} is {len(workload)} characters; with "
                        f"{replicas} x {parallelism} pods the name may have at most {budget} so "
                        "that every pod name stays within 63 characters")

    problem = image_problem(image)
    if problem:
        raise SpecError("--image", problem)
    if command is not None and not command.strip():
        raise SpecError("--command", "is empty")

    ns = namespace or outputs.workload_namespace
    q = queue
    if q is None:
        lq = outputs.local_queue(ns)
        if lq is None:
            known = ", ".join(sorted({x.namespace for x in outputs.local_queues}))
            raise SpecError("--namespace", f"{ns!r} has no LocalQueue in stack "
                            f"{outputs.stack!r}; namespaces with queues: {known}")
        q = lq.name
    elif not any(x.name == q and x.namespace == ns for x in outputs.local_queues):
        known = ", ".join(x.name for x in outputs.local_queues if x.namespace == ns) or "none"
        raise SpecError("--queue", f"{q!r} is not a LocalQueue of stack {outputs.stack!r} in "
                        f"namespace {ns!r}; its queues there: {known}")
    if priority is not None and priority not in outputs.priority_classes:
        raise SpecError("--priority", f"{priority!r} is not a priority class of the stack; "
                        f"allowed: {', '.join(outputs.priority_classes)}")
    _positive("--max-restarts", max_restarts)
    _positive("--ttl", ttl)
    _positive("--termination-grace-period", termination_grace_period)
    if shm_size is not None and not _QUANTITY.match(shm_size):
        raise SpecError("--shm-size", f"{shm_size!r} is not a quantity such as 16Gi")
    if cpu is not None and not _CPU.match(cpu):
        raise SpecError("--cpu", f"{cpu!r} is not a CPU quantity such as 30 or 3500m")
    if memory is not None and not _QUANTITY.match(memory):
        raise SpecError("--memory", f"{memory!r} is not a quantity such as 100Gi")
    too_big = pod_resources.check_request(chosen.machine_type, cpu, memory)
    if too_big is not None:
        raise SpecError(*too_big)

    env_vars = parse_env_file(env_file) if env_file else []
    env_vars += parse_env(env) + parse_secret_env(secret_env)
    seen: dict[str, EnvVar] = {}
    for var in env_vars:  # later definitions win, as with docker --env-file then --env
        seen[var.name] = var

    cfg_name = cfg_data = None
    if config_file is not None:
        path = Path(config_file)
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise SpecError("--config-file", f"cannot read {config_file}: {e.strerror}") from None
        if len(raw) > MAX_CONFIG_BYTES:
            raise SpecError("--config-file", f"{config_file} is {len(raw)} bytes; a ConfigMap "
                            "holds at most 1 MiB")
        try:
            cfg_data = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SpecError("--config-file", f"{config_file} is not UTF-8 text") from None
        cfg_name = path.name
        if not _SECRET_KEY.match(cfg_name):
            raise SpecError("--config-file", f"{cfg_name!r} is not a valid ConfigMap key "
                            "(letters, digits, '-', '_' and '.')")

    try:
        checked = mounts_mod.parse(
            mount, outputs.storage, ns, reserved=("/dev/shm", CONFIG_MOUNT),
            host_network=mounts_mod.uses_host_network(chosen.kind, chosen.vms_per_slice,
                                                      replicas))
    except mounts_mod.MountError as e:
        raise SpecError("--mount", str(e)) from None

    return WorkloadSpec(
        name=workload, namespace=ns, queue=q, pool=chosen, replicas=replicas,
        parallelism=parallelism, image=image, command=command, env=tuple(seen.values()),
        priority=priority, max_restarts=max_restarts,
        retriable_exit_codes=parse_exit_codes(restart_on_exit_codes), ttl_seconds=ttl,
        termination_grace_seconds=termination_grace_period, config_file_name=cfg_name,
        config_file_data=cfg_data, shm_size=shm_size, cpu=cpu, memory=memory,
        mounts=checked, service_account=outputs.storage.service_accounts.get(ns),
    )
