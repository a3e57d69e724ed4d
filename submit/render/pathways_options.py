"""The options of a Pathways workload, checked against the stack before anything is sent.

``check`` turns ``--pathways``, ``--headless`` and ``--elastic-slices`` into a frozen
PathwaysSpec for ``submit.render.pathways`` to render, or raises PathwaysError naming the option,
the value and what is allowed. Kept apart from the renderer so that ``submit.render.spec`` can
build it without an import circle. Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations


from infra.contract.outputs import SlicePoolInfo, StackOutputs
from infra.record import record

# The TPU versions Pathways' resource manager knows (--instance_type), by accelstack
# family: google/pathways-job internal/controller/pathwaysjob_controller.go, as
# axlearn/cloud/gcp/pathways_utils.py get_pathways_tpu_version cites it, and xpk's
# system characteristics (pathways_tpu_version='tpu7x' for TPU7x).
TPU_VERSIONS = {"v4": "tpuv4", "v5e": "tpuv5e", "v5p": "tpuv5", "v6e": "tpuv6e",
                "tpu7x": "tpu7x"}


class PathwaysError(ValueError):
    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


@record
class PathwaysSpec:
    head_pool: SlicePoolInfo
    scratch: str  # gs://...
    server_image: str
    proxy_image: str
    headless: bool = False
    elastic_slices: int = 0


def check_flags(*, pathways: bool, headless: bool, elastic_slices: int | None,
                command: str | None, mounts: tuple[str, ...] | list[str] = (),
                cpu: str | None = None, memory: str | None = None) -> None:
    """The rules that need no stack outputs."""
    if not pathways:
        for option, value in (("--headless", headless), ("--elastic-slices", elastic_slices)):
            if value:
                raise PathwaysError(option, "applies to Pathways workloads only; add --pathways")
        return
    if elastic_slices is not None and elastic_slices < 1:
        raise PathwaysError("--elastic-slices", f"{elastic_slices} is below 1")
    if headless:
        if command is not None:
            raise PathwaysError("--command", "a --headless Pathways workload runs no user "
                                "container (connect a client through the port-forward "
                                "instead); drop --command or --headless")
        if mounts:
            raise PathwaysError("--mount", "a --headless Pathways workload has no user "
                                "container to mount stores in; drop --mount or --headless")
    for option, quantity in (("--cpu", cpu), ("--memory", memory)):
        if quantity is not None:
            raise PathwaysError(option, "is not used with --pathways: the head pod's user "
                                "container gets what the head node leaves after the "
                                "Pathways servers, and workers get their whole TPU host")


def check(outputs: StackOutputs, pool: SlicePoolInfo, replicas: int, *, headless: bool,
          elastic_slices: int | None) -> PathwaysSpec:
    """The Pathways workload on ``pool`` with ``replicas`` slices."""
    pw = outputs.pathways
    if pw is None:
        raise PathwaysError("--pathways", f"stack {outputs.stack!r} has no Pathways head pool; "
                            "set pathways.enabled: true and pathways.scratch in its config "
                            "and run `pulumi up`")
    head = outputs.pool(pw.head_pool)
    if head is None or head.kind != "cpu":
        raise PathwaysError("--pathways", f"the stack's Pathways head pool {pw.head_pool!r} is "
                            "not a CPU pool of its outputs; run `pulumi up` again")
    if pool.kind != "tpu" or pool.vms_per_slice < 2:
        raise PathwaysError("--accelerator", f"{pool.accelerator!r} is not a multi-host TPU "
                            "slice; Pathways workers run on multi-host TPU slice pools")
    if pool.family not in TPU_VERSIONS or not pool.topology:
        raise PathwaysError("--accelerator", f"{pool.accelerator!r}: Pathways knows TPU "
                            f"{', '.join(sorted(TPU_VERSIONS))} slices, not {pool.family}")
    if elastic_slices is not None and elastic_slices > replicas:
        raise PathwaysError("--elastic-slices", f"{elastic_slices} is more than the "
                            f"{replicas} slices of the workload (--num-slices)")
    return PathwaysSpec(head, pw.scratch, pw.server_image, pw.proxy_image, headless,
                        elastic_slices or 0)
