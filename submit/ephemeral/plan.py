"""What an ephemeral run does, decided before anything runs: pure, no Pulumi, no cluster.

A run is named; its stack is named after it (one name, one stack, one cluster: a rerun of
the name after a crash finds the same stack, so it resumes it instead of leaking a second
cluster). The stack is born with its expiry, owner and the command that made it in its
stack tags, so that a reaper (``submit reap``) finds it in the backend when nothing else
will: a process that was killed cannot tear anything down. The exit codes of ``submit
run`` are decided here and nowhere else.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime, timedelta, timezone
from enum import IntEnum
from typing import Any, Callable, Mapping, Sequence

import yaml

from infra.record import field, record

NAMESPACE = "accelstack"


class Exit(IntEnum):
    """`submit run`'s exit codes (docs/ephemeral.md has the table). Codes 1-4 mean what they
    mean for `submit workload wait`; a teardown that did not finish wins over everything,
    since it is the one that costs money."""

    OK = 0  # the work succeeded (torn down, or kept with --keep)
    # Refused before creating anything: a stack in use, no pulumi, a backend error (one that
    # refuses to prepare the stack before `up`, too: the stack it made is removed again).
    ERROR = 1
    USAGE = 2  # a bad option or file, found before anything runs
    WORK_FAILED = 3  # the workload failed; torn down
    TIMEOUT = 4  # --timeout passed before the workload finished; torn down
    INFRA_FAILED = 5  # `up` failed, the outputs or the cluster could not be used; torn down
    TEARDOWN_FAILED = 6  # destroy failed or was stopped: resources may remain (command printed)
    INTERRUPTED = 130  # Ctrl-C (SIGINT) once: torn down
    TERMINATED = 143  # SIGTERM: torn down


# Stack tags. Pulumi's rules: names of at most 40 of [a-zA-Z0-9-_.:], values of at most 256
# characters (ValidateStackTags in pulumi/pulumi; the fake CLI enforces the same).
TAG_EPHEMERAL = "accelstack:ephemeral"
TAG_EXPIRES = "accelstack:expires"
TAG_OWNER = "accelstack:owner"
TAG_COMMAND = "accelstack:command"
TAG_RUN = "accelstack:run"  # the run holding the stack: "RUN-ID USER@HOST pid PID"
TAG_STACK_FILE = "accelstack:stack-file"
TAG_VALUE_MAX = 256

# A run's name is its stack's name and its cluster's name (clusterName): a GKE name, kept
# to 24 characters because the program derives longer names from it (the node service
# account and the network get suffixes); the program checks those again at `up`.
RUN_NAME = re.compile(r"^[a-z](?:[-a-z0-9]{0,22}[a-z0-9])?\Z")
DEFAULT_TTL = 6 * 3600

# A destroy the cloud refused for a reason that passes: Google's retry guidance names HTTP
# 408, 429 and 5xx as transient (https://cloud.google.com/storage/docs/retry-strategy,
# "Response"); GKE refuses an operation while another runs on the same cluster
# ("Operation operation-... is currently deleting a node pool for cluster X. Please wait and
# try again once it is done., failedPrecondition", hashicorp/terraform-provider-google issue
# 10366; "Cluster is running incompatible operation ... CLUSTER_ALREADY_HAS_OPERATION",
# kubernetes-sigs/cluster-api-provider-gcp issue 1363).
TRANSIENT = re.compile(
    r"googleapi: Error (?:408|429|5\d\d)\b|is currently \w+ing .* Please wait and try again|"
    r"CLUSTER_ALREADY_HAS_OPERATION|rateLimitExceeded|connection reset by peer|"
    r"i/o timeout|TLS handshake timeout", re.I)
RETRY_DELAYS = (15.0, 60.0, 120.0)  # seconds before the 2nd, 3rd and 4th destroy


# Where ephemeral stacks keep their Pulumi project settings and stack config files, beside
# the project and git-ignored: never stackConfigDir (stacks/), where a run's config file would
# pass for a real stack (CI's per-stack jobs list stacks/Pulumi.*.yaml). The CLI writes a
# stack's config file on `config set-all` and deletes it on `stack rm`.
RUNS_DIR = ".accelstack/runs"


def runs_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The project's Pulumi.yaml as seen from RUNS_DIR: the same project (name, runtime),
    its program and virtualenv reached from two directories down, config beside it."""
    up = "../../"
    out = {k: v for k, v in settings.items() if k != "stackConfigDir"}
    out["main"] = up + str(settings.get("main") or "")
    runtime = settings.get("runtime")
    if isinstance(runtime, dict) and isinstance(runtime.get("options"), dict):
        options = dict(runtime["options"])
        if isinstance(options.get("virtualenv"), str) and not options["virtualenv"].startswith("/"):
            options["virtualenv"] = up + options["virtualenv"]
        out["runtime"] = {**runtime, "options": options}
    return out


