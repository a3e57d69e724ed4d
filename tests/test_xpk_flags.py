"""xpk's flags get the option that does their job (issue 34), not the nearest spelling:
`--tpu-type` used to suggest `--output`/`--outputs`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from submit.cli.app import main

# Unknown options are refused while the command line is parsed, before any file is read.
OUTPUTS = ["workload", "--outputs", "v5e-spot.outputs.json"]


@pytest.mark.parametrize("argv, ours", [
    ([*OUTPUTS, "create", "--tpu-type", "v5litepod-16"], "--accelerator"),
    ([*OUTPUTS, "create", "--device-type=h100-80gb-8"], "--accelerator"),
    ([*OUTPUTS, "create", "--docker-image", "python:3.12"], "--image"),
    ([*OUTPUTS, "create", "--base-docker-image", "python:3.12"], "--base-image"),
    (["workload", "list", "--cluster", "dev"], "--stack STACK"),
    (["run", "v5e-spot", "--tpu-type", "v5litepod-16"], "--accelerator"),
])
def test_an_xpk_flag_names_ours(argv: list[str], ours: str) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    flag = next(a for a in argv if a.startswith("--") and a.split("=")[0] in (
        "--tpu-type", "--device-type", "--docker-image", "--base-docker-image", "--cluster"))
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"Error: No such option '{flag.split('=')[0]}': that is xpk's "
                           f"flag; here it is {ours}"), last


def test_a_typo_still_gets_the_nearest_spelling() -> None:
    result = CliRunner().invoke(main, [*OUTPUTS, "create", "--acelerator", "v5e-16"])
    assert result.exit_code == 2
    assert "Did you mean --accelerator?" in result.stderr or "'--accelerator'" in result.stderr


@pytest.mark.parametrize("argv, said", [
    # `submit run` takes its stack as an argument: no --stack to suggest.
    (["run", "--cluster", "dev"], "here it is the STACK argument (`submit run STACK`"),
    # `submit accelerators` takes accelerator names as arguments, not --accelerator.
    (["accelerators", "--tpu-type", "v5litepod-16"], "here it is the NAME argument"),
    # Named in docs/submitting.md as xpk's (xpk src/xpk/parser/workload.py).
    ([*OUTPUTS, "create", "--use-parallel-containers"], "here it is --parallel-containers N"),
    ([*OUTPUTS, "create", "--docker-image-pull-secret", "regcred"],
     "here it is --image-pull-secret NAME"),
    (["run", "v5e-spot", "--docker-image-pull-secret", "regcred"],
     "here it is --image-pull-secret NAME"),
    # create-group has no --stack of its own: the workload group's, before it.
    (["workload", "create-group", "--cluster", "dev", "g.yaml"],
     "--outputs FILE, given before the command."),
    # A command with nothing like it says so, rather than naming an option it lacks.
    (["workload", "list", "--docker-image-pull-secret", "regcred"],
     "that is xpk's flag, and `"),
])
def test_the_hint_names_an_option_of_the_command_typed(argv: list[str], said: str) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    last = result.stderr.splitlines()[-1]
    assert said in last, last
    if argv[0] == "run":
        assert "--stack" not in last, last
    if argv[0] == "accelerators":
        assert "--accelerator " not in last, last
