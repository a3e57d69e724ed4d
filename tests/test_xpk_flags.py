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
