"""run-local rewrites each mount path in env values and the command once (issue 34): on an A3
High render the run directory lies under /tmp and the TCPX socket volume is mounted at
/tmp, so a second pass used to rewrite the stand-in of nvidia-libs again."""

from __future__ import annotations

import stack_fixtures
from submit.local import plan as lp
from submit.local.volumes import rewrite_paths
from submit.render.build import build_spec
from submit.render.jobset import render


def test_a_local_directory_under_another_mount_path_is_not_rewritten_again() -> None:
    mounts = [("/usr/local/nvidia/lib64", "/tmp/run/volumes/p/nvidia-libs"),
              ("/tmp", "/tmp/run/volumes/p/tcpx-socket")]
    assert rewrite_paths("/usr/local/nvidia/lib64:/tmp/x:/usr/lib", mounts) == (
        "/tmp/run/volumes/p/nvidia-libs:/tmp/run/volumes/p/tcpx-socket/x:/usr/lib")
    assert rewrite_paths("/tmpfoo /tmp", mounts) == "/tmpfoo /tmp/run/volumes/p/tcpx-socket"
    assert rewrite_paths("/tmp", []) == "/tmp"


def test_an_a3_high_render_gets_its_library_path_rewritten_once() -> None:
    spec = build_spec(stack_fixtures.outputs("a3high"), workload="w",
                      accelerator="h100-80gb-8", num_nodes=1, image="x:1", command="true")
    run_dir = "/tmp/accelstack-w-1"
    plan = lp.build(render(spec), lp.Options(run_dir=run_dir, cwd="/c"), 0, lambda: 1)
    [proc] = plan.processes
    env = dict(proc.env)
    assert env["LD_LIBRARY_PATH"] == f"{run_dir}/volumes/{proc.hostname}/nvidia-libs"
