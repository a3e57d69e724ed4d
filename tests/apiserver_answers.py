"""What kube-apiserver answers to each call the submitter makes: one table, read by the fake
API server (tests/fake_apiserver.py picks its status codes here), by the test that drives the
fake over HTTP for every row (tests/test_fake_apiserver_answers.py), and printed in
docs/architecture.md ("What the API server answers"), which that test keeps equal to it.

Sources are paths in github.com/kubernetes/kubernetes (apimachinery and apiserver under
staging/src/k8s.io/, as published in kubernetes/apimachinery and kubernetes/apiserver).
``H`` is the apiserver's request handlers, ``STORE`` the generic registry every built-in kind
and every custom resource is stored through (a CustomResourceDefinition's store,
apiextensions-apiserver pkg/registry/customresource/etcd.go, leaves ReturnDeletedObject
false, as the ConfigMap store does, so a finished delete answers a Status).
"""

from __future__ import annotations

from dataclasses import dataclass

H = "apiserver/pkg/endpoints/handlers/"
STORE = "apiserver/pkg/registry/generic/registry/store.go"
ERRORS = "apimachinery/pkg/api/errors/errors.go"
CACHER = "apiserver/pkg/storage/cacher/"


@dataclass(frozen=True)
class Answer:
    key: str  # how the fake and the test name the row
    call: str  # the request, as the client sends it
    case: str  # what is on the server when it arrives
    status: int
    body: str  # what the answer carries
    source: str


