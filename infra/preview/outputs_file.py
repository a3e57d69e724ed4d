"""The file `accelstack-preview --outputs FILE` writes: the stack's outputs contract for
`submit ... --outputs FILE`, with every kubeconfig masked (a preview has none to give, and a
file people pass around must not look as if it had one). Kept apart from cli.py, which
prints and checks desired states."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def _masked_kubeconfigs(value: Any) -> Any:
    from infra.preview.harness import MASK

    if isinstance(value, dict):
        return {k: MASK if k == "kubeconfig" else _masked_kubeconfigs(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_masked_kubeconfigs(v) for v in value]
    return value


def file_outputs(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """The outputs --outputs writes: the document's, where a whole output is a secret only
    for the kubeconfigs inside it (a fleet's manager and workers contracts) those outputs
    with only their kubeconfigs masked, so that `submit ... --outputs FILE --dry-run` reads
    a fleet offline as it reads a cluster stack."""
    from infra.preview.harness import MASK, evaluate_file, plain_outputs

    outputs: dict[str, Any] = doc["outputs"]

    def masked_beyond_kubeconfigs(value: Any) -> bool:
        if isinstance(value, dict):
            return any(masked_beyond_kubeconfigs(v) for k, v in value.items()
                       if k != "kubeconfig")
        if isinstance(value, list):
            return any(masked_beyond_kubeconfigs(v) for v in value)
        return bool(value == MASK)

    if not masked_beyond_kubeconfigs(outputs):
        return outputs
    revealed: dict[str, Any] = _masked_kubeconfigs(plain_outputs(evaluate_file(path),
                                                                 reveal=True))
    return revealed


def write(doc: dict[str, Any], outputs_file: str, path: Path) -> None:
    from infra.preview.interrupt import writing

    text = json.dumps(file_outputs(doc, path), indent=2, sort_keys=True) + "\n"
    try:
        with writing():
            Path(outputs_file).write_text(text)
    except OSError as e:
        raise click.BadParameter(f"cannot write {outputs_file}: {e.strerror}",
                                 param_hint="'--outputs'") from None
    click.echo(f"wrote {outputs_file} (the stack's outputs; keep it out of git)", err=True)
