"""The values of a workload's options, checked one by one without the stack: SpecError (the
one error every check raises, naming the option, the value and what is allowed), EnvVar,
the defaults and limits, and the parsers of option values (env, exit codes, capabilities,
durations, names, quantities, the config file).

The bottom of submit/render: it imports no other render module but envfile and duration,
so every render module may import it without an import circle. Pure: no Click, no
Kubernetes client, no pulumi.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Sequence

from infra.contract.outputs import StackOutputs
from infra.lazy_re import LazyPattern, later
from infra.record import record
from submit.render import envfile

CONFIG_MOUNT = "/etc/accelstack/config"  # where --config-file lands in every container
REPLICATED_JOB = {"tpu": "slice", "gpu": "worker", "cpu": "worker"}
DNS_1035 = later(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_ENV_NAME = envfile.ENV_NAME
_SECRET = later(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
_SECRET_KEY = later(r"^[-._a-zA-Z0-9]+\Z")
# Shapes of quantities checked on the render path without the Kubernetes client (see the
# note in infra/catalog/pod_resources.py on why not kubernetes.utils.parse_quantity).
_CPU = later(r"^([0-9]+(\.[0-9]{1,3})?|[0-9]+m)\Z")
_QUANTITY = later(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?\Z")
MAX_CONFIG_BYTES = 1024 * 1024 - 4096  # a ConfigMap holds at most 1 MiB
INT32_MAX = 2**31 - 1  # replicas, parallelism, maxRestarts and ttlSecondsAfterFinished are int32
_DNS_1123 = later(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")

# Defaults a workload gets when the user says nothing (xpk's, where xpk has one: priority
# medium, a 12 h TTL, a 30 s grace period, and exit codes 42 and 127-255 restarting while
# any other failure fails at once; AI-Hypercomputer/xpk src/xpk/parser/workload.py and
# get_restart_exit_codes in src/xpk/commands/workload.py). Each has an override.
DEFAULT_PRIORITY = "medium"
DEFAULT_TTL = "12h"
DEFAULT_TTL_SECONDS = 12 * 3600
DEFAULT_TERMINATION_GRACE_SECONDS = 30
# 42 is the "please restart me" code of xpk-era launchers; 128+N is a process killed by
# signal N (a preemption's SIGTERM, an OOM kill), 127 a command the image lacks.
DEFAULT_RESTART_EXIT_CODES = "42,127-255"
# Restarts only follow the codes above and disruptions (Spot preemption, maintenance), so
# a few of them cost nothing on user errors, which fail at once.
DEFAULT_MAX_RESTARTS = 3
NONE = "none"  # --priority none, --ttl none: no priority label, no TTL
ANY = "any"  # --restart-on-exit-codes any: every failure restarts (up to --max-restarts)
# The Linux capabilities, by the names a container's securityContext.capabilities.add takes:
# capabilities(7) without the CAP_ prefix (Kubernetes docs, "Container Capabilities": SYS_ADMIN
# is CAP_SYS_ADMIN, ...). CAP_CHOWN (0) to CAP_CHECKPOINT_RESTORE (40, Linux 5.9) of
# include/uapi/linux/capability.h (the last four: AUDIT_READ 37, PERFMON 38 and BPF 39 since
# Linux 5.8, CHECKPOINT_RESTORE 40). A name outside it (--add-capability FOO) is refused, not
# rendered.
LINUX_CAPABILITIES = (
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID",
    "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN",
    "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE",
    "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
    "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
    "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ",
    "PERFMON", "BPF", "CHECKPOINT_RESTORE")
# Never added back: each is root on the node in all but name.
_REFUSED_CAPABILITIES = ("ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE", "SYS_RAWIO",
                         "SYS_BOOT", "MAC_ADMIN", "MAC_OVERRIDE", "BPF", "PERFMON")


class SpecError(ValueError):
    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


@record
class EnvVar:
    name: str
    value: str | None = None
    secret: str | None = None
    secret_key: str | None = None


POD_NAME_SUFFIX = 6  # the "-abcde" the Job controller appends to each pod's name


def hostname_budget(replicas: int, parallelism: int, kind: str) -> int:
    """The longest workload name JobSet accepts for this shape.

    Pod hostnames are <jobset>-<replicatedJob>-<jobIndex>-<podIndex>; JobSet's admission
    webhook requires that plus the pod's random suffix to stay within 63 characters.
    """
    suffix = f"-{REPLICATED_JOB[kind]}-{replicas - 1}-{parallelism - 1}"
    return 63 - len(suffix) - POD_NAME_SUFFIX


def check_range(option: str, value: int | None, minimum: int = 0,
                maximum: int = INT32_MAX) -> None:
    if value is not None and value < minimum:
        raise SpecError(option, f"{value} is below {minimum}")
    if value is not None and value > maximum:
        raise SpecError(option, f"{value} is above {maximum}")


def check_wait(timeout: float, interval: float) -> None:
    """`wait`'s --timeout and --interval (seconds, as the duration options give them)."""
    if timeout < 0:
        raise SpecError("--timeout", f"{timeout:g}s is below 0")
    if not math.isfinite(interval) or interval <= 0:
        raise SpecError("--interval", f"{interval:g} is not a number of seconds above 0")


