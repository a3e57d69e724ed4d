"""Container image references: the one parser both the stack config and the submitter use.
Pure; no pulumi."""

from __future__ import annotations

import re

# The distribution reference grammar: [host[:port]/]path[:tag][@digest].
_IMAGE = re.compile(
    r"^(?:(?P<host>(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*"
    r"[a-zA-Z0-9])?)*(?::[0-9]+)?)/)?"
    r"(?P<path>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?\Z")


def image_problem(ref: str) -> str | None:
    """Why ``ref`` is not a container image reference, or None."""
    m = _IMAGE.match(ref)
    if not m or len(ref) > 4096:
        return (f"{ref!r} is not a container image reference "
                "([registry/]repository[:tag][@sha256:digest], lowercase repository)")
    return None


def image_tag(ref: str) -> str | None:
    m = _IMAGE.match(ref)
    return m.group("tag") if m else None


def image_has_digest(ref: str) -> bool:
    m = _IMAGE.match(ref)
    return bool(m and m.group("digest"))


def pin_problem(ref: str, example: str) -> str | None:
    """Why the Pathways image ``ref`` (a valid reference) is not pinned, said after the
    image: no tag and no digest, or the ``latest`` tag, which moves; None when pinned. One
    rule for the stack's images (infra/config/pathways.py) and a run's own
    (--pathways-*-image): the proxy's JAX version must match the client's."""
    if image_has_digest(ref):
        return None
    tag = image_tag(ref)
    if tag is None:
        return f"has no tag; pin a tag such as {example} or a digest"
    if tag == "latest":
        return (f"uses :latest; pin a release tag such as {example} (the proxy's JAX "
                "version must match the client's)")
    return None
