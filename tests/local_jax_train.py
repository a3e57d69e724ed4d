"""A tiny multi-process JAX program, run by `submit workload run-local` in the tests.

It forms the distributed group from nothing but the environment the workload's pods get,
as a user's program on GKE does:

- on TPU renders (TPU_WORKER_HOSTNAMES present) it lets JAX's own GKE TPU cluster
  detection (``cluster_detection_method="gketpu"``) read TPU_WORKER_HOSTNAMES,
  TPU_WORKER_ID, MEGASCALE_NUM_SLICES and MEGASCALE_SLICE_ID; the one thing a CPU machine
  cannot be is a Cloud TPU VM, so that flag alone is set;
- on GPU renders it passes NNODES and NODE_RANK.

The coordinator address comes from JAX_COORDINATOR_ADDRESS, which JAX reads itself. Then a
cross-process psum of (process id + 1) must equal n(n+1)/2: only true if every process
joined with a distinct id. Each process writes OUT_DIR/process-<id>.json.

FAIL_WORKER=<slice>/<worker> and FAIL_CODE=N make that process exit N right away;
with FAIL_ONCE=1 it fails only while OUT_DIR/failed-once does not exist (a transient fault).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _worker() -> str:
    slice_id = os.environ.get("MEGASCALE_SLICE_ID", "0")
    worker = os.environ.get("TPU_WORKER_ID") or os.environ.get("NODE_RANK", "0")
    return f"{slice_id}/{worker}"


def _maybe_fail(out: Path) -> None:
    if os.environ.get("FAIL_WORKER") != _worker():
        return
    marker = out / "failed-once"
    if os.environ.get("FAIL_ONCE") == "1":
        if marker.exists():
            return
        marker.write_text("x")
    print(f"worker {_worker()} failing with exit code {os.environ['FAIL_CODE']}", flush=True)
    sys.exit(int(os.environ["FAIL_CODE"]))


def main() -> None:
    out = Path(os.environ["OUT_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    _maybe_fail(out)

    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if "TPU_WORKER_HOSTNAMES" in os.environ:
        from jax._src.clusters import cloud_tpu_cluster

        cloud_tpu_cluster.running_in_cloud_tpu_vm = True  # type: ignore[attr-defined]
        jax.distributed.initialize(cluster_detection_method="gketpu",
                                   initialization_timeout=60)
    else:
        jax.distributed.initialize(num_processes=int(os.environ["NNODES"]),
                                   process_id=int(os.environ["NODE_RANK"]),
                                   initialization_timeout=60)

    import jax.numpy as jnp
    from jax.experimental import multihost_utils

    pid, n = jax.process_index(), jax.process_count()
    total = multihost_utils.process_allgather(jnp.array([pid + 1])).sum()
    psum = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(
        jnp.array([pid + 1] * jax.local_device_count()))
    result = {"process_id": pid, "process_count": n, "psum": int(psum[0]),
              "allgather_sum": int(total), "worker": _worker(),
              "hostname": os.environ.get("HOSTNAME"),
              "coordinator": os.environ.get("JAX_COORDINATOR_ADDRESS")}
    (out / f"process-{pid}.json").write_text(json.dumps(result))
    print(json.dumps(result), flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
