"""`--resolve-image/--no-resolve-image`: a workload image given by tag is submitted by the
digest the tag names now (submit.bundle.resolve), the tag kept in a pod annotation for people.

On a real submit a registry that cannot answer stops the command (exit 1; nothing is sent):
submitting the tag instead would be the very drift this prevents, so that takes
--no-resolve-image. A `--dry-run` contacts nothing: it keeps the tag and says that it is
pinned at submit, unless --resolve-image is given. `--export` (a file applied later) resolves
when the registry answers and says on stderr when it does not, keeping the tag. A tag the
registry does not have is a bad --image (exit 2) either way.
"""

from __future__ import annotations

from typing import Any, Iterable

import click

ENV = "ACCELSTACK_RESOLVE_IMAGE"  # submit.image_pins.RESOLVE_IMAGE_ENV: the Python API reads it too

resolve_image_option = click.option(
    "--resolve-image/--no-resolve-image", "resolve_image", default=None, envvar=ENV,
    help="Submit an image given by tag by the digest the tag names now (the tag is kept in "
         "the pod annotation accelstack.dev/image-tag). Default: on, except for --dry-run, "
         f"which contacts no registry unless this is given [env {ENV}].")


def wanted(resolve_image: bool | None, *, dry_run: bool, export: bool) -> bool:
    """Whether to ask the registry: as the user said, else for a submit and an --export,
    never for a plain --dry-run (hermetic: it works offline and at once)."""
    if resolve_image is not None:
        return resolve_image
    return export or not dry_run


def resolve_all_for(images: Iterable[str | None], resolve_image: bool | None, *,
                    dry_run: bool, export: bool, option: str = "--image") -> dict[str, str]:
    """resolve_all as a command's --resolve-image, --dry-run and --export ask; a dry-run
    that does not resolve says that the tags are pinned at submit."""
    enabled = wanted(resolve_image, dry_run=dry_run, export=export)
    if not enabled and resolve_image is None:
        for image in dict.fromkeys(images):
            if image is not None and "@" not in image:
                click.echo(f"image {image}: the tag is pinned to its digest at submit "
                           "(--resolve-image pins it now)", err=True)
    return resolve_all(images, enabled=enabled, offline_ok=dry_run or export, option=option)


def resolve_all(images: Iterable[str | None], *, enabled: bool, offline_ok: bool,
                option: str = "--image") -> dict[str, str]:
    """Each distinct image given by tag -> the reference to run (by digest, or the tag when
    ``offline_ok`` and the registry cannot answer). Raises Click exceptions."""
    tags = [i for i in dict.fromkeys(images) if i is not None and "@" not in i]
    if not enabled or not tags:
        return {}
    from submit.bundle.registry import RegistryError  # late: only a tag needs HTTP
    from submit.bundle.resolve import TagNotFound, resolve

    registries: dict[str, Any] = {}
    pins: dict[str, str] = {}
    for image in tags:
        try:
            pins[image] = resolve(image, registries=registries)
        except TagNotFound as e:
            raise click.BadParameter(str(e), param_hint=f"'{option}'") from None
        except RegistryError as e:
            if not offline_ok:
                raise click.ClickException(
                    f"cannot resolve {option} {image} to a digest: {e}; pass "
                    "--no-resolve-image to submit the tag as it is") from None
            click.echo(f"image {image}: not resolved to a digest, the tag is kept ({e})",
                       err=True)
            pins[image] = image
            continue
        click.echo(f"image {image} resolved to {pins[image]}", err=True)
    return pins
