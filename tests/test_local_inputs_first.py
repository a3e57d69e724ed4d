"""A real submit checks its local inputs before any network call (issue 34): a broken
kubeconfig in the outputs is reported as such, before the image's registry is asked for a
digest (which would fail first and name the registry instead)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from fakes import stacks
from submit.cli.app import main

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("command", ["create", "create-group", "experiment"])
def test_a_broken_kubeconfig_is_reported_before_the_registry_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    monkeypatch.delenv("ACCELSTACK_RESOLVE_IMAGE", raising=False)  # conftest turns it off
    outputs = stacks.write_outputs(tmp_path / "o.json", "multi" if command == "create-group"
                                   else "v5e-spot", "clusters: [unclosed")
    with socket.socket() as registry:  # notes every connection
        registry.bind(("127.0.0.1", 0))
        registry.listen()
        registry.setblocking(False)
        image = f"127.0.0.1:{registry.getsockname()[1]}/team/trainer:v1"
        monkeypatch.setenv("ACCELSTACK_INSECURE_REGISTRIES", image.split("/")[0])
        if command == "create":
            argv = ["workload", "--outputs", str(outputs), "create", "--workload", "w1",
                    "--accelerator", "v5litepod-16", "--image", image, "--command", "true"]
        elif command == "create-group":
            group = tmp_path / "g.yaml"
            group.write_text(f"name: g\nworkload: {{image: '{image}'}}\nroles:\n  trainer: "
                             "{accelerator: v5litepod-16, pool: v5e-spot, command: 'true'}\n")
            argv = ["workload", "--outputs", str(outputs), "create-group", str(group)]
        else:
            sweep = tmp_path / "s.yaml"
            sweep.write_text(f"name: s\nworkload: {{accelerator: v5litepod-16, image: "
                             f"'{image}', command: 'true'}}\nsweep: {{env.LR: ['1', '2']}}\n")
            argv = ["experiment", "--outputs", str(outputs), "create", str(sweep)]
        result = CliRunner().invoke(main, argv)
        with pytest.raises(BlockingIOError):
            registry.accept()
    assert result.exit_code == 1, result.output
    assert "the stack's kubeconfig is not YAML" in result.stderr.splitlines()[-1]
