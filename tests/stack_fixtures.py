"""Realistic stack outputs for submitter tests, one per kind of slice the renderer handles.

Each stack config is evaluated once under the mock engine (``infra.preview.harness``), exactly as
``pulumi up`` would run the program, and its exported contract is loaded back through
``infra.contract.outputs.load`` as the submitter reads it. So the node selectors, tolerations,
resource names and GPU data networks the renderer sees are the ones the stack declares,
not hand-written copies. Evaluation takes a fraction of a second; it is cached per name.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from infra.contract import outputs as contract
from infra.preview import harness
from infra.contract.outputs import StackOutputs


def _stack(region: str, zone: str, cluster: str, slices: list[dict[str, Any]],
           **extra: Any) -> dict[str, Any]:
    return {"project": "my-ml-project", "region": region, "zones": [zone],
            "clusterName": cluster, "slices": slices, **extra}


STACKS: dict[str, dict[str, Any]] = {
    # TPU v5e: four 4x4 slices (4 VMs each) on Spot VMs.
    "v5e-spot": _stack("us-west4", "us-west4-a", "v5e-spot", [
        {"accelerator": "v5litepod-16", "count": 4, "capacity": {"mode": "spot"}}],
        queues={"namespace": "training", "localQueue": "main"}),
    # TPU v5p: one v5p-128 slice (4x4x4, 16 VMs) on a specific reservation.
    "v5p-reserved": _stack("us-east5", "us-east5-a", "v5p-prod", [
        {"name": "v5p-128", "accelerator": "v5p-128", "count": 1,
         "capacity": {"mode": "reservation", "reservation": "v5p-128-reservation"}}],
        queues={"namespace": "llm", "localQueue": "main"}),
    # TPU v6e: four v6e-256 slices (16x16, 64 VMs each) on-demand.
    # A dataset bucket it reads and a checkpoint bucket it writes.
    "v6e-multislice": _stack("us-east5", "us-east5-b", "trillium", [
        {"accelerator": "v6e-256", "count": 4, "capacity": "on-demand"}],
        queues={"namespace": "pretraining", "localQueue": "main",
                "clusterQueue": "pretraining"},
        storage={"stores": [
            {"name": "datasets", "kind": "gcs", "create": False, "bucket": "my-ml-datasets",
             "access": {"pretraining": "read-only"}},
            {"name": "checkpoints", "kind": "gcs", "hierarchicalNamespace": True,
             "access": {"pretraining": "read-write"}}]}),
    # TPU v6e: two v6e-16 slices (4x4, 4 VMs each) with GKE managed DRANET.
    "v6e-dranet": _stack("us-east5", "us-east5-b", "trillium-dranet", [
        {"accelerator": "v6e-16", "count": 2, "dranet": True},
        # single-host slices: pods in their own network namespace, which claim a NIC
        {"accelerator": "v6e-8-1vm", "count": 2, "dranet": True}],
        gkeVersion="1.34.1-gke.1829001"),
    # TPU v6e with Pathways: two v6e-16 slices (4x4, 4 VMs each), the Pathways head pool
    # (one n2-standard-64) and its scratch bucket, and a dataset bucket jobs may mount.
    "v6e-pathways": _stack("us-east5", "us-east5-b", "pathways", [
        {"accelerator": "v6e-16", "count": 2}],
        queues={"namespace": "pretraining", "localQueue": "main"},
        storage={"stores": [
            {"name": "datasets", "kind": "gcs", "create": False, "bucket": "my-ml-datasets",
             "access": {"pretraining": "read-only"}}]},
        pathways={"enabled": True, "scratch": "gs://my-ml-project-pathways/scratch"}),
    # TPU v5e: four single-host 2x4 slices (one ct5lp-hightpu-8t VM each).
    "v5e-single-host": _stack("us-west4", "us-west4-a", "v5e-1vm", [
        {"accelerator": "v5litepod-8-1vm", "count": 4}]),
    # TPU7x (Ironwood): two 4x4x4 slices (16 VMs each).
    "tpu7x": _stack("us-central1", "us-central1-c", "ironwood", [
        {"accelerator": "tpu7x-4x4x4", "count": 2}], releaseChannel="RAPID"),
    # TPU7x dynamic slicing: four 4x4x4 sub-blocks of one reservation block, joined into
    # 4x4x4, 4x4x8 or 4x8x8 slices by GKE's slice controller.
    "tpu7x-dynamic": _stack("us-central1", "us-central1-c", "ironwood-ds", [
        {"name": "iw", "accelerator": "tpu7x-4x4x4",
         "capacity": {"mode": "reservation", "reservation": "iw-all-capacity"},
         "dynamicSlicing": {"reservationBlocks": [
             {"name": "block-1", "subBlocks": ["sb-1", "sb-2", "sb-3", "sb-4"]}],
             "shapes": ["4x4x4", "4x4x8", "4x8x8"]}}], releaseChannel="RAPID"),
    # A3 Mega: four a3-megagpu-8g nodes with eight GPUDirect-TCPXO data networks.
    "a3mega": _stack("us-east4", "us-east4-b", "a3mega", [
        {"accelerator": "h100-mega-80gb-8", "count": 4}],
        network={"gpuNetworksCidr": "192.168.0.0/20"}, queues={"namespace": "gpu-jobs"}),
    # A3 Ultra: four a3-ultragpu-8g nodes on a reservation, GPUDirect-RDMA.
    "a3ultra": _stack("us-central1", "us-central1-b", "a3ultra", [
        {"accelerator": "h200-141gb-8", "count": 4,
         "capacity": {"mode": "reservation", "reservation": "h200-reservation"}}],
        queues={"namespace": "gpu-jobs"}),
    # A3 Ultra with a dataset bucket it reads and a checkpoint bucket it writes: nodes
    # with Local SSD ephemeral storage, where read-only GCS mounts get the file cache.
    "a3ultra-storage": _stack("us-central1", "us-central1-b", "a3ultra-data", [
        {"accelerator": "h200-141gb-8", "count": 4,
         "capacity": {"mode": "reservation", "reservation": "h200-reservation"}}],
        queues={"namespace": "gpu-jobs"},
        storage={"stores": [
            {"name": "datasets", "kind": "gcs", "create": False, "bucket": "my-ml-datasets",
             "access": {"gpu-jobs": "read-only"}},
            {"name": "eval-sets", "kind": "gcs", "create": False, "bucket": "my-eval-sets",
             "access": {"gpu-jobs": "read-only"}},
            {"name": "checkpoints", "kind": "gcs", "access": {"gpu-jobs": "read-write"}}]}),
    # A4: two a4-highgpu-8g nodes on a reservation, GPUDirect-RDMA.
    "a4": _stack("us-central1", "us-central1-b", "a4", [
        {"accelerator": "b200-8", "count": 2,
         "capacity": {"mode": "reservation", "reservation": "b200-reservation"}}]),
    # A3 High: four a3-highgpu-8g nodes on a reservation, GPUDirect-TCPX (TAS flavor).
    "a3high": _stack("us-central1", "us-central1-a", "a3high", [
        {"accelerator": "h100-80gb-8", "count": 4,
         "capacity": {"mode": "reservation", "reservation": "h100-reservation"}}],
        queues={"namespace": "gpu-jobs"}),
    # G2: two g2-standard-96 nodes (8 x L4), no GPUDirect networking; a dataset bucket,
    # a checkpoint bucket and a Filestore share; a team that may only read the datasets.
    "g2": _stack("us-central1", "us-central1-a", "g2", [
        {"accelerator": "l4-8", "count": 2}],
        queues={"teams": [{"name": "evals", "quota": {"l4-8": 8}}]},
        storage={"stores": [
            {"name": "datasets", "kind": "gcs", "create": False, "bucket": "my-ml-datasets",
             "access": {"training": "read-only", "evals": "read-only"}},
            {"name": "checkpoints", "kind": "gcs", "access": {"training": "read-write"}},
            {"name": "scratch", "kind": "filestore", "tier": "ZONAL", "capacityGb": 1024,
             "access": {"training": "read-write", "evals": "read-only"}}]}),
    # TPU7: two 4x4x8 slices (32 VMs each), placed by workload policies.
    "tpu7": _stack("us-central1", "us-central1-c", "tpu7", [
        {"accelerator": "tpu7-4x4x8", "count": 2}], releaseChannel="RAPID"),
    # A4X (GB200, Arm hosts): four a4x-highgpu-4g nodes on a reservation and two
    # a4x-highgpu-4g-nolssd nodes on another reservation, GPUDirect-RDMA.
    "a4x": _stack("us-central1", "us-central1-a", "a4x", [
        {"accelerator": "gb200-4", "count": 4,
         "capacity": {"mode": "reservation", "reservation": "gb200-reservation"}},
        {"accelerator": "gb200-4-nolssd", "count": 2,
         "capacity": {"mode": "reservation", "reservation": "gb200-nolssd-reservation"}}],
        gkeVersion="1.34"),  # NVIDIA's DRA driver needs GKE 1.34 (infra/config/gpu.py)
    # Axion (C4A, Arm): one pool of two c4a-standard-72 VMs.
    "c4a": _stack("us-central1", "us-central1-a", "c4a", [
        {"accelerator": "c4a-standard-72-2", "count": 1}]),
    # CPU: one pool of four n2-standard-32 VMs.
    "cpu": _stack("us-central1", "us-central1-a", "cpu", [
        {"accelerator": "n2-standard-32-4", "count": 1}]),
}


def stack_config(name: str) -> dict[str, Any]:
    """A fresh copy of the raw config (keys without the accelstack: prefix)."""
    return copy.deepcopy(STACKS[name])


@lru_cache(maxsize=None)
def outputs(name: str) -> StackOutputs:
    """The stack's outputs contract, as the submitter loads it (evaluated once per name)."""
    ev = harness.evaluate(stack_config(name), name)
    return contract.load(harness.plain_outputs(ev, reveal=True))
