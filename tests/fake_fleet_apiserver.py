"""A fake API server for a fleet's clusters: tests/fake_apiserver.py's server, with two
additions made by wrapping its request handler (not by changing it):

- ``latency``: seconds every request waits before it is answered, as a control plane in
  another region does (bench/fleet_view.py measures reads of a fleet against it), and
  ``arrivals``, when each GET arrived;
- the manager's MultiKueue objects: GET of the cluster-scoped lists
  ``/apis/kueue.x-k8s.io/v1beta2/multikueueclusters`` and ``.../admissionchecks`` answers
  ``multikueueclusters`` and ``admissionchecks`` as a ``MultiKueueClusterList`` /
  ``AdmissionCheckList`` (kueue v0.19.2 apis/kueue/v1beta2 multikueue_types.go and
  admissioncheck_types.go; cluster-scoped, as their CRDs declare: config/components/crd/
  bases), with the bearer token checked first (401 Unauthorized, as the base server does).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from fake_apiserver import FakeApiServer

_LISTS = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta2/(multikueueclusters|admissionchecks)$")
_KINDS = {"multikueueclusters": "MultiKueueClusterList", "admissionchecks": "AdmissionCheckList"}


class FleetApiServer(FakeApiServer):
    def __init__(self, latency: float = 0.0) -> None:
        super().__init__()
        self.latency = latency
        self.multikueueclusters: list[dict[str, Any]] = []
        self.admissionchecks: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each request, as it arrives
        self.RequestHandlerClass = _wrap(self.RequestHandlerClass)


def _wrap(base: Any) -> Any:
    class Handler(base):  # type: ignore[misc]
        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            server = self.server
            server.arrivals.append(time.monotonic())
            if server.latency:
                time.sleep(server.latency)
            m = _LISTS.match(self.path.split("?", 1)[0])
            if m is None:
                return super().do_GET()  # type: ignore[no-any-return]
            if self.headers.get("Authorization") != f"Bearer {server.state.token}":
                return self._answer(401, {"kind": "Status", "apiVersion": "v1",
                                          "status": "Failure", "message": "Unauthorized",
                                          "reason": "Unauthorized", "code": 401})
            return self._answer(200, {"kind": _KINDS[m.group(1)],
                                      "apiVersion": "kueue.x-k8s.io/v1beta2",
                                      "metadata": {"resourceVersion": "1"},
                                      "items": getattr(server, m.group(1))})

        def do_POST(self) -> None:  # noqa: N802
            if self.server.latency:
                time.sleep(self.server.latency)
            super().do_POST()

        def do_PATCH(self) -> None:  # noqa: N802
            if self.server.latency:
                time.sleep(self.server.latency)
            super().do_PATCH()

    return Handler
