"""What the fake `pulumi` (tests/fakes/pulumi_engine.py) does for the calls the ephemeral
runs make, and where the real CLI does the same: each row cites pulumi/pulumi (at 1b59498,
August 2026, unless a version is named). tests/test_fake_pulumi_table.py plays every row
against the fake and fails when the fake drifts from it, or a row has no check.
"""

from __future__ import annotations

BEHAVIOURS: dict[str, tuple[str, str]] = {
    "lock-diy": (
        "A self-managed (diy) backend refuses an operation on a locked stack: 'error: the "
        "stack is currently locked by N lock(s). Either wait for the other process(es) to "
        "end or delete the lock file with `pulumi cancel`.' and a line per lock, '  "
        "<backend URL>/.pulumi/locks/<org>/<project>/<stack>/<id>.json: created by "
        "<user>@<host> (pid <pid>) at <RFC 3339 time>'",
        "pkg/backend/diy/lock.go checkForLock, lockURLForError, stackLockDir"),
    "lock-holder": (
        "The lock holds the CLI's own pid, user and host; a CLI killed (or terminated by its "
        "second SIGINT) never deletes it, since Unlock is deferred",
        "pkg/backend/diy/lock.go newLockContent, Unlock"),
    "lock-service": (
        "Pulumi Cloud refuses a second update with '[409] Conflict: Another update is "
        "currently in progress.'",
        "sdk/python/lib/pulumi/automation/errors.py conflict_text (sdk/go/auto/errors.go)"),
    "cancel": (
        "`pulumi cancel --yes` on a diy backend deletes every lock file of the stack",
        "pkg/backend/diy/backend.go CancelCurrentUpdate; pkg/cmd/pulumi/cancel/cancel.go"),
    "ls-progress": (
        "`stack ls --json` prints updateInProgress only where the backend supports progress "
        "(the service: true while an update runs, with no lastUpdate; a diy backend: never)",
        "pkg/cmd/pulumi/stack/stack_list.go formatStackSummariesJSON; SupportsProgress in "
        "pkg/backend/diy/backend.go (false) and pkg/backend/httpstate/backend.go (true)"),
    "ls-tag": (
        "`stack ls --json --tag NAME` or `--tag NAME=VALUE` lists only the stacks with that "
        "tag (and value); the JSON never holds the tags",
        "pkg/cmd/pulumi/stack/stack_list.go parseTagFilter, stackSummaryJSON; "
        "pkg/backend/diy/backend.go ListStacks (tag filter since 3.211.0, #19882)"),
    "tags-diy-old": (
        "A CLI before 3.211.0 refuses stack tags on a diy backend: 'stack tags not supported "
        "in diy mode' (the fault tagsUnsupported)",
        "pkg/backend/diy/backend.go before 0bfe911381 (#19882); CHANGELOG.md 3.211.0"),
    "pending-create": (
        "A create is marked pending before the provider is asked to create it, so a CLI "
        "killed mid-create leaves a pending create for a resource that may exist (the fake: "
        "it exists)",
        "pkg/backend/snapshot.go (markOperationPending(..., OperationTypeCreating)); "
        "pkg/resource/deploy/deployment_executor.go printPendingOperationsWarning ('in an "
        "unknown state because the Pulumi CLI was interrupted')"),
    "pending-kept": (
        "Pending creates stay across later updates and destroys, which only warn ('Attempting "
        "to deploy or update resources with N pending operations from previous deployment.')",
        "pkg/backend/snapshot.go ('we don't want to clear pending CREATE operations'); "
        "pkg/resource/deploy/deployment_executor.go printPendingOperationsWarning"),
    "export-pending": (
        "`stack export` prints {version: 3, deployment: {..., pending_operations: "
        "[{resource: {urn, type, ...}, type: 'creating'}]}}",
        "sdk/go/common/apitype/core.go DeploymentV3, OperationV2, OperationTypeCreating"),
    "rm-ignores-pending": (
        "`stack rm` refuses only a stack with resources (beyond the root stack): 'error: "
        "'NAME' still has resources; removal rejected. Possible actions: ...'; pending "
        "creates do not stop it",
        "pkg/backend/diy/backend.go RemoveStack; pkg/cmd/pulumi/stack/stack_remove.go"),
    "refresh-pending": (
        "`refresh --clear-pending-creates` drops pending creates; "
        "`--import-pending-creates=URN --import-pending-creates=ID` (one value a flag) "
        "completes one with its ID; both with --skip-pending-creates: 'cannot set both "
        "--skip-pending-creates and --clear-pending-creates'; an odd count: 'each URN must "
        "be followed by an ID: found an odd number of entries'",
        "pkg/cmd/pulumi/operations/refresh.go (since 3.39.0, #10394); sdk/go/auto/stack.go "
        "(two flags a pending create)"),
    "refresh-import-drops": (
        "A pending create given an ID by --import-pending-creates becomes a pending import "
        "(type 'importing') that no engine step reads; the refresh's new snapshot carries "
        "over only pending creates, so it leaves the state and the resource it made is not "
        "adopted (it stays in the cloud)",
        "pkg/cmd/pulumi/operations/refresh.go pendingCreatesToImports; pkg/backend/snapshot.go "
        "and pkg/backend/journal.go ('Track pending create operations from the base "
        "snapshot': OperationTypeCreating only); no reader of OperationTypeImporting in "
        "pkg/resource/deploy or pkg/engine"),
    "import": (
        "`pulumi import TYPE NAME ID` reads the resource by its ID: found, it enters the "
        "state (protected unless --protect=false: the flag defaults to true); not found, "
        "it fails with \"resource 'ID' does not exist\"",
        "pkg/cmd/pulumi/operations/import.go (flag protect, default true); "
        "pkg/resource/deploy/step.go ImportStep.Apply"),
    "signals": (
        "The first SIGINT cancels (the resource in flight finishes), the second terminates "
        "at once (the lock and the pending create left)",
        "pkg/backend/cancellation_scope.go"),
    "version": (
        "`pulumi version` prints vMAJOR.MINOR.PATCH",
        "pkg/cmd/pulumi/version (the SDK parses it: automation/_cmd.py)"),
}
