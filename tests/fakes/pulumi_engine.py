"""A fake `pulumi` CLI for the Automation API: the CLI's side of what submit/ephemeral runs.

Installed as ``bin/pulumi`` by tests/fakes/pulumi_auto.py (never imported by the code under
test). State lives under the fake's home (the parent of ``bin/``):

    program.json   what `up` creates: {"resources": [{"type", "name"}], "outputs": {...},
                   "secretOutputs": [names]}; a resource with "read": STACK is a
                   StackReference: read from that stack's state, never created; one with
                   "inputs" and "id" keeps its inputs in a pending create and gets that
                   provider ID in the cloud (ids.json: URN -> ID)
    faults.json    injected faults (see FakeAutoPulumi in pulumi_auto.py)
    stacks/NAME.json  one stack: config, tags, resources (URNs in creation order), outputs,
                   history, lock (the DIY lock's owner), pending (an operation in flight)
    cloud.json     the URNs that "exist": what a leak test checks is empty
    Pulumi.NAME.yaml  written by `config set-all` in the project's stackConfigDir, deleted
                   by `stack rm` unless --preserve-config, as the CLI does
    calls.jsonl    every call: argv, cwd and the environment variables the SDK sets

What it mimics, and where each behaviour is written down (tests/test_fake_pulumi_auto.py
checks the argv the SDK sends against these; tests/fakes/pulumi_behaviours.py is the table
of behaviours with their sources, and tests/test_fake_pulumi_table.py plays each row):
- argv and output formats: pulumi/automation/_local_workspace.py, _stack.py, _cmd.py (the SDK
  installed here, 3.272); `stack ls --json` fields and the "%Y-%m-%dT%H:%M:%S.%fZ" time format
  it parses; `stack output --json` masks secrets as "[secret]" without --show-secrets.
- error texts the SDK classifies (pulumi/automation/errors.py): "no stack named 'N' found",
  "stack 'N' already exists", the DIY lock "the stack is currently locked by 1 lock(s). ..."
  (pkg/backend/diy/lock.go), "'N' still has resources; removal rejected. Possible actions:
  ..." (pkg/cmd/pulumi/stack/stack_remove.go), tag rules (40-char names ^[a-zA-Z0-9-_.:]+$, values
  up to 256 characters; ValidateStackTags).
- engine events: one JSON object per line (sdk/go/common/apitype/events.go), a cancelEvent
  last; to a file, or over gRPC when --event-log is tcp://HOST:PORT (pulumirpc.Events/
  StreamEvents, the transport the SDK picks for a CLI newer than 3.205.0).
- a StackReference is read, not created: its step is "read" on `up` and "discard" on
  `destroy` (StepOp OpRead, OpReadDiscard in pulumi/pulumi pkg/resource/deploy/step.go),
  and it never touches what it reads. The fake refuses a reference to a stack it does not
  hold; its message is the fake's own (not the CLI's text).
- signals (pkg/backend/cancellation_scope.go): the first SIGINT or SIGTERM cancels (the
  resource in flight finishes, nothing new starts), the second terminates at once, leaving
  the lock and the pending operation behind, as a killed process does.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, Callable

HOME = Path(__file__).resolve().parent.parent
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.000Z"
TAG_NAME = re.compile(r"^[a-zA-Z0-9\-_.:]{1,40}$")


def _read(path: Path, default: Any) -> Any:
    return json.loads(path.read_text()) if path.exists() else default


def _write(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)  # a kill never leaves half a state file


FAULTS: dict[str, Any] = _read(HOME / "faults.json", {})


def _fail(message: str, code: int = 255) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(code)


def _stack_path(name: str) -> Path:
    return HOME / "stacks" / f"{name.split('/')[-1]}.json"


def _load(name: str | None) -> dict[str, Any]:
    if name is None:
        _fail("error: no stack selected; please use `pulumi stack select`")
    assert name is not None
    path = _stack_path(name)
    if not path.exists():
        _fail(f"error: no stack named '{name}' found")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _save(name: str, data: dict[str, Any]) -> None:
    _write(_stack_path(name), data)


def _project() -> str:
    text = Path("Pulumi.yaml").read_text() if Path("Pulumi.yaml").exists() else ""
    found = re.search(r"^name:\s*(\S+)", text, re.M)
    return found.group(1) if found else "project"


def _cloud(change: Callable[[set[str]], None] | None = None) -> set[str]:
    path = HOME / "cloud.json"
    live = set(_read(path, []))
    if change is not None:
        change(live)
        _write(path, sorted(live))
    return live


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def _now() -> str:
    return time.strftime(TIME_FORMAT, time.gmtime())


class Events:
    """The engine event log: a file, or the SDK's gRPC server (tcp://...)."""

    def __init__(self, target: str | None) -> None:
        self.seq = 0
        self._file = None
        self._queue: Any = None
        self._future: Any = None
        if target is None:
            return
        if target.startswith("tcp://"):
            import queue

            import grpc
            from pulumi.runtime.proto import events_pb2, events_pb2_grpc

            self._queue = queue.Queue()

            def requests() -> Any:
                while (item := self._queue.get()) is not None:
                    yield events_pb2.EventRequest(event=item)

            channel = grpc.insecure_channel(target[len("tcp://"):])
            self._future = events_pb2_grpc.EventsStub(channel).StreamEvents.future(requests())
        else:
            self._file = open(target, "a", encoding="utf-8")

    def emit(self, **payload: Any) -> None:
        self.seq += 1
        line = json.dumps({"sequence": self.seq, "timestamp": int(time.time()), **payload})
        if self._file is not None:
            self._file.write(line + "\n")
            self._file.flush()
        elif self._queue is not None:
            self._queue.put(line)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        elif self._queue is not None:
            self._queue.put(None)
            self._future.result(timeout=10)


