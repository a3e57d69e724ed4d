"""Bundling against a real registry (docker-registry on loopback), read back independently.

The registries and their base images are built here; every assertion reads the result
from the registry with plain requests (or skopeo), not with the code under test.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import random
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from oci_registry import DOCKER_MANIFEST, OCI_MANIFEST, PASSWORD, USER, RegistryServer, serve
from submit.bundle import plan
from submit.bundle.plan import BundleError, Platform
from submit.bundle.push import bundle
from submit.bundle.registry import INSECURE_ENV, Registry, RegistryError

AMD64, ARM64 = Platform("linux", "amd64"), Platform("linux", "arm64")
ACCEPT = ", ".join([OCI_MANIFEST, DOCKER_MANIFEST])


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "plain")


@pytest.fixture(scope="module")
def basic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "basic")


@pytest.fixture(scope="module")
def token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "token")


@pytest.fixture
def insecure(plain: RegistryServer, monkeypatch: pytest.MonkeyPatch) -> RegistryServer:
    monkeypatch.setenv(INSECURE_ENV, plain.host)
    return plain


@pytest.fixture
def script_dir(tmp_path: Path) -> Path:
    root = tmp_path / "trainer"
    for rel, text in {"train.py": "print('train')\n", "lib/util.py": "X = 1\n",
                      "secret.env": "TOKEN=x\n", "out/ckpt.bin": "weights",
                      ".gitignore": "out/\n", ".dockerignore": "*.env\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


class Counter:
    """Every request a session sends, as (method, path)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.session = requests.Session()
        self.session.hooks["response"].append(self._hook)

    def _hook(self, resp: requests.Response, *a: Any, **k: Any) -> None:
        self.seen.append((resp.request.method or "", requests.utils.urlparse(resp.url).path))

    def uploads(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p in self.seen
                if m in ("POST", "PATCH", "PUT") and "/blobs/uploads/" in p]

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p in self.seen if m in ("POST", "PATCH", "PUT")]


def _manifest(server: RegistryServer, repo: str, ref: str) -> dict[str, Any]:
    r = server.get(repo, "manifests", ref, ACCEPT)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _blob(server: RegistryServer, repo: str, digest: str) -> bytes:
    r = server.get(repo, "blobs", digest)
    assert r.status_code == 200, r.text
    return r.content


def _tar_names(blob: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob))) as tar:
        return tar.getnames()


def test_push_reads_back_layers_config_workdir_platform_and_contents(
        insecure: RegistryServer, script_dir: Path) -> None:
    repo = f"{insecure.host}/workloads"
    res = bundle(script_dir, f"{insecure.host}/base/python:3.11", repo, AMD64)
    assert res.image == f"{repo}/trainer@{res.digest}"
    m = _manifest(insecure, "workloads/trainer", res.digest)
    base = _manifest(insecure, "base/python", "3.11-amd64")
    assert m["mediaType"] == OCI_MANIFEST
    assert m["layers"][:-1] == base["layers"]
    assert m["layers"][-1]["digest"] == res.layer_digest
    cfg = json.loads(_blob(insecure, "workloads/trainer", m["config"]["digest"]))
    base_cfg = json.loads(_blob(insecure, "base/python", base["config"]["digest"]))
    layer = _blob(insecure, "workloads/trainer", res.layer_digest)
    assert cfg["rootfs"]["diff_ids"] == base_cfg["rootfs"]["diff_ids"] + [
        plan.digest_of(gzip.decompress(layer))]
    assert cfg["config"]["WorkingDir"] == "/app"
    assert cfg["config"]["Env"] == base_cfg["config"]["Env"]
    assert (cfg["os"], cfg["architecture"]) == ("linux", "amd64")
    # .gitignore'd out/ and .dockerignore'd secret.env are absent.
    assert _tar_names(layer) == ["app", "app/.dockerignore", "app/.gitignore", "app/lib",
                                 "app/lib/util.py", "app/train.py"]
    # Tagged by content: the tag names the same manifest.
    tagged = insecure.get("workloads/trainer", "manifests", plan.content_tag(
        insecure.get("workloads/trainer", "manifests", res.digest, ACCEPT).content), ACCEPT)
    assert tagged.status_code == 200
    assert tagged.headers["Docker-Content-Digest"] == res.digest
    assert res.tagged.endswith(":" + plan.content_tag(tagged.content))


