"""What a registry answers to the requests that resolve an image tag to its digest
(submit/bundle/resolve.py through submit/bundle/registry.py): one table, which
tests/test_registry_answers.py drives against the registry the tests run (Debian's
docker-registry, CNCF distribution 2.8.2, plain and with the token flow; the token server is
ours, tests/oci_registry.py TokenServer) and docs/architecture.md prints.

Sources: the OCI distribution spec (github.com/opencontainers/distribution-spec, spec.md),
distribution v2.8.2 (github.com/distribution/distribution: registry/handlers/manifests.go,
registry/api/v2/errors.go, registry/api/errcode/, registry/auth/token/accesscontroller.go,
docs/spec/auth/token.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    key: str
    call: str
    case: str
    status: int
    answer: str  # headers and body
    source: str


_ROWS = (
    Answer("head", "HEAD `/v2/NAME/manifests/TAG`", "the tag exists", 200,
           "`Docker-Content-Digest` (the manifest's digest), `Content-Length`, `Content-Type` "
           "(the manifest's media type); no body",
           "spec.md 'Checking if content exists in the registry' (the header: earlier "
           "revisions say a successful response 'SHOULD' carry it; the current one says MUST "
           "and notes that clients may meet registries of earlier versions without it, so "
           "the resolver then hashes a GET's manifest); "
           "manifests.go GetManifest (also serves HEAD): "
           "`w.Header().Set(\"Docker-Content-Digest\", ...)`"),
    Answer("get", "GET `/v2/NAME/manifests/TAG`", "the tag exists", 200,
           "the manifest; `Docker-Content-Digest` is the sha256 of that body",
           "spec.md 'Pulling manifests'; manifests.go GetManifest"),
    Answer("head-unknown", "HEAD `/v2/NAME/manifests/TAG`", "no such tag", 404, "no body",
           "spec.md 'Checking if content exists in the registry': 'MUST be `404 Not Found`'"),
    Answer("get-unknown", "GET `/v2/NAME/manifests/TAG`", "no such tag", 404,
           "`{\"errors\": [{\"code\": \"MANIFEST_UNKNOWN\", \"message\": \"manifest unknown\", "
           "\"detail\": ...}]}`",
           "spec.md 'Error Codes' (code-7); api/v2/errors.go ErrorCodeManifestUnknown "
           "(HTTPStatusCode 404); api/errcode/handler.go ServeJSON"),
    Answer("challenge", "HEAD or GET, no token", "the registry uses the token flow", 401,
           "`WWW-Authenticate: Bearer realm=\"REALM\",service=\"SERVICE\","
           "scope=\"repository:NAME:pull\"`; a GET's body "
           "`{\"errors\": [{\"code\": \"UNAUTHORIZED\", ...}]}`",
           "token/accesscontroller.go challengeParams; api/errcode/register.go "
           "ErrorCodeUnauthorized; token.md 'How to authenticate'"),
    Answer("token", "GET `REALM?service=SERVICE&scope=repository:NAME:pull`, basic "
           "credentials", "the credentials are good", 200,
           "`{\"token\": JWT}` (`token` or `access_token`; `expires_in`, `issued_at` optional)",
           "token.md 'Requesting a Token', 'Token Response Fields'"),
    Answer("token-refused", "GET `REALM?...`, basic credentials", "the credentials are bad",
           401, "no body (token.md specifies none)",
           "token.md: 'the token server should return a `401 Unauthorized` response'"),
    Answer("head-token", "HEAD `/v2/NAME/manifests/TAG`, `Authorization: Bearer JWT`",
           "the token grants pull", 200, "as HEAD above",
           "token.md 'Using the Bearer token'; spec.md 'Checking if content exists'"),
)

ANSWERS: dict[str, Answer] = {row.key: row for row in _ROWS}


def markdown() -> str:
    """The table as docs/architecture.md prints it."""
    lines = ["| call | case | status | answer | source |", "| --- | --- | --- | --- | --- |"]
    for row in _ROWS:
        cells = (row.call, row.case, str(row.status), row.answer, row.source)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