def _meta(op: str, urn: str, rtype: str) -> dict[str, Any]:
    return {"op": op, "urn": urn, "type": rtype, "old": None, "new": None,
            "detailedDiff": None, "provider": ""}


class Signals:
    """The CLI's cancellation scope: first signal cancels, the second terminates."""

    def __init__(self, events: Events) -> None:
        self.cancelled = False
        self.events = events
        signal.signal(signal.SIGINT, self._on)
        signal.signal(signal.SIGTERM, self._on)

    def _on(self, signum: int, _frame: Any) -> None:
        name = "^C" if signum == signal.SIGINT else "SIGTERM"
        if not self.cancelled:
            self.cancelled = True
            again = "press ^C again" if signum == signal.SIGINT else "send SIGTERM again"
            self.events.emit(stdoutEvent={
                "message": f"{name} received; cancelling. If you would like to terminate "
                           f"immediately, {again}.\nNote that terminating immediately may lead "
                           "to orphaned resources and other inconsistencies.\n",
                "color": "always"})
            return
        self.events.emit(stdoutEvent={"message": f"{name} received; terminating",
                                      "color": "always"})
        os._exit(255)  # as the Go CLI's terminate: no deferred unlock


def _service() -> bool:
    """The backend the fake plays: self-managed ("diy", file://, the default) or Pulumi Cloud
    ("service"), chosen with the fault ``backend``."""
    return FAULTS.get("backend") == "service"


def _lock(name: str, stack: dict[str, Any]) -> None:
    lock = stack.get("lock")
    if lock and _service():
        _fail("error: [409] Conflict: Another update is currently in progress.")
    if lock:
        # pkg/backend/diy/lock.go checkForLock: the lock files under
        # .pulumi/locks/<org>/<project>/<stack>/, each named in the error with its holder.
        _fail("error: the stack is currently locked by 1 lock(s). Either wait for the other "
              "process(es) to end or delete the lock file with `pulumi cancel`.\n"
              f"  file://{HOME}/.pulumi/locks/organization/{_project()}/{name}/"
              f"{lock['id']}.json: created by {lock['user']}@{lock['host']} "
              f"(pid {lock['pid']}) at {lock['at']}")
    stack["lock"] = {"id": f"lock-{os.getpid()}", "user": "fake", "host": socket.gethostname(),
                     "pid": os.getpid(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                             time.gmtime())}
    _save(name, stack)