class Recorder:
    """A Progress that records the bars started and the bytes reported."""

    def __init__(self) -> None:
        self.bars: list[tuple[str, int]] = []
        self.sent = 0
        self.finished = 0

    def start(self, label: str, total: int) -> Any:
        self.bars.append((label, total))

        def advance(n: int) -> None:
            self.sent += n
        return advance

    def finish(self) -> None:
        self.finished += 1


def test_second_push_of_the_same_tree_uploads_nothing(insecure: RegistryServer,
                                                      script_dir: Path) -> None:
    repo = f"{insecure.host}/workloads"
    first, bars = Counter(), Recorder()
    one = bundle(script_dir, f"{insecure.host}/base/python:3.11", repo, ARM64,
                 package="stable", session=first.session, progress=bars)
    assert first.uploads()  # something was sent the first time
    # A bar only for the bytes really sent: the script layer (the config is tiny; the base
    # layer was mounted from base/python).
    assert {d: how for d, how in one.blobs.items() if how != "uploaded"} == {
        _manifest(insecure, "base/python", "3.11-arm64")["layers"][0]["digest"]: "mounted"}
    layer_size = _manifest(insecure, "workloads/stable", one.digest)["layers"][-1]["size"]
    assert bars.bars == [("script directory", layer_size)] and bars.sent == layer_size
    assert bars.finished == 1
    second, bars = Counter(), Recorder()
    two = bundle(script_dir, f"{insecure.host}/base/python:3.11", repo, ARM64,
                 package="stable", session=second.session, progress=bars)
    assert bars.bars == []
    assert two.digest == one.digest
    assert second.writes() == []
    assert set(two.blobs.values()) == {"exists"}
    assert [m for m, _ in second.seen].count("HEAD") == len(two.blobs) + 1  # + the tag


def test_arm64_pick_from_the_index(insecure: RegistryServer, script_dir: Path) -> None:
    res = bundle(script_dir, f"{insecure.host}/base/python:3.11",
                 f"{insecure.host}/workloads", ARM64, package="arm")
    m = _manifest(insecure, "workloads/arm", res.digest)
    cfg = json.loads(_blob(insecure, "workloads/arm", m["config"]["digest"]))
    assert cfg["architecture"] == "arm64"
    base_layer = _blob(insecure, "workloads/arm", m["layers"][0]["digest"])
    assert _tar_names(base_layer) == ["etc/base-arm64"]


def test_same_registry_base_is_mounted_not_uploaded(insecure: RegistryServer,
                                                    script_dir: Path) -> None:
    counter = Counter()
    res = bundle(script_dir, f"{insecure.host}/base/docker-amd64:1",
                 f"{insecure.host}/mounts", AMD64, package="m", session=counter.session)
    base = _manifest(insecure, "base/docker-amd64", "1")
    assert res.blobs[base["layers"][0]["digest"]] == "mounted"
    assert any("mount=" in p or m == "POST" for m, p in counter.seen)
    # Docker media types stay Docker media types.
    m = _manifest(insecure, "mounts/m", res.digest)
    assert m["mediaType"] == DOCKER_MANIFEST
    assert m["layers"][-1]["mediaType"] == plan.DOCKER_LAYER_GZIP
    assert m["config"]["mediaType"] == plan.DOCKER_CONFIG


