"""`submit run` with a pools stack file (docs/ephemeral.md, "Pools on a standing cluster"):
through the fake `pulumi` (tests/fakes/pulumi_engine.py), whose `up` reads the host stack
through a StackReference, and the fake API server. The work goes to the pools stack's own
queue; the teardown deletes the work and destroys the pools stack, never the host."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ephemeral_env import WORKLOAD, finish, project
from fake_apiserver import FakeApiServer
from fakes import stacks
from fakes.pulumi_auto import FakeAutoPulumi, install
from infra.config.stack_file import load as load_stack_file
from infra.preview import harness
from submit.cli.app import main

HOST = "my-org/accelstack/v5e-spot"
HOST_RESOURCES = [("gcp:container/cluster:Cluster", "v5e-spot"),
                  ("gcp:container/nodePool:NodePool", "v5litepod-16-0")]


def _pools_outputs(name: str, kubeconfig: str) -> dict[str, object]:
    """The pools stack's outputs as `up` leaves them for a run named ``name``: the program
    evaluated under mocks with the host's outputs, as the preview does."""
    raw = load_stack_file(ROOT / "stacks" / "Pulumi.v5e-extra.yaml").raw
    ev = harness.evaluate_pools(raw, name, {HOST: stacks.outputs("v5e-spot")})
    data = harness.plain_outputs(ev, reveal=True)
    data["accelstack"]["kubeconfig"] = kubeconfig  # type: ignore[index]
    return data


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         server: FakeApiServer) -> FakeAutoPulumi:
    f = install(tmp_path, monkeypatch)
    host = stacks.outputs("v5e-spot")
    host["accelstack"]["kubeconfig"] = server.kubeconfig()
    f.standing("v5e-spot", HOST_RESOURCES, host)
    f.program([("pulumi:pulumi:StackReference", "pools-host", HOST),
               ("gcp:container/nodePool:NodePool", "extra-0"),
               ("gcp:container/nodePool:NodePool", "extra-1"),
               ("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
                "resourceflavor-pools-burst-extra-v5litepod-16-spot"),
               ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "clusterqueue-pools-burst"),
               ("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
                "localqueue-training-pools-burst")],
              _pools_outputs("burst", server.kubeconfig()))
    return f


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    d = project(tmp_path)
    shutil.copy(ROOT / "stacks" / "Pulumi.v5e-extra.yaml", d / "stacks")
    return d


def test_a_pools_run_uses_its_own_queue_and_never_touches_the_host(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    host_before = fake.stack("v5e-spot")
    finish(server, "Completed")
    result = CliRunner().invoke(main, ["run", "v5e-extra", "--project-dir", str(proj),
                                       "--name", "burst", "--interval", "1s", *WORKLOAD])
    err = result.stderr
    assert result.exit_code == 0, err
    assert err.startswith("run burst: workload train on pools on the cluster of "
                          f"{HOST} (stack burst, from stacks/Pulumi.v5e-extra.yaml)\n")
    # The work went to the pools stack's queue, in the host's namespace ...
    assert "workload train in namespace training (queue pools-burst)" in err
    # ... and was deleted before the pools stack was destroyed.
    assert f"deleted workload train from the cluster of {HOST}" in err
    assert server.state.jobsets == {}
    assert (f"pulumi destroy: the pools of stack burst; the cluster of {HOST} stays"
            in err)
    assert err.endswith("run burst: exit 0 (the work succeeded)\n")
    # No cluster name forced on a pools stack: its config is the file's.
    config = json.loads(next(c for c in fake.commands() if c[:2] == ["config", "set-all"])[5])
    assert "accelstack:clusterName" not in config
    assert "accelstack:deletionProtection" not in config
    assert json.loads(config["accelstack:onCluster"]["value"])["stack"] == HOST
    # The pools stack is gone; the host is exactly as it was: its resources live, its state
    # untouched, and no command ever selected or destroyed it.
    assert fake.stacks == ["v5e-spot"]
    assert fake.cloud == sorted(f"urn:pulumi:v5e-spot::accelstack::{t}::{n}"
                                for t, n in HOST_RESOURCES)
    assert fake.stack("v5e-spot") == host_before
    for call in fake.commands():
        assert "v5e-spot" not in call, call
    assert any(c[0] == "destroy" for c in fake.commands())


def test_a_pools_run_refuses_a_cluster_setting(proj: Path) -> None:
    result = CliRunner().invoke(main, ["run", "v5e-extra", "--project-dir", str(proj),
                                       "--name", "burst", "--set", "clusterName=x",
                                       *WORKLOAD])
    assert result.exit_code == 2
    assert ("accelstack:clusterName is a cluster's setting; this stack file makes pools on "
            f"the cluster of {HOST}, which `submit run` never touches") in result.stderr
