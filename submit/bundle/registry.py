"""The OCI seam: the one module that talks to container registries (distribution API v2).

A small client over ``requests`` for exactly what bundling needs: read manifests and
blobs, HEAD before every upload, cross-repository mounts, monolithic or chunked uploads,
and manifest PUT. Authentication follows the distribution token flow: a 401 carries a
``WWW-Authenticate`` challenge; a Bearer challenge sends us to its realm for a token for
the scopes we need (anonymously, or with basic credentials), a Basic challenge takes the
credentials directly. Artifact Registry hosts get the user's Application Default
Credentials (google-auth) as basic credentials ``oauth2accesstoken:<access token>``, the
form ``docker login`` uses with an access token
(https://cloud.google.com/artifact-registry/docs/docker/authentication, "Access token";
the HTTP API: https://cloud.google.com/artifact-registry/docs/reference/docker-api). Other
registries use ``docker login``'s ``auths`` entries in the Docker config file, or none.
Every failure is a RegistryError whose message says what to do; no secret is ever in one.
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urljoin, urlsplit

import requests

from infra.contract.images import image_problem
from infra.record import record
from submit.bundle.plan import digest_of

ACCEPT_MANIFESTS = ", ".join((
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
))
DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
CHUNK = 16 * 1024 * 1024  # blobs up to this size go in one PUT, larger ones in PATCHes
TIMEOUT = 60
INSECURE_ENV = "ACCELSTACK_INSECURE_REGISTRIES"  # hosts reached over plain HTTP
GOOGLE_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


class RegistryError(Exception):
    """A registry said no, or could not be reached; the message says what to do."""


@record
class ImageRef:
    registry: str  # host[:port], docker.io for Docker Hub
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        return self.digest or self.tag or "latest"

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        return self.name + (f":{self.tag}" if self.tag else "") + (
            f"@{self.digest}" if self.digest else "")


def parse_ref(ref: str) -> ImageRef:
    """Docker's reading of an image reference: the first component is a registry host if
    it has a '.' or a ':' or is 'localhost'; else the image is on Docker Hub."""
    problem = image_problem(ref)
    if problem:
        raise RegistryError(problem)
    rest, _, digest = ref.partition("@")
    first, slash, remainder = rest.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        host, path = first, remainder
    else:
        host, path = DOCKER_HUB, rest
    name, colon, tag = path.rpartition(":") if ":" in path else (path, "", "")
    if host == DOCKER_HUB and "/" not in name:
        name = f"library/{name}"  # Docker Hub's official images
    return ImageRef(host, name, tag or None, digest or None)


def is_google_host(host: str) -> bool:
    """Artifact Registry (LOCATION-docker.pkg.dev) and the gcr.io hosts it serves."""
    h = host.split(":")[0]
    # Strict suffixes: these hosts receive the user's access token.
    return h.endswith("-docker.pkg.dev") or h == "gcr.io" or h.endswith(".gcr.io")


def docker_config_auth(host: str) -> tuple[str, str] | None:
    """Basic credentials ``docker login`` stored for ``host`` ($DOCKER_CONFIG/config.json)."""
    path = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker") / "config.json"
    try:
        auths = json.loads(path.read_text()).get("auths") or {}
    except (OSError, ValueError, AttributeError):
        return None
    keys = {host, f"https://{host}", f"http://{host}"}
    if host == DOCKER_HUB:
        keys |= {"https://index.docker.io/v1/", "index.docker.io"}
    for key, entry in auths.items():
        if key.rstrip("/") in keys or key in keys:
            token = (entry or {}).get("auth")
            if token:
                user, _, password = base64.b64decode(token).decode().partition(":")
                return user, password
    return None


def google_auth() -> tuple[str, str]:
    """Application Default Credentials as Artifact Registry's basic credentials."""
    import google.auth
    import google.auth.exceptions
    import google.auth.transport.requests

    try:
        creds, _ = google.auth.default(scopes=GOOGLE_SCOPES)
        creds.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
    except google.auth.exceptions.GoogleAuthError as e:
        raise RegistryError(
            f"no usable Application Default Credentials ({type(e).__name__}); run "
            "`gcloud auth application-default login` (or set "
            "GOOGLE_APPLICATION_CREDENTIALS) and try again") from None
    return "oauth2accesstoken", str(creds.token)