_PENDING_WARNING = (
    "Attempting to deploy or update resources with {n} pending operations from previous "
    "deployment.\n{ops}These resources are in an unknown state because the Pulumi CLI was "
    "interrupted while waiting for changes to these resources to complete. You should confirm "
    "whether or not the operations listed completed successfully by checking the state of the "
    "appropriate provider. For example, if you are using AWS, you can confirm using the AWS "
    "Console.\n\nOnce you have confirmed the status of the interrupted operations, you can "
    "repair your stack using `pulumi refresh` which will refresh the state from the provider "
    "you are using and clear the pending operations if there are any.\n\nNote that `pulumi "
    "refresh` will need to be run interactively to clear pending CREATE operations.")


def _warn_pending(stack: dict[str, Any], events: Events) -> None:
    """deployment_executor.go printPendingOperationsWarning: a warning, nothing resolved."""
    if stack.get("pending"):
        ops = "".join(f"  * {u}, interrupted while creating\n" for u in stack["pending"])
        events.emit(diagnosticEvent={"message": _PENDING_WARNING.format(
            n=len(stack["pending"]), ops=ops) + "\n", "color": "never",
            "severity": "warning"})


def _finish(name: str, stack: dict[str, Any], events: Events, kind: str, ok: bool,
            changes: dict[str, int], started: float) -> None:
    events.emit(summaryEvent={"maybeCorrupt": False,
                              "durationSeconds": int(time.time() - started),
                              "resourceChanges": changes, "PolicyPacks": {},
                              "isPreview": False})
    events.emit(cancelEvent={})
    events.close()
    stack["lock"] = None
    stack.setdefault("history", []).insert(0, {
        "kind": kind, "startTime": time.strftime(TIME_FORMAT, time.gmtime(started)),
        "endTime": _now(), "message": "", "environment": {}, "config": {},
        "result": "succeeded" if ok else "failed", "resourceChanges": changes})
    _save(name, stack)


def _step_seconds(index: int) -> float:
    hang = FAULTS.get("hangAt")
    if hang is not None and index == hang:
        return float(FAULTS.get("hangSeconds", 3600))
    return float(FAULTS.get("stepSeconds", 0.0))


