"""The CrossGuard pack (infra/policy/pack) runs infra/policy/rules.py's rules as pulumi-policy runs
them: each stack policy is called with a ``StackValidationArgs`` whose resources are
``PolicyResource`` objects with the properties deserialised and wrapped in
pulumi-policy's unknown-checking proxy, and the stack config in ``PULUMI_CONFIG``; the
pack is also served over gRPC as ``pulumi preview --policy-pack`` starts it."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import EnforcementLevel, PolicyResource, PolicyResourceOptions
from pulumi_policy import StackValidationArgs, StackValidationPolicy
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from conftest import ROOT, STACK_FILES
from infra.preview import harness
from infra.policy import rules as policy
from infra.preview.cli import desired_state
from infra.policy.pack import crossguard

PACK_DIR = ROOT / "infra" / "policy" / "pack"


def _wire(value: Any) -> Any:
    """A recorded input as the engine sends it: secrets as the secret signature object."""
    if isinstance(value, harness.Secret):
        return {harness.SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "value": _wire(value.value)}
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def _resource(type_: str, name: str, props: dict[str, Any]) -> PolicyResource:
    urn = f"urn:pulumi:test::accelstack::{type_}::{name}"
    opts = PolicyResourceOptions(False, [], False, [], None, [], None)
    return PolicyResource(type_, unknown_checking_proxy(deserialize_properties(_wire(props))),
                          urn, name, opts, None, None, [], {})


def _args(ev: harness.Evaluation, config: dict[str, Any] | None = None,
          edit: Any = None) -> StackValidationArgs:
    resources = []
    for r in ev.resources:
        props = copy.deepcopy(r.inputs)
        if edit:
            props = edit(r, props)
        resources.append(_resource(r.type, r.name, props))
    return StackValidationArgs(resources, config or {})


def cli_env(config: dict[str, Any], stack: str) -> dict[str, str]:
    """The policy pack's environment as the Pulumi CLI builds it (pulumi/pulumi
    sdk/go/common/resource/plugin/analyzer_plugin.go ``constructEnv``): the stack's config
    in PULUMI_CONFIG with secrets DECRYPTED (top-level strings raw, other values JSON:
    ``PropertyMapToConfig``), the organization, project, stack and dry-run flag, and no
    list of secret keys (``constructConfig`` drops the one ``PropertyMapToConfig`` returns)."""
    return {"PULUMI_CONFIG": json.dumps({k: v if isinstance(v, str) else json.dumps(v)
                                         for k, v in config.items()}),
            "PULUMI_ORGANIZATION": "organization", "PULUMI_PROJECT": "accelstack",
            "PULUMI_STACK": stack, "PULUMI_DRY_RUN": "true"}


def _set_config(monkeypatch: pytest.MonkeyPatch, config: dict[str, Any],
                stack: str = "", pack_dir: Path = PACK_DIR) -> None:
    # As the CLI starts the pack: its environment, in the pack's directory (``pwd :=
    # policyPackPath``), from which the pack finds the stack file.
    monkeypatch.delenv("PULUMI_CONFIG_SECRET_KEYS", raising=False)
    for key, value in cli_env(config, stack).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(pack_dir)


def _stack_name(path: Path) -> str:
    return path.name[len("Pulumi."):-len(".yaml")]


def project_with(tmp_path: Path, stack: str, text: str) -> Path:
    """A copy of the project's layout (Pulumi.yaml, stacks/, the pack's directory) holding
    one stack file written as ``text``; returns the pack's directory."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)
    pack = tmp_path / "infra" / "policy" / "pack"
    pack.mkdir(parents=True)
    for name in ("PulumiPolicy.yaml", "__main__.py"):
        (pack / name).write_text((PACK_DIR / name).read_text())
    return pack


def _stack_config(path: Path) -> dict[str, Any]:
    return dict((yaml.safe_load(path.read_text()) or {}).get("config") or {})


