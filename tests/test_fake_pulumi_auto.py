"""The fake `pulumi` (tests/fakes/pulumi_engine.py) against the real CLI's documented
behaviour, driven by the real pulumi.automation SDK, so the ephemeral-run tests prove
something about the CLI and not about a fake that agrees with itself.

Sources of each expectation:
- argv: pulumi/automation/_local_workspace.py and _stack.py of the installed SDK (the
  exact lists they build), and the CLI reference pages they must agree with:
  https://www.pulumi.com/docs/iac/cli/commands/pulumi_up/ (--yes, --skip-preview,
  --event-log), pulumi_destroy/ (--refresh; the stack itself is not deleted),
  pulumi_stack_rm/ (--yes, --force "leaving behind any resources"), pulumi_stack_tag_set/
  (set <name> <value>), pulumi_stack_tag_ls/ (-j, --json), pulumi_cancel/ (--yes).
- events: sdk/go/common/apitype/events.go (pulumi/pulumi): one EngineEvent JSON object a
  line, ``sequence`` and ``timestamp`` on each, exactly one payload, cancelEvent last.
- errors: the texts pulumi/automation/errors.py classifies ("no stack named ... found",
  "stack ... already exists", the DIY lock "the stack is currently locked by") and stack
  rm's refusal (pkg/cmd/pulumi/stack_rm.go).
- tag rules: pulumi's ValidateStackTags (names of at most 40 of [a-zA-Z0-9-_.:], values of
  at most 256 characters).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto
from pulumi.automation import errors

from fakes.pulumi_auto import FakeAutoPulumi, install

RESOURCES = [("gcp:container/cluster:Cluster", "cluster"),
             ("gcp:container/nodePool:NodePool", "v5e-16")]
PAYLOADS = {"cancelEvent", "stdoutEvent", "diagnosticEvent", "preludeEvent", "summaryEvent",
            "resourcePreEvent", "resOutputsEvent", "resOpFailedEvent"}


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAutoPulumi:
    f = install(tmp_path, monkeypatch)
    f.program(RESOURCES, {"accelstack": {"contractVersion": 1}})
    return f


@pytest.fixture
def project(tmp_path: Path) -> str:
    d = tmp_path / "project"
    d.mkdir()
    (d / "Pulumi.yaml").write_text("name: accelstack\nruntime: python\n")
    return str(d)


def _stack(project: str, name: str = "eph") -> auto.Stack:
    return auto.create_or_select_stack(name, work_dir=project)


def test_the_sdk_argv_for_a_whole_run(fake: FakeAutoPulumi, project: str) -> None:
    st = _stack(project)
    st.set_tag("accelstack:expires", "2026-01-01T00:00:00Z")
    assert st.list_tags() == {"accelstack:expires": "2026-01-01T00:00:00Z"}
    st.set_all_config_json(json.dumps({"accelstack:region": {"value": "us-west4",
                                                             "secret": False}}))
    st.up(on_event=lambda e: None)
    st.destroy(on_event=lambda e: None, refresh=True)
    st.workspace.remove_stack("eph")
    log = fake.commands()
    # Every call starts --non-interactive and runs with PULUMI_AUTOMATION_API=true (_cmd.py).
    assert all(c["argv"][0] == "--non-interactive" for c in fake.calls if c["argv"] != ["version"])
    assert all(c["automation"] == "true" for c in fake.calls if c["argv"] != ["version"])
    assert log[0] == ["stack", "select", "--stack", "eph"]
    assert log[1] == ["stack", "init", "eph"]
    assert log[2] == ["stack", "tag", "set", "accelstack:expires", "2026-01-01T00:00:00Z",
                      "--stack", "eph"]
    assert log[3] == ["stack", "tag", "ls", "--json", "--stack", "eph"]
    assert log[4][:4] == ["config", "set-all", "--stack", "eph"] and log[4][4] == "--json"
    up = log[5]
    assert up[:3] == ["up", "--yes", "--skip-preview"]
    assert up[up.index("--exec-kind") + 1] == "auto.local"
    assert up[up.index("--event-log") + 1].startswith("tcp://127.0.0.1:")
    assert up[-2:] == ["--stack", "eph"]
    assert log[6] == ["stack", "output", "--json", "--stack", "eph"]
    assert log[7] == ["stack", "output", "--json", "--show-secrets", "--stack", "eph"]
    assert log[8] == ["stack", "history", "--json", "--show-secrets", "--page-size", "1",
                      "--page", "1", "--stack", "eph"]
    destroy = log[9]
    assert destroy[:3] == ["destroy", "--skip-preview", "--yes"] and "--refresh" in destroy
    assert log[-1] == ["stack", "rm", "--yes", "eph"]
    assert fake.stacks == [] and fake.cloud == []


@pytest.mark.parametrize("version", ["3.200.0", "3.272.0"])
def test_engine_events_match_events_go_over_both_transports(
        fake: FakeAutoPulumi, project: str, version: str) -> None:
    # The SDK tails a file for a CLI of 3.205.0 or older and serves gRPC for a newer one
    # (_stack.py _setup_event_log); the fake answers `pulumi version` with ``version``.
    fake.faults(version=version)
    seen: list[auto.EngineEvent] = []
    st = _stack(project)
    st.up(on_event=seen.append)
    up = next(c for c in fake.commands() if c[0] == "up")
    target = up[up.index("--event-log") + 1]
    assert target.startswith("tcp://") == (version == "3.272.0")
    if version == "3.200.0":
        assert target.endswith("/eventlog.txt")  # _create_log_file
    kinds = [next(k for k in ("prelude_event", "resource_pre_event", "res_outputs_event",
                              "summary_event", "cancel_event", "stdout_event",
                              "diagnostic_event", "res_op_failed_event")
                  if getattr(e, k) is not None) for e in seen]
    assert kinds[0] == "prelude_event" and kinds[-2:] == ["summary_event", "cancel_event"]
    assert kinds.count("resource_pre_event") == kinds.count("res_outputs_event") == 3
    assert [e.sequence for e in seen] == list(range(1, len(seen) + 1))
    assert all(e.timestamp > 1_700_000_000 for e in seen)
    pre = [e.resource_pre_event.metadata for e in seen if e.resource_pre_event]
    assert [(m.op, m.urn) for m in pre] == [
        ("create", "urn:pulumi:eph::accelstack::pulumi:pulumi:Stack::accelstack-eph"),
        ("create", "urn:pulumi:eph::accelstack::gcp:container/cluster:Cluster::cluster"),
        ("create", "urn:pulumi:eph::accelstack::gcp:container/nodePool:NodePool::v5e-16")]
    summary = next(e.summary_event for e in seen if e.summary_event)
    assert summary.resource_changes == {"create": 3}


def test_each_event_line_has_one_payload(fake: FakeAutoPulumi, project: str,
                                         tmp_path: Path) -> None:
    fake.faults(version="3.200.0")
    lines: list[str] = []
    st = _stack(project)

    def keep(event: auto.EngineEvent) -> None:
        up = next(c for c in fake.commands() if c[0] == "up")
        path = Path(up[up.index("--event-log") + 1])
        if path.exists():
            lines[:] = path.read_text().splitlines()

    st.up(on_event=keep)
    assert lines
    for line in lines:
        event = json.loads(line)
        payload = set(event) - {"sequence", "timestamp"}
        assert len(payload) == 1 and payload <= PAYLOADS, event


def test_errors_the_sdk_classifies(fake: FakeAutoPulumi, project: str) -> None:
    ws = auto.LocalWorkspace(work_dir=project)
    with pytest.raises(errors.StackNotFoundError):
        auto.select_stack("nope", work_dir=project)
    _stack(project)
    with pytest.raises(errors.StackAlreadyExistsError):
        ws.create_stack("eph")
    data = fake.stack("eph")
    assert data is not None
    data["lock"] = {"id": "x", "user": "u", "host": "h", "pid": 1, "at": "t"}
    (fake.home / "stacks" / "eph.json").write_text(json.dumps(data))
    with pytest.raises(errors.ConcurrentUpdateError):
        auto.select_stack("eph", work_dir=project).up()
    auto.select_stack("eph", work_dir=project).cancel()
    assert fake.commands()[-1] == ["cancel", "--yes", "--stack", "eph"]
    assert fake.stack("eph")["lock"] is None  # type: ignore[index]


def test_stack_rm_refuses_a_stack_with_resources(fake: FakeAutoPulumi, project: str) -> None:
    st = _stack(project)
    st.up()
    with pytest.raises(errors.CommandError) as err:
        st.workspace.remove_stack("eph")
    assert ("'eph' still has resources; removal rejected. Possible actions:\n- Make sure "
            "that 'eph' is the stack that you want to destroy") in str(err.value)
    assert fake.stacks == ["eph"]


def test_tag_rules(fake: FakeAutoPulumi, project: str) -> None:
    st = _stack(project)
    with pytest.raises(errors.CommandError, match="may only contain alphanumerics"):
        st.set_tag("bad tag", "x")
    with pytest.raises(errors.CommandError, match="max length 256"):
        st.set_tag("ok", "x" * 257)
    st.set_tag("a" * 40, "x" * 256)


@pytest.mark.parametrize("backend", ["diy", "service"])
def test_stack_ls_json_is_what_the_sdk_parses(fake: FakeAutoPulumi, project: str,
                                              backend: str) -> None:
    # updateInProgress only where the backend SupportsProgress (stack_list.go).
    fake.faults(backend=backend)
    st = _stack(project)
    st.up()
    [summary] = auto.LocalWorkspace(work_dir=project).list_stacks()
    assert (summary.name, summary.current, summary.update_in_progress,
            summary.resource_count) == ("eph", True, None if backend == "diy" else False, 3)
    assert summary.last_update is not None  # parsed with "%Y-%m-%dT%H:%M:%S.%fZ"
