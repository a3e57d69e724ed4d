"""Carry a bundle out: read the base, build the layer, push what the target lacks.

``bundle`` is the API the CLI (``create --script-dir``) and other commands call. It reads
the base image (index or single manifest) through ``submit.bundle.registry``, computes the
new image with ``submit.bundle.plan``, and, unless ``push=False``, makes every blob exist
in the target repository (HEAD first; a cross-repository mount when the base lives on the
same registry; an upload otherwise), then tags the manifest by its content hash. The
result names the image by digest, which is what the JobSet uses.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

import requests

from infra.record import field, record
from submit.bundle import plan
from submit.bundle.plan import BundleError, Platform
from submit.bundle.registry import ImageRef, Registry, RegistryError, parse_ref


class Progress(Protocol):
    """Where upload progress goes (a terminal bar in the CLI)."""

    def start(self, label: str, total: int) -> Callable[[int], None]: ...

    def finish(self) -> None: ...


@record
class BundleResult:
    image: str  # repository/package@sha256:..., what the JobSet runs
    tagged: str  # repository/package:sha256-..., the same image by its content tag
    digest: str
    platform: Platform
    layer_digest: str
    files: int
    pushed: bool
    blobs: dict[str, str] = field(default_factory=dict)  # digest -> exists|mounted|uploaded

    @property
    def uploaded(self) -> int:
        return sum(1 for v in self.blobs.values() if v == "uploaded")


def _ref(ref: str, option: str) -> ImageRef:
    try:
        return parse_ref(ref)
    except RegistryError as e:
        raise BundleError(str(e), option) from None


def _read_base(src: Registry, base: ImageRef, platform: Platform
               ) -> tuple[dict[str, Any], str, bytes]:
    """The base's manifest for ``platform`` (picked from an index), its digest, its config."""
    raw, media, digest = src.get_manifest(base.repository, base.reference)
    try:
        if media in plan.INDEX_TYPES:
            desc = plan.pick_manifest(json.loads(raw), platform, str(base))
            raw, media, digest = src.get_manifest(base.repository, str(desc["digest"]))
        if media not in plan.MANIFEST_TYPES:
            raise BundleError(f"base image {base}: manifest type {media!r} is not supported; "
                              "use an OCI or Docker schema 2 image", "--base-image")
        manifest: dict[str, Any] = json.loads(raw)
        config = src.get_blob(base.repository, str(manifest["config"]["digest"]))
        plan.check_config_platform(json.loads(config), platform, str(base))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, BundleError):
            raise
        raise BundleError(f"base image {base}: malformed manifest or config "
                          f"({type(e).__name__}: {e})", "--base-image") from None
    return manifest, digest, config


def bundle(script_dir: Path, base_image: str, repository: str, platform: Platform, *,
           package: str | None = None, push: bool = True, progress: Progress | None = None,
           session: requests.Session | None = None,
           registries: dict[str, Registry] | None = None) -> BundleResult:
    """Append ``script_dir`` to ``base_image`` for ``platform`` and push it to
    ``repository``/``package``. Raises BundleError or RegistryError."""
    pool = registries if registries is not None else {}

    def reg(host: str) -> Registry:
        if host not in pool:
            pool[host] = Registry(host, session=session)
        return pool[host]

    base = _ref(base_image, "--base-image")
    repo = _ref(repository.rstrip("/"), "--image-repository")
    if repo.tag or repo.digest:
        raise BundleError(f"{repository!r} is an image, not a repository: drop the tag",
                          "--image-repository")
    target = _ref(f"{repo.name}/{package or plan.package_name(script_dir)}",
                  "--image-repository")
    entries = plan.collect(script_dir)  # bad input fails before any request
    src = reg(base.registry)
    base_manifest, digest, base_config = _read_base(src, base, platform)

    with tempfile.TemporaryFile() as layer_file:
        layer = plan.write_layer(script_dir, entries, layer_file)
        config = plan.new_config(base_config, layer)
        manifest = plan.new_manifest(base_manifest, config, layer, base.name, digest)
        image_digest = plan.digest_of(manifest)
        tag = plan.content_tag(manifest)
        result = BundleResult(
            image=f"{target.name}@{image_digest}", tagged=f"{target.name}:{tag}",
            digest=image_digest, platform=platform, layer_digest=layer.digest,
            files=layer.files, pushed=push)
        if not push:
            return result
        dst = reg(target.registry)
        same = target.registry == base.registry
        states: dict[str, str] = {}
        mount_from = base.repository if same and base.repository != target.repository \
            else None
        for d in base_manifest.get("layers") or []:
            blob = str(d["digest"])
            if blob in states:
                continue
            states[blob] = _push(
                dst, target, blob, int(d["size"]), _reader(src, base.repository, blob),
                mount_from=mount_from, progress=progress, label=f"base layer {blob[7:19]}")

        def layer_chunks() -> Iterable[bytes]:
            layer_file.seek(0)
            return plan.iter_file(layer_file, 1024 * 1024)

        states[layer.digest] = _push(dst, target, layer.digest, layer.size, layer_chunks,
                                     progress=progress, label="script directory")
        states[plan.digest_of(config)] = _push(
            dst, target, plan.digest_of(config), len(config), lambda: [config],
            progress=None, label="config")
    if progress:
        progress.finish()
    if dst.manifest_digest(target.repository, tag, push=True) != image_digest:
        dst.put_manifest(target.repository, tag, manifest, plan.manifest_media_type(manifest))
    return BundleResult(image=result.image, tagged=result.tagged, digest=image_digest,
                        platform=platform, layer_digest=layer.digest, files=layer.files,
                        pushed=True, blobs=states)


def _reader(src: Registry, repo: str, digest: str) -> Callable[[], Iterable[bytes]]:
    return lambda: src.blob_chunks(repo, digest)


def _push(dst: Registry, target: ImageRef, digest: str, size: int,
          chunks: Callable[[], Iterable[bytes]], *, mount_from: str | None = None,
          progress: Progress | None, label: str) -> str:
    # A bar only for bytes really sent: HEAD and the mount attempt come first.
    if dst.blob_exists(target.repository, digest):
        return "exists"
    bar: list[Callable[[int], None]] = []

    def advance(n: int) -> None:
        if progress is None:
            return
        if not bar:
            bar.append(progress.start(label, size))
        bar[0](n)

    return dst.push_blob(target.repository, digest, size, chunks, mount_from=mount_from,
                         progress=advance, check=False)