def parse_env(items: Sequence[str], option: str = "--env") -> list[EnvVar]:
    out = []
    for n, item in enumerate(items, 1):
        name, sep, value = item.partition("=")
        if not sep:
            # The text may be a value given without its name: never echo it.
            raise SpecError(option, f"value {n} is not KEY=VALUE (it has no '='; the value is "
                            "not shown)")
        if not name:
            raise SpecError(option, f"value {n} is not KEY=VALUE (nothing before '=')")
        if not _ENV_NAME.match(name):
            raise SpecError(option, f"{name!r} is not a valid environment variable name "
                            "(letters, digits, '_', '-' and '.', not starting with a digit)")
        out.append(EnvVar(name, value))
    return out


def parse_env_file(path: str) -> list[EnvVar]:
    """The dotenv file's variables (see submit.render.envfile: no error ever shows a value)."""
    try:
        return [EnvVar(name, value) for name, value in envfile.read(path)]
    except envfile.EnvFileError as e:
        raise SpecError("--env-file", str(e)) from None


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
    """Exit codes and ranges (``42,127-255``); ``any`` (or nothing) is the empty tuple:
    no code fails the workload at once."""
    if not text or text.strip().lower() == ANY:
        return ()
    codes: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        bounds = (low, high) if dash else (low,)
        if not all(b.strip().isdigit() and 1 <= int(b) <= 255 for b in bounds) or (
                dash and int(low) > int(high)):
            raise SpecError("--restart-on-exit-codes", f"{part!r} is not an exit code from 1 "
                            "to 255 or a range such as 127-255 (give a comma-separated list "
                            f"such as 42,127-255, or '{ANY}')")
        codes.update(range(int(low), int(bounds[-1]) + 1))
    return tuple(sorted(codes))