def _run(pol: StackValidationPolicy, args: StackValidationArgs) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    pol.validate(args, lambda message, urn=None: out.append((message, urn)))
    return out


def _violations(args: StackValidationArgs) -> dict[str, list[tuple[str, str | None]]]:
    return {p.name: v for p in crossguard.policies() if (v := _run(p, args))}


def test_one_mandatory_policy_per_rule_with_a_waiver_setting() -> None:
    pols = crossguard.policies()
    assert [p.name for p in pols] == list(policy.RULES)
    for p in pols:
        assert p.enforcement_level == EnforcementLevel.MANDATORY
        assert p.config_schema is not None
        assert p.config_schema.properties == {"waiver": {"type": "string", "minLength": 10}}


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_the_pack_agrees_with_the_offline_preview(path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _set_config(monkeypatch, _stack_config(path), _stack_name(path))
    ev = harness.evaluate_file(path)
    offline = [f for f in desired_state(path)["policy"]["findings"] if "waived" not in f]
    assert _violations(_args(ev)) == {} and offline == []


def _v5e(monkeypatch: pytest.MonkeyPatch) -> harness.Evaluation:
    path = ROOT / "stacks" / "Pulumi.v5e-spot.yaml"
    _set_config(monkeypatch, _stack_config(path), "v5e-spot")
    return harness.evaluate_file(path)


def _pool(r: harness.Resource) -> bool:
    return r.type == policy.NODE_POOL and "v5litepod" in r.name


def test_a_violation_names_the_resource_urn_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    ev = _v5e(monkeypatch)

    def default_sa(r: harness.Resource, props: dict[str, Any]) -> dict[str, Any]:
        if _pool(r):
            props["nodeConfig"]["serviceAccount"] = "123-compute@developer.gserviceaccount.com"
            props["management"]["autoRepair"] = False
        return props

    found = _violations(_args(ev, edit=default_sa))
    pools = [r for r in ev.resources if _pool(r)]
    assert sorted(found) == ["accelerator-auto-repair", "node-service-account"]
    assert found["node-service-account"] == [
        (f"{policy.NODE_POOL} {r.name}: nodes run as the default compute service account "
         "(123-compute@developer.gserviceaccount.com); fix: use the stack's dedicated "
         "least-privilege node service account",
         f"urn:pulumi:test::accelstack::{policy.NODE_POOL}::{r.name}") for r in pools]


def test_unknown_values_during_a_preview_do_not_stop_the_rules(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ev = _v5e(monkeypatch)

    def unknown(r: harness.Resource, props: dict[str, Any]) -> dict[str, Any]:
        if r.type == policy.NODE_POOL:
            props["nodeConfig"]["serviceAccount"] = UNKNOWN_STRING_VALUE
            props["nodeConfig"]["shieldedInstanceConfig"]["enableSecureBoot"] = False
        return props

    # The unknown account is no default account; the known bad field is still caught.
    assert sorted(_violations(_args(ev, edit=unknown))) == ["shielded-nodes"]


def test_waivers_from_the_stack_file_and_from_the_pack_config(
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = ROOT / "stacks" / "Pulumi.a3mega.yaml"
    ev = harness.evaluate_file(path)
    config = _stack_config(path)
    _set_config(monkeypatch, config, "a3mega")
    assert _violations(_args(ev)) == {}  # waived in the stack file
    unwaived = copy.deepcopy(config)
    del unwaived["accelstack:policy"]["waivers"]
    _set_config(monkeypatch, unwaived, "a3mega")
    rule = next(p for p in crossguard.policies() if p.name == "authorized-networks")
    assert len(_run(rule, _args(ev))) == 1
    assert _run(rule, _args(ev, {"waiver": "CI reaches it by IAM only; INFRA-212"})) == []
    assert len(_run(rule, _args(ev, {"waiver": "because"}))) == 1  # no written reason


SECURE_CREDENTIALS = "v1:Zm9vYmFy:c2VjcmV0Y2lwaGVydGV4dA=="  # ciphertext as Pulumi writes it
KEY_FILE = '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----x"}'


# Was: under the CLI every correctly encrypted secret arrives decrypted with no list of
# secret keys, so `plain-secret-config` (MANDATORY) failed every correct stack's preview.
# Now the pack reads the file's `secure:` markers; a plain credential is still caught.
def test_plain_secret_config_under_the_cli(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    path = ROOT / "stacks" / "Pulumi.v5e-spot.yaml"
    ev = harness.evaluate_file(path)
    text = path.read_text() + (f"  gcp:credentials:\n    secure: {SECURE_CREDENTIALS}\n"
                               "  gcp:accessToken: ya29.plain\n")
    pack = project_with(tmp_path, "v5e-spot", text)
    decrypted = {**_stack_config(path), "gcp:credentials": KEY_FILE,
                 "gcp:accessToken": "ya29.plain"}
    _set_config(monkeypatch, decrypted, "acme/v5e-spot", pack)
    assert _violations(_args(ev)) == {"plain-secret-config": [
        ("config gcp:accessToken: a credential is stored as plain config; fix: store it "
         "encrypted: pulumi config set --secret gcp:accessToken (and remove the plain value)",
         None)]}
    # A secret nested in a structured value: only that leaf is masked.
    text = path.read_text() + ("  gcp:settings:\n    token:\n"
                               f"      secure: {SECURE_CREDENTIALS}\n    password: hunter2\n")
    pack = project_with(tmp_path / "nested", "v5e-spot", text)
    _set_config(monkeypatch, {**_stack_config(path), "gcp:settings": {
        "token": "ya29.decrypted", "password": "hunter2"}}, "v5e-spot", pack)
    assert [m for m, _ in _violations(_args(ev))["plain-secret-config"]] == [
        "config gcp:settings: a credential is stored as plain config; fix: store it "
        "encrypted: pulumi config set --secret gcp:settings (and remove the plain value)"]
    _set_config(monkeypatch, {**_stack_config(path), "gcp:settings": {
        "token": "ya29.decrypted"}}, "v5e-spot", project_with(
        tmp_path / "only-secret", "v5e-spot", path.read_text() + (
            f"  gcp:settings:\n    token:\n      secure: {SECURE_CREDENTIALS}\n")))
    assert _violations(_args(ev)) == {}


def test_keys_the_stack_file_does_not_hold_are_not_judged(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    # From an ESC environment or --config: the CLI does not say whether they were secret.
    path = ROOT / "stacks" / "Pulumi.v5e-spot.yaml"
    ev = harness.evaluate_file(path)
    pack = project_with(tmp_path, "v5e-spot", path.read_text())
    _set_config(monkeypatch, {**_stack_config(path), "gcp:credentials": KEY_FILE},
                "v5e-spot", pack)
    assert _violations(_args(ev)) == {}
    assert crossguard.written_config(pack, "v5e-spot")["accelstack:project"] == "my-ml-project"
    assert crossguard.written_config(pack, "absent") == {}
    assert crossguard.written_config(tmp_path.parent, "v5e-spot") == {}


def test_a_public_bucket_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    ev = _v5e(monkeypatch)
    args = _args(ev)
    args.resources.append(_resource("gcp:storage/bucketIAMMember:BucketIAMMember", "ckpt-public",
                                    {"bucket": "ckpt", "role": "roles/storage.objectViewer",
                                     "member": "allUsers"}))
    args.resources.append(_resource("gcp:storage/bucketIAMMember:BucketIAMMember", "ckpt-team",
                                    {"bucket": "ckpt", "role": "roles/storage.objectViewer",
                                     "member": "group:ml@example.com"}))
    found = _violations(args)
    assert list(found) == ["public-bucket"]
    assert found["public-bucket"] == [(
        "gcp:storage/bucketIAMMember:BucketIAMMember ckpt-public: grants "
        "roles/storage.objectViewer on bucket ckpt to allUsers; fix: grant named principals "
        "only, and set "
        "publicAccessPrevention: enforced on the bucket",
        "urn:pulumi:test::accelstack::gcp:storage/bucketIAMMember:BucketIAMMember::ckpt-public")]


def test_an_unparsable_stack_config_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    ev = _v5e(monkeypatch)
    _set_config(monkeypatch, {"accelstack:project": "x"})
    found = _violations(_args(ev))
    assert set(found) == set(policy.RULES)
    assert found["public-bucket"] == [("the stack config does not parse; run "
                                       "`accelstack-preview STACK` for the problems", None)]


def test_the_pack_file_runs_the_project_environment() -> None:
    doc = yaml.safe_load((PACK_DIR / "PulumiPolicy.yaml").read_text())
    assert doc["runtime"] == {"name": "python",
                              "options": {"toolchain": "pip", "virtualenv": "../../../.venv"}}
    assert (PACK_DIR / "__main__.py").is_file()


def _serve(env: dict[str, str], pack_dir: Path = PACK_DIR) -> tuple[subprocess.Popen[str], str]:
    # Pulumi runs the pack's __main__ in the pack's directory and reads the gRPC port it
    # prints on stdout.
    proc = subprocess.Popen([sys.executable, str(pack_dir / "__main__.py")], cwd=pack_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    port = proc.stdout.readline().strip()
    assert port.isdigit(), proc.stderr.read() if proc.stderr else ""
    return proc, port


def _analyze_stack(port: str, ev: harness.Evaluation) -> list[Any]:
    import grpc
    from google.protobuf import json_format, struct_pb2
    from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

    resources = []
    for r in ev.resources:
        props = struct_pb2.Struct()
        json_format.ParseDict(_wire(r.inputs), props)
        resources.append(analyzer_pb2.AnalyzerResource(type=r.type, properties=props, urn=r.urn,
                                                       name=r.name))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        reply = stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources),
                                  timeout=60)
    return list(reply.diagnostics)


def test_the_pack_over_grpc_as_pulumi_runs_it(tmp_path: Path) -> None:
    # The engine's side of `pulumi preview --policy-pack`: start the pack with the
    # environment the CLI builds (a secret decrypted, no secret keys), send the stack's
    # resources to AnalyzeStack, read the diagnostics back. The stack file holds the secret
    # as `secure:`; only the real violation comes back.
    path = ROOT / "stacks" / "Pulumi.a3mega.yaml"
    ev = harness.evaluate_file(path)
    written = yaml.safe_load(path.read_text())
    del written["config"]["accelstack:policy"]["waivers"]
    written["config"]["gcp:credentials"] = {"secure": SECURE_CREDENTIALS}
    pack = project_with(tmp_path, "a3mega", yaml.safe_dump(written))
    config = _stack_config(path)
    del config["accelstack:policy"]["waivers"]
    config["gcp:credentials"] = KEY_FILE
    env = {k: v for k, v in os.environ.items() if k != "PULUMI_CONFIG_SECRET_KEYS"}
    env.update(cli_env(config, "a3mega"), PYTHONPATH=str(ROOT))
    proc, port = _serve(env, pack)
    try:
        diagnostics = _analyze_stack(port, ev)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    cluster = ev.named("a3mega", policy.CLUSTER)
    assert [(d.policyName, d.policyPackName, d.urn, d.message) for d in diagnostics] == [(
        "authorized-networks", "accelstack", cluster.urn,
        f"{crossguard.DESCRIPTIONS['authorized-networks']}\n"
        f"{policy.CLUSTER} a3mega: the control plane has a public endpoint open to every "
        "address; fix: list masterAuthorizedNetworks in the stack, or set "
        "privateEndpoint: true")]
    from pulumi.runtime.proto import analyzer_pb2
    assert diagnostics[0].enforcementLevel == analyzer_pb2.MANDATORY