def up(name: str, args: list[str]) -> None:
    stack = _load(name)
    _lock(name, stack)  # refused before the engine (and its event log) starts
    events = Events(_flag(args, "--event-log"))
    signals = Signals(events)
    started = time.time()
    program = _read(HOME / "program.json", {"resources": [], "outputs": {}})
    project = _project()
    events.emit(preludeEvent={"config": {k: v["value"] for k, v in
                                         stack.get("config", {}).items()}})
    _warn_pending(stack, events)  # pending creates stay (pkg/backend/snapshot.go)
    kept = list(stack.get("pending", []))
    wanted = [{"type": "pulumi:pulumi:Stack", "name": f"{project}-{name}"}] + program["resources"]
    changes: dict[str, int] = {}
    print(f"Updating ({name}):")
    for index, res in enumerate(wanted):
        if signals.cancelled:
            _finish(name, stack, events, "update", False, changes, started)
            _fail("error: update canceled")
        urn = f"urn:pulumi:{name}::{project}::{res['type']}::{res['name']}"
        op = "same" if urn in stack["resources"] else "create"
        if res.get("read"):
            if not _stack_path(res["read"]).exists():
                _finish(name, stack, events, "update", False, changes, started)
                _fail(f"error: (fake) StackReference {res['name']}: no stack {res['read']}")
            op = "read"
            if urn not in stack["resources"]:
                stack["resources"].append(urn)
                stack.setdefault("reads", []).append(urn)
        events.emit(resourcePreEvent={"metadata": _meta(op, urn, res["type"])})
        if op == "create":
            stack["pending"] = kept + [urn]
            stack.setdefault("inputs", {})[urn] = res.get("inputs", {})
            _save(name, stack)
            if FAULTS.get("upFailAt") == index:
                message = FAULTS.get("upFailMessage", "googleapi: Error 400: quota exceeded")
                events.emit(diagnosticEvent={"urn": urn, "message": message + "\n",
                                             "color": "never", "severity": "error"})
                events.emit(resOpFailedEvent={"metadata": _meta(op, urn, res["type"]),
                                              "status": 0, "steps": 0})
                stack["pending"] = kept
                _finish(name, stack, events, "update", False, changes, started)
                print(f"    {res['type']} {res['name']} **creating failed** error: {message}")
                _fail("error: update failed")
            # The provider's create request is made first: the resource exists (and bills)
            # while the CLI waits for it, so a kill here leaves it behind, pending.
            _cloud(lambda live: live.add(urn))
            if res.get("id"):  # the provider ID the cloud gives it (refresh reads by it)
                _write(HOME / "ids.json", {**_read(HOME / "ids.json", {}), urn: res["id"]})
            time.sleep(_step_seconds(index))
            stack["resources"].append(urn)
            stack["pending"] = kept
            _save(name, stack)
        changes[op] = changes.get(op, 0) + 1
        events.emit(resOutputsEvent={"metadata": _meta(op, urn, res["type"])})
    stack["outputs"] = program.get("outputs", {})
    stack["secretOutputs"] = program.get("secretOutputs", [])
    _finish(name, stack, events, "update", True, changes, started)
    print(f"Resources:\n    + {changes.get('create', 0)} created\n")


def destroy(name: str, args: list[str]) -> None:
    stack = _load(name)
    _lock(name, stack)  # refused before the engine (and its event log) starts
    events = Events(_flag(args, "--event-log"))
    signals = Signals(events)
    started = time.time()
    events.emit(preludeEvent={"config": {}})
    _warn_pending(stack, events)
    failures = HOME / "destroy-failures"
    left = int(failures.read_text()) if failures.exists() else int(FAULTS.get("destroyFails", 0))
    changes: dict[str, int] = {}
    print(f"Destroying ({name}):")
    for urn in list(reversed(stack["resources"])):
        if signals.cancelled:
            _finish(name, stack, events, "destroy", False, changes, started)
            _fail("error: destroy canceled")
        rtype = urn.split("::")[2]
        if urn in stack.get("reads", []):
            events.emit(resourcePreEvent={"metadata": _meta("discard", urn, rtype)})
            stack["resources"].remove(urn)
            stack["reads"].remove(urn)
            _save(name, stack)
            changes["discard"] = changes.get("discard", 0) + 1
            events.emit(resOutputsEvent={"metadata": _meta("discard", urn, rtype)})
            continue
        events.emit(resourcePreEvent={"metadata": _meta("delete", urn, rtype)})
        if left > 0 and rtype != "pulumi:pulumi:Stack":
            failures.write_text(str(left - 1))
            message = FAULTS.get("destroyFailMessage",
                                 "googleapi: Error 503: The service is currently unavailable.")
            events.emit(diagnosticEvent={"urn": urn, "message": message + "\n",
                                         "color": "never", "severity": "error"})
            events.emit(resOpFailedEvent={"metadata": _meta("delete", urn, rtype),
                                          "status": 0, "steps": 0})
            _finish(name, stack, events, "destroy", False, changes, started)
            _fail("error: destroy failed")
        if urn in stack.get("protected", []):
            _finish(name, stack, events, "destroy", False, changes, started)
            _fail(f"error: (fake) {urn} is protected")
        time.sleep(float(FAULTS.get("stepSeconds", 0.0)))
        made = stack.get("refers", {}).get(urn, urn)  # an imported resource: what it read
        _cloud(lambda live: live.discard(made))
        stack["resources"].remove(urn)
        _save(name, stack)
        changes["delete"] = changes.get("delete", 0) + 1
        events.emit(resOutputsEvent={"metadata": _meta("delete", urn, rtype)})
    stack["outputs"] = {}
    _finish(name, stack, events, "destroy", True, changes, started)
    print(f"Resources:\n    - {changes.get('delete', 0)} deleted\n")


