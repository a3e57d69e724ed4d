"""The options of `submit workload create` (and, through it, `run-local`), declared once, and
the typed object a command body reads them from instead of forty parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from infra.record import record
from submit.cli.options import complete, namespace_option
from submit.cli.image_pin import resolve_image_option
from submit.cli.diagnostics_options import DIAGNOSTIC_OPTIONS
from submit.cli.goodput_options import GOODPUT_OPTIONS
from submit.cli.runtime_options import RUNTIME_OPTIONS
from submit.render import spec as sp

if TYPE_CHECKING:
    from submit import api

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = [
    click.option("--workload", "name", required=True, help="Workload (JobSet) name."),
    click.option("--accelerator", required=True, shell_complete=complete("accelerators"),
                  help="Slice type, any accepted name form (v5p-128, v5p-4x4x4, h100-mega-80gb-8)."),
    click.option("--pool", shell_complete=complete("pools"), help="Slice pool, when the stack has several of this accelerator."),
    click.option("--num-slices", type=int, help="TPU slices (multislice)."),
    click.option("--num-nodes", type=int, help="GPU or CPU nodes."),
    click.option("--image", help="Container image (or --script-dir with --base-image)."),
    resolve_image_option,
    click.option("--script-dir", type=click.Path(exists=True, file_okay=False),
                  help="Run the code in DIR: add it as a layer on --base-image at /app, push it to "
                       "the stack's image repository, and run that image by digest."),
    click.option("--base-image", help="Image to add --script-dir to (amd64, or arm64 for Arm "
                  "pools such as A4X)."),
    click.option("--image-repository", envvar="ACCELSTACK_IMAGE_REPOSITORY", metavar="REPO",
                  help="Push --script-dir images here instead of the stack's repository "
                       "[env ACCELSTACK_IMAGE_REPOSITORY]."),
    click.option("--command", help="Command, run with /bin/sh -c in the container."),
    click.option("--env", multiple=True, metavar="KEY=VALUE", help="Environment variable."),
    click.option("--env-file", type=click.Path(dir_okay=False), help="File of KEY=VALUE lines."),
    click.option("--secret-env", multiple=True, metavar="NAME=SECRET/KEY",
                  help="Environment variable from a key of a Kubernetes Secret."),
    click.option("--priority", shell_complete=complete("priorities"), help="Kueue priority class (very-low .. very-high), or 'none' "
                  f"for Kueue's priority 0.  [default: {sp.DEFAULT_PRIORITY}]"),
    click.option("--max-restarts", type=int, default=sp.DEFAULT_MAX_RESTARTS, show_default=True,
                  help="Times the whole workload may restart after a failure that "
                       "--restart-on-exit-codes or a disruption (preemption, maintenance) "
                       "allows."),
    click.option("--restart-on-exit-codes", metavar="CODES",
                  help="Exit codes and ranges that restart the workload; any other failure "
                       "fails it at once. 'any': every failure restarts.  "
                       f"[default: {sp.DEFAULT_RESTART_EXIT_CODES}]"),
    click.option("--ttl", metavar="DURATION", help="Delete the workload this long after it "
                  "finishes: seconds, or with s, m, h or d; 'none' keeps it.  "
                  f"[default: {sp.DEFAULT_TTL}]"),
    click.option("--termination-grace-period", metavar="DURATION",
                  help="Grace period for pods to stop: seconds, or with s, m or h (90s, "
                       "2m).  "
                       f"[default: {sp.DEFAULT_TERMINATION_GRACE_SECONDS}]"),
    click.option("--mount-service-account-token", is_flag=True,
                  help="Mount the pod's Kubernetes service-account token (only for jobs that "
                       "call the Kubernetes API)."),
    click.option("--add-capability", multiple=True, metavar="CAP",
                  help="Give the main container back a Linux capability (all are dropped), "
                       "e.g. IPC_LOCK, or SETUID and SETGID for images that switch users."),
    click.option("--config-file", type=click.Path(dir_okay=False),
                  help="File delivered to every pod at /etc/accelstack/config/<name> "
                       "($ACCELSTACK_CONFIG)."),
    click.option("--shm-size", metavar="QUANTITY", help="Limit of /dev/shm (memory-backed)."),
    click.option("--cpu", metavar="QUANTITY", help="CPU each pod requests (counted by Kueue)."),
    click.option("--memory", metavar="QUANTITY",
                  help="Memory each pod requests and may use (counted by Kueue)."),
    click.option("--mount", "mount", multiple=True, metavar="STORE[:PATH][:ro]",
                  help="Mount a store of the stack (default path /mnt/STORE, read-write unless "
                       ":ro); its path is in $ACCELSTACK_MOUNT_<STORE>. Repeatable."),
    *DIAGNOSTIC_OPTIONS,
    *GOODPUT_OPTIONS,
    *RUNTIME_OPTIONS,
    click.option("--pathways", is_flag=True,
                  help="Run on Pathways: a head pod (resource manager, proxy and your container, "
                       "JAX pointed at the proxy) on the stack's Pathways pool, and Pathways "
                       "workers on the TPU slices."),
    click.option("--headless", is_flag=True,
                  help="With --pathways: no user container; connect a JAX client through the "
                       "port-forward command printed after submitting."),
    click.option("--elastic-slices", type=int, metavar="N",
                  help="With --pathways: slices that may fail and come back without failing "
                       "the workload."),
    click.option("--local-checkpoint-dir", metavar="PATH",
                  help="Mount the RAM tier of the pool's multi-tier checkpointing at PATH "
                       "($ACCELSTACK_LOCAL_CHECKPOINT_DIR); two or more slices "
                       "(docs/checkpointing.md)."),
    namespace_option,
    click.option("--queue", help="LocalQueue (default: the namespace's queue)."),
    click.option("--fleet-worker", metavar="NAME",
                  help="A fleet: run only on this worker cluster (docs/fleets.md)."),
    click.option("--fleet-region", metavar="REGION",
                  help="A fleet: run only on the worker clusters of this region."),
    click.option("--dry-run", is_flag=True, help="Print the objects; apply nothing."),
    click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
                  show_default=True, help="Format of --dry-run and --export (several objects: "
                  "one Kubernetes List)."),
    click.option("--export", "export_file", type=click.Path(dir_okay=False),
                  help="Write the objects to FILE and apply nothing (then `submit workload "
                       "apply FILE`)."),
    click.option("--replace", is_flag=True, help="Delete and recreate a workload of that name."),
    click.option("--after", metavar="WORKLOAD", help="Create it held (suspended, not queued) "
                  "until WORKLOAD has succeeded: `submit workload release NAME` queues it."),
]


def create_options(f: F) -> F:
    """Every option of `create`, in the order its help lists them."""
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


@record
class CreateOptions:
    """`create`'s options as the command received them (names are Click's). A record (not a
    NamedTuple, whose definition compiles every annotation: a millisecond of start-up with
    40 fields, bench/cold_dry_run.py)."""

    name: str
    accelerator: str
    pool: str | None
    num_slices: int | None
    num_nodes: int | None
    image: str | None
    script_dir: str | None
    base_image: str | None
    image_repository: str | None
    command: str | None
    env: tuple[str, ...]
    env_file: str | None
    secret_env: tuple[str, ...]
    priority: str | None
    max_restarts: int
    restart_on_exit_codes: str | None
    ttl: str | None
    termination_grace_period: str | None
    mount_service_account_token: bool
    add_capability: tuple[str, ...]
    config_file: str | None
    shm_size: str | None
    cpu: str | None
    memory: str | None
    mount: tuple[str, ...]
    pathways: bool
    headless: bool
    elastic_slices: int | None
    namespace: str | None
    queue: str | None
    dry_run: bool
    fmt: str
    export_file: str | None
    replace: bool
    after: str | None = None
    resolve_image: bool | None = None  # None: on, but for --dry-run (image_pin.wanted)
    fleet_worker: str | None = None
    fleet_region: str | None = None
    local_checkpoint_dir: str | None = None
    stack_traces: bool = False
    xla_dump: str | None = None
    debug_logs: bool = False
    tensorboard: str | None = None
    image_pull_secret: tuple[str, ...] = ()
    pathways_server_image: str | None = None
    pathways_proxy_image: str | None = None
    pathways_colocated_python: bool = False
    pathways_colocated_python_image: str | None = None
    pathways_server_arg: tuple[str, ...] = ()
    pathways_proxy_arg: tuple[str, ...] = ()
    pathways_worker_arg: tuple[str, ...] = ()
    parallel_containers: int | None = None
    ml_diagnostics: bool = False
    goodput: bool = False

    def workload(self) -> api.Workload:
        """The workload these options describe (its image may still come from --script-dir)."""
        from submit import api

        return api.Workload(
            name=self.name, accelerator=self.accelerator, image=self.image,
            command=self.command, num_slices=self.num_slices, num_nodes=self.num_nodes,
            pool=self.pool, namespace=self.namespace, queue=self.queue,
            env=tuple(self.env), goodput=self.goodput,
            env_file=self.env_file, secret_env=self.secret_env, priority=self.priority,
            max_restarts=self.max_restarts, restart_on_exit_codes=self.restart_on_exit_codes,
            ttl=self.ttl, termination_grace_period=self.termination_grace_period,
            config_file=self.config_file, shm_size=self.shm_size, cpu=self.cpu,
            memory=self.memory, mount_service_account_token=self.mount_service_account_token,
            add_capability=self.add_capability, mount=self.mount, pathways=self.pathways,
            headless=self.headless, elastic_slices=self.elastic_slices,
            fleet_worker=self.fleet_worker, fleet_region=self.fleet_region,
            local_checkpoint_dir=self.local_checkpoint_dir,
            stack_traces=self.stack_traces, xla_dump=self.xla_dump, debug_logs=self.debug_logs,
            tensorboard=self.tensorboard,
            image_pull_secret=self.image_pull_secret,
            pathways_server_image=self.pathways_server_image,
            pathways_proxy_image=self.pathways_proxy_image,
            pathways_colocated_python=self.pathways_colocated_python,
            pathways_colocated_python_image=self.pathways_colocated_python_image,
            pathways_server_arg=self.pathways_server_arg,
            pathways_proxy_arg=self.pathways_proxy_arg,
            pathways_worker_arg=self.pathways_worker_arg,
            parallel_containers=self.parallel_containers,
            ml_diagnostics=self.ml_diagnostics)

    @property
    def builds_image(self) -> bool:
        """Whether the image comes from --script-dir (or is missing, which that reports)."""
        headless_without_image = (self.pathways and self.headless and self.image is None
                                  and self.script_dir is None)
        return not headless_without_image and (
            self.image is None or self.script_dir is not None or self.base_image is not None)
