"""The Pulumi seam: where the submitter gets a stack's outputs contract.

Either ``pulumi stack output --json --show-secrets --stack NAME`` (the only place the
``pulumi`` CLI is run) or a JSON file holding that output (or the ``outputs`` part of an
offline preview). Every failure becomes an OutputsError with a message a user can act on;
a wrong --stack/--outputs/--project-dir value is an OptionError (a usage error, exit 2), and
is found before `pulumi` runs. The outputs hold the cluster's kubeconfig, a secret: no
message here ever quotes the outputs (pulumi's stdout) or a value from them.
"""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path
from typing import Any

from infra.contract.outputs import ContractError, StackOutputs, load
from infra.lazy_re import later

PULUMI_TIMEOUT = 120
# "Stack names may only contain alphanumeric characters, hyphens, underscores, or periods",
# optionally qualified as org/stack or org/project/stack
# (https://www.pulumi.com/docs/iac/concepts/stacks/).
STACK_NAME = later(r"^(?:[A-Za-z0-9_.-]+/){0,2}[A-Za-z0-9_.-]+\Z")


class OutputsError(Exception):
    """The outputs could not be read; the message says why and what to do."""


class OptionError(OutputsError):
    """The option saying where the outputs are is itself wrong (None: no option given)."""

    def __init__(self, option: str | None, message: str) -> None:
        self.option = option
        super().__init__(message)


def _parse(text: str, source: str) -> StackOutputs:
    try:
        data: Any = json.loads(text)
    except ValueError as e:
        # json's message gives the position only, never the text around it.
        raise OutputsError(f"{source}: not JSON ({e})") from None
    if isinstance(data, dict):
        contract = data.get("accelstack", data)
        if isinstance(contract, dict) and "kubeconfig" in contract and not isinstance(
                contract["kubeconfig"], str):
            # The contract's own message would quote the value: a kubeconfig's credentials.
            raise OutputsError(f"{source}: outputs.kubeconfig: not a string (its content is "
                               "not shown: it holds credentials)")
        if isinstance(contract, dict) and "contractVersion" not in contract \
                and not _fleet_keys(data):
            keys = ", ".join(sorted(map(str, data))) or "none"
            raise OutputsError(f"{source}: not an accelstack stack's outputs: no `accelstack` "
                               f"output holding a contractVersion (its keys: {keys}); write "
                               "it with `accelstack-preview STACK --outputs FILE` or "
                               "`pulumi stack output --json --show-secrets`")
    try:
        # A fleet stack's outputs read as its manager view (infra/contract/fleet.py).
        if not _fleet_keys(data):
            return load(data)
        from infra.contract.fleet import is_fleet, load_fleet  # late: fleets only

        return load_fleet(data) if is_fleet(data) else load(data)
    except ContractError as e:
        raise OutputsError(f"{source}: {e}") from None
    except (ValueError, TypeError, AttributeError) as e:
        raise OutputsError(f"{source}: not a valid accelstack outputs contract "
                           f"({e.__class__.__name__})") from None


def from_mapping(data: Any, source: str) -> StackOutputs:
    """Outputs already read (an Automation API `up` result's values): the same checks and
    messages as the other sources, naming ``source``."""
    return _parse(json.dumps(data), source)


def from_file(path: str, project_dir: str = ".") -> StackOutputs:
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError:
        raise OptionError("--outputs", f"{path} is a directory, not an outputs file") from None
    except FileNotFoundError:
        raise OptionError("--outputs", _no_file(path, project_dir)) from None
    except OSError as e:
        raise OptionError("--outputs", f"cannot read outputs file {path}: {e.strerror}") \
            from None
    try:
        # utf-8-sig's codec is a module to import: the BOM is dropped here instead.
        text = raw.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    except UnicodeDecodeError:
        raise OptionError("--outputs", f"{path} is not a text file (not UTF-8); give the JSON "
                          "of `pulumi stack output --json --show-secrets`") from None
    try:
        return _parse(text, path)
    except OutputsError as e:  # a file the user named is bad input, like any other option
        raise OptionError("--outputs", str(e)) from None


