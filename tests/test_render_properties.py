"""Invariants of rendering, over generated workloads on every kind of stack (Hypothesis).

Names within the hostname budget, slice and node counts within the pool, env var lists
and exit code sets are drawn at random; whatever is drawn, the JobSet must be the same
twice, have the shape the pool implies, generate only valid names, and validate against
the JobSet CRD. Known violations of rules the cluster enforces beyond these (JobSet's
pod-name limit, duplicate env names) are pinned in test_render_golden.py.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schema
import stack_fixtures
from infra.catalog import pod_resources
from submit.render import jobset as render_mod
from submit.render.build import build_spec
from submit.render.spec import DNS_1035, REPLICATED_JOB, SpecError, WorkloadSpec, hostname_budget
from test_render_golden import list_map_duplicates, pod_of

DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# Names the renderer sets itself; user variables are drawn from another namespace so the
# properties hold (a clash is a known bug, see test_render_golden.py).
USER_ENV = st.from_regex(r"\AAPP_[A-Z0-9_]{1,12}\Z")
ENV_VALUE = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=24)


def budget(replicas: int, parallelism: int, kind: str) -> int:
    """The longest name whose last pod name, <name>-<rjob>-<i>-<j>-<5 random>, has 63
    characters (JobSet's webhook checks the pod name with the Job controller's suffix).

    Stated here from JobSet's naming, independently of submit.render.spec.hostname_budget.
    """
    rjob = {"tpu": "slice"}.get(kind, "worker")
    return 63 - len(f"-{rjob}-{replicas - 1}-{parallelism - 1}") - len("-abcde")


def name_limit(pool: Any, replicas: int, parallelism: int, namespace: str) -> int:
    """``budget``, and for a dynamic slice what keeps GKE's Slice name within 49: the slice
    controller names it <namespace>-<Kueue workload>-<pod set>, Kueue's workload being
    jobset-<name>-<5 hex> and the pod set the replicated job (submit/render/
    dynamic_slicing.py has the sources)."""
    limit = budget(replicas, parallelism, pool.kind)
    slice_limit = 49 - len(f"{namespace}-jobset-") - len("-abcde-slice")
    return min(limit, slice_limit) if pool.slice_topology else limit


def _letters(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


@st.composite
def dns_1035(draw: st.DrawFn, max_len: int, min_len: int = 1) -> str:
    """A DNS-1035 label of min_len..max_len characters, long ones as likely as short ones."""
    length = draw(st.integers(min_len, max_len) | st.just(max_len))
    if length == 1:
        return draw(_letters("abcdefghijklmnopqrstuvwxyz", 1))
    head = draw(_letters("abcdefghijklmnopqrstuvwxyz", 1))
    middle = draw(_letters("abcdefghijklmnopqrstuvwxyz0123456789-", length - 2))
    tail = draw(_letters("abcdefghijklmnopqrstuvwxyz0123456789", 1))
    return head + middle + tail


@st.composite
def workloads(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """(stack name, build_spec keyword arguments) for a workload the stack can run."""
    stack = draw(st.sampled_from(sorted(stack_fixtures.STACKS)))
    pool = stack_fixtures.outputs(stack).slice_pools[0]
    args: dict[str, Any] = {"accelerator": pool.accelerator, "image": "busybox:1.37"}
    if pool.kind == "tpu":
        # Multislice needs multi-host slices (GKE's Multislice page).
        most = pool.slice_count if pool.vms_per_slice > 1 else 1
        args["num_slices"] = replicas = draw(st.integers(1, most))
        parallelism = pool.vms_per_slice
    else:
        replicas = 1
        args["num_nodes"] = parallelism = draw(
            st.integers(1, pool.slice_count * pool.vms_per_slice))
    args["workload"] = draw(dns_1035(name_limit(
        pool, replicas, parallelism, stack_fixtures.outputs(stack).workload_namespace)))
    env = draw(st.lists(st.tuples(USER_ENV, ENV_VALUE), max_size=5))
    args["env"] = [f"{k}={v}" for k, v in env]
    codes = draw(st.sets(st.integers(1, 255), max_size=6))
    if codes:
        args["restart_on_exit_codes"] = ",".join(map(str, codes))
    elif draw(st.booleans()):
        args["restart_on_exit_codes"] = "any"
    args["max_restarts"] = draw(st.integers(0, 10))
    if draw(st.booleans()):
        args["command"] = "python train.py"
    return stack, args


def _spec(stack: str, args: dict[str, Any]) -> WorkloadSpec:
    return build_spec(stack_fixtures.outputs(stack), **args)


def _jobset(objs: list[dict[str, Any]]) -> dict[str, Any]:
    [js] = [o for o in objs if o["kind"] == "JobSet"]
    return js


# ----------------------------------------------------------------------------------
# Properties


@SETTINGS
@given(workloads())
def test_rendering_is_deterministic(case: tuple[str, dict[str, Any]]) -> None:
    stack, args = case
    spec = _spec(stack, args)
    first = render_mod.render(spec)
    snapshot = copy.deepcopy(first)
    assert render_mod.render(spec) == snapshot
    assert render_mod.render(_spec(stack, copy.deepcopy(args))) == snapshot
    assert first == snapshot  # rendering again did not touch the first result


@SETTINGS
@given(workloads())
def test_shape_follows_the_pool(case: tuple[str, dict[str, Any]]) -> None:
    stack, args = case
    spec = _spec(stack, args)
    js = _jobset(render_mod.render(spec))
    [rj] = js["spec"]["replicatedJobs"]
    job = rj["template"]["spec"]
    pool = spec.pool
    assert rj["name"] == REPLICATED_JOB[pool.kind]
    if pool.kind == "tpu":
        assert rj["replicas"] == args["num_slices"]
        assert job["parallelism"] == job["completions"] == pool.vms_per_slice
        # hosts x chips per host = chips in the slice's topology
        chips = 1
        for d in (pool.topology or "").split("x"):
            chips *= int(d)
        assert job["parallelism"] * pool.chips_per_vm == chips
    else:
        assert rj["replicas"] == 1
        assert job["parallelism"] == job["completions"] == args["num_nodes"]
    [main] = job["template"]["spec"]["containers"]
    share = pod_resources.container_share(pool.machine_type)  # less a GPUDirect sidecar
    expected = {pool.resource_name: str(pool.chips_per_vm)} if pool.resource_name else {}
    if share is not None:
        expected.update(cpu=share.cpu, memory=share.memory)
    assert main["resources"]["limits"] == main["resources"]["requests"] == expected
    user = [e for e in main["env"] if e["name"].startswith("APP_")]
    expected = dict(a.split("=", 1) for a in args["env"])
    assert {e["name"]: e["value"] for e in user} == expected


def name_problems(objs: list[dict[str, Any]]) -> list[str]:
    """Every generated name that the API server or JobSet's webhook would refuse."""
    out = []
    js = _jobset(objs)
    name = js["metadata"]["name"]
    if not (DNS_1035.match(name) and len(name) <= 63):
        out.append(f"JobSet name {name!r}")
    for obj in objs:
        cm = obj["metadata"]["name"]
        if obj["kind"] == "ConfigMap" and not (DNS_1123_SUBDOMAIN.match(cm) and len(cm) <= 253):
            out.append(f"ConfigMap name {cm!r}")
    for rj in js["spec"]["replicatedJobs"]:
        for i in range(rj["replicas"]):
            job_name = f"{name}-{rj['name']}-{i}"
            if not (DNS_1035.match(job_name) and len(job_name) <= 63):
                out.append(f"Job name {job_name!r}")
            for j in range(rj["template"]["spec"]["completions"]):
                host = f"{job_name}-{j}"
                if not (DNS_1123_LABEL.match(host) and len(host) <= 63):
                    out.append(f"pod hostname {host!r}")
                elif len(host) + len("-abcde") > 63:  # JobSet's webhook: the pod name
                    out.append(f"pod name {host + '-abcde'!r}")
    names = [r.get("name", "") for r in js["spec"].get("failurePolicy", {}).get("rules", [])]
    out += [f"failure policy rule name {n!r}" for n in names
            if not (RULE_NAME.match(n) and len(n) <= 128)]
    out += [f"failure policy rule name {n!r} repeats" for n in set(names)
            if names.count(n) > 1]
    return out


