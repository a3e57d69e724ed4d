"""Images given by tag, run by digest: the Python API's side of `--resolve-image`
(submit/cli/image_pin.py is the CLI's). Every worker, restart and trial then runs the same
bytes even if the tag moves (issue 26). The registry client is the bundler's
(submit/bundle/resolve.py), imported only when a tag is to be resolved.
"""

from __future__ import annotations

import os
from typing import Any

from submit.render.spec import SpecError as BadInput

RESOLVE_IMAGE_ENV = "ACCELSTACK_RESOLVE_IMAGE"  # the CLI's --resolve-image reads it too


def resolve_by_default() -> bool:
    """Whether images given by tag are resolved when nobody said: ACCELSTACK_RESOLVE_IMAGE
    off (0, false, no, off: Click's false words) keeps tags."""
    value = os.environ.get(RESOLVE_IMAGE_ENV, "").strip().lower()
    return value not in ("0", "false", "f", "no", "n", "off")


def pin_image(objs: list[dict[str, Any]], image: str, pins: dict[str, str] | None = None
              ) -> list[dict[str, Any]]:
    """``objs`` with ``image``, when given by tag, run by the digest the registry names for
    it now (submit/bundle/resolve.py), or the one ``pins`` holds from an earlier call (which
    it then keeps). BadInput (option ``image``) when the registry has no such tag or cannot
    say."""
    if "@" in image:
        return objs
    from submit.render.jobset import pin_images

    pins = {} if pins is None else pins
    if image not in pins:
        pins[image] = _resolve(image)
    pin_images(objs, {image: pins[image]})
    return objs


def _resolve(image: str) -> str:
    from submit.bundle.registry import RegistryError  # late: only a tag needs HTTP
    from submit.bundle.resolve import TagNotFound, resolve

    try:
        return resolve(image)
    except TagNotFound as e:
        raise BadInput("image", str(e)) from None
    except RegistryError as e:
        raise BadInput("image", f"cannot resolve {image} to a digest: {e}; pass "
                       "resolve_image=False to submit the tag as it is") from None
