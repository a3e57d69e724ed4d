"""submit/ephemeral/plan.py and events.py: the pure decisions of an ephemeral run."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace as NS
from typing import Any

import pytest

from submit.ephemeral import plan as pl
from submit.ephemeral.events import Tally, short_name

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def _plan(**changes: Any) -> pl.RunPlan:
    base: dict[str, Any] = dict(
        name="lr-sweep", project_dir="/repo", stack_file="stacks/Pulumi.v5e-spot.yaml",
        config={"accelstack:region": "us-west4"}, ttl_seconds=3600, keep=False,
        owner="ada@lab", command="submit run v5e-spot --name lr-sweep", created=NOW)
    base.update(changes)
    return pl.RunPlan(**base)


@pytest.mark.parametrize("name", ["a", "lr-sweep", "x" * 24, "run-01"])
def test_good_run_names(name: str) -> None:
    pl.check_run_name(name)


@pytest.mark.parametrize("name", ["", "A", "1run", "run-", "x" * 25, "run_1", "ru n"])
def test_bad_run_names(name: str) -> None:
    with pytest.raises(pl.PlanError) as err:
        pl.check_run_name(name)
    assert err.value.option == "--name"
    assert err.value.message.startswith(f"{name!r} is not a run name: 1-24 lowercase")


def test_overrides_parse_as_yaml_and_default_to_the_accelstack_namespace() -> None:
    assert pl.parse_override("zones=[us-west4-a, us-west4-b]") == (
        "accelstack:zones", ["us-west4-a", "us-west4-b"])
    assert pl.parse_override("gcp:project=p") == ("gcp:project", "p")
    assert pl.parse_override("slices=") == ("accelstack:slices", "")
    with pytest.raises(pl.PlanError, match="is not KEY=VALUE"):
        pl.parse_override("novalue")
    with pytest.raises(pl.PlanError, match="is not a YAML value"):
        pl.parse_override("zones=[a")


def test_the_run_names_its_cluster_and_is_never_deletion_protected() -> None:
    got = pl.run_config({"accelstack:clusterName": "v5e-spot",
                         "accelstack:deletionProtection": True, "accelstack:region": "r"},
                        [("accelstack:region", "us-east5")], "lr-sweep")
    assert got == {"accelstack:clusterName": "lr-sweep",
                   "accelstack:deletionProtection": False, "accelstack:region": "us-east5"}
    for key in ("clusterName", "deletionProtection"):
        with pytest.raises(pl.PlanError, match=f"accelstack:{key} is set by `submit run`"):
            pl.run_config({}, [(f"accelstack:{key}", "x")], "r")


def test_config_json_is_the_form_pulumi_config_json_prints() -> None:
    got = json.loads(pl.config_json({"accelstack:slices": [{"count": 2}],
                                     "accelstack:dnsEndpoint": True,
                                     "accelstack:region": "us-west4"}))
    assert got == {
        "accelstack:dnsEndpoint": {"value": "true", "secret": False},
        "accelstack:region": {"value": "us-west4", "secret": False},
        "accelstack:slices": {"value": '[{"count": 2}]', "objectValue": [{"count": 2}],
                              "secret": False}}


def test_tags_carry_expiry_owner_command_and_fit_pulumi_limits() -> None:
    plan = _plan(command="submit run " + "x" * 400)
    tags = pl.stack_tags(plan, "lr-sweep-20261125T120000 ada@lab pid 42")
    assert tags[pl.TAG_EXPIRES] == "2026-11-25T13:00:00Z"
    assert tags[pl.TAG_EPHEMERAL] == "true"
    assert tags[pl.TAG_OWNER] == "ada@lab"
    assert len(tags[pl.TAG_COMMAND]) == 256 and tags[pl.TAG_COMMAND].endswith("...")
    assert all(len(k) <= 40 for k in tags)
    assert pl.holder(tags) == pl.Holder("lr-sweep-20261125T120000", "lab", 42)


def test_the_teardown_command_is_one_command() -> None:
    assert pl.teardown_command(_plan(project_dir="/my repo")) == (
        "submit reap --project-dir '/my repo' lr-sweep")


def test_the_reaper_takes_expired_ephemeral_stacks_only() -> None:
    past = {pl.TAG_EPHEMERAL: "true", pl.TAG_EXPIRES: "2026-11-25T11:59:59Z",
            pl.TAG_OWNER: "ada", pl.TAG_COMMAND: "submit run a"}
    future = {**past, pl.TAG_EXPIRES: "2026-11-25T12:00:01Z"}
    standing = {pl.TAG_EXPIRES: "2020-01-01T00:00:00Z"}  # not ephemeral: never taken
    unreadable = {pl.TAG_EPHEMERAL: "true", pl.TAG_EXPIRES: "tomorrow"}
    got = pl.reapable({"old": past, "new": future, "prod": standing, "odd": unreadable}, NOW)
    assert [(r.name, r.due) for r in got] == [("new", False), ("odd", True), ("old", True)]
    named = pl.reapable({"new": future, "prod": standing}, NOW, names=["new", "prod"])
    assert [(r.name, r.due) for r in named] == [("new", True)]


@pytest.mark.parametrize("message,transient", [
    ("googleapi: Error 503: The service is currently unavailable.", True),
    ("googleapi: Error 429: Quota exceeded for quota metric 'Queries'", True),
    ("googleapi: Error 400: Operation operation-1 is currently deleting a node pool for "
     "cluster c. Please wait and try again once it is done., failedPrecondition", True),
    ("rpc error: code = FailedPrecondition desc = Cluster is running incompatible operation "
     "op. CLUSTER_ALREADY_HAS_OPERATION", True),
    ("googleapi: Error 403: Permission denied on resource project p.", False),
    ("googleapi: Error 400: The network resource 'n' is already being used by 'fw'", False),
])
def test_transient_destroy_errors(message: str, transient: bool) -> None:
    assert pl.is_transient(message) is transient


@pytest.mark.parametrize("outcome,code", [
    (pl.Outcome(work_state="Completed", torn_down=True), 0),
    (pl.Outcome(work_state="Completed", kept=True), 0),
    (pl.Outcome(work_state="Failed", torn_down=True), 3),
    (pl.Outcome(timed_out=True, torn_down=True), 4),
    (pl.Outcome(infra_error="up failed", torn_down=True), 5),
    (pl.Outcome(prepare_error="tags refused", torn_down=True), 1),
    (pl.Outcome(prepare_error="cancelled", signal="SIGINT", torn_down=True), 130),
    (pl.Outcome(prepare_error="x", torn_down=False), 6),
    (pl.Outcome(signal="SIGINT", torn_down=True), 130),
    (pl.Outcome(signal="SIGTERM", torn_down=True), 143),
    (pl.Outcome(work_state="Completed", torn_down=False), 6),
    (pl.Outcome(signal="SIGINT", torn_down=False), 6),
    (pl.Outcome(infra_error="x", torn_down=False), 6),
])
def test_exit_codes(outcome: pl.Outcome, code: int) -> None:
    assert pl.exit_code(outcome) == code


def _meta(op: str, name: str) -> Any:
    return NS(op=op, urn=f"urn:pulumi:s::accelstack::gcp:container/cluster:Cluster::{name}")


def _event(**payload: Any) -> Any:
    fields = dict.fromkeys(("resource_pre_event", "res_outputs_event", "res_op_failed_event",
                            "diagnostic_event", "stdout_event"))
    fields.update(payload)
    return NS(**fields)


def test_the_tally_counts_and_names_the_slowest() -> None:
    t = Tally("created")
    t.add(_event(resource_pre_event=NS(metadata=_meta("create", "a"))), 0.0)
    t.add(_event(resource_pre_event=NS(metadata=_meta("create", "b"))), 10.0)
    t.add(_event(resource_pre_event=NS(metadata=_meta("same", "c"))), 10.0)
    t.add(_event(res_outputs_event=NS(metadata=_meta("create", "b"))), 70.0)
    assert t.line(130.0) == "2 of 3 created; waiting longest: a (Cluster) 2m10s"
    t.add(_event(diagnostic_event=NS(severity="error", urn=_meta("create", "a").urn,
                                     message="googleapi: Error 400: bad\n")), 131.0)
    t.add(_event(res_op_failed_event=NS(metadata=_meta("create", "a"))), 131.0)
    assert t.line(131.0) == "2 of 3 created, 1 failed"
    assert t.failure() == "a (Cluster): googleapi: Error 400: bad"
    assert short_name("odd") == "odd"