_ROWS = (
    Answer("apply-create", "PATCH, `application/apply-patch+yaml` (server-side apply)",
           "no such object", 201, "the object as stored",
           H + "patch.go PatchResource: `if wasCreated { status = http.StatusCreated }`"),
    Answer("apply-update", "PATCH, `application/apply-patch+yaml` (server-side apply)",
           "the object exists", 200, "the object as stored",
           H + "patch.go PatchResource: `status := http.StatusOK`"),
    Answer("apply-invalid", "PATCH, `application/apply-patch+yaml` (server-side apply)",
           "the object fails validation", 422,
           "Status Failure, reason Invalid, details.causes (type, message, field)",
           "apiserver/pkg/registry/rest/create.go BeforeCreate and rest/update.go "
           "BeforeUpdate: `errors.NewInvalid`; " + ERRORS + " NewInvalid"),
    Answer("apply-conflict", "PATCH, `application/apply-patch+yaml` (server-side apply)",
           "another field manager owns a field with another value", 409,
           "Status Failure, reason Conflict, details.causes of type FieldManagerConflict",
           "apimachinery/pkg/util/managedfields/internal/conflict.go NewConflictError; "
           + ERRORS + " NewApplyConflict"),
    Answer("merge-patch", "PATCH, `application/merge-patch+json`", "the object exists", 200,
           "the object as stored", H + "patch.go PatchResource: `status := http.StatusOK`"),
    Answer("merge-patch-absent", "PATCH, `application/merge-patch+json`", "no such object",
           404, "Status Failure, reason NotFound, details (name, group, kind: the resource)",
           H + "patch.go jsonPatcher.createNewObject: `errors.NewNotFound`; " + ERRORS
           + " NewNotFound"),
    Answer("get", "GET one object", "the object exists", 200, "the object",
           H + "get.go GetResource"),
    Answer("get-absent", "GET one object", "no such object", 404,
           "Status Failure, reason NotFound, details (name, group, kind: the resource)",
           ERRORS + " NewNotFound"),
    Answer("list", "GET a collection", "any", 200,
           "a List with metadata.resourceVersion and items", H + "get.go ListResource"),
    Answer("list-page", "GET a collection `?limit=N` (then `&continue=TOKEN`)",
           "more than N objects", 200,
           "a List of N items; metadata.continue (an opaque token) while more remain, and "
           "metadata.remainingItemCount when no selector filters the list; a continued "
           "request is served at the first page's resourceVersion",
           "apiserver/pkg/storage/etcd3/store.go GetList (`if hasMore` ... "
           "`storage.EncodeContinue`; remainingItemCount only `if pred.Empty()`); "
           "apimachinery/pkg/apis/meta/v1/types.go ListMeta.Continue, RemainingItemCount"),
    Answer("list-continue-expired", "GET a collection `?limit=N&continue=TOKEN`",
           "TOKEN's revision was compacted (about 5 minutes)", 410,
           "Status Failure, reason Expired, message 'The provided continue parameter is too "
           "old to display a consistent list result. You can start a new list without the "
           "continue parameter, or use the continue token in this response ...', with a new "
           "token in the Status's metadata.continue",
           "apiserver/pkg/storage/etcd3/errors.go interpretListError (`etcdrpc.ErrCompacted` "
           "while paging), handleCompactedErrorForPaging (`errors.NewResourceExpired"
           "(inconsistentContinue)`, "
           "`statusError.ErrStatus.ListMeta.Continue = newToken`); " + ERRORS
           + " NewResourceExpired (StatusReasonExpired, http.StatusGone)"),
    Answer("delete", "DELETE (no propagationPolicy)",
           "the object exists, no finalizers", 200,
           "Status Success, details (name, group, kind: the resource, uid)",
           H + "delete.go DeleteResource: `status := http.StatusOK`; " + STORE
           + " finalizeDelete: ReturnDeletedObject false answers a Status"),
    Answer("delete-foreground", "DELETE `?propagationPolicy=Foreground`",
           "the object exists", 200,
           "the object, with metadata.deletionTimestamp and finalizers [foregroundDeletion]",
           STORE + " Delete: pending finalizers keep it, the updated object is answered; "
           + H + "delete.go: 202 only for `orphanDependents=false`"),
    Answer("delete-orphan-false", "DELETE `?orphanDependents=false` (deprecated)",
           "finalizers keep the object", 202,
           "the object, with metadata.deletionTimestamp and its finalizers",
           H + "delete.go DeleteResource: `!wasDeleted && options.OrphanDependents != nil "
           "&& !*options.OrphanDependents` gives `http.StatusAccepted`"),
    Answer("delete-absent", "DELETE", "no such object", 404,
           "Status Failure, reason NotFound, details (name, group, kind: the resource)",
           STORE + " Delete: `storeerr.InterpretDeleteError`; " + ERRORS + " NewNotFound"),
    Answer("watch", "GET `?watch=true&resourceVersion=RV`", "RV is in the watch cache", 200,
           "chunked, one JSON event a line: ADDED, MODIFIED, DELETED with the object, until "
           "timeoutSeconds", H + "watch.go serveWatchHandler (Transfer-Encoding: chunked, "
           "`WriteHeader(http.StatusOK)`)"),
    Answer("watch-expired", "GET `?watch=true&resourceVersion=RV`",
           "RV is older than the watch cache holds", 200,
           "one ERROR event: a Status Failure, code 410, reason Expired, "
           "'too old resource version: RV (OLDEST)'; then the stream ends",
           CACHER + "cacher.go Watch: `return newErrWatcher(err), nil` (errors after the "
           "request was admitted 'must fail with a watch event of type ERROR'); "
           + CACHER + "watch_cache_history.go: `errors.NewResourceExpired`"),
    Answer("watch-bookmark", "GET `?watch=true&allowWatchBookmarks=true&timeoutSeconds=N`",
           "N > 2", 200,
           "a BOOKMARK event (the kind, apiVersion and metadata.resourceVersion only) 2 s "
           "before the timeout and about every minute",
           CACHER + "cache_watcher.go nextBookmarkTime (`c.deadline.Add(-2 * time.Second)`, "
           "every `bookmarkFrequency`); cacher.go: `defaultBookmarkFrequency = time.Minute`, "
           "the bookmark object is `c.newFunc()` with only its resourceVersion set"),
    Answer("version", "GET `/version`", "any", 200,
           "version.Info: major, minor, gitVersion (`v1.33.5-gke.1080000`), gitCommit, "
           "gitTreeState, buildDate, goVersion, compiler, platform",
           "apiserver/pkg/server/routes/version.go handleVersion: "
           "`responsewriters.WriteRawJSON(http.StatusOK, *v.Version, w)`; "
           "apimachinery/pkg/version/types.go Info"),
    Answer("unauthorized", "any request", "no valid bearer token", 401,
           "Status Failure, reason Unauthorized, message 'Unauthorized'",
           "apiserver/pkg/endpoints/filters/authentication.go Unauthorized: "
           "`apierrors.NewUnauthorized(\"Unauthorized\")`"),
)

ANSWERS: dict[str, Answer] = {row.key: row for row in _ROWS}


def markdown() -> str:
    """The table as docs/architecture.md prints it."""
    lines = ["| call | case | status | body | source |", "| --- | --- | --- | --- | --- |"]
    for row in _ROWS:
        cells = (row.call, row.case, str(row.status), row.body, row.source)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