def stack_cmd(args: list[str], name: str | None) -> None:
    sub = args[0] if args else ""
    rest = args[1:]
    if sub == "select":
        _load(name)
        (HOME / "current").write_text(name or "")
    elif sub == "init":
        new = rest[0]
        if FAULTS.get("initFails"):
            _fail(FAULTS["initFails"])
        if _stack_path(new).exists():
            _fail(f"error: stack '{new}' already exists")
        _save(new, {"config": {}, "tags": {}, "resources": [], "outputs": {}, "history": [],
                    "lock": None, "pending": []})
        (HOME / "current").write_text(new)
        print(f"Created stack '{new}'")
    elif sub == "ls":
        stack_ls(rest)
    elif sub == "rm":
        target = [a for a in rest if not a.startswith("-")]
        target_name = target[0] if target else name
        stack = _load(target_name)
        if stack["resources"] and "--force" not in rest:
            _fail(f"error: '{target_name}' still has resources; removal rejected. Possible "
                  f"actions:\n- Make sure that '{target_name}' is the stack that you want to "
                  "destroy\n- Run `pulumi destroy` to delete the resources, then run `pulumi "
                  "stack rm`\n- Run `pulumi stack rm --force` to override this error")
        _stack_path(target_name or "").unlink()
        if "--preserve-config" not in rest:
            _config_file(target_name or "").unlink(missing_ok=True)
        print(f"Stack '{target_name}' has been removed!")
    elif sub == "tag":
        tag_cmd(rest, name)
    elif sub == "export":
        stack_export(name)
    elif sub == "output":
        stack = _load(name)
        show = "--show-secrets" in rest
        out = {k: (v if show or k not in stack.get("secretOutputs", []) else "[secret]")
               for k, v in stack.get("outputs", {}).items()}
        print(json.dumps(out, indent=2))
    elif sub == "history":
        stack = _load(name)
        size = _flag(rest, "--page-size")
        rows = stack.get("history", [])
        print(json.dumps(rows[:int(size)] if size else rows, indent=4))
    else:
        _fail(f"error: unknown command \"stack {sub}\" for the fake pulumi", 2)


def stack_ls(args: list[str]) -> None:
    """pkg/cmd/pulumi/stack/stack_list.go: ``--tag NAME`` or ``--tag NAME=VALUE`` keeps the
    stacks with that tag (and value); the JSON has name, current, lastUpdate,
    updateInProgress (only where the backend SupportsProgress: the service) and
    resourceCount, and never the tags."""
    if FAULTS.get("lsFails"):
        _fail(FAULTS["lsFails"])
    current = (HOME / "current").read_text() if (HOME / "current").exists() else ""
    wanted = _flag(args, "--tag")
    tag, _, value = (wanted or "").partition("=")
    rows = []
    for path in sorted((HOME / "stacks").glob("*.json")):
        data = json.loads(path.read_text())
        if wanted is not None and (tag not in data["tags"] or
                                   ("=" in wanted and data["tags"][tag] != value)):
            continue
        row: dict[str, Any] = {"name": path.stem, "current": path.stem == current}
        in_progress = bool(data.get("lock"))
        if data.get("history") or (in_progress and _service()):
            if in_progress and _service():
                row["updateInProgress"] = True
            else:
                if _service():
                    row["updateInProgress"] = False
                row["lastUpdate"] = data["history"][0]["endTime"]
            row["resourceCount"] = len(data["resources"])
        rows.append(row)
    print(json.dumps(rows, indent=4))


