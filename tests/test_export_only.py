"""`--export` writes files and sends nothing, on every command that has it (issue 26):
`workload create`, `workload create-group`, `experiment create` and `workload run-local`
(which then runs nothing). Each is run without --dry-run against the fake API server."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from fake_apiserver import FakeApiServer
from fakes import stacks
from submit.cli.app import main

HERE = Path(__file__).resolve().parent


def _invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r.exit_code, r.output


def test_workload_create_export_sends_nothing(tmp_path: Path, server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "multi", server.kubeconfig())
    out = tmp_path / "w.yaml"
    code, text = _invoke("workload", "--outputs", str(outputs), "create", "--workload", "w1",
                         "--accelerator", "v5litepod-16", "--pool", "v5e-spot",
                         "--image", "python:3.12", "--command", "true", "--export", str(out))
    assert code == 0, text
    assert yaml.safe_load(out.read_text())["kind"] == "JobSet"
    assert not server.state.requests


def test_create_group_export_sends_nothing(tmp_path: Path, server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "multi", server.kubeconfig())
    out = tmp_path / "g.yaml"
    code, text = _invoke("workload", "--outputs", str(outputs), "create-group",
                         str(HERE / "groups" / "train_eval.yaml"), "--export", str(out))
    assert code == 0, text
    assert text == (f"wrote {out}; applied nothing (apply it with `submit workload apply "
                    f"{out}`)\n")
    assert [d["kind"] for d in yaml.safe_load_all(out.read_text())] == ["JobSet"]
    assert not server.state.requests


def test_experiment_export_sends_nothing(tmp_path: Path, server: FakeApiServer) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot", server.kubeconfig())
    out = tmp_path / "trials"
    code, text = _invoke("experiment", "--outputs", str(outputs), "create",
                         str(HERE / "experiments" / "lr_sweep.yaml"), "--export", str(out))
    assert code == 0, text
    assert sorted(p.name for p in out.iterdir()) == [f"lr-sweep-{i}.yaml" for i in range(4)]
    assert text == (f"wrote 4 trials to {out}/; submitted nothing (apply one with `submit "
                    f"workload apply {out}/lr-sweep-0.yaml`)\n")
    assert not server.state.requests


def test_run_local_export_runs_nothing(tmp_path: Path) -> None:
    outputs = stacks.write_outputs(tmp_path / "o.json", "v5e-spot")
    out, ran = tmp_path / "w.yaml", tmp_path / "ran"
    code, text = _invoke("workload", "--outputs", str(outputs), "run-local", "--workload", "w1",
                         "--accelerator", "v5litepod-16", "--image", "python:3.12",
                         "--command", f"touch {ran}", "--export", str(out))
    assert code == 0, text
    assert text == (f"wrote {out}; ran nothing (run it with `submit workload run-local --from "
                    f"{out}`)\n")
    assert yaml.safe_load(out.read_text())["kind"] == "JobSet"
    assert not ran.exists()
