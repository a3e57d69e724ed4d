"""Following one JobSet until a deadline, for `wait`: the API server pushes each change
through a watch instead of our asking again and again.

The Kubernetes pattern (https://kubernetes.io/docs/reference/using-api/api-concepts/
#efficient-detection-of-changes): list, then watch from the list's resourceVersion; when the
server answers 410 Gone (that version is too old) list again. The watch is also started
afresh every ``period`` seconds (its timeoutSeconds), with a new list, so what a JobSet watch
cannot see (Kueue's workloads, read by the caller on each change) is read at that pace.
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterator

from submit.cluster.kube import KubeError

GONE = 410


def follow(cluster: Any, namespace: str, name: str, timeout: float,
           period: float) -> Iterator[dict[str, Any] | None]:
    """The JobSet now (None: there is none), then again each time it changes (None: it was
    deleted) or ``period`` passes, until ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        found, version = cluster.list_jobset(namespace, name)
        yield found
        left = deadline - time.monotonic()
        if left <= 0:
            return
        # timeoutSeconds is whole seconds: at least 1.
        seconds = max(1, math.ceil(min(period, left)))
        try:
            for kind, obj in cluster.watch_jobset(namespace, name, version, seconds):
                if kind in ("ADDED", "MODIFIED"):
                    yield obj
                elif kind == "DELETED":
                    yield None
                if time.monotonic() >= deadline:
                    return
        except KubeError as e:
            if e.status != GONE:
                raise
        if time.monotonic() >= deadline:
            return
