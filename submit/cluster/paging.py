"""Lists read in pages, as kubectl reads them: ``limit`` items a request, the next page asked
for with the ``continue`` token the last one answered, until a page comes without one.

A 10,000-trial experiment, or a busy shared namespace, would otherwise be one answer of
hundreds of megabytes, held whole in memory, that the API server may cut off
(https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks).
PAGE is kubectl's default ``--chunk-size`` ("--chunk-size=500 Return large lists in chunks
rather than all at once", https://kubernetes.io/docs/reference/kubectl/generated/kubectl_get/).

A continue token expires with the etcd revision it was issued at (compaction, about five
minutes). kube-apiserver then answers ``410 Gone``, a Status of reason ``Expired`` whose
message says what to do: "The provided continue parameter is too old to display a
consistent list result. You can start a new list without the continue parameter[, or use
the continue token in this response to retrieve the remainder of the results. Continuing
with the provided token results in an inconsistent list ...]" (kubernetes
staging/src/k8s.io/apiserver/pkg/storage/etcd3/errors.go ``continueExpired`` and
``inconsistentContinue``, via ``apierrors.NewResourceExpired``: code 410, reason Expired).
The API concepts page says the same ("return a 410 Gone if more results cannot be
returned. In this case, the client will need to start from the beginning or omit the limit
parameter"). So the list starts again from the first page, as client-go's pager falls back
to a fresh list when a page after the first expires (k8s.io/client-go tools/pager/pager.go,
``errors.IsResourceExpired(err) ... options.Continue = ""``), at most RESTARTS times; an
item the caller was already given is not given again. The inconsistent token is not used:
the restarted list is a consistent one.

No client here: ``fetch(limit, token)`` is kube.py's request for one page.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from submit.cluster.kube_http import KubeError

PAGE = 500
RESTARTS = 3
GONE = 410

Fetch = Callable[[int, "str | None"], dict[str, Any]]


def _key(item: dict[str, Any]) -> tuple[str, str]:
    meta = item.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def token_of(answer: dict[str, Any]) -> str | None:
    """The ``continue`` token of a list answer (the client's models render it
    ``_continue``), or None on the last page."""
    meta = answer.get("metadata") or {}
    return meta.get("continue") or meta.get("_continue") or None


def pages(fetch: Fetch, limit: int | None = None, restarts: int = RESTARTS
          ) -> Iterator[list[dict[str, Any]]]:
    """The list's items, a page at a time (``limit``, PAGE by default; 0 asks for the whole
    list at once), each item once; a continue token that expired (410) starts the list
    again, at most ``restarts`` times, then the 410 is raised."""
    limit = PAGE if limit is None else limit
    token: str | None = None
    seen: set[tuple[str, str]] = set()
    restarted = 0
    while True:
        try:
            answer = fetch(limit, token)
        except KubeError as e:
            if e.status != GONE or token is None or restarted >= restarts:
                raise
            restarted, token = restarted + 1, None
            continue
        items = []
        for item in answer.get("items") or []:  # decoded JSON: dicts, used as they are
            key = _key(item)
            if key not in seen:
                seen.add(key)
                items.append(item)
        if items:
            yield items
        token = token_of(answer)
        if token is None:
            return


def flat(pages: Iterator[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every item of a list read in pages, as one list."""
    return [item for page in pages for item in page]
