"""The diagnostics options, checked: ``check_alone`` needs no stack (it runs before `pulumi`),
``build`` checks them against the stack's storage contract and returns the frozen
``Diagnostics`` that submit/render/diagnostics/pod.py renders. Errors are SpecErrors naming
the option, the value and what is allowed.
"""

from __future__ import annotations

import posixpath
from typing import Sequence

from infra.contract.outputs import StorageInfo, StoreInfo
from infra.contract.tensorboard import TensorboardInfo
from infra.lazy_re import later
from infra.record import record
from submit.render import mounts
from submit.render.values import EnvVar, SpecError

XLA_FLAGS = "XLA_FLAGS"
XLA_DUMP_FLAG = "--xla_dump_to"
DEFAULT_DUMP_ROOT = "xla-dumps"  # --xla-dump STORE: the folder xla-dumps/<workload>
_FOLDER = later(r"^[-._a-zA-Z0-9]+(/[-._a-zA-Z0-9]+)*\Z")


STORE_MOUNT = "/accelstack/xla-dump-store"  # where the upload sidecar mounts the store


@record
class XlaDump:
    """Where a workload's XLA dumps go: ``folder`` (relative, no leading '/') of the store
    ``mount`` (checked as --mount checks a read-write mount, mounted at STORE_MOUNT in the
    upload sidecar only)."""

    mount: mounts.Mount
    folder: str | None  # None: xla-dumps/<workload>

    @property
    def store(self) -> str:
        return self.mount.store

    def folder_of(self, workload: str) -> str:
        """The folder of the store the dumps go to (the workload's name is the JobSet's,
        known only when it is rendered: an experiment names its trials last)."""
        return self.folder or f"{DEFAULT_DUMP_ROOT}/{workload}"


DEFAULT_TENSORBOARD_ROOT = "tensorboard"  # --tensorboard STORE: tensorboard/<workload>


@record
class Diagnostics:
    stack_traces: bool = False
    xla_dump: XlaDump | None = None
    debug_logs: bool = False
    tensorboard_base: str | None = None  # gs://BUCKET/PATH (--tensorboard): + /<workload>
    # The stack's Vertex AI TensorBoard instance, with --tensorboard on a stack that has one.
    vertex: TensorboardInfo | None = None

    def tensorboard_dir(self, workload: str) -> str | None:
        return None if self.tensorboard_base is None else f"{self.tensorboard_base}/{workload}"

    @property
    def any(self) -> bool:
        return (self.stack_traces or self.xla_dump is not None or self.debug_logs
                or self.tensorboard_base is not None)


def _split_dump(value: str) -> tuple[str, str | None]:
    store, sep, folder = value.partition(":")
    return store, (folder if sep else None)


def _check_folder(option: str, value: str) -> None:
    store, folder = _split_dump(value)
    if not store:
        raise SpecError(option, f"{value!r} is not STORE[:PATH] (no store name before ':')")
    if folder is not None and (not _FOLDER.match(folder) or ".." in folder.split("/")
                               or posixpath.normpath(folder) != folder):
        raise SpecError(option, f"{folder!r} is not a folder of the store such as "
                        "dumps/run-1 (letters, digits, '-', '_', '.' and '/', relative, "
                        "no '..')")


def check_alone(*, xla_dump: str | None, stack_traces: bool = False, debug_logs: bool = False,
                pathways: bool = False, env: Sequence[EnvVar] = (),
                tensorboard: str | None = None) -> None:
    """The checks that need no stack outputs."""
    if tensorboard is not None:
        _check_folder("--tensorboard", tensorboard)
    if xla_dump is not None:
        _check_folder("--xla-dump", xla_dump)
        for var in env:
            if var.name != XLA_FLAGS:
                continue
            if var.secret is not None:
                raise SpecError("--xla-dump", f"{XLA_FLAGS} comes from a Secret (--secret-env), "
                                "which cannot be extended with --xla_dump_to; set it with "
                                "--env")
            if XLA_DUMP_FLAG in (var.value or ""):
                raise SpecError("--xla-dump", f"{XLA_FLAGS} already sets {XLA_DUMP_FLAG}; give "
                                f"--xla-dump or {XLA_DUMP_FLAG} in {XLA_FLAGS}, not both")
    if pathways and (stack_traces or xla_dump is not None or debug_logs
                     or tensorboard is not None):
        used = [o for o, on in (("--stack-traces", stack_traces),
                                ("--xla-dump", xla_dump is not None),
                                ("--debug-logs", debug_logs),
                                ("--tensorboard", tensorboard is not None)) if on]
        raise SpecError(used[0], "is not supported with --pathways yet (its workers run "
                        "Pathways' own containers); see docs/diagnostics.md")