@SETTINGS
@given(workloads())
def test_every_generated_name_is_valid(case: tuple[str, dict[str, Any]]) -> None:
    stack, args = case
    objs = render_mod.render(_spec(stack, args))
    assert name_problems(objs) == []
    rules = _jobset(objs)["spec"]["failurePolicy"].get("rules", [])
    # fail fast unless every failure may restart (the default fails fast too)
    assert bool(rules) == (args.get("restart_on_exit_codes") != "any")


@SETTINGS
@given(workloads())
def test_exit_codes_are_a_sorted_set(case: tuple[str, dict[str, Any]]) -> None:
    # The Job API rejects podFailurePolicy values that repeat or are out of order.
    stack, args = case
    job = _jobset(render_mod.render(_spec(stack, args)))["spec"]["replicatedJobs"][0][
        "template"]["spec"]
    codes = args.get("restart_on_exit_codes")
    if codes == "any":
        assert "podFailurePolicy" not in job
        return
    disruption, rule = job["podFailurePolicy"]["rules"]
    assert disruption == {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]}
    values = rule["onExitCodes"]["values"]
    if codes is None:  # the default: 42 and 127-255, as in xpk
        assert values == [42, *range(127, 256)]
    else:
        assert values == sorted({int(c) for c in codes.split(",")})
    assert rule["onExitCodes"]["containerName"] == render_mod.CONTAINER


