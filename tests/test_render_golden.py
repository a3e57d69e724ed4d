"""Golden files for rendered workloads: tests/golden/<case>/ holds the input and the output.

``input.yaml`` names a stack from ``stack_fixtures`` and the keyword arguments of
``submit.render.spec.build_spec`` (the CLI's options, snake_case); ``env_file`` and
``config_file`` are paths relative to the case directory. ``expected.yaml`` is what
``submit.render.jobset.render`` returns, dumped with ``yaml.safe_dump_all(sort_keys=False)``.
Run ``pytest --update-golden`` to rewrite the expected files, then review the diff like
code. Every rendered object is also validated against the real schemas, and the rules the
schemas cannot express (list-map keys unique, JobSet's pod-name limit) are checked here.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

import schema
import stack_fixtures
from infra.catalog import pod_resources
from submit.render import jobset as render_mod
from submit.render import spec as spec_mod
from submit.render.build import build_spec
from submit.render.spec import SpecError, WorkloadSpec, hostname_budget

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())
PATH_ARGS = ("env_file", "config_file")
DIAGNOSTIC_SIDECARS = ("stack-traces", "xla-dump-upload")
DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def load_case(case: Path) -> tuple[str, dict[str, Any]]:
    data = yaml.safe_load((case / "input.yaml").read_text())
    assert set(data) == {"stack", "args"}, f"{case.name}/input.yaml: keys are stack and args"
    args = dict(data["args"])
    for key in PATH_ARGS:
        if key in args:
            args[key] = str(case / args[key])
    return str(data["stack"]), args


def spec_for(case: Path) -> WorkloadSpec:
    stack, args = load_case(case)
    return build_spec(stack_fixtures.outputs(stack), **args)


def dump(objs: list[dict[str, Any]]) -> str:
    return str(yaml.safe_dump_all(objs, sort_keys=False))


# ----------------------------------------------------------------------------------
# Rules beyond the OpenAPI schema that the API server and JobSet's webhook enforce.


@lru_cache(maxsize=None)
def _jobset_crd_schema() -> dict[str, Any]:
    schema.require_reference()
    crd = yaml.safe_load((schema.CRD_DIR / "jobset.x-k8s.io_jobsets.yaml").read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    return version["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def _walk_lists(sch: dict[str, Any], value: Any, path: str) -> Iterator[str]:
    if isinstance(value, dict):
        props = sch.get("properties") or {}
        extra = sch.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) or (extra if isinstance(extra, dict) else None)
            if sub is not None:
                yield from _walk_lists(sub, v, f"{path}.{k}")
    elif isinstance(value, list):
        kind = sch.get("x-kubernetes-list-type")
        seen: set[str] = set()
        for i, item in enumerate(value):
            if kind == "map":
                key = json.dumps([item.get(k) for k in sch["x-kubernetes-list-map-keys"]])
            elif kind == "set":
                key = json.dumps(item, sort_keys=True)
            else:
                key = None
            if key is not None:
                if key in seen:
                    yield f"{path}[{i}]: duplicate {key}"
                seen.add(key)
            yield from _walk_lists(sch.get("items") or {}, item, f"{path}[{i}]")


def list_map_duplicates(jobset: dict[str, Any]) -> list[str]:
    """Entries that repeat a key of an ``x-kubernetes-list-type: map`` (or ``set``) list.

    The API server rejects such a custom resource ("Duplicate value"); a plain JSON Schema
    validator does not check it, so ``schema.validate`` lets it through.
    """
    return list(_walk_lists(_jobset_crd_schema(), jobset, "JobSet"))


def longest_pod_name(jobset: dict[str, Any]) -> list[str]:
    """JobSet's webhook: <jobset>-<rjob>-<maxJob>-<maxPod> plus a 5-character suffix.

    kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go (ValidateCreate) checks this is a
    DNS-1035 label, so it must stay within 63 characters.
    """
    name = jobset["metadata"]["name"]
    out = []
    for rj in jobset["spec"]["replicatedJobs"]:
        completions = rj["template"]["spec"]["completions"]
        out.append(f"{name}-{rj['name']}-{rj['replicas'] - 1}-{completions - 1}-abcde")
    return out


def pod_of(jobset: dict[str, Any]) -> dict[str, Any]:
    """The first replicated Job's pod template as the v1 Pod it becomes."""
    rj = jobset["spec"]["replicatedJobs"][0]
    tpl = rj["template"]["spec"]["template"]
    meta = {"name": f"{jobset['metadata']['name']}-{rj['name']}-0-0",
            "namespace": jobset["metadata"]["namespace"], **tpl.get("metadata", {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": tpl["spec"]}


def validate_all(objs: list[dict[str, Any]]) -> None:
    for obj in objs:
        schema.validate(obj)
        if obj["kind"] == "JobSet":
            schema.validate(pod_of(obj))
            assert list_map_duplicates(obj) == []


def _empty_values(value: Any, path: str) -> Iterator[str]:
    # An empty string is a value a user can ask for (--env X=); empty collections are not.
    if isinstance(value, dict):
        if not value:
            yield path
        for k, v in value.items():
            if v is None:
                yield f"{path}.{k}"
            yield from _empty_values(v, f"{path}.{k}")
    elif isinstance(value, list):
        if not value:
            yield path
        for i, v in enumerate(value):
            yield from _empty_values(v, f"{path}[{i}]")


# ----------------------------------------------------------------------------------
# The golden cases


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Path, update_golden: bool) -> None:
    objs = render_mod.render(spec_for(case))
    actual = dump(objs)
    expected_file = case / "expected.yaml"
    if update_golden:
        expected_file.write_text(actual)
    elif not expected_file.is_file():
        pytest.fail(f"{expected_file} is missing; run pytest --update-golden and review it")
    assert actual == expected_file.read_text()
    validate_all(objs)


def test_there_are_golden_cases() -> None:
    # A glob that matched nothing would make the parametrised test vanish, not fail.
    names = {c.name for c in CASES}
    assert {"v5e-multislice", "v5p-single-slice", "v6e-multislice", "tpu7x", "h100-mega",
            "h200", "b200", "l4", "cpu", "env", "priority", "restarts", "ttl", "grace",
            "shm-size", "config-file", "tpu7-multislice", "tpu7-count-form", "gb200",
            "gb200-nolssd", "c4a-arm", "defaults-off", "defaults-overridden",
            "no-flags", "h100-tcpx", "gb200-nvlink", "gb200-one-node"} <= names


# Pathways cases (two replicated jobs, head and workers) are read in test_pathways.py.
# Parallel-containers cases (N containers per pod) are read in test_parallel_containers.py.
ONE_JOB_CASES = [c for c in CASES if not c.name.startswith(("pathways-", "parallel-containers-"))]


@pytest.mark.parametrize("case", ONE_JOB_CASES, ids=[c.name for c in ONE_JOB_CASES])
def test_golden_reads_as_asked(case: Path) -> None:
    """What a reviewer checks in each expected file, stated once for every case."""
    stack, args = load_case(case)
    outputs = stack_fixtures.outputs(stack)
    spec = build_spec(outputs, **args)
    pool = spec.pool
    objs = yaml.safe_load_all((case / "expected.yaml").read_text()) if (
        case / "expected.yaml").is_file() else render_mod.render(spec)
    objs = list(objs)
    multi_node_a4x = pool.family == "a4x" and spec.parallelism * spec.replicas > 1
    assert [o["kind"] for o in objs] == (["ConfigMap"] if "config_file" in args else []) + (
        ["ComputeDomain"] if multi_node_a4x else []) + ["JobSet"]
    js = objs[-1]
    assert list(_empty_values(js, "JobSet")) == []
    meta, body = js["metadata"], js["spec"]
    [rj] = body["replicatedJobs"]
    job = rj["template"]["spec"]
    pod = job["template"]["spec"]
    pod_meta = job["template"]["metadata"]
    [main] = pod["containers"]
    env = {e["name"]: e for e in main["env"]}

    assert meta["labels"]["kueue.x-k8s.io/queue-name"] == spec.queue
    assert meta["namespace"] == spec.namespace
    # Defaults (xpk's, and 3 restarts) unless the case overrides them; "none"/"any" turn
    # the priority, the TTL and the fail-fast rule off.
    priority = args.get("priority", spec_mod.DEFAULT_PRIORITY)
    assert meta["labels"].get("kueue.x-k8s.io/priority-class") == (
        None if priority == "none" else priority)
    ttl = args.get("ttl", spec_mod.DEFAULT_TTL)
    assert body.get("ttlSecondsAfterFinished") == spec_mod.parse_ttl(ttl)
    if "ttl" not in args:
        assert body["ttlSecondsAfterFinished"] == 12 * 3600
    assert pod["terminationGracePeriodSeconds"] == args.get("termination_grace_period", 30)
    has_codes = args.get("restart_on_exit_codes") != "any"
    assert ("podFailurePolicy" in job) == has_codes
    assert ("rules" in body["failurePolicy"]) == has_codes
    if has_codes:
        values = job["podFailurePolicy"]["rules"][1]["onExitCodes"]["values"]
        assert values == list(spec_mod.parse_exit_codes(
            args.get("restart_on_exit_codes", "42,127-255")))
    assert body["failurePolicy"]["maxRestarts"] == args.get("max_restarts", 3)

    # Hardened: seccomp, no escalation, no capability beyond what a daemon adds, no API
    # token unless asked for.
    assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["automountServiceAccountToken"] is args.get("mount_service_account_token",
                                                            False)
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        if c is main:
            assert sc["capabilities"].get("add", []) == args.get("add_capability", [])
        else:  # the GPUDirect daemons (gpu_net), and diagnostics sidecars without any
            assert set(sc["capabilities"].get("add", [])) <= {"NET_ADMIN", "NET_BIND_SERVICE"}
        assert "privileged" not in sc

    # JAX's coordinator: host:port as jax.distributed.initialize() reads it.
    port = "8482" if pool.kind == "tpu" else "6002"
    assert env["JAX_COORDINATOR_PORT"]["value"] == port
    assert env["JAX_COORDINATOR_ADDRESS"]["value"] == (
        f"$(JOBSET_NAME)-$(REPLICATED_JOB_NAME)-0-0.$(JOBSET_NAME):{port}")
    assert {"containerPort": int(port)} in main.get("ports", [{"containerPort": int(port)}])

    # Arm hosts: selected, tolerated and required by node affinity.
    arm = pool.node_selector.get("kubernetes.io/arch") == "arm64"
    assert arm == (pool.accelerator in ("gb200-4", "gb200-4-nolssd")
                   or pool.machine_type.startswith(("c4a-", "t2a-")))
    if arm:
        assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
                "effect": "NoSchedule"} in pod["tolerations"]
        assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"] == [{"matchExpressions": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}]
    else:
        assert "affinity" not in pod
    if args.get("image_pull_secret"):  # never an empty list or a null name
        assert pod["imagePullSecrets"] == [{"name": n} for n in args["image_pull_secret"]]
    else:
        assert "imagePullSecrets" not in pod
    assert ("sizeLimit" in pod["volumes"][0]["emptyDir"]) == ("shm_size" in args)

    # Replicas and pods per replica: slices x VMs for TPUs, one Job of N nodes otherwise.
    if pool.kind == "tpu":
        assert rj["replicas"] == args.get("num_slices", 1)
        assert job["parallelism"] == job["completions"] == pool.vms_per_slice
    else:
        assert rj["replicas"] == 1
        assert job["parallelism"] == job["completions"] == args.get("num_nodes", 1)

    # Multislice env only for more than one TPU slice; exclusive placement per slice only
    # for multi-host TPU slices; the hosts' network only for multi-host or multislice TPUs.
    multislice = pool.kind == "tpu" and rj["replicas"] > 1
    assert {"MEGASCALE_NUM_SLICES", "MEGASCALE_SLICE_ID",
            "MEGASCALE_COORDINATOR_ADDRESS"} <= set(env) if multislice else not any(
        n.startswith("MEGASCALE_") for n in env)
    exclusive = meta.get("annotations", {}).get(render_mod.EXCLUSIVE_TOPOLOGY)
    assert exclusive == ("cloud.google.com/gke-nodepool" if pool.kind == "tpu"
                         and pool.vms_per_slice > 1 and not pool.slice_topology else None)
    if pool.kind != "tpu" or (pool.vms_per_slice == 1 and rj["replicas"] == 1):
        assert "hostNetwork" not in pod and "dnsPolicy" not in pod  # one TPU VM: pod network
    else:
        assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"

    # Placement and resources straight from the contract.
    assert pod["nodeSelector"] == dict(pool.node_selector)
    assert pod.get("tolerations", []) == [dict(t) for t in pool.tolerations]
    # requests = limits: the chips, and CPU/memory sized from the machine (or as asked),
    # less a GPUDirect daemon sidecar's part
    share = pod_resources.container_share(pool.machine_type)
    amounts: dict[str, str] = {}
    if pool.resource_name:
        amounts[pool.resource_name] = str(pool.chips_per_vm)
    cpu = args.get("cpu") or (share.cpu if share else None)
    memory = args.get("memory") or (share.memory if share else None)
    amounts.update({k: v for k, v in (("cpu", cpu), ("memory", memory)) if v})
    claims = [{"name": "compute-domain-channel"}] if multi_node_a4x else []
    if pool.dranet and not pod.get("hostNetwork"):  # DRANET's NICs (submit/render/dranet.py)
        claims.append({"name": "netdev"})
    # Diagnostics sidecars (submit/render/diagnostics/pod.py) take their part from main's.
    diag = [c for c in pod.get("initContainers", []) if c["name"] in DIAGNOSTIC_SIDECARS]
    if amounts and diag:
        from submit.render.diagnostics.pod import _mi, _milli

        for part in ("requests", "limits"):
            assert sum(_milli(c["resources"][part]["cpu"]) for c in [main, *diag]) == \
                _milli(amounts["cpu"])
            assert sum(_mi(c["resources"][part]["memory"]) for c in [main, *diag]) == \
                _mi(amounts["memory"])
    elif amounts:
        assert main["resources"] == {"requests": amounts, "limits": amounts,
                                     **({"claims": claims} if claims else {})}
    else:
        assert "resources" not in main

    # A4X across nodes: every pod claims the IMEX channel of the workload's ComputeDomain.
    if multi_node_a4x:
        [cd] = [o for o in objs if o["kind"] == "ComputeDomain"]
        template = cd["spec"]["channel"]["resourceClaimTemplate"]["name"]
        assert cd["spec"]["numNodes"] == 0  # the pinned driver's recommendation
        assert pod["resourceClaims"] == [{"name": "compute-domain-channel",
                                          "resourceClaimTemplateName": template}]
    elif pool.dranet and not pod.get("hostNetwork"):
        assert pod["resourceClaims"] == [{"name": "netdev",
                                          "resourceClaimTemplateName": "accelstack-netdev"}]
    else:
        assert "resourceClaims" not in pod
    # Kueue's topology request exactly when the pool's flavor uses TAS.
    level = pool.kueue_topology_level
    assert pod_meta.get("annotations", {}).get(
        "kueue.x-k8s.io/podset-preferred-topology") == level

    # GPUDirect: the pod's NICs are exactly the contract's data subnets, in order.
    ann = pod_meta.get("annotations", {})
    if pool.kind == "gpu" and pool.networking != "none":
        nics = json.loads(ann["networking.gke.io/interfaces"])
        assert nics[0] == {"interfaceName": "eth0", "network": "default"}
        assert [n["network"] for n in nics[1:]] == [
            n["subnetwork"] for n in pool.additional_networks]
        assert [n["interfaceName"] for n in nics] == [f"eth{i}" for i in range(len(nics))]
        assert ann["networking.gke.io/default-interface"] == "eth0"
    else:
        assert not any(k.startswith(("networking.gke.io/", "devices.gke.io/")) for k in ann)
        assert [c["name"] for c in pod.get("initContainers", [])] == [
            c["name"] for c in diag]

    # The command runs as asked (after sourcing NCCL's settings on GPUDirect machines).
    if "command" in args:
        assert main["command"][:2] == ["/bin/sh", "-c"]
        assert main["command"][2].endswith(args["command"])
    else:
        assert "command" not in main

    if "config_file" in args:
        cm = objs[0]
        key = Path(args["config_file"]).name
        assert cm["data"] == {key: Path(args["config_file"]).read_text()}
        assert env["ACCELSTACK_CONFIG"]["value"] == f"/etc/accelstack/config/{key}"
        assert {"name": "config", "configMap": {"name": cm["metadata"]["name"]}} in pod["volumes"]


# ----------------------------------------------------------------------------------
# Known bugs: the renderer produces objects the cluster rejects.


@pytest.mark.parametrize("stack,accelerator,count", [
    ("v6e-multislice", "v6e-256", 4), ("a3mega", "h100-mega-80gb-8", 4)])
def test_name_at_budget_passes_jobset_pod_name_rule(stack: str, accelerator: str,
                                                    count: int) -> None:
    outputs = stack_fixtures.outputs(stack)
    kind = outputs.slice_pools[0].kind
    replicas, parallelism = ((count, outputs.slice_pools[0].vms_per_slice) if kind == "tpu"
                             else (1, count))
    name = "w" * hostname_budget(replicas, parallelism, kind)
    counts: dict[str, Any] = {"num_slices": count} if kind == "tpu" else {"num_nodes": count}
    spec = build_spec(outputs, workload=name, accelerator=accelerator, image="busybox:1.37",
                      **counts)
    [js] = render_mod.render(spec)
    for pod_name in longest_pod_name(js):
        assert len(pod_name) <= 63, f"{pod_name} ({len(pod_name)} characters)"


@pytest.mark.parametrize("stack,accelerator,var", [
    ("a3mega", "h100-mega-80gb-8", "LD_LIBRARY_PATH=/opt/lib"),
    ("v5e-spot", "v5litepod-16", "JOBSET_NAME=mine"),
])
def test_user_env_named_like_a_rendered_var(stack: str, accelerator: str, var: str) -> None:
    try:
        spec = build_spec(stack_fixtures.outputs(stack), workload="train",
                          accelerator=accelerator, image="busybox:1.37", env=[var])
    except SpecError as e:
        assert e.option == "--env"  # refusing it, naming the option, is a fix too
        return
    [js] = render_mod.render(spec)
    assert list_map_duplicates(js) == []


# ----------------------------------------------------------------------------------
# The checks above can fail


def test_list_map_check_finds_duplicates() -> None:
    [js] = render_mod.render(spec_for(GOLDEN / "l4"))
    env = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["env"]
    env.append(dict(env[0]))
    problems = list_map_duplicates(js)
    assert len(problems) == 1 and '"JOBSET_NAME"' in problems[0]


def test_golden_comparison_detects_a_change(tmp_path: Path) -> None:
    case = GOLDEN / "l4"
    objs = render_mod.render(spec_for(case))
    objs[-1]["spec"]["replicatedJobs"][0]["replicas"] = 2
    assert dump(objs) != (case / "expected.yaml").read_text()


def test_pod_names_are_dns_labels_in_goldens() -> None:
    for case in CASES:
        for obj in render_mod.render(spec_for(case)):
            if obj["kind"] == "JobSet":
                assert DNS_1123_LABEL.match(pod_of(obj)["metadata"]["name"])
