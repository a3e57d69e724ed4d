"""`tools/setup` as a newcomer sees it (issue 26): each step announced, then a short summary
of the stack it previewed and the next command to try, which works as printed; not the
preview's whole desired state. Run in a copy of the project with `python3` faked (it makes
environments whose `pip` does nothing and whose `accelstack-preview` is this tree's), and
`docker-registry`/`skopeo` present, so nothing is installed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

_FAKE_PYTHON3 = f"""#!/bin/sh
# python3 -m venv DIR: an environment whose pip installs nothing
[ "$1 $2" = "-m venv" ] || exec {sys.executable} "$@"
mkdir -p "$3/bin"
printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/pip"
printf '#!/bin/sh\\nexec {sys.executable} "$@"\\n' > "$3/bin/python"
printf '#!/bin/sh\\nexec {sys.executable} -c "from infra.preview import main; main()" "$@"\\n' \\
    > "$3/bin/accelstack-preview"
printf '#!/bin/sh\\nexec {sys.executable} -c "from submit.cli import main; main()" "$@"\\n' \\
    > "$3/bin/submit"
chmod +x "$3/bin/"*
"""


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    proj = tmp_path / "proj"
    (proj / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "setup", proj / "tools" / "setup")
    shutil.copy(ROOT / "Pulumi.yaml", proj)
    shutil.copytree(ROOT / "stacks", proj / "stacks")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text(_FAKE_PYTHON3)
    for name in ("docker-registry", "skopeo"):
        (fake / name).write_text("#!/bin/sh\nexit 0\n")
    for f in fake.iterdir():
        f.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    return proj, env


def test_setup_shows_its_steps_then_a_summary_and_the_next_command(tmp_path: Path) -> None:
    proj, env = _project(tmp_path)
    r = subprocess.run(["bash", str(proj / "tools" / "setup")], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == [
        "setup: [1/5] docker-registry and skopeo, for the image-bundler tests",
        "setup: [2/5] .venv: accelstack and its dev extras (a few minutes the first time)",
        "setup: [3/5] .venv-checkov: checkov, the security scanner the tests run",
        "setup: [4/5] the offline preview of stack v5e-spot, its outputs into "
        "v5e-spot.outputs.json",
        "stack v5e-spot: 59 resources",
        "outputs: accelstack; pools: v5litepod-16 (v5litepod-16 x2, spot)",
        "policy: ok",
        "maintenance window: FREQ=WEEKLY;BYDAY=SA,SU from 2026-01-03T03:00:00Z, 6h",
        "cost: $16.37/hour while it stands (price table of 2026-11-27)",
        # Each part's $/hour and how it was reached (docs/cost.md), one line each.
        *[line for line in lines if line.startswith("  ") and "/hour  " in line],
        "setup: [5/5] done. Next, render a workload for that stack (offline, nothing is sent):",
        "  .venv/bin/submit workload --outputs v5e-spot.outputs.json create --workload hello "
        "--accelerator v5litepod-16 --image python:3.12 --command 'python3 -c \"print(1)\"' "
        "--dry-run"]
    # The next command works as printed, from the project root.
    nxt = subprocess.run(shlex.split(lines[-1]), cwd=proj, capture_output=True, text=True,
                         env=env)
    assert nxt.returncode == 0, nxt.stderr
    assert "kind: JobSet" in nxt.stdout


def test_ci_discards_setups_stdout(tmp_path: Path) -> None:
    # .ci/run: `bash tools/setup > /dev/null`, then the tests; setup must not need a tty.
    proj, env = _project(tmp_path)
    r = subprocess.run(["bash", "-c", "bash tools/setup > /dev/null"], cwd=proj,
                       capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout) == (0, "")
    assert (proj / "v5e-spot.outputs.json").is_file()