@SETTINGS
@given(workloads())
def test_every_jobset_validates(case: tuple[str, dict[str, Any]]) -> None:
    stack, args = case
    for obj in render_mod.render(_spec(stack, args)):
        schema.validate(obj)
        if obj["kind"] == "JobSet":
            schema.validate(pod_of(obj))
            assert list_map_duplicates(obj) == []


# ----------------------------------------------------------------------------------
# The hostname budget


@st.composite
def pool_counts(draw: st.DrawFn) -> tuple[str, dict[str, Any], int]:
    stack = draw(st.sampled_from(sorted(stack_fixtures.STACKS)))
    pool = stack_fixtures.outputs(stack).slice_pools[0]
    if pool.kind == "tpu":
        # Multislice needs multi-host slices (GKE's Multislice page).
        n = draw(st.integers(1, pool.slice_count if pool.vms_per_slice > 1 else 1))
        return stack, {"num_slices": n}, name_limit(
            pool, n, pool.vms_per_slice, stack_fixtures.outputs(stack).workload_namespace)
    n = draw(st.integers(1, pool.slice_count * pool.vms_per_slice))
    return stack, {"num_nodes": n}, budget(1, n, pool.kind)


@SETTINGS
@given(pool_counts(), st.data())
def test_names_one_over_the_budget_are_refused(case: tuple[str, dict[str, Any], int],
                                               data: st.DataObject) -> None:
    stack, counts, limit = case
    outputs = stack_fixtures.outputs(stack)
    accel = outputs.slice_pools[0].accelerator
    at = data.draw(dns_1035(limit, min_len=limit))
    build_spec(outputs, workload=at, accelerator=accel, image="busybox:1.37", **counts)
    over = at[:-1] + "x1"
    with pytest.raises(SpecError) as info:
        build_spec(outputs, workload=over, accelerator=accel, image="busybox:1.37", **counts)
    assert info.value.option == "--workload"
    assert str(info.value).startswith("--workload: ")
    assert f"at most {limit}" in str(info.value)


@SETTINGS
@given(st.integers(1, 4096), st.integers(1, 4096), st.sampled_from(["tpu", "gpu", "cpu"]))
def test_budget_matches_jobset_naming(replicas: int, parallelism: int, kind: str) -> None:
    assert hostname_budget(replicas, parallelism, kind) == budget(replicas, parallelism, kind)


def test_budget_example() -> None:
    # v6e-256 x4: the longest pod name is <name>-slice-3-63-abcde, so 63 - 17 characters.
    assert hostname_budget(4, 64, "tpu") == 46
    assert hostname_budget(1, 1, "gpu") == 63 - len("-worker-0-0-abcde")


def test_name_checks_can_fail() -> None:
    # The name checks catch a name one over the budget, bad and repeated rule names.
    objs = render_mod.render(_spec("v6e-multislice", {
        "workload": "w" * 46, "accelerator": "v6e-256", "image": "busybox:1.37",
        "num_slices": 4, "restart_on_exit_codes": "42"}))
    assert name_problems(objs) == []
    js = _jobset(objs)
    js["metadata"]["name"] += "x"
    rules = js["spec"]["failurePolicy"]["rules"]
    rules.append(dict(rules[0]))
    rules.append({**rules[0], "name": "fail-fast"})
    problems = name_problems(objs)
    # 64 characters with the pod suffix: every pod with a two-digit index, 54 a slice
    too_long = [f"pod name '{'w' * 46}x-slice-{i}-{j}-abcde'" for i in range(4)
                for j in range(10, 64)]
    assert problems == too_long + ["failure policy rule name 'fail-fast'",
                                   "failure policy rule name 'failFastOnUserErrors' repeats"]
