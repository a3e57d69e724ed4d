"""`submit run` checks everything it can offline before it looks for the pulumi CLI: the stack
file (FILE:LINE), the --set keys and values (with "did you mean"), the shape the work asks
for, the kind of stack (a fleet is refused); `--dry-run` prints what the run would do and
makes nothing. Here no `pulumi` is on PATH, so any of these reaching the CLI would exit 1
with "the pulumi CLI is not on PATH".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ephemeral_env import WORKLOAD, project
from submit.cli.app import main
from submit.ephemeral import plan as pl


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no pulumi, no docker, nothing
    d = project(tmp_path)
    for name in ("fleet", "fleet-manager", "fleet-east", "v5e-extra"):
        shutil.copy(ROOT / "stacks" / f"Pulumi.{name}.yaml", d / "stacks")
    return d


def _run(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(argv))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.stdout, result.stderr


def _argv(proj: Path, stack: str, *extra: str) -> list[str]:
    return ["run", stack, "--project-dir", str(proj), "--name", "train", *extra, *WORKLOAD]


def test_a_bad_stack_file_is_refused_at_its_line_before_pulumi(proj: Path) -> None:
    path = proj / "stacks" / "Pulumi.v5e-spot.yaml"
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("count:"))
    lines[at] = lines[at].replace("count:", "cuont:")
    path.write_text("\n".join(lines) + "\n")
    code, _, err = _run(*_argv(proj, "v5e-spot"))
    assert code == 2, err
    assert f"Invalid value for 'STACK': {path}:{at + 1}: slices[0].cuont: unknown key" in err
    assert "pulumi CLI" not in err


@pytest.mark.parametrize(("setting", "message"), [
    ("releaseChannel=BANANA", "Invalid value for '--set': releaseChannel: 'BANANA' is not a "
     "release channel; allowed: RAPID, REGULAR, STABLE, EXTENDED"),
    ("releaseChanel=RAPID", "Invalid value for '--set': releaseChanel: unknown key; did you "
     "mean releaseChannel?"),
    ("slices.0.count=3", "Invalid value for '--set': 'slices.0.count' is a path inside a key; "
     "--set replaces a whole top-level key of the stack file"),
    ("accelstack:slices[0].count=3", "Invalid value for '--set': 'accelstack:slices[0].count' "
     "is a path inside a key"),
])
def test_a_bad_override_is_refused_naming_set(proj: Path, setting: str, message: str) -> None:
    code, _, err = _run(*_argv(proj, "v5e-spot", "--set", setting))
    assert code == 2, err
    assert message in err
    assert "pulumi CLI" not in err


def test_a_shape_the_stack_does_not_make_is_refused(proj: Path) -> None:
    argv = _argv(proj, "v5e-spot")
    argv[argv.index("v5e-16")] = "v5p-8"
    code, _, err = _run(*argv)
    assert code == 2, err
    # The run's stack is named after the run; the message is `create`'s (one check path).
    assert ("Invalid value for '--accelerator': 'v5p-8' (v5p-8) is not a slice type of "
            "stack 'train'; it has: v5litepod-16") in err


def test_a_fleet_stack_is_refused(proj: Path) -> None:
    code, _, err = _run(*_argv(proj, "fleet"))
    assert code == 2, err
    assert "Invalid value for 'STACK': stack 'fleet' is a fleet stack" in err


def test_a_misspelt_stack_gets_did_you_mean(proj: Path) -> None:
    code, _, err = _run(*_argv(proj, "v5e-sport"))
    assert code == 2, err
    assert "no such stack file; did you mean v5e-spot?" in err


def test_dry_run_prints_the_plan_and_makes_nothing(proj: Path) -> None:
    # An image on a registry that cannot exist: pinning it would fail (exit 1); a dry-run
    # asks no registry.
    argv = _argv(proj, "v5e-spot", "--dry-run", "--set", "releaseChannel=RAPID",
                 "--expires-in", "2h")
    argv[argv.index("python:3.12")] = "registry.invalid/team/train:1"
    code, out, err = _run(*argv)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "stack: train (from stacks/Pulumi.v5e-spot.yaml): a cluster named train"
    assert '  accelstack:releaseChannel: "RAPID"' in lines
    assert '  accelstack:clusterName: "train"' in lines
    assert "  accelstack:deletionProtection: false" in lines
    assert "  accelstack:masterAuthorizedNetworks: [secret]" in lines
    assert lines[lines.index("pools:") + 1] == "  v5litepod-16: v5litepod-16 x2 (spot)"
    assert "work: workload train" in lines
    # The run's bound at its TTL, by hand from infra/cost/prices.yaml (tests/test_cost_shipped.py):
    # 32 Spot v5e chips at $0.48, 3 e2-standard-8 at $0.30188 in us-west4, the $0.10 fee.
    assert lines[lines.index("work: workload train") + 1] == \
        "cost: $16.37/hour; at most $32.73 in 2 h (its expiry, --expires-in 2h)"
    assert lines[lines.index("work: workload train") + 2] == (
        "cost: the stack's expiry, --expires-in 2h, comes before --timeout 24h: `submit "
        "reap` takes the stack down then, even while the work runs")
    assert lines[-1] == f"teardown: after the work, whatever happens; by hand: submit reap " \
                        f"--project-dir {proj} train"
    assert "--dry-run: nothing made" in err
    assert not (proj / pl.RUNS_DIR).exists()


def test_dry_run_of_a_pools_stack_names_its_host(proj: Path) -> None:
    code, out, err = _run(*_argv(proj, "v5e-extra", "--dry-run", "--keep"))
    assert code == 0, err
    assert out.splitlines()[0] == ("stack: train (from stacks/Pulumi.v5e-extra.yaml): pools "
                                   "on the cluster of stack my-org/accelstack/v5e-spot")
    assert "accelstack:clusterName" not in out
    assert any(line.startswith("teardown: none: --keep leaves the stack up")
               for line in out.splitlines())


def test_dry_run_lines_are_a_function_of_the_plan() -> None:
    from datetime import datetime, timezone

    plan = pl.RunPlan(name="r", project_dir=".", stack_file="stacks/Pulumi.x.yaml",
                      config={"accelstack:region": "us-east5"}, ttl_seconds=3600, keep=False,
                      owner="u@h", command="submit run x",
                      created=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert pl.dry_run_lines(plan, ["p: v6e-8 x1 (spot)"], "workload w") == [
        "stack: r (from stacks/Pulumi.x.yaml): a cluster named r",
        "config:", '  accelstack:region: "us-east5"',
        "pools:", "  p: v6e-8 x1 (spot)",
        "work: workload w",
        "expires: 2026-01-01T01:00:00Z (`submit reap` takes the stack down after this, "
        "whatever happens to the run)",
        "teardown: after the work, whatever happens; by hand: submit reap --project-dir . r"]


def test_the_help_names_a_command_that_exists() -> None:
    code, out, _ = _run("run", "--help")
    assert code == 0
    out = " ".join(out.split())
    assert "experiment submit" not in out and "(as `experiment create`)" in out


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-cost", "nan", "Invalid value for '--max-cost': 'nan' is not a number of US "
     "dollars above 0 such as 250 or 99.5"),
    ("--max-cost", "$100", "Invalid value for '--max-cost': '$100' is not a number of US "
     "dollars above 0"),
    ("--max-cost", "0", "Invalid value for '--max-cost': '0' is not a number of US dollars"),
])
def test_a_cost_bound_is_a_finite_positive_number(proj: Path, option: str, value: str,
                                                  message: str) -> None:
    # nan compares above no bound, so `--max-cost nan` would let any run start.
    code, _, err = _run(*_argv(proj, "v5e-spot", "--dry-run", option, value))
    assert code == 2, err
    assert message in err


def test_script_dir_on_a_stack_without_a_repository_is_refused_before_up(proj: Path) -> None:
    # v5e-spot declares no `registry:`: the push would fail only after `up` made a cluster.
    argv = [a for a in _argv(proj, "v5e-spot", "--dry-run") if a != "--image"]
    argv[argv.index("python:3.12")] = "--script-dir"
    argv.insert(argv.index("--script-dir") + 1, str(proj))
    argv += ["--base-image", "python:3.12"]
    code, _, err = _run(*argv)
    assert code == 2, err
    # `create`'s message (one check path), against the outputs the run's stack will have.
    assert "Invalid value for '--script-dir': stack 'train' has no workload image " \
           "repository: add `registry:` to its config" in err
    code, _, err = _run(*argv, "--set", "registry={readAllRepositories: true}")
    assert code == 0, err
    code, _, err = _run(*argv, "--image-repository", "us-docker.pkg.dev/p/r")
    assert code == 0, err


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_logs_dir_that_cannot_be_made_is_refused_before_anything(proj: Path, tmp_path: Path,
                                                                  dry_run: bool) -> None:
    # Found out only when the logs were saved, after the work and before the teardown.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    extra = ["--dry-run"] if dry_run else []
    code, _, err = _run(*_argv(proj, "v5e-spot", *extra, "--logs", str(blocker / "logs")))
    assert code == 2, err
    assert f"Invalid value for '--logs': cannot save the logs in {blocker / 'logs'}: " \
           f"{blocker} is a file, not a directory" in err
    assert "pulumi CLI" not in err


def test_a_dry_run_makes_no_logs_dir(proj: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "run"
    code, _, err = _run(*_argv(proj, "v5e-spot", "--dry-run", "--logs", str(logs)))
    assert code == 0, err
    assert not (tmp_path / "logs").exists()


def test_the_real_run_looks_for_pulumi_before_it_asks_a_registry(proj: Path) -> None:
    # Order: every offline check, then the pulumi CLI, then the network. Here there is no
    # pulumi (an empty PATH) and the image's registry cannot exist: the run stops at the
    # CLI, without having asked the registry (it used to fail on the image first).
    argv = _argv(proj, "v5e-spot", "--resolve-image")  # the suite turns resolving off
    argv[argv.index("python:3.12")] = "registry.invalid/team/train:1"
    code, _, err = _run(*argv)
    assert code == 1, err
    assert "pulumi" in err and "registry.invalid" not in err