def test_chunked_upload_of_a_large_layer(insecure: RegistryServer, tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    (root / "blob.bin").write_bytes(random.Random(0).randbytes(300_000))  # incompressible
    reg = Registry(insecure.host, chunk_size=64 * 1024)
    counter = Counter()
    reg.session = counter.session
    res = bundle(root, f"{insecure.host}/base/python:3.11", f"{insecure.host}/chunks", AMD64,
                 registries={insecure.host: reg})
    assert [m for m, _ in counter.uploads()].count("PATCH") > 1
    layer = _blob(insecure, "chunks/big", res.layer_digest)
    assert plan.digest_of(layer) == res.layer_digest


def test_errors_say_what_to_do(insecure: RegistryServer, script_dir: Path) -> None:
    h = insecure.host
    with pytest.raises(RegistryError, match=r"base/python:9\.9 not found: check the image name and the tag"):
        bundle(script_dir, f"{h}/base/python:9.9", f"{h}/w", AMD64)
    # distribution answers MANIFEST_UNKNOWN for a repository it does not have, too
    with pytest.raises(RegistryError, match="/nope/nothing:1 not found: check the image name"):
        bundle(script_dir, f"{h}/nope/nothing:1", f"{h}/w", AMD64)
    with pytest.raises(BundleError, match="is linux/amd64, but the pool's machines need "
                                          "linux/arm64"):
        bundle(script_dir, f"{h}/base/docker-amd64:1", f"{h}/w", ARM64)


def test_dry_run_computes_the_same_digest_without_writing(insecure: RegistryServer,
                                                          script_dir: Path) -> None:
    counter = Counter()
    dry = bundle(script_dir, f"{insecure.host}/base/python:3.11",
                 f"{insecure.host}/workloads", AMD64, package="dry", push=False,
                 session=counter.session)
    assert counter.writes() == []
    assert insecure.get("workloads/dry", "manifests", dry.digest, ACCEPT).status_code == 404
    real = bundle(script_dir, f"{insecure.host}/base/python:3.11",
                  f"{insecure.host}/workloads", AMD64, package="dry")
    assert real.digest == dry.digest


def _docker_config(tmp_path: Path, host: str, user: str, password: str) -> Path:
    d = tmp_path / "docker"
    d.mkdir(exist_ok=True)
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    (d / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return d


def test_tls_and_basic_auth(basic: RegistryServer, script_dir: Path, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert basic.ca_file is not None
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(basic.ca_file))
    monkeypatch.setenv("DOCKER_CONFIG", str(_docker_config(tmp_path, basic.host, USER,
                                                           PASSWORD)))
    res = bundle(script_dir, f"{basic.host}/base/python:3.11", f"{basic.host}/secure", AMD64)
    m = _manifest(basic, "secure/trainer", res.digest)
    assert m["layers"][-1]["digest"] == res.layer_digest
    # Wrong password: a one-line message saying what to do, no secret in it.
    monkeypatch.setenv("DOCKER_CONFIG", str(_docker_config(tmp_path, basic.host, USER,
                                                           "wrong-pw")))
    with pytest.raises(RegistryError) as e:
        bundle(script_dir, f"{basic.host}/base/python:3.11", f"{basic.host}/secure", AMD64)
    assert "refused access (401/403): check the image name, and log in with `docker login" in str(e.value)
    assert "wrong-pw" not in str(e.value) and PASSWORD not in str(e.value)


def test_tls_without_trusting_the_certificate_fails_clearly(basic: RegistryServer,
                                                            script_dir: Path) -> None:
    with pytest.raises(RegistryError, match="TLS verification failed"):
        bundle(script_dir, f"{basic.host}/base/python:3.11", f"{basic.host}/x", AMD64)


def test_token_flow_with_scopes_for_push_and_mount(token: RegistryServer, script_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The flow Artifact Registry uses: 401 Bearer challenge, token from the realm with
    basic credentials (for AR, oauth2accesstoken and the ADC access token)."""
    assert token.ca_file is not None and token.token_server is not None
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(token.ca_file))
    reg = Registry(token.host, credentials=lambda host: (USER, PASSWORD))
    res = bundle(script_dir, f"{token.host}/base/python:3.11", f"{token.host}/tok", AMD64,
                 registries={token.host: reg})
    m = _manifest(token, "tok/trainer", res.digest)
    assert m["layers"][-1]["digest"] == res.layer_digest
    scopes = {s for r in token.token_server.requests for s in r["query"].get("scope", [])}
    assert {"repository:tok/trainer:pull,push", "repository:base/python:pull"} <= scopes
    assert set(res.blobs.values()) >= {"mounted"}
    bad = Registry(token.host, credentials=lambda host: (USER, "nope"))
    with pytest.raises(RegistryError, match="refused access"):
        bundle(script_dir, f"{token.host}/base/python:3.11", f"{token.host}/tok", AMD64,
               registries={token.host: bad})


def test_skopeo_reads_the_pushed_image(insecure: RegistryServer, script_dir: Path,
                                       tmp_path: Path) -> None:
    skopeo = shutil.which("skopeo")
    if skopeo is None:
        pytest.fail("skopeo is not installed (Debian package skopeo; .ci/run installs it)")
    res = bundle(script_dir, f"{insecure.host}/base/python:3.11",
                 f"{insecure.host}/workloads", AMD64, package="skopeo")
    ref = f"docker://{insecure.host}/workloads/skopeo@{res.digest}"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([skopeo, "inspect", "--tls-verify=false", "--config", ref],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    cfg = json.loads(out.stdout)
    assert cfg["config"]["WorkingDir"] == "/app" and cfg["architecture"] == "amd64"
    dest = tmp_path / "oci"
    out = subprocess.run([skopeo, "copy", "--src-tls-verify=false", ref, f"oci:{dest}"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr  # skopeo checks every blob's digest
    index = json.loads((dest / "index.json").read_text())
    assert index["manifests"][0]["digest"] == res.digest


class _FakeOAuth:
    """Google's OAuth token endpoint, as a service-account key's ``token_uri`` reaches it."""

    def __init__(self, access_token: str) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading

        self.calls = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.calls += 1
                body = json.dumps({"access_token": access_token, "expires_in": 3600,
                                   "token_type": "Bearer"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/token"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _service_account_key(path: Path, token_uri: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "test-project", "private_key_id": "k1",
        "private_key": pem, "client_email": "pusher@test-project.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": token_uri}))


def test_application_default_credentials_through_the_token_flow(
        token: RegistryServer, script_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Artifact Registry's path end to end, without GCP: ADC (a service-account key whose
    token endpoint is local) gives an access token, sent to the registry's token realm as
    basic credentials oauth2accesstoken:<token>."""
    from submit.bundle.registry import google_auth

    assert token.ca_file is not None and token.token_server is not None
    oauth = _FakeOAuth("ya29.test-access-token")
    try:
        _service_account_key(tmp_path / "sa.json", oauth.url)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "sa.json"))
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(token.ca_file))
        token.token_server.accepted.add(("oauth2accesstoken", "ya29.test-access-token"))
        reg = Registry(token.host, credentials=lambda host: google_auth())
        res = bundle(script_dir, f"{token.host}/base/python:3.11", f"{token.host}/adc",
                     AMD64, registries={token.host: reg})
        assert oauth.calls == 1
        assert _manifest(token, "adc/trainer", res.digest)["layers"][-1]["digest"] == \
            res.layer_digest
    finally:
        oauth.stop()