def stack_export(name: str | None) -> None:
    """`pulumi stack export`: the deployment (apitype DeploymentV3), with
    ``pending_operations`` (OperationV2: the resource, and the type "creating")."""
    stack = _load(name)
    print(json.dumps({"version": 3, "deployment": {
        "manifest": {"time": _now(), "magic": "", "version": FAULTS.get("version", "3.272.0")},
        "resources": [{"urn": u, "type": u.split("::")[2], "custom": True}
                      for u in stack["resources"]],
        **({"pending_operations": [
            {"resource": {"urn": u, "type": u.split("::")[2], "custom": True,
                          **({"inputs": stack["inputs"][u]}
                             if stack.get("inputs", {}).get(u) else {})},
             "type": "creating"} for u in stack["pending"]]} if stack.get("pending") else {}),
    }}, indent=4))


def refresh(name: str, args: list[str]) -> None:
    """`pulumi refresh`, as far as pending creates go (pkg/cmd/pulumi/operations/refresh.go):
    --import-pending-creates (one value a flag: URN, then ID) completes the create with that
    ID, --clear-pending-creates drops them, both before the refresh reads the resources; a
    resource the cloud no longer has leaves the state."""
    stack = _load(name)
    skip, clear = "--skip-pending-creates" in args, "--clear-pending-creates" in args
    if skip and clear:
        _fail("error: cannot set both --skip-pending-creates and --clear-pending-creates")
    flag = "--import-pending-creates"
    imports = [a.split("=", 1)[1] if a.startswith(flag + "=") else args[i + 1]
               for i, a in enumerate(args) if a.startswith(flag + "=") or a == flag]
    if len(imports) % 2:
        _fail("error: each URN must be followed by an ID: found an odd number of entries")
    _lock(name, stack)
    given = dict(zip(imports[::2], imports[1::2]))
    live = _cloud()
    # A create given an ID becomes a pending import (refresh.go pendingCreatesToImports);
    # no engine step reads a pending import, and the new snapshot carries over only the
    # pending creates (pkg/backend/snapshot.go, journal.go): it leaves the state, and what
    # it made is not adopted.
    stack["pending"] = [u for u in stack["pending"] if u not in given]
    if clear:
        stack["pending"] = []
    refers = stack.get("refers", {})  # an imported resource: what it read
    stack["resources"] = [u for u in stack["resources"]
                          if refers.get(u, u) in live or u.split("::")[2] == "pulumi:pulumi:Stack"
                          or u in stack.get("reads", [])]
    stack["lock"] = None
    _save(name, stack)
    print(f"Refreshing ({name}):")


def import_cmd(name: str, args: list[str]) -> None:
    """`pulumi import TYPE NAME ID` (pkg/cmd/pulumi/operations/import.go): the provider
    reads the resource by ID (ImportStep.Apply, pkg/resource/deploy/step.go); found, it
    enters the state under a URN of its own, protected unless --protect=false; not found,
    the import fails with "resource 'ID' does not exist"."""
    stack = _load(name)
    _lock(name, stack)
    rtype, rname, rid = [a for a in args[1:] if not a.startswith("-")][:3]
    ids = _read(HOME / "ids.json", {})
    made = [u for u in _cloud() if ids.get(u) == rid]
    stack["lock"] = None  # released as the command ends (the deferred Unlock)
    if not made:
        _save(name, stack)
        _fail(f"error: resource '{rid}' does not exist")
    urn = f"urn:pulumi:{name}::{_project()}::{rtype}::{rname}"
    stack["resources"].append(urn)
    stack.setdefault("refers", {})[urn] = made[0]
    if "--protect=false" not in args:
        stack.setdefault("protected", []).append(urn)
    _save(name, stack)
    print(f"Importing ({name}):")


