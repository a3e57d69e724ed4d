"""The CLI side of bundling: ``--script-dir``/``--base-image`` to an image reference.

``script_image`` checks the options, picks the platform from the pool the workload runs
on, runs ``submit.bundle.push.bundle`` with a progress bar on a terminal, reports on
stderr, and turns every failure into a Click exception (bad options exit 2, a registry
that says no exits 1). Commands that take ``--script-dir`` (``workload create``, and
``run-local`` and ``experiment create``) call it before they build their spec.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from infra.contract.outputs import StackOutputs
from submit.bundle.plan import BundleError, pool_platform
from submit.bundle.push import BundleResult, bundle
from submit.bundle.registry import RegistryError
from submit.render.build import pick_pool
from submit.render.spec import SpecError


class TerminalProgress:
    """One click progress bar per blob actually sent, on stderr."""

    def __init__(self) -> None:
        self._bar: Any = None

    def start(self, label: str, total: int) -> Callable[[int], None]:
        self.finish()
        self._bar = click.progressbar(length=total, label=f"uploading {label}",
                                      file=sys.stderr, show_pos=False, show_percent=True)
        bar = self._bar.__enter__()
        return lambda n: bar.update(n)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def script_image(outputs: StackOutputs, *, script_dir: str | None, base_image: str | None,
                 image: str | None, image_repository: str | None, accelerator: str,
                 pool: str | None, push: bool = True) -> str:
    """The image a command runs: ``image`` as given, or the script directory bundled onto
    ``base_image`` and pushed (by digest). Raises Click exceptions."""
    check_script_options(outputs, script_dir=script_dir, base_image=base_image, image=image,
                         image_repository=image_repository)
    if script_dir is None:
        assert image is not None  # checked above
        return image
    assert base_image is not None  # checked above
    repository = image_repository or outputs.image_repository
    assert repository is not None  # checked above
    try:
        platform = pool_platform(pick_pool(outputs, accelerator, pool))
    except SpecError as e:
        raise click.BadParameter(e.message, param_hint=f"'{e.option}'") from None
    progress = TerminalProgress() if sys.stderr.isatty() else None
    try:
        result = bundle(Path(script_dir), base_image, repository, platform, push=push,
                        progress=progress)
    except BundleError as e:
        raise click.BadParameter(str(e), param_hint=f"'{e.option}'") from None
    except RegistryError as e:
        raise click.ClickException(str(e)) from None
    finally:
        if progress:
            progress.finish()
    click.echo(_report(result), err=True)
    return result.image


def _report(r: BundleResult) -> str:
    if not r.pushed:
        return f"image {r.image} ({r.files} files, {r.platform}; not pushed: --dry-run)"
    counts = {k: sum(1 for v in r.blobs.values() if v == k)
              for k in ("uploaded", "mounted", "exists")}
    return (f"image {r.image} ({r.files} files, {r.platform}; blobs: {counts['uploaded']} "
            f"uploaded, {counts['mounted']} mounted, {counts['exists']} already there)")


def check_script_options(outputs: StackOutputs, *, script_dir: str | None,
                         base_image: str | None, image: str | None,
                         image_repository: str | None) -> None:
    """What ``script_image`` checks before it reads a registry: the options that go
    together, and a repository to push to (`submit run` checks them before `up`)."""
    if script_dir is None:
        if base_image is not None:
            raise click.BadParameter("needs --script-dir (the directory to add to it)",
                                     param_hint="'--base-image'")
        if image is None:
            raise click.UsageError("pass --image, or --script-dir with --base-image")
        return
    if image is not None:
        raise click.BadParameter("cannot be used with --script-dir (the image is built from "
                                 "--base-image and the directory)", param_hint="'--image'")
    if base_image is None:
        raise click.BadParameter("is required with --script-dir", param_hint="'--base-image'")
    if not (image_repository or outputs.image_repository):
        raise click.BadParameter(
            f"stack {outputs.stack!r} has no workload image repository: add `registry:` to "
            "its config and run `pulumi up`, or pass --image-repository",
            param_hint="'--script-dir'")