def from_pulumi(stack: str, project_dir: str = ".") -> StackOutputs:
    import shutil  # here: the --outputs path (every cold --dry-run from a file) needs neither
    import subprocess

    check_stack_options(stack, project_dir)
    exe = shutil.which("pulumi")
    if exe is None:
        near = _did_you_mean(stack, project_dir)
        raise OutputsError(
            "the pulumi CLI is not on PATH" + (f" and the project has no stack {stack!r} "
                                               f"(did you mean {near}?)" if near else "")
            + f"; {_offline_route(stack, project_dir)}; or install the pulumi CLI "
            "(https://www.pulumi.com/docs/install/) to read a deployed stack's outputs")
    cmd = [exe, "stack", "output", "--json", "--show-secrets", "--non-interactive",
           "--stack", stack, "--cwd", project_dir]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=PULUMI_TIMEOUT,
                              env={**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "true"})
    except subprocess.TimeoutExpired:
        raise OutputsError(f"`pulumi stack output` for stack {stack!r} did not answer within "
                           f"{PULUMI_TIMEOUT}s (is the state backend reachable?)") from None
    if proc.returncode != 0:
        # Only stderr: stdout may hold part of the outputs, secrets included.
        err = proc.stderr.strip().splitlines()
        detail = err[-1] if err else f"exit code {proc.returncode}"
        if "no stack named" in detail.lower() or "not found" in detail.lower():
            near = _did_you_mean(stack, project_dir)
            raise OutputsError(f"stack {stack!r} not found: {detail}"
                               + (f"; did you mean {near}?" if near else "")
                               + f" (list stacks with `pulumi stack ls`); "
                               f"{_offline_route(stack, project_dir)}")
        raise OutputsError(f"`pulumi stack output` failed for stack {stack!r}: {detail}")
    return _parse(proc.stdout, f"stack {stack!r}")


def check_stack_options(stack: str, project_dir: str) -> None:
    """What can be told about --stack and --project-dir without running `pulumi`."""
    if not STACK_NAME.match(stack):
        raise OptionError("--stack", f"{stack!r} is not a stack name (letters, digits, '-', "
                          "'_' and '.', optionally as ORG/STACK or ORG/PROJECT/STACK)")
    if not Path(project_dir).is_dir():
        raise OptionError("--project-dir", f"{project_dir!r} is not a directory")


def read(stack: str | None, outputs_file: str | None, project_dir: str = ".") -> StackOutputs:
    if outputs_file:
        return from_file(outputs_file, project_dir)
    if not stack:
        raise OptionError(None, "no stack given: pass --stack NAME (or set ACCELSTACK_STACK) "
                          "or --outputs FILE (or set ACCELSTACK_OUTPUTS)")
    return from_pulumi(stack, project_dir)


def _fleet_keys(data: Any) -> bool:
    """Whether ``data`` may be a fleet's outputs: infra.contract.fleet.is_fleet decides, but
    only data with one of its keys is worth loading that module for."""
    return isinstance(data, dict) and ("accelstackFleet" in data
                                       or "fleetContractVersion" in data)


# -- hints: the stacks of the project, the files beside a missing one --------------------------

def local_stacks(project_dir: str) -> list[str]:
    """The stacks the project has files for: Pulumi.<stack>.yaml in its stackConfigDir
    (Pulumi.yaml; https://www.pulumi.com/docs/iac/concepts/projects/project-file/)."""
    root = Path(project_dir)
    config_dir = "."
    try:
        import yaml  # here: only a failure's hint reads the project file

        project = yaml.safe_load((root / "Pulumi.yaml").read_text(encoding="utf-8"))
        if isinstance(project, dict) and isinstance(project.get("stackConfigDir"), str):
            config_dir = project["stackConfigDir"]
    except (OSError, ValueError, yaml.YAMLError):
        return []
    return sorted(p.name[len("Pulumi."):-len(".yaml")]
                  for p in (root / config_dir).glob("Pulumi.*.yaml"))


def _nearest(name: str, names: list[str], cutoff: float = 0.6) -> str | None:
    import difflib

    close = difflib.get_close_matches(name, names, n=1, cutoff=cutoff)
    return close[0] if close else None


def _did_you_mean(stack: str, project_dir: str) -> str | None:
    """The stack ``stack`` may have meant, when it has no stack file and one is near it."""
    names = local_stacks(project_dir)
    short = stack.rsplit("/", 1)[-1]
    near = None if short in names else _nearest(short, names)
    return near


def _offline_route(stack: str, project_dir: str) -> str:
    """The way to the outputs without a deployed stack: an offline preview's file."""
    names = local_stacks(project_dir)
    short = stack.rsplit("/", 1)[-1]
    name = short if short in names else _nearest(short, names) or "STACK"
    return (f"offline, with no deployed stack: `accelstack-preview {name} --quiet --outputs "
            f"{name}.outputs.json`, then `--outputs {name}.outputs.json`")


def _no_file(path: str, project_dir: str) -> str:
    """No outputs file at ``path``: the file near its name if there is one, else how to
    write one (naming a stack the project has, never one it lacks)."""
    typed = Path(path)
    folder = typed.parent
    def stem(name: str) -> str:
        return name.removesuffix(".json").removesuffix(".outputs")

    stack = stem(typed.name)
    files = {stem(p.name): p.name for p in folder.glob("*.json")} if folder.is_dir() else {}
    near_file = _nearest(stack, sorted(files), cutoff=0.75)
    if near_file:
        return f"no outputs file {path}; did you mean {typed.with_name(files[near_file])}?"
    names = local_stacks(project_dir)
    name = stack if stack in names else _nearest(stack, names) or "STACK"
    return (f"no outputs file {path}; write one offline with `accelstack-preview {name} "
            f"--quiet --outputs {path}`, or from a deployed stack with `pulumi stack output "
            f"--json --show-secrets > {path}`")
