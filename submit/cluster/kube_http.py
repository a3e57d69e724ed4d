"""How the Kubernetes seam (submit/cluster/kube.py) meets HTTP: the errors it raises, the
message each API server status becomes, and the retry policy of every request.

It holds no client and sends nothing: kube.py is still the one module that talks to a
cluster; this is what it says when a request fails and how often it tries again.
"""

from __future__ import annotations

import logging
from typing import Any

# An API server (or a proxy before it) may answer 429 or 503 with Retry-After: honoured,
# but never waited for longer than this.
RETRY_AFTER_MAX = 30.0
BACKOFF_MAX = 10.0


class KubeError(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class NotFound(KubeError):
    pass


class Collect(logging.Handler):
    """Collects the errors logged meanwhile (the client only logs a credential plugin's
    failure)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def retry_policy(retries: int, backoff: float) -> Any:
    """urllib3's Retry for every request of the client: 429 and 5xx answers, timeouts and
    dropped connections are tried ``retries`` more times, whatever the method (an apply is
    a server-side apply, a delete or a merge patch gives the same result twice), waiting
    ``backoff`` x 2^n between tries or the server's Retry-After (capped). When the tries run
    out the last answer is returned as is, so the client raises its ApiException with the
    server's own message (``raise_on_status=False``)."""
    from urllib3.util.retry import Retry

    class _CappedRetry(Retry):
        def parse_retry_after(self, retry_after: str) -> float:
            return min(super().parse_retry_after(retry_after), RETRY_AFTER_MAX)

    return _CappedRetry(
        total=retries, connect=retries, read=retries, status=retries, other=retries,
        redirect=0, allowed_methods=None, status_forcelist=frozenset([429, *range(500, 600)]),
        backoff_factor=backoff, backoff_max=BACKOFF_MAX,
        raise_on_status=False, raise_on_redirect=False, respect_retry_after_header=True)


def error(what: str, status: int, message: str) -> KubeError:
    """The KubeError a failed request ``what`` raises: what happened and what to do."""
    # Webhooks deny with 400, 403 or 422; their message says so, whatever the code.
    if "admission webhook" in message or "denied the request" in message or status == 422:
        return KubeError(f"{what}: rejected by the cluster: {message}", status)
    if status == 401:
        return KubeError(f"{what}: not authenticated ({message}); run `gcloud auth login` "
                         "and check the stack's kubeconfig", status)
    if status == 403:
        return KubeError(f"{what}: forbidden ({message}); your account needs a role such "
                         "as roles/container.developer on the project", status)
    if status == 404:
        return NotFound(f"{what}: not found ({message})", status)
    if status == 409:
        return KubeError(f"{what}: already exists or conflicts ({message}); delete it with "
                         "`submit workload delete NAME`, or create it under another "
                         "--workload name", status)
    return KubeError(f"{what}: the API server answered {status}: {message}", status)
