"""The ``registry`` section of the stack config: the workload image repository (Artifact
Registry, Docker format). What the program declares for it is in infra/specs/registry.py.

Stack config ``registry``: ``{create, name, location, project, cleanup, readAllRepositories}``.
With ``create: true`` (the default) the stack owns the repository and its cleanup policies;
with ``create: false`` it references an existing one and only grants the nodes read on it.
Without a ``registry`` key the stack has no workload repository and the nodes keep
project-wide read (``roles/artifactregistry.reader`` on the project), as before.

Node read access: with a repository, the node service account reads THIS repository only
(a repository-level IAM binding), unless ``readAllRepositories: true``. GKE's own system
images come from Google-managed registries and need no Artifact Registry role in the
project; workload images kept in OTHER repositories of the project do, so a stack that
runs such images sets ``readAllRepositories: true`` (or grants the nodes read there).

Must not import pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import show
from infra.config.reader import Reader
from infra.record import record

REGISTRY_KEYS = ("create", "name", "location", "project", "cleanup", "readAllRepositories")
CLEANUP_KEYS = ("keepCount", "olderThanDays", "untaggedAfterDays", "dryRun")
READER_ROLE = "roles/artifactregistry.reader"
# Repository IDs: lowercase letters, digits and hyphens, starting with a letter and ending
# with a letter or digit, at most 63 characters
# (https://cloud.google.com/artifact-registry/docs/repositories/create-repos).
_REPO_ID = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?\Z")
_LOCATION = re.compile(r"^([a-z]+|[a-z]+-[a-z]+[0-9]+)\Z")
_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]\Z")


@record
class Cleanup:
    """Artifact Registry cleanup policies. A keep policy only exempts versions from delete
    policies (https://cloud.google.com/artifact-registry/docs/repositories/cleanup-policy-overview),
    so ``keep_count`` matters only beside ``older_than_days``."""

    keep_count: int = 10  # most recent versions kept per package (image)
    older_than_days: int | None = 30  # delete versions older than this, unless kept
    untagged_after_days: int | None = 7  # delete untagged versions older than this
    dry_run: bool = False  # report what would be deleted, delete nothing


@record
class RegistryConfig:
    create: bool
    name: str
    location: str
    project: str
    cleanup: Cleanup | None
    read_all_repositories: bool = False

    @property
    def url(self) -> str:
        """The Docker repository's address: images are ``<url>/<image>[:tag|@digest]``."""
        return f"{self.location}-docker.pkg.dev/{self.project}/{self.name}"


def parse_registry(r: Reader, value: Any, *, project: str | None, region: str | None,
                   cluster_name: str | None) -> RegistryConfig | None:
    """The ``registry`` key, or None when absent."""
    if value is None:
        return None
    raw = r.obj(value, "registry", REGISTRY_KEYS)
    if not isinstance(value, Mapping):
        return None
    create = r.get(raw, "create", "registry", bool, default=True)
    name = r.get(raw, "name", "registry", str,
                 default=f"{cluster_name or 'accelstack'}-workloads"[:63].rstrip("-"))
    if not _REPO_ID.match(name):
        r.fail("registry.name", f"{show(name)} is not an Artifact Registry repository ID "
               "(lowercase letters, digits and hyphens; starts with a letter; at most 63)")
    location = r.get(raw, "location", "registry", str, default=region or "")
    if location and not _LOCATION.match(location):
        r.fail("registry.location", f"{show(location)} is not an Artifact Registry location "
               "such as us-central1 or us (multi-region)")
    repo_project = r.get(raw, "project", "registry", str, default=project or "")
    if raw.get("project") is not None and not _PROJECT.match(repo_project):
        r.fail("registry.project", f"{show(repo_project)} is not a GCP project ID")
    read_all = r.get(raw, "readAllRepositories", "registry", bool, default=False)
    cleanup: Cleanup | None = None
    if create:
        cleanup = _cleanup(r, raw.get("cleanup"))
    elif raw.get("cleanup") is not None:
        r.fail("registry.cleanup", "applies only to a repository the stack creates "
               "(registry.create: true); set the cleanup policies of an existing repository "
               "where it is managed")
    return RegistryConfig(bool(create), name, location, repo_project, cleanup, bool(read_all))


def unreadable_images(reg: RegistryConfig | None, images: list[str]) -> list[int]:
    """Indexes of ``images`` the nodes could read only through the project-wide role this
    registry config drops: Artifact Registry images (gcr.io ones included) in another
    repository of the same project."""
    if reg is None or reg.read_all_repositories:
        return []
    out = []
    for i, image in enumerate(images):
        host, _, path = image.partition("/")
        parts = path.split("/")
        if host.endswith("-docker.pkg.dev") and len(parts) >= 3:
            project, repo = parts[0], parts[1]
        elif host == "gcr.io" or host.endswith(".gcr.io"):
            project, repo = parts[0], host
        else:
            continue
        if project == reg.project and not (repo == reg.name
                                           and host == f"{reg.location}-docker.pkg.dev"):
            out.append(i)
    return out


def check_cached_images(r: Reader, reg: RegistryConfig | None, image_cache: Any) -> None:
    """The raw ``imageCache`` entries (so indexes match the stack file) that the nodes
    could no longer pull under this registry config."""
    raw = image_cache if isinstance(image_cache, list) else []
    images = [str(c.get("image")) if isinstance(c, Mapping) else str(c) for c in raw]
    for i in unreadable_images(reg, images):
        r.fail(f"imageCache[{i}].image", f"{images[i]!r} is in another Artifact Registry "
               "repository of the project, which the nodes cannot read once `registry` "
               "limits them to its own; set registry.readAllRepositories: true")


def _days(r: Reader, raw: dict[str, Any], key: str, default: int | None) -> int | None:
    if key in raw and raw[key] is None:
        return None  # an explicit null turns the policy off
    days = r.get(raw, key, "registry.cleanup", int, default=default)
    if days is not None and days < 1:
        r.fail(f"registry.cleanup.{key}", f"{days} is below 1 (days); null turns it off")
    return days if days is None or days >= 1 else None


def _cleanup(r: Reader, value: Any) -> Cleanup | None:
    if value is False:
        return None  # no cleanup policies at all
    raw = r.obj(value, "registry.cleanup", CLEANUP_KEYS)
    keep = r.get(raw, "keepCount", "registry.cleanup", int, default=Cleanup.keep_count)
    if keep < 1:
        r.fail("registry.cleanup.keepCount", f"{keep} is below 1")
    return Cleanup(
        keep_count=max(keep, 1),
        older_than_days=_days(r, raw, "olderThanDays", Cleanup.older_than_days),
        untagged_after_days=_days(r, raw, "untaggedAfterDays", Cleanup.untagged_after_days),
        dry_run=bool(r.get(raw, "dryRun", "registry.cleanup", bool, default=False)),
    )