class PlanError(ValueError):
    """A bad option: ``option`` names it, the message says what is allowed."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


@record
class RunPlan:
    name: str  # the run, its stack and its cluster
    project_dir: str
    stack_file: str  # as given (the tag keeps it relative to the project when it can)
    config: Mapping[str, Any]  # namespaced keys -> values, overrides applied
    ttl_seconds: int
    keep: bool
    owner: str
    command: str  # the command line that made the run
    created: datetime
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def on_cluster(self) -> str | None:
        """The host stack when the run makes pools on a standing cluster, else None."""
        return on_cluster(self.config)

    @property
    def expires(self) -> datetime:
        return self.created + timedelta(seconds=self.ttl_seconds)


def check_run_name(name: str) -> None:
    if not RUN_NAME.match(name):
        raise PlanError("--name", f"{name!r} is not a run name: 1-24 lowercase letters, "
                        "digits and hyphens, starting with a letter and ending with a letter "
                        "or digit (it names the stack and its GKE cluster)")


def parse_override(text: str) -> tuple[str, Any]:
    """``--set KEY=VALUE``: KEY as in the stack file (``accelstack:`` may be left out),
    VALUE as YAML (``--set 'zones=[us-west4-a]'``)."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise PlanError("--set", f"{text!r} is not KEY=VALUE")
    if ":" not in key:
        key = f"{NAMESPACE}:{key}"
    top = key.partition(":")[2]
    if key.startswith(f"{NAMESPACE}:") and ("." in top or "[" in top):
        raise PlanError("--set", f"{text.partition('=')[0]!r} is a path inside a key; --set "
                        "replaces a whole top-level key of the stack file: give its whole "
                        "value as YAML (--set 'slices=[{name: ..., accelerator: ..., "
                        "count: 3}]')")
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError:
        raise PlanError("--set", f"{key}: {raw!r} is not a YAML value") from None
    return key, value


ON_CLUSTER = f"{NAMESPACE}:onCluster"  # a pools stack (infra/config/pools.py)


def on_cluster(config: Mapping[str, Any]) -> str | None:
    """The standing cluster stack a pools stack adds its pools to; None for a whole stack."""
    value = config.get(ON_CLUSTER)
    stack = value.get("stack") if isinstance(value, Mapping) else None
    return stack if isinstance(stack, str) else None


def run_config(stack_config: Mapping[str, Any], overrides: Sequence[tuple[str, Any]],
               name: str) -> dict[str, Any]:
    """The ephemeral stack's config: the stack file's, the overrides, then what an ephemeral
    stack must have: its own cluster name (two runs never share a cluster) and no deletion
    protection (a GKE cluster created with deletionProtection cannot be destroyed:
    pulumi-gcp container.Cluster ``deletionProtection``, default true). A pools stack
    (``onCluster``) makes no cluster: it gets neither key (its program refuses them), and its
    Kueue names come from the run's name, the stack's."""
    config = dict(stack_config)
    pools = on_cluster(config) is not None
    for key, value in overrides:
        if key in (f"{NAMESPACE}:clusterName", f"{NAMESPACE}:deletionProtection"):
            raise PlanError("--set", f"{key} is set by `submit run` (the cluster is named "
                            "after --name and is never deletion-protected)" if not pools else
                            f"{key} is a cluster's setting; this stack file makes pools on "
                            f"the cluster of {on_cluster(config)}, which `submit run` never "
                            "touches")
        config[key] = value
    if on_cluster(config) is None:
        config[f"{NAMESPACE}:clusterName"] = name
        config[f"{NAMESPACE}:deletionProtection"] = False
    return config


def config_json(config: Mapping[str, Any]) -> str:
    """The config in the form `pulumi config --json` prints, which `pulumi config set-all
    --json` reads (pulumi.automation Stack.set_all_config_json): a structured value is its
    JSON text in ``value`` and the object itself in ``objectValue``."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in sorted(config.items()):
        if isinstance(value, (dict, list)):
            out[key] = {"value": json.dumps(value), "objectValue": value, "secret": False}
        elif isinstance(value, bool):
            out[key] = {"value": "true" if value else "false", "secret": False}
        else:
            out[key] = {"value": str(value), "secret": False}
    return json.dumps(out, sort_keys=True)


def _stamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_stamp(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _fit(value: str) -> str:
    return value if len(value) <= TAG_VALUE_MAX else value[:TAG_VALUE_MAX - 3] + "..."


def stack_tags(plan: RunPlan, run_id: str) -> dict[str, str]:
    return {TAG_EPHEMERAL: "true", TAG_EXPIRES: _stamp(plan.expires),
            TAG_OWNER: _fit(plan.owner), TAG_COMMAND: _fit(plan.command),
            TAG_RUN: _fit(run_id), TAG_STACK_FILE: _fit(plan.stack_file)}


def command_line(argv: Sequence[str]) -> str:
    return shlex.join(["submit", *argv])


def teardown_command(plan: RunPlan) -> str:
    """The one command that takes the run's stack down, printed whenever it may be up."""
    return shlex.join(["submit", "reap", "--project-dir", plan.project_dir, plan.name])


