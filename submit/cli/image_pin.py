"""`--resolve-image/--no-resolve-image`: a workload image given by tag is submitted by the
digest the tag names now (submit.bundle.resolve), the tag kept in a pod annotation for people.

On a real submit a registry that cannot answer stops the command (exit 1; nothing is sent):
submitting the tag instead would be the very drift this prevents, so that takes
--no-resolve-image. `--dry-run` and `--export` resolve when the registry answers and say on
stderr when it does not, keeping the tag (they must work offline). A tag the registry does
not have is a bad --image (exit 2) either way.
"""

from __future__ import annotations

from typing import Any, Iterable

import click

ENV = "ACCELSTACK_RESOLVE_IMAGE"  # submit.image_pins.RESOLVE_IMAGE_ENV: the Python API reads it too

resolve_image_option = click.option(
    "--resolve-image/--no-resolve-image", "resolve_image", default=True, envvar=ENV,
    show_default=True,
    help="Submit an image given by tag by the digest the tag names now (the tag is kept in "
         f"the pod annotation accelstack.dev/image-tag) [env {ENV}].")


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