def build(*, namespace: str, storage: StorageInfo, pool_kind: str,
          host_network: bool, arm: bool = False, node_version: str | None = None,
          stack_traces: bool = False, xla_dump: str | None = None,
          debug_logs: bool = False, tensorboard: str | None = None,
          vertex_tensorboard: TensorboardInfo | None = None) -> Diagnostics | None:
    """The checked diagnostics of a workload (None: none asked for). ``host_network``,
    ``arm`` and ``node_version``: as for --mount (submit/render/mounts.py), whose version
    floors the dump store meets too. ``vertex_tensorboard``: the stack's instance (outputs
    contract), which --tensorboard uploads to."""
    if debug_logs and pool_kind != "tpu":
        raise SpecError("--debug-logs", f"sets libtpu's log levels, which apply to TPU slices "
                        f"only; this workload runs on a {pool_kind.upper()} pool")
    dump = None
    if xla_dump is not None:
        store = _writable(xla_dump, namespace, storage)
        try:
            (mount,) = mounts.parse([f"{store.name}:{STORE_MOUNT}"], storage, namespace,
                                    host_network=host_network, reserved=(),
                                    pool_kind=pool_kind, arm=arm, node_version=node_version)
        except mounts.MountError as e:
            raise SpecError("--xla-dump", str(e)) from None
        dump = XlaDump(mount, _split_dump(xla_dump)[1])
    board = None
    if tensorboard is not None:
        board = _tensorboard_base(tensorboard, namespace, storage)
    out = Diagnostics(stack_traces=stack_traces, xla_dump=dump, debug_logs=debug_logs,
                      tensorboard_base=board,
                      vertex=vertex_tensorboard if board is not None else None)
    return out if out.any else None


def _tensorboard_base(value: str, namespace: str, storage: StorageInfo) -> str:
    """gs://BUCKET/PATH (the workload's folder is under it): TensorBoard's writers and
    Vertex AI TensorBoard's uploader read Cloud Storage paths, so the store must be a
    bucket."""
    store = _writable(value, namespace, storage, "--tensorboard")
    name = store.name
    if store.kind != "gcs":
        buckets = [s.name for s in storage.stores if s.kind == "gcs"
                   and s.access.get(namespace) == "read-write"]
        raise SpecError("--tensorboard", f"store {name!r} is a {store.kind} store; TensorBoard "
                        "logs go to a Cloud Storage bucket (gs://) that TensorBoard and "
                        f"Vertex AI TensorBoard read; buckets it may write: "
                        f"{', '.join(buckets) or 'none'}")
    given = _split_dump(value)[1]
    return f"gs://{store.source}/{given or DEFAULT_TENSORBOARD_ROOT}"


def _writable(value: str, namespace: str, storage: StorageInfo,
              option: str = "--xla-dump") -> StoreInfo:
    """The store of ``OPTION STORE[:PATH]``, once the namespace may write it."""
    name = _split_dump(value)[0]
    store = storage.store(name)
    if store is None:
        import difflib  # late: only this error needs it

        names = [s.name for s in storage.stores]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        raise SpecError(option, f"{name!r} is not a store of the stack; {hint}its "
                        f"stores: {', '.join(names) or 'none'}")
    grant = store.access.get(namespace)
    if grant is None:
        allowed = ", ".join(sorted(store.access)) or "none"
        raise SpecError(option, f"store {name!r} grants namespace {namespace!r} no "
                        f"access; namespaces with access: {allowed}")
    if grant != "read-write":
        writable = [s.name for s in storage.stores if s.access.get(namespace) == "read-write"]
        raise SpecError(option, f"namespace {namespace!r} may only read store {name!r}, "
                        f"and {option} writes to it; stores it may write: "
                        f"{', '.join(writable) or 'none'}")
    return store
