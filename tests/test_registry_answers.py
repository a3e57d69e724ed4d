"""The registry answers image resolution meets, as the table says (tests/registry_answers.py):
every row driven over HTTP against Debian's docker-registry (plain, and with the token flow
and our token server), the resolver tested both ways (a tag that exists and one that does
not, plain and through a Bearer challenge), and docs/architecture.md prints the table.
"""

from __future__ import annotations

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest
import requests

import doc_pages
from oci_registry import OCI_INDEX, PASSWORD, USER, RegistryServer, serve
from registry_answers import ANSWERS, markdown
from submit.bundle.registry import ACCEPT_MANIFESTS, INSECURE_ENV, Registry
from submit.bundle.resolve import TagNotFound, resolve

REPO = "base/python"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "plain")


@pytest.fixture(scope="module")
def token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from serve(tmp_path_factory, "token")


def _manifest(server: RegistryServer, method: str, tag: str = "3.11",
              bearer: str | None = None) -> requests.Response:
    headers = {"Accept": ACCEPT_MANIFESTS}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    return requests.request(method, f"{server.url}/v2/{REPO}/manifests/{tag}", headers=headers,
                            verify=str(server.ca_file) if server.ca_file else True, timeout=10)


def _token(server: RegistryServer, password: str = PASSWORD) -> requests.Response:
    assert server.token_server is not None
    return requests.get(server.token_server.url, auth=(USER, password), timeout=10, params={
        "service": "test-registry", "scope": f"repository:{REPO}:pull"})


def _digest(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


# -- one driver a row: it sends the request, checks the answer, returns the status --------

def head(plain: RegistryServer, token: RegistryServer) -> int:
    r = _manifest(plain, "HEAD")
    body = _manifest(plain, "GET").content
    assert r.headers["Docker-Content-Digest"] == _digest(body)
    assert int(r.headers["Content-Length"]) == len(body)
    assert r.headers["Content-Type"] == OCI_INDEX and r.content == b""
    return r.status_code


def get(plain: RegistryServer, token: RegistryServer) -> int:
    r = _manifest(plain, "GET")
    assert r.headers["Docker-Content-Digest"] == _digest(r.content)
    assert r.json()["mediaType"] == OCI_INDEX
    return r.status_code


def head_unknown(plain: RegistryServer, token: RegistryServer) -> int:
    r = _manifest(plain, "HEAD", "nope")
    assert r.content == b""
    return r.status_code


def get_unknown(plain: RegistryServer, token: RegistryServer) -> int:
    r = _manifest(plain, "GET", "nope")
    (error,) = r.json()["errors"]
    assert (error["code"], error["message"]) == ("MANIFEST_UNKNOWN", "manifest unknown")
    return r.status_code


def challenge(plain: RegistryServer, token: RegistryServer) -> int:
    assert token.token_server is not None
    statuses = set()
    for method in ("HEAD", "GET"):
        r = _manifest(token, method)
        assert r.headers["WWW-Authenticate"] == (
            f'Bearer realm="{token.token_server.url}",service="test-registry",'
            f'scope="repository:{REPO}:pull"')
        statuses.add(r.status_code)
    assert [e["code"] for e in r.json()["errors"]] == ["UNAUTHORIZED"]
    (status,) = statuses
    return status


def token_(plain: RegistryServer, token: RegistryServer) -> int:
    r = _token(token)
    assert re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]+", r.json()["token"])
    return r.status_code


def token_refused(plain: RegistryServer, token: RegistryServer) -> int:
    r = _token(token, "wrong")
    assert r.content == b""
    return r.status_code


def head_token(plain: RegistryServer, token: RegistryServer) -> int:
    r = _manifest(token, "HEAD", bearer=_token(token).json()["token"])
    assert r.headers["Docker-Content-Digest"] == _manifest(plain, "HEAD").headers[
        "Docker-Content-Digest"]  # both were seeded with the same bytes
    return r.status_code


DRIVERS: dict[str, Callable[[RegistryServer, RegistryServer], int]] = {
    "head": head, "get": get, "head-unknown": head_unknown, "get-unknown": get_unknown,
    "challenge": challenge, "token": token_, "token-refused": token_refused,
    "head-token": head_token}


def test_every_row_has_a_driver() -> None:
    assert set(DRIVERS) == set(ANSWERS)


@pytest.mark.parametrize("key", sorted(DRIVERS))
def test_the_registry_answers_as_its_row_says(plain: RegistryServer, token: RegistryServer,
                                              key: str) -> None:
    assert DRIVERS[key](plain, token) == ANSWERS[key].status


@pytest.mark.parametrize("mode", ["plain", "token"])
def test_the_resolver_both_ways(plain: RegistryServer, token: RegistryServer, mode: str,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A tag that exists resolves to the digest HEAD gives (through the Bearer challenge
    and the token exchange in token mode); one that does not is TagNotFound."""
    server = plain if mode == "plain" else token
    if server.ca_file:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(server.ca_file))
    else:
        monkeypatch.setenv(INSECURE_ENV, server.host)
    registries: dict[str, Registry] = {server.host: Registry(
        server.host, credentials=lambda host: (USER, PASSWORD))}
    expected = _manifest(plain, "HEAD").headers["Docker-Content-Digest"]
    assert resolve(f"{server.host}/{REPO}:3.11", registries=registries) == (
        f"{server.host}/{REPO}@{expected}")
    with pytest.raises(TagNotFound):
        resolve(f"{server.host}/{REPO}:nope", registries=registries)
    if server.token_server is not None:
        scopes: list[Any] = [r["query"].get("scope") for r in server.token_server.requests]
        assert [f"repository:{REPO}:pull"] in scopes


def test_the_architecture_page_prints_the_table() -> None:
    page = doc_pages.section("docs/architecture.md", "## What the registry answers")
    assert markdown() in page


class _NoDigestHeader(ThreadingHTTPServer):
    """The plain registry behind a proxy that drops ``Docker-Content-Digest``: a registry
    of an earlier OCI distribution spec (spec.md 'Checking if content exists in the
    registry': earlier revisions say a successful response SHOULD carry the header; the
    current one says MUST and notes that clients may meet registries without it)."""

    def __init__(self, upstream: str) -> None:
        self.methods: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _forward(self) -> None:
                outer.methods.append(self.command)
                r = requests.request(self.command, upstream + self.path, timeout=10,
                                     headers={"Accept": self.headers.get("Accept", "")})
                self.send_response(r.status_code)
                for name in ("Content-Type", "Content-Length"):
                    if name in r.headers:
                        self.send_header(name, r.headers[name])
                self.end_headers()
                if self.command == "GET":
                    self.wfile.write(r.content)

            do_GET = do_HEAD = _forward

        outer = self
        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


def test_the_resolver_hashes_the_manifest_when_the_registry_sends_no_digest_header(
        plain: RegistryServer, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = _NoDigestHeader(plain.url)
    try:
        monkeypatch.setenv(INSECURE_ENV, proxy.host)
        expected = _manifest(plain, "HEAD").headers["Docker-Content-Digest"]
        assert resolve(f"{proxy.host}/{REPO}:3.11", registries={
            proxy.host: Registry(proxy.host)}) == f"{proxy.host}/{REPO}@{expected}"
        assert proxy.methods == ["HEAD", "GET"]  # the HEAD had no digest: the GET's body
    finally:
        proxy.shutdown()
        proxy.server_close()
