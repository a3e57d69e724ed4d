"""A workload image given by tag, pinned to the digest the tag names now (issue 26).

A tag can move between two pulls: a JobSet that names ``trainer:latest`` may run one image on
the workers that started first and another on those restarted later, or on later trials of
a sweep. Submitting ``trainer@sha256:...`` instead makes every worker, restart and trial run
the same bytes. The digest comes from the registry through the bundler's client and
credentials (``submit.bundle.registry``: ADC for Artifact Registry, `docker login`'s
elsewhere): a HEAD of the manifest, as containers/image reads a digest (its PR #1078, which
spares Docker Hub's pull limits), its ``Docker-Content-Digest`` header, or, since the OCI
distribution spec makes that header optional (spec.md, "Legacy Docker support HTTP
headers"), the digest of the manifest a GET returns. A multi-platform image resolves to its
index, so each node still pulls its own platform.
"""

from __future__ import annotations

import re

import requests

from submit.bundle.registry import ImageRef, Registry, RegistryError, parse_ref

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z")


class TagNotFound(RegistryError):
    """The registry answered: no such repository or tag (the image name is wrong)."""


def pinned_name(image: str, ref: ImageRef, digest: str) -> str:
    """``image`` as the user wrote it, its tag replaced by ``@digest``."""
    base = image[: -len(ref.tag) - 1] if ref.tag and image.endswith(f":{ref.tag}") else image
    return f"{base}@{digest}"


def resolve(image: str, *, session: requests.Session | None = None,
            registries: dict[str, Registry] | None = None) -> str:
    """``image`` by digest: itself when it names one, else the tag's digest now. Raises
    TagNotFound when the registry has no such tag, RegistryError when it cannot say."""
    ref = parse_ref(image)
    if ref.digest:
        return image
    pool = registries if registries is not None else {}
    if ref.registry not in pool:
        pool[ref.registry] = Registry(ref.registry, session=session)
    reg = pool[ref.registry]
    digest = reg.manifest_digest(ref.repository, ref.reference)
    if digest is None:
        raise TagNotFound(f"{ref.name}:{ref.reference} not found: check the image name and "
                          "the tag (or push the image first)")
    if not _DIGEST.match(digest):  # no (or an odd) Docker-Content-Digest: hash the manifest
        _, _, digest = reg.get_manifest(ref.repository, ref.reference)
    return pinned_name(image, ref, digest)
