"""A fake Kubernetes Engine API on loopback for the GKE API seam (infra/adopt/gke/api.py).

It answers ``GET /v1beta1/projects/P/locations/L/clusters/C`` with a recorded Cluster
(tests/gke_answers/), 404 for a cluster it does not hold, and, for a cluster marked
forbidden, the 403 the API sends when a permission is missing: Google's JSON error body
(``error.code``, ``error.message``, ``error.status`` PERMISSION_DENIED; the shape of
https://cloud.google.com/apis/design/errors#http_mapping, with the message GKE words as
'Required "container.clusters.get" permission(s) for "projects/..."'). Requests without a
bearer token get 401. Every request is recorded (path, Authorization header).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/v1beta1/"


class FakeGkeApi:
    def __init__(self) -> None:
        self.clusters: dict[str, dict[str, Any]] = {}  # projects/P/locations/L/clusters/C
        self.forbidden: set[str] = set()
        self.requests: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                auth = self.headers.get("Authorization", "")
                fake.requests.append((self.path, auth))
                resource = self.path[len(PREFIX):] if self.path.startswith(PREFIX) else ""
                if not auth.startswith("Bearer "):
                    self._send(401, _error(401, "Request is missing required authentication "
                                           "credential.", "UNAUTHENTICATED"))
                elif resource in fake.forbidden:
                    self._send(403, _error(403, f'Required "container.clusters.get" '
                                           f'permission(s) for "{resource}".',
                                           "PERMISSION_DENIED"))
                elif resource in fake.clusters:
                    self._send(200, fake.clusters[resource])
                else:
                    self._send(404, _error(404, f'Not found: "{resource}".', "NOT_FOUND"))

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{PREFIX}"

    def __enter__(self) -> "FakeGkeApi":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def _error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}
