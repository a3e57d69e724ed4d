"""`submit run` with a pools stack file (docs/ephemeral.md, "Pools on a standing cluster"):
through the fake `pulumi` (tests/fakes/pulumi_engine.py), whose `up` reads the host stack
through a StackReference, and the fake API server. The work goes to the pools stack's own
queue; the teardown deletes the work queued to it (partly submitted and held work too, and
nothing of another queue) and destroys the pools stack, never the host; `submit reap` does
the same for a run that was killed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ephemeral_env import WORKLOAD, Run, finish, project
from fake_apiserver import FakeApiServer, Fault
from fakes import stacks
from fakes.pulumi_auto import FakeAutoPulumi, install
from infra.config.stack_file import load as load_stack_file
from infra.preview import harness
from submit.cli.app import main
from submit.ephemeral.pools_work import queue_of

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
    assert ("deleted workload train (namespace training, queue pools-burst) from the cluster "
            f"of {HOST}") in err
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


JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/training/jobsets"


def _jobset(server: FakeApiServer, name: str, queue: str, held: bool = False) -> None:
    """A JobSet on the host as `submit workload create` leaves it (held: --after)."""
    meta: dict[str, object] = {"name": name, "namespace": "training"}
    if held:
        meta["annotations"] = {"accelstack.dev/held-queue": queue}
    else:
        meta["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    server.state.jobsets[("training", name)] = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta,
        "spec": {"suspend": held}}


def test_partly_submitted_work_is_deleted_before_the_destroy(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer, tmp_path: Path) -> None:
    # The JobSet is created, then the cluster refuses the ConfigMap's second apply (its
    # owner reference), and then the submit's own take-back of the JobSet: `submit` fails
    # with the JobSet on the host, holding quota.
    config = tmp_path / "config.yaml"
    config.write_text("lr: 0.1\n")
    server.state.faults += [
        Fault(403, "configmaps is forbidden", reason="Forbidden", skip=1,
              only="PATCH /api/v1/namespaces/training/configmaps/train-config"),
        Fault(403, "jobsets is forbidden", reason="Forbidden", only=f"DELETE {JOBSETS}/train")]
    result = CliRunner().invoke(main, ["run", "v5e-extra", "--project-dir", str(proj),
                                       "--name", "burst", "--interval", "1s", *WORKLOAD,
                                       "--config-file", str(config)])
    err = result.stderr
    assert result.exit_code == 5, err
    assert "submit: submitting the work: apply ConfigMap training/train-config: forbidden" in err
    assert server.state.jobsets == {}
    assert ("deleted workload train (namespace training, queue pools-burst) from the cluster "
            f"of {HOST}") in err
    assert fake.stacks == ["v5e-spot"]


def test_a_jobset_already_gone_counts_as_deleted(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer) -> None:
    finish(server, "Completed")
    server.state.faults.append(Fault(
        404, 'jobsets.jobset.x-k8s.io "train" not found', reason="NotFound",
        only=f"DELETE {JOBSETS}/train"))
    result = CliRunner().invoke(main, ["run", "v5e-extra", "--project-dir", str(proj),
                                       "--name", "burst", "--interval", "1s", *WORKLOAD])
    err = result.stderr
    assert result.exit_code == 0, err
    assert "could not" not in err
    assert ("deleted workload train (namespace training, queue pools-burst) from the cluster "
            f"of {HOST}") in err
    assert not server.state.faults  # the DELETE did get its 404


def test_reap_of_a_killed_pools_run_deletes_the_work_of_its_queue_before_the_destroy(
        fake: FakeAutoPulumi, proj: Path, server: FakeApiServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Beside the run's work, in the same namespace: a held JobSet of the pools queue, and
    # work of the host's own queue (labelled and held), which must stay.
    _jobset(server, "later", "pools-burst", held=True)
    _jobset(server, "host-job", "main")
    _jobset(server, "host-held", "main", held=True)
    run = Run(["run", "v5e-extra", "--project-dir", str(proj), "--name", "burst",
               "--interval", "1s", *WORKLOAD])
    run.until(lambda: ("training", "train") in server.state.jobsets)
    run.until(lambda: any(" wait: train: " in ln for ln in run.err))
    run.proc.kill()
    run.finish()
    assert fake.stacks == ["burst", "v5e-spot"]
    monkeypatch.chdir(proj)
    reaped = CliRunner().invoke(main, ["reap", "burst"])
    err = reaped.stderr
    assert reaped.exit_code == 0, reaped.output
    deleted = [ln for ln in err.splitlines() if ln.startswith("deleted workload ")]
    assert deleted == [f"deleted workload {n} (namespace training, queue pools-burst) from "
                       f"the cluster of {HOST}" for n in ("later", "train")]
    # ... before the destroy, which removes the pools stack and leaves the host alone.
    assert err.index("deleted workload train") < err.index("stack burst removed")
    assert sorted(server.state.jobsets) == [("training", "host-held"),
                                            ("training", "host-job")]
    assert fake.stacks == ["v5e-spot"]
    assert fake.cloud == sorted(f"urn:pulumi:v5e-spot::accelstack::{t}::{n}"
                                for t, n in HOST_RESOURCES)


def test_queue_of_a_jobset_is_its_label_or_a_held_one_s_annotation() -> None:
    labelled = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "pools-a"}}}
    held = {"metadata": {"annotations": {"accelstack.dev/held-queue": "pools-a"}}}
    assert queue_of(labelled) == queue_of(held) == "pools-a"
    assert queue_of({"metadata": {"name": "x"}}) is None
