"""A real OCI registry for tests: Debian's ``docker-registry`` (CNCF distribution) on loopback.

``RegistryServer`` writes its own config file (the package's default config would listen
on every interface and read /etc), binds 127.0.0.1 on a port the kernel picks, and is
always stopped by the fixture that starts it. Modes: plain HTTP with no auth; TLS with a
self-signed certificate and htpasswd (bcrypt) basic auth; TLS with the distribution token
flow, served by a small token server here that signs JWTs the registry trusts.
If the binary is missing or the server does not come up, the test FAILS with the reason.

Also builds and seeds base images independently of the code under test (plain requests).
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

USER, PASSWORD = "tester", "s3cret-pw"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"


def _key_and_cert(dir_: Path) -> tuple[Path, Path, Any, Any]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_path, cert_path = dir_ / "key.pem", dir_ / "cert.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path, key, cert


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenServer:
    """The distribution token flow's auth server: GET /token?service=&scope= with basic
    credentials returns a JWT granting the requested actions (RS256, x5c header)."""

    def __init__(self, key: Any, cert: Any, service: str, issuer: str) -> None:
        from cryptography.hazmat.primitives import serialization

        self.key, self.service, self.issuer = key, service, issuer
        # Accepted basic credentials; tests add Artifact Registry's form
        # (oauth2accesstoken, <access token>).
        self.accepted = {(USER, PASSWORD)}
        self.x5c = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                q = parse_qs(urlsplit(self.path).query)
                auth = self.headers.get("Authorization", "")
                outer.requests.append({"query": q, "auth": auth})
                allowed = {"Basic " + base64.b64encode(f"{u}:{p}".encode()).decode()
                           for u, p in outer.accepted}
                if auth not in allowed:
                    self.send_response(401)
                    self.end_headers()
                    return
                body = json.dumps({"token": outer.token(q.get("scope", []))}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/token"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def token(self, scopes: list[str]) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        access = []
        for s in scopes:
            kind, name, actions = s.split(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": [self.x5c]}
        claims = {"iss": self.issuer, "sub": USER, "aud": self.service, "exp": now + 600,
                  "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(), "access": access}
        signing = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
        sig = self.key.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing}.{_b64url(sig)}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class RegistryServer:
    workdir: Path
    mode: str  # "plain", "basic" or "token"
    host: str = ""
    ca_file: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    token_server: TokenServer | None = None

    @property
    def url(self) -> str:
        return f"{'http' if self.mode == 'plain' else 'https'}://{self.host}"

    def start(self) -> "RegistryServer":
        binary = shutil.which("docker-registry")
        if binary is None:
            pytest.fail("docker-registry is not installed (Debian package docker-registry; "
                        ".ci/run installs it with apt-get)")
        storage = self.workdir / "storage"
        storage.mkdir(parents=True)
        http: dict[str, Any] = {"addr": "127.0.0.1:0"}
        config: dict[str, Any] = {
            "version": 0.1,
            "log": {"level": "info", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(storage)},
                        "delete": {"enabled": True}},
            "http": http,
        }
        if self.mode != "plain":
            key_path, cert_path, key, cert = _key_and_cert(self.workdir)
            http["tls"] = {"certificate": str(cert_path), "key": str(key_path)}
            self.ca_file = cert_path
        if self.mode == "basic":
            import bcrypt

            hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=5)).decode()
            (self.workdir / "htpasswd").write_text(f"{USER}:{hashed}\n")
            config["auth"] = {"htpasswd": {"realm": "accelstack-test",
                                           "path": str(self.workdir / "htpasswd")}}
        if self.mode == "token":
            self.token_server = TokenServer(key, cert, "test-registry", "test-issuer")
            config["auth"] = {"token": {"realm": self.token_server.url,
                                        "service": "test-registry", "issuer": "test-issuer",
                                        "rootcertbundle": str(cert_path)}}
        path = self.workdir / "config.yml"
        path.write_text(json.dumps(config))  # JSON is YAML
        log = open(self.workdir / "registry.log", "wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("REGISTRY_")}
        self.proc = subprocess.Popen([binary, "serve", str(path)], stdout=log,
                                     stderr=subprocess.STDOUT, env=env,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text = (self.workdir / "registry.log").read_text(errors="replace")
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
            if m:
                self.host = f"127.0.0.1:{m.group(1)}"
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"docker-registry did not start ({self.mode}):\n"
                    + (self.workdir / "registry.log").read_text(errors="replace")[-2000:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.token_server is not None:
            self.token_server.stop()
            self.token_server = None

    # -- independent access for seeding and reading back --------------------------------

    def session(self) -> requests.Session:
        s = requests.Session()
        s.trust_env = False  # REQUESTS_CA_BUNDLE in the environment would replace verify
        if self.ca_file:
            s.verify = str(self.ca_file)
        if self.mode == "basic":
            s.auth = (USER, PASSWORD)
        return s

    def _headers(self, s: requests.Session, repo: str, push: bool) -> dict[str, str]:
        if self.mode != "token":
            return {}
        assert self.token_server is not None
        token = self.token_server.token([f"repository:{repo}:{'pull,push' if push else 'pull'}"])
        return {"Authorization": f"Bearer {token}"}

    def put_blob(self, repo: str, data: bytes) -> str:
        s = self.session()
        h = self._headers(s, repo, True)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        r = s.post(f"{self.url}/v2/{repo}/blobs/uploads/", headers=h)
        assert r.status_code == 202, r.text
        loc = r.headers["Location"]
        loc = loc if loc.startswith("http") else self.url + loc
        r = s.put(loc + ("&" if "?" in loc else "?") + f"digest={digest}", data=data,
                  headers={**h, "Content-Type": "application/octet-stream"})
        assert r.status_code == 201, r.text
        return digest

    def put_manifest(self, repo: str, ref: str, body: bytes, media: str) -> str:
        s = self.session()
        r = s.put(f"{self.url}/v2/{repo}/manifests/{ref}", data=body,
                  headers={**self._headers(s, repo, True), "Content-Type": media})
        assert r.status_code == 201, r.text
        return "sha256:" + hashlib.sha256(body).hexdigest()

    def get(self, repo: str, what: str, ref: str, accept: str = "") -> requests.Response:
        s = self.session()
        h = self._headers(s, repo, False)
        if accept:
            h["Accept"] = accept
        return s.get(f"{self.url}/v2/{repo}/{what}/{ref}", headers=h)


def tiny_layer(files: dict[str, bytes]) -> tuple[bytes, str]:
    """(gzip blob, diff_id) of a tar holding ``files``."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    tar_bytes = raw.getvalue()
    return gzip.compress(tar_bytes, mtime=0), "sha256:" + hashlib.sha256(tar_bytes).hexdigest()