def _challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, rest = header.strip().partition(" ")
    params = {k.lower(): v for k, v in re.findall(r'(\w+)="([^"]*)"', rest)}
    return scheme.lower(), params


def _error_codes(resp: requests.Response) -> set[str]:
    try:
        return {str(e.get("code")) for e in resp.json().get("errors") or []}
    except (ValueError, AttributeError):
        return set()


class Registry:
    """One registry host. ``counts`` tallies requests by (method, kind) for callers' stats."""

    def __init__(self, host: str, *, session: requests.Session | None = None,
                 credentials: Callable[[str], tuple[str, str] | None] | None = None,
                 insecure: bool | None = None, chunk_size: int = CHUNK) -> None:
        self.host = host
        self.chunk_size = chunk_size
        api = DOCKER_HUB_API if host == DOCKER_HUB else host
        if insecure is None:
            insecure = host in {h.strip() for h in os.environ.get(INSECURE_ENV, "").split(",")}
        self.base = f"{'http' if insecure else 'https'}://{api}"
        self.session = session or requests.Session()
        self._credentials = credentials
        self._basic: tuple[str, str] | None = None
        self._basic_loaded = False
        self._auth_header: str | None = None
        self._scopes: set[str] = set()

    # -- auth ---------------------------------------------------------------------------

    def _creds(self) -> tuple[str, str] | None:
        if not self._basic_loaded:
            lookup = self._credentials or default_credentials
            self._basic, self._basic_loaded = lookup(self.host), True
        return self._basic

    def _authenticate(self, resp: requests.Response, scope: str) -> None:
        scheme, params = _challenge(resp.headers.get("WWW-Authenticate", ""))
        creds = self._creds()
        if scheme == "basic":
            if creds is None:
                raise self._unauthorized(None)
            raw = f"{creds[0]}:{creds[1]}".encode()
            self._auth_header = "Basic " + base64.b64encode(raw).decode()
            return
        if scheme != "bearer" or "realm" not in params:
            raise RegistryError(f"registry {self.host} asked for {scheme or 'no'} "
                                "authentication, which is not supported")
        self._scopes.add(scope)
        if params.get("scope"):
            self._scopes.add(params["scope"])
        query: list[tuple[str, str]] = [("scope", s) for s in sorted(self._scopes)]
        if params.get("service"):
            query.insert(0, ("service", params["service"]))
        try:
            tok = self.session.get(params["realm"], params=query, auth=creds, timeout=TIMEOUT)
        except requests.RequestException as e:
            raise RegistryError(f"cannot reach the token service of {self.host}: "
                                f"{type(e).__name__}") from None
        if tok.status_code in (401, 403):
            raise self._unauthorized(None)
        if tok.status_code != 200:
            raise RegistryError(f"the token service of {self.host} answered "
                                f"{tok.status_code}")
        body = tok.json()
        token = body.get("token") or body.get("access_token")
        if not token:
            raise RegistryError(f"the token service of {self.host} returned no token")
        self._auth_header = f"Bearer {token}"

    def _unauthorized(self, repo: str | None) -> RegistryError:
        what = f"{self.host}/{repo}" if repo else self.host
        if is_google_host(self.host):
            hint = ("run `gcloud auth application-default login` and check that your account "
                    "has roles/artifactregistry.writer on the repository (reader for base "
                    "images)")
        else:
            hint = (f"check the image name, and log in with `docker login {self.host}` "
                    "(credentials are read from the Docker config file) for a private image")
        return RegistryError(f"registry {what} refused access (401/403): {hint}")

    # -- requests -----------------------------------------------------------------------

    def request(self, method: str, repo: str, url: str, *, push: bool = False,
                extra_scopes: Iterable[str] = (), **kw: Any) -> requests.Response:
        """Send a request, answering one authentication challenge; 401 and 403 raise."""
        scope = f"repository:{repo}:{'pull,push' if push else 'pull'}"
        self._scopes.update(extra_scopes)
        full = url if url.startswith(("http://", "https://")) else self.base + url
        headers = dict(kw.pop("headers", {}) or {})
        headers.setdefault("User-Agent", "accelstack")
        for attempt in range(2):
            if self._auth_header:
                headers["Authorization"] = self._auth_header
            try:
                resp = self.session.request(method, full, headers=headers, timeout=TIMEOUT,
                                            **kw)
            except requests.exceptions.SSLError:
                raise RegistryError(
                    f"TLS verification failed for {self.host}: trust its certificate "
                    "(REQUESTS_CA_BUNDLE), or list it in "
                    f"{INSECURE_ENV} if it serves plain HTTP") from None
            except requests.RequestException as e:
                raise RegistryError(f"cannot reach registry {self.host}: "
                                    f"{type(e).__name__}") from None
            if resp.status_code == 401 and attempt == 0:
                self._authenticate(resp, scope)  # bodies are bytes: sending again is safe
                continue
            if resp.status_code in (401, 403):
                raise self._unauthorized(repo)
            return resp
        raise AssertionError("unreachable")

    def get_manifest(self, repo: str, reference: str) -> tuple[bytes, str, str]:
        """(body, media type, digest) of a manifest or index; RegistryError if absent."""
        resp = self.request("GET", repo, f"/v2/{repo}/manifests/{reference}",
                            headers={"Accept": ACCEPT_MANIFESTS})
        if resp.status_code == 404:
            codes = _error_codes(resp)
            if "NAME_UNKNOWN" in codes:
                raise RegistryError(f"repository {self.host}/{repo} does not exist (or you "
                                    "cannot see it): check the image name")
            sep = "@" if reference.startswith("sha256:") else ":"
            raise RegistryError(f"{self.host}/{repo}{sep}{reference} not found: check the "
                                "image name and the tag (or push the image first)")
        if resp.status_code != 200:
            raise self._failed(resp, f"reading manifest {repo}:{reference}")
        body = resp.content
        digest = digest_of(body)
        if reference.startswith("sha256:") and digest != reference:
            raise RegistryError(f"{self.host}/{repo}@{reference}: the registry returned "
                                f"content with digest {digest}")
        media = resp.headers.get("Content-Type", "").split(";")[0].strip()
        try:
            media = json.loads(body).get("mediaType") or media
        except (ValueError, AttributeError):
            raise RegistryError(f"{self.host}/{repo}:{reference}: the manifest is not JSON") \
                from None
        return body, media, digest

    def manifest_digest(self, repo: str, reference: str, *, push: bool = False) -> str | None:
        """The digest a tag or digest names in ``repo``, or None (HEAD)."""
        resp = self.request("HEAD", repo, f"/v2/{repo}/manifests/{reference}", push=push,
                            headers={"Accept": ACCEPT_MANIFESTS})
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise self._failed(resp, f"checking manifest {repo}:{reference}")
        return resp.headers.get("Docker-Content-Digest") or ""

    def get_blob(self, repo: str, digest: str) -> bytes:
        data = b"".join(self.blob_chunks(repo, digest))
        if digest_of(data) != digest:
            raise RegistryError(f"{self.host}/{repo}: blob {digest} arrived corrupted")
        return data

    def blob_chunks(self, repo: str, digest: str, chunk: int = 1024 * 1024
                    ) -> Iterator[bytes]:
        resp = self.request("GET", repo, f"/v2/{repo}/blobs/{digest}", stream=True)
        if resp.status_code != 200:
            raise self._failed(resp, f"reading blob {digest} of {repo}")
        yield from resp.iter_content(chunk)

    def blob_exists(self, repo: str, digest: str) -> bool:
        resp = self.request("HEAD", repo, f"/v2/{repo}/blobs/{digest}", push=True)
        if resp.status_code == 200:
            return True
        if resp.status_code == 404:
            return False
        raise self._failed(resp, f"checking blob {digest} in {repo}")

    def push_blob(self, repo: str, digest: str, size: int,
                  chunks: Callable[[], Iterable[bytes]], *, mount_from: str | None = None,
                  progress: Callable[[int], None] | None = None,
                  check: bool = True) -> str:
        """Make ``digest`` exist in ``repo``: "exists", "mounted" or "uploaded"
        (``check=False`` when the caller has just checked with ``blob_exists``)."""
        if check and self.blob_exists(repo, digest):
            return "exists"
        url = f"/v2/{repo}/blobs/uploads/"
        extra: list[str] = []
        if mount_from:
            url += f"?mount={digest}&from={mount_from}"
            extra = [f"repository:{mount_from}:pull"]
        resp = self.request("POST", repo, url, push=True, extra_scopes=extra)
        if resp.status_code == 201 and mount_from:
            return "mounted"
        if resp.status_code == 404:
            raise RegistryError(
                f"repository {self.host}/{repo} does not exist: create it (the stack creates "
                "it with `registry: {create: true}` and `pulumi up`) or pass another one")
        if resp.status_code != 202:
            raise self._failed(resp, f"starting an upload to {repo}")
        location = self._location(resp)
        if size <= self.chunk_size:
            body = b"".join(chunks())
            resp = self.request("PUT", repo, _with_digest(location, digest), push=True,
                                data=body, headers={"Content-Type": "application/octet-stream",
                                                    "Content-Length": str(len(body))})
            if progress:
                progress(len(body))
        else:
            offset = 0
            for piece in _rechunk(chunks(), self.chunk_size):
                resp = self.request("PATCH", repo, location, push=True, data=piece, headers={
                    "Content-Type": "application/octet-stream",
                    "Content-Length": str(len(piece)),
                    "Content-Range": f"{offset}-{offset + len(piece) - 1}"})
                if resp.status_code != 202:
                    raise self._failed(resp, f"uploading blob {digest} to {repo}")
                location = self._location(resp)
                offset += len(piece)
                if progress:
                    progress(len(piece))
            resp = self.request("PUT", repo, _with_digest(location, digest), push=True,
                                headers={"Content-Length": "0"})
        if resp.status_code != 201:
            raise self._failed(resp, f"finishing the upload of blob {digest} to {repo}")
        return "uploaded"

    def put_manifest(self, repo: str, tag: str, body: bytes, media_type: str) -> str:
        resp = self.request("PUT", repo, f"/v2/{repo}/manifests/{tag}", push=True, data=body,
                            headers={"Content-Type": media_type})
        if resp.status_code == 404:
            raise RegistryError(f"repository {self.host}/{repo} does not exist: create it")
        if resp.status_code not in (200, 201):
            raise self._failed(resp, f"pushing manifest {repo}:{tag}")
        return resp.headers.get("Docker-Content-Digest") or ""

    # -- helpers ------------------------------------------------------------------------

    def _location(self, resp: requests.Response) -> str:
        loc = resp.headers.get("Location")
        if not loc:
            raise RegistryError(f"registry {self.host} started an upload without a Location")
        return urljoin(resp.url, loc)

    def _failed(self, resp: requests.Response, doing: str) -> RegistryError:
        codes = ", ".join(sorted(_error_codes(resp))) or resp.reason
        return RegistryError(f"registry {self.host}: {doing} failed with HTTP "
                             f"{resp.status_code} ({codes})")


def _with_digest(location: str, digest: str) -> str:
    sep = "&" if urlsplit(location).query else "?"
    return f"{location}{sep}digest={digest}"


def _rechunk(pieces: Iterable[bytes], size: int) -> Iterator[bytes]:
    buf = bytearray()
    for p in pieces:
        buf += p
        while len(buf) >= size:
            yield bytes(buf[:size])
            del buf[:size]
    if buf:
        yield bytes(buf)


def default_credentials(host: str) -> tuple[str, str] | None:
    """ADC for Artifact Registry hosts; ``docker login``'s credentials elsewhere."""
    if is_google_host(host):
        return google_auth()
    return docker_config_auth(host)