@record
class Holder:
    """Who holds a stack: the TAG_RUN value, parsed."""

    run_id: str
    host: str
    pid: int


def holder(tags: Mapping[str, str]) -> Holder | None:
    m = re.match(r"^(\S+) \S*@(\S+) pid (\d+)$", tags.get(TAG_RUN, ""))
    return Holder(m.group(1), m.group(2), int(m.group(3))) if m else None


def holder_gone(held: Holder | None, tags: Mapping[str, str], host: str,
                alive: Callable[[int], bool], now: datetime) -> bool:
    """Whether the run that holds a stack is certainly gone, so its cut-off update may be
    cancelled (`pulumi cancel`) and the stack taken over: its expiry has passed, or it ran
    on this machine and its process is gone. A run on another machine cannot be asked, so
    until its expiry it counts as alive."""
    expires = parse_stamp(tags.get(TAG_EXPIRES, ""))
    if expires is not None and expires <= now:
        return True
    if held is None:
        return tags.get(TAG_EPHEMERAL) == "true"  # stamped, then killed before TAG_RUN
    return held.host == host and not alive(held.pid)


def run_id(run: str, user: str, host: str, pid: int, now: datetime) -> str:
    return f"{run}-{now.astimezone(timezone.utc).strftime('%Y%m%dT%H%M%S')} {user}@{host} pid {pid}"


@record
class Reapable:
    name: str
    expires: datetime | None  # None: the tag is missing or unreadable (reaped: safe side)
    owner: str
    command: str
    due: bool  # expired (or named explicitly)


def reapable(stacks: Mapping[str, Mapping[str, str]], now: datetime,
             names: Sequence[str] = ()) -> list[Reapable]:
    """The ephemeral stacks among ``stacks`` (name -> tags) a reaper takes: all expired
    ones, or the ``names`` given whatever their expiry. Stacks without the ephemeral tag
    are never taken, even when named."""
    out = []
    for name, tags in sorted(stacks.items()):
        if tags.get(TAG_EPHEMERAL) != "true":
            continue
        expires = parse_stamp(tags.get(TAG_EXPIRES, ""))
        due = name in names if names else (expires is None or expires <= now)
        out.append(Reapable(name, expires, tags.get(TAG_OWNER, "?"),
                            tags.get(TAG_COMMAND, "?"), due))
    return out


def is_transient(message: str) -> bool:
    return bool(TRANSIENT.search(message))


@record
class Outcome:
    """What happened, for the exit code and the summary."""

    work_state: str | None = None  # Completed / Failed, None: never finished
    timed_out: bool = False
    infra_error: str | None = None  # from `up` on
    prepare_error: str | None = None  # before `up`: the backend refused the stack
    signal: str | None = None  # "SIGINT" / "SIGTERM"
    torn_down: bool = False
    kept: bool = False


def exit_code(outcome: Outcome) -> Exit:
    if not outcome.torn_down and not outcome.kept:
        return Exit.TEARDOWN_FAILED
    if outcome.signal == "SIGINT":
        return Exit.INTERRUPTED
    if outcome.signal == "SIGTERM":
        return Exit.TERMINATED
    if outcome.prepare_error is not None:
        return Exit.ERROR
    if outcome.infra_error is not None:
        return Exit.INFRA_FAILED
    if outcome.timed_out:
        return Exit.TIMEOUT
    if outcome.work_state == "Completed":
        return Exit.OK
    return Exit.WORK_FAILED


# Config keys whose values `submit run --dry-run` never prints (infra/config/secrets.py
# SECRET_KEYS: the keys a stack may hold as a Pulumi secret; a run takes them by --set).
HIDDEN_KEYS = (f"{NAMESPACE}:masterAuthorizedNetworks",)


def dry_run_lines(plan: RunPlan, pools: Sequence[str], work: str,
                  cost: Sequence[str] = ()) -> list[str]:
    """What `submit run --dry-run` prints: what the run would make, run and take down, as a
    pure function of the plan; ``cost``, the run's cost lines (infra/cost/run.py), follow
    the work."""
    where = (f"pools on the cluster of stack {plan.on_cluster}" if plan.on_cluster
             else f"a cluster named {plan.name}")
    lines = [f"stack: {plan.name} (from {plan.stack_file}): {where}", "config:"]
    for key, value in sorted(plan.config.items()):
        shown = "[secret]" if key in HIDDEN_KEYS else json.dumps(value, sort_keys=True)
        lines.append(f"  {key}: {shown}")
    lines.append("pools:")
    lines += [f"  {p}" for p in pools] or ["  none"]
    lines.append(f"work: {work}")
    lines += cost
    lines.append(f"expires: {_stamp(plan.expires)} (`submit reap` takes the stack down "
                 "after this, whatever happens to the run)")
    how = ("none: --keep leaves the stack up; take it down with" if plan.keep else
           "after the work, whatever happens; by hand:")
    lines.append(f"teardown: {how} {teardown_command(plan)}")
    return lines
