"""The options of a Pathways workload, checked against the stack before anything is sent.

``check`` turns ``--pathways``, ``--headless`` and ``--elastic-slices`` into a frozen
PathwaysSpec for ``submit.render.pathways`` to render, or raises PathwaysError naming the option,
the value and what is allowed. Kept apart from the renderer so that ``submit.render.spec`` can
build it without an import circle. Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations


from typing import Any, Sequence

from infra.contract.images import image_problem, pin_problem
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
    # A run's pass-through (--pathways-*-arg) and the colocated Python sidecar's image
    # (None: no sidecar); submit/render/pathways.py renders them.
    server_args: tuple[str, ...] = ()
    proxy_args: tuple[str, ...] = ()
    worker_args: tuple[str, ...] = ()
    colocated_python_image: str | None = None


# The flags accelstack sets on each component (submit/render/pathways.py); a pass-through
# argument may add flags, not set these again.
OWN_FLAGS = {
    "--pathways-server-arg": ("--server_port", "--gcs_scratch_location", "--node_type",
                              "--instance_count", "--instance_type"),
    "--pathways-proxy-arg": ("--server_port", "--resource_manager_address",
                             "--gcs_scratch_location", "--num_elastic_slices"),
    "--pathways-worker-arg": ("--server_port", "--resource_manager_address",
                              "--gcs_scratch_location", "--sidecar_name",
                              "--cloud_pathways_sidecar_shm_directory"),
}


def passthrough_kwargs(given: dict[str, Any]) -> dict[str, Any]:
    """The given ``pathways_*`` options (``api.Workload``'s names) as ``check_passthrough``
    and ``check`` take them: ``server_image``, ``proxy_image``, ``colocated_python``,
    ``colocated_python_image`` and ``args`` (option -> its values)."""
    out = {k.removeprefix("pathways_"): v for k, v in given.items()
           if k in ("pathways_server_image", "pathways_proxy_image",
                    "pathways_colocated_python", "pathways_colocated_python_image")}
    args = {f"--pathways-{part}-arg": tuple(given[f"pathways_{part}_arg"])
            for part in ("server", "proxy", "worker") if given.get(f"pathways_{part}_arg")}
    if args:
        out["args"] = args
    return out


def check_passthrough(*, pathways: bool, server_image: str | None = None,
                      proxy_image: str | None = None, colocated_python: bool = False,
                      colocated_python_image: str | None = None,
                      args: dict[str, Sequence[str]] | None = None) -> None:
    """--pathways-server-image, --pathways-proxy-image, --pathways-colocated-python[-image]
    and --pathways-{server,proxy,worker}-arg: the rules that need no stack outputs."""
    given = [o for o, v in (("--pathways-server-image", server_image),
                            ("--pathways-proxy-image", proxy_image),
                            ("--pathways-colocated-python", colocated_python),
                            ("--pathways-colocated-python-image", colocated_python_image),
                            *((o, a) for o, a in (args or {}).items())) if v]
    if given and not pathways:
        raise PathwaysError(given[0], "applies to Pathways workloads only; add --pathways")
    for option, image in (("--pathways-server-image", server_image),
                          ("--pathways-proxy-image", proxy_image),
                          ("--pathways-colocated-python-image", colocated_python_image)):
        if image is None:
            continue
        problem = image_problem(image)
        if problem:
            raise PathwaysError(option, problem)
        unpinned = pin_problem(image, "jax-0.10.0")  # the stack's images are held to it too
        if unpinned:
            raise PathwaysError(option, f"{image!r} {unpinned}")
    for option, values in (args or {}).items():
        for arg in values:
            flag = arg.split("=", 1)[0]
            if not arg.startswith("--") or len(flag) < 3 or any(c.isspace() for c in arg):
                raise PathwaysError(option, f"{arg!r} is not one flag such as --name=value "
                                    "(give the option once per flag)")
            if flag in OWN_FLAGS[option]:
                raise PathwaysError(option, f"{arg!r}: accelstack sets {flag} itself (from "
                                    "the stack and the workload's shape); it may not be "
                                    "set again")


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
          elastic_slices: int | None, server_image: str | None = None,
          proxy_image: str | None = None, colocated_python: bool = False,
          colocated_python_image: str | None = None,
          args: dict[str, Sequence[str]] | None = None) -> PathwaysSpec:
    """The Pathways workload on ``pool`` with ``replicas`` slices; the images given for
    the run replace the stack's pins."""
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
    colocated = colocated_python_image
    if colocated is None and colocated_python:
        colocated = pw.colocated_python_image
        if colocated is None:
            raise PathwaysError("--pathways-colocated-python", f"stack {outputs.stack!r} pins "
                                "no colocated Python image (pathways.images.colocatedPython); "
                                "give --pathways-colocated-python-image IMAGE")
    passed = args or {}
    return PathwaysSpec(head, pw.scratch, server_image or pw.server_image,
                        proxy_image or pw.proxy_image, headless, elastic_slices or 0,
                        tuple(passed.get("--pathways-server-arg", ())),
                        tuple(passed.get("--pathways-proxy-arg", ())),
                        tuple(passed.get("--pathways-worker-arg", ())), colocated)
