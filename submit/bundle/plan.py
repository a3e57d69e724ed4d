"""The bundle plan: a script directory as one reproducible layer, and the image around it.

Everything here is a function of its inputs (the directory's files, the base image's
manifest and config): the same tree on the same base gives byte-identical blobs, so the
same digests, so a second push finds everything already there. Nothing here talks to a
registry (``submit.bundle.registry`` does) or to the cluster.

Reproducibility: entries sorted by path with parents first, owner root:root with empty
names, mode 0644/0755 (0755 for directories and files with any execute bit), one fixed
mtime, PAX format, gzip with a zero timestamp and no file name. The compressed bytes also
depend on zlib's output for a level; the uncompressed digest (``diff_id``) does not.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Callable, Iterator, Mapping, Protocol


from infra.catalog import tables as catalog
from infra.contract.outputs import SlicePoolInfo
from infra.record import record
from submit.bundle.files import BundleError as BundleError
from submit.bundle.files import Entry as Entry
from submit.bundle.files import IGNORE_FILES as IGNORE_FILES
from submit.bundle.files import collect as collect

# Media types: OCI image-spec (media-types.md) and Docker Image Manifest V2, Schema 2.
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER_GZIP = "application/vnd.docker.image.rootfs.diff.tar.gzip"
INDEX_TYPES = (OCI_INDEX, DOCKER_LIST)
MANIFEST_TYPES = (OCI_MANIFEST, DOCKER_MANIFEST)

WORKDIR = "/app"  # where the script directory lands in the image, and the working directory
# 1980-01-01: the earliest time a ZIP entry can hold, so tools that zip files (wheels,
# pip's caches) accept the bundled files.
MTIME = 315532800
MTIME_ISO = "1980-01-01T00:00:00Z"
GZIP_LEVEL = 6
CREATED_BY = "accelstack submit --script-dir"

# Arm hosts: the catalog's GPU models flagged arm_host (A4X, GB200 on Grace), and the Arm
# Compute Engine series (Tau T2A, Axion C4A and N4A:
# https://cloud.google.com/compute/docs/instances/arm-on-compute). Every TPU host and the
# other series run x86-64.
_ARM_CPU_SERIES = ("t2a", "c4a", "n4a")


@record
class Platform:
    os: str
    architecture: str

    def __str__(self) -> str:
        return f"{self.os}/{self.architecture}"


def pool_platform(pool: SlicePoolInfo) -> Platform:
    """The image platform the pool's machines run."""
    if pool.kind == "gpu":
        arm = any(m.family == pool.family and m.arm_host for m in catalog.GPU_MODELS)
    elif pool.kind == "cpu":
        arm = pool.machine_type.split("-", 1)[0] in _ARM_CPU_SERIES
    else:
        arm = False
    return Platform("linux", "arm64" if arm else "amd64")


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- which files ------------------------------------------------------------------------


class _Sink(Protocol):
    def write(self, data: bytes, /) -> int: ...


class _Hashing(io.RawIOBase):
    """A write-only stream that hashes and counts what passes through to ``sink``."""

    def __init__(self, sink: _Sink | None) -> None:
        self.sink = sink
        self.sha = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        b = bytes(data)
        self.sha.update(b)
        self.size += len(b)
        if self.sink is not None:
            self.sink.write(b)
        return len(b)

    @property
    def digest(self) -> str:
        return "sha256:" + self.sha.hexdigest()


@record
class Layer:
    digest: str  # of the gzip blob
    size: int  # of the gzip blob
    diff_id: str  # of the uncompressed tar
    files: int


