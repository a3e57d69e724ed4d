"""--parallel-containers N: a TPU7x host's chips split across N containers of one pod.

Facts this follows (docs/submitting.md, "Parallel containers on TPU7x"):
- GKE's Ironwood page (kubernetes-engine/docs/concepts/tpu-ironwood, "NUMA binding"): each
  TPU7x VM has four chips and two NUMA nodes, and GKE can run a workload as several
  containers so that each is bound to the CPU, memory and TPUs of one NUMA node.
- Google's sample (GoogleCloudPlatform/kubernetes-engine-samples,
  ai-ml/gke-multi-container-numa-ironwood): a pod of two containers on a 2x2x2 TPU7x slice,
  each asking ``google.com/tpu: 2`` and setting no variable; its README says each
  container's JAX command checks that it sees the TPU devices allocated to it.
- xpk's ``--use-parallel-containers`` (on for TPU7x): ``chips per VM / parallel
  containers`` chips per container, the same environment in each, and never with
  ``--pathways``.

What no source says (docs/limits.md): which ports and variables the runtimes of the second
and later containers use; accelstack sets none beyond what every container gets, as the
sample and xpk do, and declares the TPU ports on the first container only (a host-network
pod may not declare one host port twice). Pure: no Kubernetes client, no pulumi.
"""

from __future__ import annotations

import copy
from typing import Any

from infra.catalog.pod_resources import cpu_milli, cpu_quantity, memory_mi

OPTION = "--parallel-containers"
FAMILY = "tpu7x"  # the only TPU whose VMs GKE documents as split by NUMA node


class ParallelContainersError(ValueError):
    def __init__(self, message: str) -> None:
        self.option = OPTION
        self.message = message
        super().__init__(f"{OPTION}: {message}")


def check_alone(n: int, *, pathways: bool, stack_traces: bool, xla_dump: str | None,
                local_checkpoint_dir: str | None) -> None:
    """The checks that need no stack: N itself and the options it cannot go with."""
    if n < 2:
        raise ParallelContainersError(f"{n} is below 2 (one container per pod is the "
                                      "default)")
    if pathways:
        raise ParallelContainersError("does not apply with --pathways (Pathways workers own "
                                      "the host's chips; xpk turns parallel containers off "
                                      "for Pathways too)")
    together = {"--stack-traces": stack_traces, "--xla-dump": xla_dump is not None,
                "--local-checkpoint-dir": local_checkpoint_dir is not None}
    for option, given in together.items():
        if given:
            raise ParallelContainersError(f"is not offered with {option}: its per-host folder "
                                          "would be shared by N TPU processes (docs/limits.md)")


def check_pool(n: int, *, family: str, accelerator: str, chips_per_vm: int) -> None:
    """N against the chosen pool: TPU7x only, and N must divide the chips of one VM."""
    if family != FAMILY:
        raise ParallelContainersError(f"applies to TPU7x (Ironwood) pools; {accelerator} is "
                                      "not one")
    if chips_per_vm % n:
        allowed = [d for d in range(2, chips_per_vm + 1) if chips_per_vm % d == 0]
        choice = ", ".join(str(d) for d in allowed) or "none: one chip per VM"
        raise ParallelContainersError(f"{n} does not divide the {chips_per_vm} chips of a "
                                      f"{accelerator} VM; allowed: {choice}")


def container_names(main: str, n: int) -> list[str]:
    """The first container keeps its name (run-local, logs and sidecars look for it)."""
    return [main] + [f"{main}-{i}" for i in range(2, n + 1)]


def _split(quantity: str, n: int, kind: str) -> str:
    if kind == "cpu":
        milli = cpu_milli(quantity)
        assert milli is not None, quantity  # checked by build_spec
        return cpu_quantity(milli // n)
    if kind == "memory":
        mi = memory_mi(quantity)
        assert mi is not None, quantity
        return f"{int(mi) // n}Mi"
    whole = int(quantity)  # a chip count (google.com/tpu)
    return str(whole // n)


def _share(resources: dict[str, Any], n: int) -> dict[str, Any]:
    """Each container's part of the pod's requests and limits: chips / N, CPU and memory
    rounded down to whole millicores and MiB, so the N parts never exceed the whole."""
    out: dict[str, Any] = {}
    for part in ("requests", "limits"):
        if part in resources:
            out[part] = {k: _split(v, n, k) for k, v in resources[part].items()}
    return out


def split(pod: dict[str, Any], n: int) -> None:
    """Replace the pod's first container by N copies, each with 1/N of its resources.

    Runs after everything else decorated the main container (env, mounts, hardening), so
    every copy carries the same environment and security context, as xpk's copies do.
    """
    main = pod["containers"][0]
    resources = main.get("resources")
    copies = []
    for i, name in enumerate(container_names(main["name"], n)):
        c = copy.deepcopy(main)
        c["name"] = name
        if resources:
            c["resources"] = _share(resources, n)
        if i and "ports" in c:
            del c["ports"]  # a host-network pod may not repeat a host port
        copies.append(c)
    pod["containers"][0:1] = copies
