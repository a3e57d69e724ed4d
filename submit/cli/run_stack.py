"""`submit run`'s stack file: STACK as a path or a stack name of the project, and its config
as Pulumi stores it, checked as the offline preview checks it (FILE:LINE errors); bad
input is Click's usage error (exit 2), before anything runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import yaml


def project_settings(project_dir: str) -> dict[str, Any]:
    path = Path(project_dir) / "Pulumi.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise click.BadParameter(f"{path}: not a Pulumi project file ({e.__class__.__name__})",
                                 param_hint="'--project-dir'") from None
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path}: not a Pulumi project file",
                                 param_hint="'--project-dir'")
    return data


def stack_file(stack: str, project_dir: str) -> Path:
    """STACK: a stack file's path, or a stack name found in the project's stackConfigDir."""
    if stack.endswith((".yaml", ".yml")) or os.sep in stack:
        path = Path(stack)
    else:
        config_dir = str(project_settings(project_dir).get("stackConfigDir") or ".")
        path = Path(project_dir) / config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        from infra.config.errors import did_you_mean

        names = sorted(p.name[len("Pulumi."):-len(".yaml")]
                       for p in path.parent.glob("Pulumi.*.yaml"))
        hint = did_you_mean(stack, names) if names and stack == path.name[7:-5] else ""
        raise click.BadParameter(f"{path}: no such stack file{hint}"
                                 + (f" (stacks: {', '.join(names)})" if names else ""),
                                 param_hint="'STACK'")
    return path


def stack_config(path: Path) -> tuple[dict[str, Any], Any]:
    """The stack file's config, namespaced keys as Pulumi stores them, checked as the offline
    preview checks it (FILE:LINE errors). Secrets cannot be carried over: their ciphertext
    belongs to the stack file's own secrets provider."""
    from infra.config.stack_file import NAMESPACE, PROVIDER_NAMESPACES, StackFileError, load

    try:
        sf = load(path)
    except StackFileError as e:
        raise click.BadParameter(e.problems[0], param_hint="'STACK'") from None
    if sf.secret_keys:
        key = sorted(sf.secret_keys)[0]
        raise click.BadParameter(
            f"{sf.path}:{sf.line_of(key)}: {NAMESPACE}:{key} is a Pulumi secret, encrypted for "
            f"stack {sf.stack}; a run's stack cannot decrypt it: pass the value with --set",
            param_hint="'STACK'")
    raw = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("config") or {}
    config = {k: v for k, v in raw.items()
              if str(k).partition(":")[0] in PROVIDER_NAMESPACES}
    config.update({f"{NAMESPACE}:{k}": v for k, v in sf.raw.items()})
    return config, sf