def parse_capabilities(items: Sequence[str]) -> tuple[str, ...]:
    """Linux capability names, with or without CAP_ (``SETUID``, ``CAP_IPC_LOCK``)."""
    out: list[str] = []
    for item in items:
        name = item.strip().upper().removeprefix("CAP_")
        if name in _REFUSED_CAPABILITIES:
            raise SpecError("--add-capability", f"{item!r} is not allowed: it gives the "
                            f"container the node ({', '.join(_REFUSED_CAPABILITIES)} are "
                            "refused)")
        if name not in LINUX_CAPABILITIES:
            import difflib  # late: only this error needs it

            close = difflib.get_close_matches(name, LINUX_CAPABILITIES, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise SpecError("--add-capability", f"{item!r} is not a Linux capability; {hint}"
                            "give a name of capabilities(7) with or without CAP_, such as "
                            "IPC_LOCK or SETUID")
        if name not in out:
            out.append(name)
    return tuple(out)


def parse_pull_secrets(items: Sequence[str]) -> tuple[str, ...]:
    """--image-pull-secret: Secret names (DNS-1123 subdomains), each once."""
    for item in items:
        _name("--image-pull-secret", item, "a Secret name (a DNS-1123 subdomain)", _SECRET, 253)
    return tuple(dict.fromkeys(items))


def parse_ttl(value: str | int | None) -> int | None:
    """Seconds (or 30m, 12h, 7d) after finishing; ``none`` keeps finished workloads."""
    if value is None or value == DEFAULT_TTL:
        return DEFAULT_TTL_SECONDS  # the default needs no parser loaded
    if isinstance(value, int):
        check_range("--ttl", value, 0)
        return value
    text = value.strip().lower()
    if text == NONE:
        return None
    from submit.render import duration  # late: the default TTL is a number

    try:
        exact = duration.parse(text)
    except duration.DurationError:
        raise SpecError("--ttl", f"{value!r} is not a duration: give {duration.HELP} (or "
                        f"7d), or '{NONE}' to keep the finished workload") from None
    seconds = int(exact)
    if seconds != exact:  # ttlSecondsAfterFinished counts whole seconds
        raise SpecError("--ttl", f"{value!r} is not a whole number of seconds")
    if seconds > INT32_MAX:  # ttlSecondsAfterFinished is an int32
        raise SpecError("--ttl", f"{value!r} is more than {INT32_MAX} seconds")
    return seconds


def parse_grace(value: str | int | None) -> int | None:
    """--termination-grace-period: whole seconds in the duration grammar every duration
    option takes (``30``, ``90s``, ``2m``; submit/render/duration.py); None: the default."""
    if value is None or isinstance(value, int):
        check_range("--termination-grace-period", value, 0)
        return value
    if re.fullmatch(r"\s*-?[0-9]+\s*", value):  # a number of seconds, below 0 said as such
        return parse_grace(int(value))
    from submit.render import duration  # late: only a grace period given as text

    try:
        exact = duration.parse(value)
    except duration.DurationError:
        raise SpecError("--termination-grace-period", f"{value!r} is not a duration: give "
                        f"{duration.HELP}") from None
    seconds = int(exact)
    if seconds != exact:  # terminationGracePeriodSeconds counts whole seconds
        raise SpecError("--termination-grace-period", f"{value!r} is not a whole number of "
                        "seconds")
    check_range("--termination-grace-period", seconds, 0)
    return seconds


def _quantity(option: str, value: str | None, pattern: LazyPattern, example: str) -> None:
    if value is None:
        return
    if not pattern.match(value):
        raise SpecError(option, f"{value!r} is not a {example}")
    if float(re.sub(r"[^0-9.]", "", value)) == 0:
        raise SpecError(option, f"{value!r} is zero; give a positive {example}")


def _name(option: str, value: str | None, kind: str, pattern: LazyPattern,
          limit: int) -> None:
    chars = "digits, '-' and '.'" if pattern is _SECRET else "digits and '-'"
    if value is not None and (not pattern.match(value) or len(value) > limit):
        raise SpecError(option, f"{value!r} is not {kind}: lowercase letters, {chars}, "
                        f"starting and ending with a letter or digit, at most {limit} "
                        "characters")


def check_workload_name(name: str, option: str = "NAME", new: bool = False) -> None:
    """A JobSet name; a ``new`` one must also leave room for its pods' hostnames."""
    if not DNS_1035.match(name):
        raise SpecError(option, f"{name!r} is not a DNS-1035 label (lowercase letters, digits "
                        "and '-', starting with a letter and ending with a letter or digit)")
    if not new and len(name) > 63:
        raise SpecError(option, f"{name!r} is {len(name)} characters; a workload name has at "
                        "most 63")
    longest = hostname_budget(1, 1, "tpu")
    if new and len(name) > longest:
        raise SpecError(option, f"{name!r} is {len(name)} characters; a workload name has at "
                        f"most {longest} (fewer with many slices or nodes) so that every pod "
                        "name stays within 63 characters")


def check_namespace(namespace: str | None) -> None:
    _name("--namespace", namespace, "a namespace name (a DNS-1123 label)", _DNS_1123, 63)


def index_limits(outputs: StackOutputs) -> tuple[int | None, int | None]:
    """The most slices and workers per slice any workload of this stack can have (None: no
    bound known; flex-start and queued pools may run more than they declare)."""
    slices: list[int | None] = []
    workers: list[int | None] = []
    for p in outputs.slice_pools:
        dws = p.capacity_mode in ("flex-start", "queued")
        if p.kind == "tpu":
            slices.append(None if dws else p.slice_count)
            workers.append(p.vms_per_slice)
        else:
            slices.append(1)
            workers.append(None if dws else p.slice_count * p.vms_per_slice)

    def most(counts: list[int | None]) -> int | None:
        return None if not counts or None in counts else max(c for c in counts if c is not None)
    return most(slices), most(workers)


def check_index(option: str, value: int, count: int | None = None, noun: str = "",
                owner: str = "") -> None:
    """A 0-based index below ``count`` (None: any index from 0)."""
    if value < 0:
        raise SpecError(option, f"{value} is below 0 (indices count from 0)")
    if count is not None and value >= count:
        noun = noun if count != 1 else re.sub(r"s\b", "", noun, count=1)
        raise SpecError(option, f"{value} is not within 0 to {count - 1}: {owner} has {count} "
                        f"{noun}")


def read_config_file(config_file: str) -> tuple[str, str]:
    """The --config-file's ConfigMap key (its file name) and its text."""
    path = Path(config_file)
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise SpecError("--config-file", f"{config_file} is a directory") from None
    except OSError as e:
        raise SpecError("--config-file", f"cannot read {config_file}: {e.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise SpecError("--config-file", f"{config_file} is {len(raw)} bytes; a ConfigMap "
                        "holds at most 1 MiB")
    try:
        data = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError("--config-file", f"{config_file} is not UTF-8 text") from None
    if "\x00" in data:
        raise SpecError("--config-file", f"{config_file} is not a text file (it holds NUL "
                        "bytes)")
    if not _SECRET_KEY.match(path.name):
        raise SpecError("--config-file", f"{path.name!r} is not a valid ConfigMap key "
                        "(letters, digits, '-', '_' and '.')")
    return path.name, data