def _info(name: str, kind: str, mode: int, size: int = 0, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = {"dir": tarfile.DIRTYPE, "file": tarfile.REGTYPE,
                 "symlink": tarfile.SYMTYPE}[kind]
    info.mode, info.size, info.linkname = mode, size, target
    info.mtime, info.uid, info.gid, info.uname, info.gname = MTIME, 0, 0, "", ""
    return info


def write_layer(root: Path, entries: list[Entry], out: BinaryIO, workdir: str = WORKDIR
                ) -> Layer:
    """Write the gzip layer of ``entries`` (from ``collect``) under ``workdir`` to ``out``."""
    prefix = PurePosixPath(workdir).relative_to("/")
    blob = _Hashing(out)
    with gzip.GzipFile(filename="", mode="wb", fileobj=blob, compresslevel=GZIP_LEVEL,
                       mtime=0) as gz:
        tar_hash = _Hashing(gz)
        with tarfile.open(fileobj=tar_hash, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for n in range(1, len(prefix.parts) + 1):
                tar.addfile(_info("/".join(prefix.parts[:n]), "dir", 0o755))
            for e in entries:
                name = f"{prefix}/{e.rel}"
                if e.kind == "file":
                    path = root / e.rel
                    try:
                        with open(path, "rb") as f:
                            size = os.fstat(f.fileno()).st_size
                            tar.addfile(_info(name, "file", 0o755 if e.executable else 0o644,
                                              size), f)
                    except OSError as err:
                        raise BundleError(f"cannot read {path}: {err.strerror or err}") \
                            from None
                elif e.kind == "dir":
                    tar.addfile(_info(name, "dir", 0o755))
                else:
                    tar.addfile(_info(name, "symlink", 0o777, target=e.target))
    return Layer(blob.digest, blob.size, tar_hash.digest,
                 sum(1 for e in entries if e.kind == "file"))


# -- the image around it ----------------------------------------------------------------


def _platform_of(desc: Mapping[str, Any]) -> str:
    p = desc.get("platform") or {}
    return f"{p.get('os')}/{p.get('architecture')}" + (
        f"/{p['variant']}" if p.get("variant") else "")


def pick_manifest(index: Mapping[str, Any], platform: Platform, ref: str) -> Mapping[str, Any]:
    """The descriptor of ``platform``'s image in an image index (or Docker manifest list)."""
    found = [m for m in index.get("manifests") or []
             if (m.get("platform") or {}).get("os") == platform.os
             and (m.get("platform") or {}).get("architecture") == platform.architecture
             and m.get("mediaType", OCI_MANIFEST) in MANIFEST_TYPES]
    # Prefer the baseline variant (none, amd64 v1, arm64 v8) over newer ones.
    found.sort(key=lambda m: (m["platform"].get("variant") not in (None, "", "v1", "v8")))
    if not found:
        have = sorted({_platform_of(m) for m in index.get("manifests") or []
                       if (m.get("platform") or {}).get("os") not in (None, "unknown")})
        raise BundleError(
            f"base image {ref} has no {platform} image (it has {', '.join(have) or 'none'}); "
            f"the pool's machines need {platform}: choose a base image published for it",
            "--base-image")
    chosen: Mapping[str, Any] = found[0]
    return chosen


def check_config_platform(config: Mapping[str, Any], platform: Platform, ref: str) -> None:
    """A single-platform base must already be the pool's platform."""
    got = Platform(str(config.get("os")), str(config.get("architecture")))
    if got != platform:
        raise BundleError(f"base image {ref} is {got}, but the pool's machines need "
                          f"{platform}: choose a base image published for {platform}",
                          "--base-image")


def new_config(base_config: bytes, layer: Layer, workdir: str = WORKDIR) -> bytes:
    """The base image's config with the layer appended and the working directory set."""
    cfg = json.loads(base_config)
    container = cfg.get("config") or {}
    container["WorkingDir"] = workdir
    cfg["config"] = container
    rootfs = cfg.get("rootfs") or {"type": "layers", "diff_ids": []}
    rootfs["diff_ids"] = list(rootfs.get("diff_ids") or []) + [layer.diff_id]
    cfg["rootfs"] = rootfs
    if isinstance(cfg.get("history"), list):
        # One history entry per non-empty layer, as the image-spec's config describes.
        cfg["history"].append({"created": MTIME_ISO, "created_by": CREATED_BY,
                               "comment": f"script directory at {workdir}"})
    return json.dumps(cfg, separators=(",", ":")).encode()


def new_manifest(base_manifest: Mapping[str, Any], config: bytes, layer: Layer,
                 base_name: str = "", base_digest: str = "") -> bytes:
    """The base manifest with the new config and the layer appended, in the base's format."""
    m = json.loads(json.dumps(base_manifest))
    media = m.get("mediaType") or (DOCKER_MANIFEST if (m.get("config") or {}).get(
        "mediaType") == DOCKER_CONFIG else OCI_MANIFEST)
    if m.get("schemaVersion") != 2 or media not in MANIFEST_TYPES:
        raise BundleError(f"base manifest type {media!r} (schema {m.get('schemaVersion')}) "
                          "is not supported; use an OCI or Docker schema 2 image",
                          "--base-image")
    docker = media == DOCKER_MANIFEST
    m["config"] = {"mediaType": DOCKER_CONFIG if docker else OCI_CONFIG,
                   "digest": digest_of(config), "size": len(config)}
    m["layers"] = list(m.get("layers") or []) + [{
        "mediaType": DOCKER_LAYER_GZIP if docker else OCI_LAYER_GZIP,
        "digest": layer.digest, "size": layer.size}]
    if not docker and base_name and base_digest:
        # Pre-defined annotation keys of the OCI image-spec (annotations.md).
        m["annotations"] = {**(m.get("annotations") or {}),
                            "org.opencontainers.image.base.name": base_name,
                            "org.opencontainers.image.base.digest": base_digest}
    m.pop("subject", None)  # the base's referrer link is not ours
    return json.dumps(m, separators=(",", ":")).encode()


def manifest_media_type(manifest: bytes) -> str:
    m = json.loads(manifest)
    return str(m.get("mediaType") or OCI_MANIFEST)


def content_tag(manifest: bytes) -> str:
    """The tag naming an image by its content: the manifest's digest, as a valid tag."""
    return "sha256-" + hashlib.sha256(manifest).hexdigest()


def package_name(root: Path) -> str:
    """An image name for a script directory: its base name, made a valid path component."""
    name = re.sub(r"[^a-z0-9]+", "-", root.resolve().name.lower()).strip("-")
    return name[:128] or "workload"


def iter_file(f: BinaryIO, chunk: int) -> Iterator[bytes]:
    while True:
        data = f.read(chunk)
        if not data:
            return
        yield data


ProgressFn = Callable[[int], None]
