"""The page docs/experiments.md runs as written: its files (shipped in examples/, naming
the pools of the shipped stacks), its commands (in order, against the fake API server and
the shipped stacks' offline outputs) and its Python sweep."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import doc_pages
from conftest import ROOT
from fake_apiserver import FakeApiServer
from fakes import stacks
from submit import api
from submit.cli.app import main
from submit.cli import experiment as commands

PAGE = "docs/experiments.md"


def _section() -> str:
    return doc_pages.text(PAGE)


def _project(tmp_path: Path, server: FakeApiServer) -> None:
    """The page's files where a user has them: examples/, the shipped exports/ folder, and
    each shipped stack's outputs (as `accelstack-preview STACK --outputs STACK.outputs.json`
    writes them), their cluster the fake API server."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "exports").mkdir()
    for name in ("v5e-spot", "v6e-training"):
        stacks.write_outputs(tmp_path / f"{name}.outputs.json", name, server.kubeconfig())


def _commands() -> list[list[str]]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", _section(), re.S):
        for cmd in block.replace("\\\n", " ").splitlines():
            cmd = cmd.split("   #", 1)[0].strip()
            # The page's offline previews run in tests/test_readme_commands.py; here the
            # outputs point at the fake API server (_project).
            if cmd and not cmd.startswith("accelstack-preview"):
                out.append(shlex.split(cmd))
    return out


def _finish_queued(server: FakeApiServer) -> Any:
    """A stand-in for time passing: every queued (not held) JobSet completes."""
    def sleep(_seconds: float) -> None:
        for js in server.state.jobsets.values():
            if "kueue.x-k8s.io/queue-name" in js["metadata"].get("labels", {}):
                js["status"] = {"conditions": [{"type": "Completed", "status": "True"}]}
    return sleep


def test_readme_section_runs(tmp_path: Path, server: FakeApiServer,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, server)
    blocks = re.findall(r"```yaml\n(.*?)```", _section(), re.S)
    assert len(blocks) == 3
    for text in blocks:
        name = re.match(r"# (examples/\S+\.yaml):", text)
        assert name, text
        assert (ROOT / name.group(1)).read_text() == text, f"{name.group(1)} differs from {PAGE}"
    monkeypatch.setattr(commands.time, "sleep", _finish_queued(server))
    monkeypatch.setattr(api.time, "sleep", _finish_queued(server))
    cmds = _commands()
    assert [c[1:3] for c in cmds] == [["experiment", "--outputs"]] * 7 + [
        ["workload", "--outputs"]] * 4
    for tool, *args in cmds:
        assert tool == "submit"
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, (args, r.output)
        if "--dry-run" in args:
            assert r.stderr.startswith("TRIAL       ENV.LR  ARGS           ENV.BATCH\n")
        if "describe" in args:
            assert "Trials:       4 (2 Held, 2 Pending)" in r.output
        if "wait" in args:
            assert r.output.endswith("experiment lr-sweep: all 4 trials succeeded\n")
    assert sorted(p.name for p in (tmp_path / "exports" / "trials").iterdir()) == [
        f"scaling-{i}.yaml" for i in range(4)]
    assert ("training", "train-eval") in server.state.jobsets
    train = server.state.jobsets[("training", "train")]
    assert train["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "main"


def test_readme_python_sweep(tmp_path: Path, server: FakeApiServer,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, server)
    monkeypatch.setattr(api.time, "sleep", _finish_queued(server))
    (code,) = re.findall(r"```python\n(.*?)```", _section(), re.S)
    scope: dict[str, Any] = {}
    exec(compile(code, PAGE, "exec"), scope)  # noqa: S102 - the page's own example
    assert scope["names"] == ["lr-0", "lr-1", "lr-2"]
    assert scope["failed"] == []
    env = server.state.jobsets[("training", "lr-2")]["spec"]["replicatedJobs"][0]["template"][
        "spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "LR", "value": "1e-3"} in env


def test_api_loads_no_client_until_it_sends(tmp_path: Path, server: FakeApiServer) -> None:
    import subprocess
    import sys

    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    code = ("import sys; from submit import api; s = api.Session(outputs_file=%r); "
            "w = api.Workload(name='a', accelerator='v5litepod-16', image='python:3.12'); "
            "objs = s.render(w); assert objs[-1]['kind'] == 'JobSet'; "
            "assert 'kubernetes' not in sys.modules and 'pulumi' not in sys.modules; "
            "s.submit(w); assert 'kubernetes' in sys.modules" % str(outputs))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    assert ("training", "a") in server.state.jobsets


def test_api_errors(tmp_path: Path, server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    s = api.Session(outputs_file=str(outputs))
    with pytest.raises(api.BadInput) as bad:
        s.render(api.Workload(name="a", accelerator="v5litepod-16", image="python:3.12",
                              num_slices=3))
    assert (bad.value.option, bad.value.message) == (
        "--num-slices", "3 is more than the 2 v5litepod-16 slices pool v5litepod-16 has")
    w = api.Workload(name="a", accelerator="v5litepod-16", image="python:3.12",
                     env=("TOKEN=s3cr3t-value",))
    s.submit(w)
    with pytest.raises(api.ClusterError) as err:
        s.submit(w)
    assert err.value.message.startswith("workload a already exists in namespace training")
    with pytest.raises(api.ClusterError):
        s.status("nope")
    assert s.status("a").state == "Pending"