def seed_image(server: RegistryServer, repo: str, tag: str, arch: str,
               docker_types: bool = False) -> tuple[str, int]:
    """Push a one-layer linux/``arch`` image; (manifest digest, manifest size)."""
    blob, diff_id = tiny_layer({f"etc/base-{arch}": f"base for {arch}\n".encode()})
    layer = server.put_blob(repo, blob)
    config = json.dumps({
        "architecture": arch, "os": "linux",
        "config": {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin"], "Cmd": ["/bin/sh"]},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "2024-01-01T00:00:00Z", "created_by": "seed"}],
    }).encode()
    config_digest = server.put_blob(repo, config)
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": DOCKER_MANIFEST if docker_types else OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json"
                   if docker_types else "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip"
                    if docker_types else "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer, "size": len(blob)}],
    }).encode()
    media = DOCKER_MANIFEST if docker_types else OCI_MANIFEST
    return server.put_manifest(repo, tag, manifest, media), len(manifest)


def seed_index(server: RegistryServer, repo: str, tag: str) -> str:
    """An OCI index with linux/amd64 and linux/arm64 images, each one tiny layer."""
    entries = []
    for arch in ("amd64", "arm64"):
        digest, size = seed_image(server, repo, f"{tag}-{arch}", arch)
        platform = {"architecture": arch, "os": "linux"}
        if arch == "arm64":
            platform["variant"] = "v8"
        entries.append({"mediaType": OCI_MANIFEST, "digest": digest, "size": size,
                        "platform": platform})
    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX,
                        "manifests": entries}).encode()
    return server.put_manifest(repo, tag, index, OCI_INDEX)


def serve(tmp_path_factory: pytest.TempPathFactory, mode: str) -> Iterator[RegistryServer]:
    """A started registry seeded with base/python:3.11 (an amd64+arm64 index) and
    base/docker-amd64:1 (a single amd64 manifest in Docker media types); always stopped."""
    server = RegistryServer(tmp_path_factory.mktemp(f"registry-{mode}"), mode)
    try:
        server.start()
        seed_index(server, "base/python", "3.11")
        seed_image(server, "base/docker-amd64", "1", "amd64", docker_types=True)
        yield server
    finally:
        server.stop()
