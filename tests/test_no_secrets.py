"""No secret ever appears in what `submit` prints, on success or on error.

What counts as a secret, and where it may appear:
- kubeconfig material from the stack's outputs (the bearer token, client key and
  certificate data, whether as written or decoded): never, in any output of any command, in
  an exported file, or in an error, including when the kubeconfig does not parse;
- bearer tokens echoed in an API server's error answers (a proxy or webhook may quote the
  request): never;
- values from --env-file and --env: they are user data the user asked to put in the
  workload, so `--dry-run` and `--export` show them in the JobSet (that is the render), but
  no error message ever does, and nothing else prints them;
- the data of a Kubernetes Secret named by --secret-env: the submitter renders only a
  reference (secretKeyRef) and never reads Secrets, so it can never print them.

Each run goes end to end: the real command line, the stack's outputs through the fake
`pulumi`, the cluster through the fake API server over HTTP.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Iterator

import pytest
import yaml
from click.testing import CliRunner, Result

from fake_apiserver import FakeApiServer, Fault
from fakes import stacks
from fakes.pulumi_cli import FakePulumi, install
from submit.cli.app import main

TOKEN = "kc-T0KEN-7f3a9c1e5b"
KEY = "-----BEGIN PRIVATE KEY-----\nKEYMATERIAL-Q9w8e7r6\n-----END PRIVATE KEY-----\n"
CERT = "-----BEGIN CERTIFICATE-----\nCERTMATERIAL-z1x2c3v4\n-----END CERTIFICATE-----\n"
KUBECONFIG_SECRETS = [TOKEN, "KEYMATERIAL-Q9w8e7r6", "CERTMATERIAL-z1x2c3v4",
                      base64.b64encode(KEY.encode()).decode(),
                      base64.b64encode(CERT.encode()).decode()]
ENV_SECRET = "envfile-S3CR3T-5e6f7a"
CLI_SECRET = "cli-S3CR3T-1b2c3d"
SECRET_DATA = "secret-object-DATA-8d9e"
NS = "training"


def _kubeconfig(server: FakeApiServer) -> str:
    config = yaml.safe_load(server.kubeconfig(token=TOKEN))
    config["users"][0]["user"].update({
        "client-certificate-data": base64.b64encode(CERT.encode()).decode(),
        "client-key-data": base64.b64encode(KEY.encode()).decode()})
    return yaml.safe_dump(config)


@pytest.fixture
def pulumi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeApiServer) -> FakePulumi:
    for var in ("ACCELSTACK_STACK", "ACCELSTACK_OUTPUTS", "ACCELSTACK_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    server.state.token = TOKEN
    fake = install(tmp_path, monkeypatch)
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["kubeconfig"] = _kubeconfig(server)
    fake.stack("dev", data)
    return fake


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.env"
    path.write_text(f"# credentials\nexport HF_TOKEN='{ENV_SECRET}'\nLR=0.1\n")
    return path


def _run(*args: str, stack: str = "dev", input: str | None = None) -> Result:
    result = CliRunner().invoke(main, ["workload", "--stack", stack, *args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _no_kubeconfig_material(text: str) -> None:
    for secret in KUBECONFIG_SECRETS:
        assert secret not in text, f"kubeconfig material {secret[:12]}... printed"
    assert SECRET_DATA not in text


def _check(result: Result, *extra_files: Path) -> None:
    everything = result.stdout + result.stderr + "".join(
        p.read_text() for p in extra_files if p.exists())
    _no_kubeconfig_material(everything)
    assert "Traceback" not in everything
    if result.exit_code != 0:
        assert ENV_SECRET not in everything and CLI_SECRET not in everything, everything


def _create(env_file: Path, *extra: str) -> list[str]:
    return ["create", "--workload", "w1", "--accelerator", "v5litepod-16", "--image",
            "python:3.12", "--env-file", str(env_file), "--env", f"API_KEY={CLI_SECRET}",
            "--secret-env", "DB_PASSWORD=db-creds/password", *extra]


def _jobset(name: str, state: str | None = None) -> dict[str, object]:
    conds = [{"type": state, "status": "True", "reason": "Done", "message": "ended"}] \
        if state else []
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": {
                "app.kubernetes.io/managed-by": "accelstack",
                "kueue.x-k8s.io/queue-name": "main"}},
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": 1}]},
            "status": {"conditions": conds, "restarts": 0}}


def _pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "creationTimestamp":
                         "2026-01-01T00:00:00Z", "labels": {
                             "jobset.sigs.k8s.io/jobset-name": "w1",
                             "jobset.sigs.k8s.io/job-index": "0",
                             "batch.kubernetes.io/job-completion-index": "0"}},
            "spec": {"nodeName": "n", "containers": [{"name": "main", "image": "python:3.12"}]},
            "status": {"phase": "Running"}}


# -- success paths: kubeconfig material never; env values only in the render ----------------

def test_dry_run_and_export_show_the_render_and_nothing_of_the_kubeconfig(
        pulumi: FakePulumi, env_file: Path, tmp_path: Path, server: FakeApiServer) -> None:
    export = tmp_path / "w1.yaml"
    result = _run(*_create(env_file, "--dry-run", "--export", str(export)))
    assert result.exit_code == 0, result.stderr
    _check(result, export)
    # The render holds the user's env values (asked for) and only a reference to the Secret.
    env = yaml.safe_load(result.stdout)["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]["containers"][0]["env"]
    assert {"name": "HF_TOKEN", "value": ENV_SECRET} in env
    assert {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
        "name": "db-creds", "key": "password"}}} in env
    assert ENV_SECRET not in result.stderr
    assert server.state.requests == []


def test_every_command_on_success(pulumi: FakePulumi, env_file: Path, tmp_path: Path,
                                  server: FakeApiServer) -> None:
    export = tmp_path / "w1.yaml"
    results = [_run(*_create(env_file, "--export", str(export)))]
    assert results[0].exit_code == 0, results[0].stderr
    # The values went to the cluster (the user asked for it), but nothing printed them.
    assert ENV_SECRET not in results[0].stdout + results[0].stderr
    server.state.pods[NS] = [_pod("w1-slice-0-0-aa")]
    server.state.logs[(NS, "w1-slice-0-0-aa")] = ["step 1"]
    results += [_run("apply", str(export), "--replace"), _run("list"),
                _run("list", "-o", "json"), _run("list", "-o", "yaml"), _run("describe", "w1"),
                _run("logs", "w1")]
    server.state.jobsets[(NS, "w1")] = _jobset("w1", "Completed")
    results += [_run("wait", "w1", "--timeout", "0"), _run("delete", "w1")]
    for result in results:
        assert result.exit_code == 0, result.stderr
        _check(result)
    assert not any("secrets" in r.path for r in server.state.requests)
    for req in server.state.requests:  # the token travels only in the header
        assert TOKEN not in json.dumps(req.body or {}) and TOKEN not in req.path


# -- error paths --------------------------------------------------------------------------

ECHOING = [
    Fault(status=401, message=f"invalid bearer token: Bearer {TOKEN}", reason="Unauthorized"),
    Fault(status=403, message=f"request with Authorization: Bearer {TOKEN} is forbidden",
          reason="Forbidden"),
    Fault(status=422, message=f'admission webhook "x" denied the request: token={TOKEN}',
          reason="Invalid"),
    Fault(status=409, message=f"conflict for bearer {TOKEN}", reason="Conflict"),
    Fault(status=400, message=f"bad request, client key {KUBECONFIG_SECRETS[3]}",
          reason="BadRequest"),
]


@pytest.mark.parametrize("fault", ECHOING, ids=[str(f.status) for f in ECHOING])
@pytest.mark.parametrize("command", [
    "create", "apply", "list", "describe", "logs", "wait", "delete"])
def test_server_errors_that_echo_credentials(command: str, fault: Fault, pulumi: FakePulumi,
                                             env_file: Path, tmp_path: Path,
                                             server: FakeApiServer) -> None:
    export = tmp_path / "w1.yaml"
    assert _run(*_create(env_file, "--dry-run", "--export", str(export))).exit_code == 0
    args = {"create": _create(env_file), "apply": ["apply", str(export)], "list": ["list"],
            "describe": ["describe", "w1"], "logs": ["logs", "w1"],
            "wait": ["wait", "w1"], "delete": ["delete", "w1"]}[command]
    server.state.faults = [fault]
    result = _run(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    _check(result)
    if TOKEN in fault.message:
        assert "[redacted]" in result.stderr


def test_server_errors_after_retries(pulumi: FakePulumi, env_file: Path,
                                     server: FakeApiServer) -> None:
    server.state.faults = [Fault(status=503, message=f"upstream Bearer {TOKEN}")] * 4
    result = _run("list")
    assert result.exit_code == 1
    _check(result)


def _broken_outputs(tmp_path: Path, server: FakeApiServer, kubeconfig: object) -> Path:
    data = stacks.outputs("v5e-spot")
    data["accelstack"]["kubeconfig"] = kubeconfig
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


BROKEN_KUBECONFIGS: list[object] = [
    # not YAML: PyYAML's message would quote the line holding the token
    f"apiVersion: v1\nusers:\n- name: u\n  user: {{token: {TOKEN}\n",
    f"users:\n\t- token: {TOKEN}\n",
    # YAML, but not a kubeconfig the client can use
    f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:1'}}}}]\n"
    f"users: [{{name: u, user: {{token: {TOKEN}}}}}]\ncontexts: []\ncurrent-context: nope\n",
    f"clusters: {TOKEN}\n",
    # not even a string
    {"users": [{"name": "u", "user": {"token": TOKEN}}]},
    [TOKEN],
]


@pytest.mark.parametrize("kubeconfig", BROKEN_KUBECONFIGS,
                         ids=[f"broken-{i}" for i in range(len(BROKEN_KUBECONFIGS))])
def test_a_kubeconfig_that_does_not_parse_is_never_quoted(
        kubeconfig: object, tmp_path: Path, server: FakeApiServer) -> None:
    path = _broken_outputs(tmp_path, server, kubeconfig)
    result = CliRunner().invoke(main, ["workload", "--outputs", str(path), "list"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (1, 2)
    _check(result)
    assert server.state.requests == []


def test_pulumi_failing_with_outputs_on_stdout(pulumi: FakePulumi, tmp_path: Path) -> None:
    # A `pulumi` that printed (part of) the outputs and then failed, saying nothing on stderr.
    script = pulumi.bin / "pulumi"
    text = script.read_text().replace(
        "if fail.exists():",
        "if fail.exists():\n    sys.stdout.write(out.read_text())\n    sys.exit(255)\nif False:")
    script.write_text(text)
    pulumi.failing("dev", "")
    result = _run("list")
    assert result.exit_code == 1
    assert result.stderr == ("Error: `pulumi stack output` failed for stack 'dev': exit code "
                             "255\n")
    _check(result)


def _bad_env_files(tmp_path: Path) -> Iterator[Path]:
    bodies = [
        f"TOKEN=\"{ENV_SECRET}\" trailing\n",
        f"TOKEN=\"{ENV_SECRET}\n",
        f"TOKEN='{ENV_SECRET}' junk\n",
        f"{ENV_SECRET}\n",
        f"{ENV_SECRET} more words\n",
        f"2TOKEN={ENV_SECRET}\n",
        f"TOKEN={ENV_SECRET}\nTOKEN={ENV_SECRET}\n",
        f"MY TOKEN={ENV_SECRET}\n",
    ]
    for i, body in enumerate(bodies):
        path = tmp_path / f"bad-{i}.env"
        path.write_text(body)
        yield path
    binary = tmp_path / "binary.env"
    binary.write_bytes(f"TOKEN={ENV_SECRET}\n".encode() + b"\xff\xfe\x00")
    yield binary
    latin = tmp_path / "latin.env"
    latin.write_bytes(f"TOKEN={ENV_SECRET}\xe9\n".encode("latin-1"))
    yield latin


def test_env_file_errors_never_show_a_value(pulumi: FakePulumi, tmp_path: Path,
                                            server: FakeApiServer) -> None:
    for path in _bad_env_files(tmp_path):
        result = _run(*_create(path))
        assert result.exit_code == 2, (path.read_bytes(), result.stderr)
        assert f"'--env-file': {path}" in result.stderr
        _check(result)
    assert server.state.requests == [] and pulumi.calls == []


@pytest.mark.parametrize("items", [[CLI_SECRET], [f"={CLI_SECRET}"], ["A=1", CLI_SECRET]])
def test_env_errors_never_show_a_value(items: list[str], pulumi: FakePulumi,
                                       env_file: Path) -> None:
    args = _create(env_file)
    for item in items:
        args += ["--env", item]
    result = _run(*args)
    assert result.exit_code == 2
    _check(result)


def test_other_errors_after_env_values_were_read(pulumi: FakePulumi, env_file: Path,
                                                 server: FakeApiServer) -> None:
    # Errors found after the env file was parsed do not show its values either.
    for extra in (["--num-slices", "3"], ["--priority", "urgent"], ["--queue", "nope"]):
        result = _run(*_create(env_file, *extra))
        assert result.exit_code == 2
        _check(result)
    server.state.jobsets[(NS, "w1")] = _jobset("w1")
    result = _run(*_create(env_file))
    assert result.exit_code == 1  # it exists already
    _check(result)


@pytest.mark.parametrize("command", ["create", "apply"])
def test_a_server_error_quoting_an_env_value(command: str, pulumi: FakePulumi, env_file: Path,
                                             tmp_path: Path, server: FakeApiServer) -> None:
    # API validation quotes invalid values; a webhook may quote any field.
    export = tmp_path / "w1.yaml"
    assert _run(*_create(env_file, "--dry-run", "--export", str(export))).exit_code == 0
    server.state.jobsets[(NS, "other")] = _jobset("other")
    server.state.faults = [Fault(status=0), Fault(
        status=422, reason="Invalid", message=f'JobSet.jobset.x-k8s.io "w1" is invalid: '
        f'spec...env[0].value: Invalid value: "{ENV_SECRET}", and "{CLI_SECRET}"')]
    result = _run(*(_create(env_file) if command == "create" else ["apply", str(export)]))
    assert result.exit_code == 1
    assert "Invalid value: \"[redacted]\", and \"[redacted]\"" in result.stderr
    _check(result)


def _pulumi_answers(pulumi: FakePulumi, server: FakeApiServer) -> list[str]:
    """Broken answers of `pulumi stack output`, each holding the kubeconfig's token."""
    good = stacks.outputs("v5e-spot")
    good["accelstack"]["kubeconfig"] = _kubeconfig(server)
    text = json.dumps(good, indent=2)
    answers = [text[: text.index(TOKEN) + len(TOKEN) + 5]]  # cut short after the token
    for kubeconfig in BROKEN_KUBECONFIGS:
        data = json.loads(text)
        data["accelstack"]["kubeconfig"] = kubeconfig
        answers.append(json.dumps(data))
    bare = json.loads(text)["accelstack"]
    bare["kubeconfig"] = {"token": TOKEN}
    answers.append(json.dumps(bare))
    wrong = json.loads(text)
    wrong["accelstack"]["contractVersion"] = 1
    answers.append(json.dumps(wrong))
    return answers


def test_broken_outputs_from_pulumi_are_never_quoted(pulumi: FakePulumi,
                                                     server: FakeApiServer) -> None:
    for i, answer in enumerate(_pulumi_answers(pulumi, server)):
        pulumi.stack(f"broken-{i}", answer)
        result = _run("list", stack=f"broken-{i}")
        assert result.exit_code == 1, result.stderr
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, \
            result.stderr
        _check(result)
    assert server.state.requests == []
