"""A Cloud Billing Catalog API on 127.0.0.1, for running `accelstack-prices refresh`'s real
client (infra/cost/refresh.py: requests, google-auth's Application Default Credentials)
against a recorded answer (tests/billing/compute-skus.json). Every answer is in the shape
of the API's REST reference:

- ``GET /v1/services``: ``{"services": [Service], "nextPageToken": string}``, Service being
  ``{name, serviceId, displayName, businessEntityName}``; ``pageSize``, ``pageToken``
  (https://cloud.google.com/billing/docs/reference/rest/v1/services/list).
- ``GET /v1/services/{id}/skus``: ``{"skus": [Sku], "nextPageToken": string}``;
  ``currencyCode``, ``pageSize``, ``pageToken``; the token is empty on the last page
  (https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list).
- An error: ``{"error": {"code", "message", "status"}}`` with the HTTP code
  (https://cloud.google.com/apis/design/errors#http_mapping): 401 UNAUTHENTICATED without
  the bearer token, 400 INVALID_ARGUMENT for a page token it did not give.
- ``POST /token``: the OAuth 2.0 token endpoint a service-account file names
  (``token_uri``); a JWT-bearer grant (RFC 7523: ``grant_type=urn:ietf:params:oauth:
  grant-type:jwt-bearer&assertion=JWT``) answered ``{"access_token", "expires_in",
  "token_type": "Bearer"}`` (RFC 6749 section 5.1), as Google's endpoint answers
  (https://developers.google.com/identity/protocols/oauth2/service-account#httprest).

Pages hold PAGE items, so a recording of a few SKUs still takes several pages. Bounded:
loopback only, stopped by the test.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

TOKEN = "catalog-test-token"
PAGE = 2
# The first page has no Compute Engine: the client must follow the token. The other two
# services' ids are made up; Compute Engine's is the one the REST reference gives as its
# example ("services/6F81-5844-456A").
SERVICES = [
    {"name": "services/AAAA-0000-0001", "serviceId": "AAAA-0000-0001",
     "displayName": "A service", "businessEntityName": "businessEntities/GCP"},
    {"name": "services/AAAA-0000-0002", "serviceId": "AAAA-0000-0002",
     "displayName": "Another service", "businessEntityName": "businessEntities/GCP"},
    {"name": "services/6F81-5844-456A", "serviceId": "6F81-5844-456A",
     "displayName": "Compute Engine", "businessEntityName": "businessEntities/GCP"},
]


class CatalogServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, skus: list[dict[str, Any]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.skus = skus
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.grants: list[dict[str, Any]] = []  # the JWT claims of each token request
        self.accepted = TOKEN  # the bearer token GETs must carry (another: 401)
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> "CatalogServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def _claims(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


class _Handler(BaseHTTPRequestHandler):
    server: CatalogServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code: int, status: str, message: str) -> None:
        self._send(code, {"error": {"code": code, "message": message, "status": status}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        self.server.requests.append(("POST", self.path, form))
        if self.path != "/token" or form.get("grant_type") != [
                "urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            return self._send(400, {"error": "unsupported_grant_type"})
        self.server.grants.append(_claims(form["assertion"][0]))
        self._send(200, {"access_token": TOKEN, "expires_in": 3600, "token_type": "Bearer"})

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        query = parse_qs(url.query)
        self.server.requests.append(("GET", url.path, query))
        if self.headers.get("Authorization") != f"Bearer {self.server.accepted}":
            return self._error(401, "UNAUTHENTICATED", "Request had invalid authentication "
                               "credentials. Expected OAuth 2 access token.")
        if url.path == "/v1/services":
            return self._page("services", SERVICES, query)
        if url.path == "/v1/services/6F81-5844-456A/skus":
            return self._page("skus", self.server.skus, query)
        self._error(404, "NOT_FOUND", f"{url.path} not found")

    def _page(self, key: str, items: list[dict[str, Any]], query: dict[str, list[str]]
              ) -> None:
        token = query.get("pageToken", [""])[0]
        start = int(token) if token.isdigit() else 0
        if token and not token.isdigit():
            return self._error(400, "INVALID_ARGUMENT", "Invalid page token.")
        end = start + PAGE
        self._send(200, {key: items[start:end],
                         "nextPageToken": str(end) if end < len(items) else ""})