def test_missing_application_default_credentials_say_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from submit.bundle.registry import default_credentials

    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(RegistryError) as e:
        default_credentials("us-central1-docker.pkg.dev")
    assert str(e.value) == (
        "no usable Application Default Credentials (DefaultCredentialsError); run "
        "`gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS) "
        "and try again")


@pytest.mark.parametrize("ref, parsed", [
    ("python:3.12", ("docker.io", "library/python", "3.12", None)),
    ("ghcr.io/org/img", ("ghcr.io", "org/img", None, None)),
    ("localhost:5000/a/b:t", ("localhost:5000", "a/b", "t", None)),
    ("user/img@sha256:" + "a" * 64, ("docker.io", "user/img", None, "sha256:" + "a" * 64)),
    ("us-docker.pkg.dev/p/r/i:1", ("us-docker.pkg.dev", "p/r/i", "1", None)),
])
def test_parse_ref(ref: str, parsed: tuple[Any, ...]) -> None:
    from submit.bundle.registry import parse_ref

    r = parse_ref(ref)
    assert (r.registry, r.repository, r.tag, r.digest) == parsed


@pytest.mark.parametrize("host, google", [
    ("us-central1-docker.pkg.dev", True), ("europe-docker.pkg.dev", True), ("gcr.io", True),
    ("eu.gcr.io", True), ("ghcr.io", False), ("evildocker.pkg.dev", False), ("docker.io", False), ("127.0.0.1:5000", False),
])
def test_google_hosts(host: str, google: bool) -> None:
    from submit.bundle.registry import is_google_host

    assert is_google_host(host) is google


class _Refusing:
    """A registry that answers every request with one status and error code (as Artifact
    Registry does for a repository that does not exist, or an account without a role)."""

    def __init__(self, status: int, code: str, only: str = "") -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _answer(self) -> None:
                refuse = not only or self.command == only
                body = json.dumps({"errors": [{"code": code, "message": "no"}]}).encode() \
                    if refuse else b""
                self.send_response(status if refuse else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("status, code, only, message", [
    (404, "NAME_UNKNOWN", "POST", "repository {host}/team/app does not exist: create it (the "
     "stack creates it with `registry: {{create: true}}` and `pulumi up`) or pass another one"),
    (403, "DENIED", "", "registry {host}/team/app refused access (401/403): check the image "
     "name, and log in with `docker login {host}` (credentials are read from the Docker "
     "config file) for a private image"),
    (500, "UNKNOWN", "POST", "registry {host}: starting an upload to team/app failed with HTTP "
     "500 (UNKNOWN)"),
])
def test_push_refusals_say_what_to_do(status: int, code: str, only: str, message: str) -> None:
    fake = _Refusing(status, code, only)
    try:
        reg = Registry(fake.host, insecure=True, credentials=lambda h: None)
        with pytest.raises(RegistryError) as e:
            reg.push_blob("team/app", "sha256:" + "0" * 64, 3, lambda: [b"abc"])
        assert str(e.value) == message.format(host=fake.host)
    finally:
        fake.stop()