def tag_cmd(args: list[str], name: str | None) -> None:
    sub, rest = args[0], args[1:]
    if FAULTS.get("tagsUnsupported"):
        _fail("error: stack tags not supported in diy mode")
    if sub == "ls" and FAULTS.get("tagLsFails"):
        _fail(FAULTS["tagLsFails"])
    stack = _load(name)
    if sub == "set":
        key, value = rest[0], rest[1]
        if not TAG_NAME.match(key):
            _fail("error: stack tag names may only contain alphanumerics, hyphens, "
                  "underscores, periods, or colons")
        if len(value) > 256:
            _fail(f"error: stack tag \"{key}\" value is too long (max length 256 characters)")
        stack["tags"][key] = value
        _save(name or "", stack)
    elif sub == "get":
        if rest[0] not in stack["tags"]:
            _fail(f"error: stack tag '{rest[0]}' not found for stack '{name}'")
        print(stack["tags"][rest[0]])
    elif sub == "rm":
        stack["tags"].pop(rest[0], None)
        _save(name or "", stack)
    elif sub == "ls":
        print(json.dumps(stack["tags"], indent=4))


def _config_file(name: str) -> Path:
    """Where the CLI keeps a stack's config: Pulumi.<stack>.yaml in stackConfigDir."""
    text = Path("Pulumi.yaml").read_text() if Path("Pulumi.yaml").exists() else ""
    found = re.search(r"^stackConfigDir:\s*(\S+)", text, re.M)
    return Path(found.group(1) if found else ".") / f"Pulumi.{name}.yaml"


def config_cmd(args: list[str], name: str | None) -> None:
    stack = _load(name)
    if args and args[0] == "set-all" and "--json" in args:
        for key, entry in json.loads(args[args.index("--json") + 1]).items():
            value = entry.get("objectValue", entry["value"])
            stack["config"][key] = {"value": value, "secret": bool(entry.get("secret"))}
        _save(name or "", stack)
        _config_file(name or "").write_text(json.dumps(
            {"config": {k: v["value"] for k, v in stack["config"].items()}}))
    elif args and args[0] == "set-all":
        i = 1
        while i < len(args):
            if args[i] in ("--plaintext", "--secret"):
                key, _, value = args[i + 1].partition("=")
                stack["config"][key] = {"value": value, "secret": args[i] == "--secret"}
                i += 2
            else:
                i += 1
        _save(name or "", stack)
    elif not args or args[0].startswith("-"):
        print(json.dumps(stack["config"], indent=4))
    else:
        _fail(f"error: unknown command \"config {args[0]}\" for the fake pulumi", 2)


def main(argv: list[str]) -> None:
    with open(HOME / "calls.jsonl", "a") as log:
        log.write(json.dumps({
            "argv": argv, "cwd": os.getcwd(), "pid": os.getpid(),
            "automation": os.environ.get("PULUMI_AUTOMATION_API"),
            "skipUpdateCheck": os.environ.get("PULUMI_SKIP_UPDATE_CHECK")}) + "\n")
    args = [a for a in argv if a != "--non-interactive"]
    name = _flag(args, "--stack")
    if name is not None:
        i = args.index("--stack")
        del args[i:i + 2]
    if args == ["version"]:
        print("v" + FAULTS.get("version", "3.272.0"))
    elif args[:1] == ["up"]:
        up(name or "", args)
    elif args[:1] == ["destroy"]:
        destroy(name or "", args)
    elif args[:1] == ["stack"]:
        stack_cmd(args[1:], name)
    elif args[:1] == ["config"]:
        config_cmd(args[1:], name)
    elif args[:1] == ["import"]:
        import_cmd(name or "", args)
    elif args[:1] == ["refresh"]:
        refresh(name or "", args)
    elif args[:1] == ["cancel"]:
        # diy: CancelCurrentUpdate deletes every lock file of the stack (diy/backend.go).
        stack = _load(name)
        stack["lock"] = None
        _save(name or "", stack)
        print("The currently running update for '%s' has been canceled!" % name)
    elif args[:2] == ["whoami", "--json"]:
        print(json.dumps({"user": "fake", "url": f"file://{HOME}"}))
    else:
        _fail(f"error: unknown command {' '.join(args)!r} for the fake pulumi", 2)


if __name__ == "__main__":
    main(sys.argv[1:])
