"""A workload as the user asked for it, checked: the frozen WorkloadSpec that
submit/render/jobset.py renders.

``submit.render.build.build_spec`` checks the options against the stack's outputs contract
and returns the WorkloadSpec; the checks of option values that need no stack live in
submit/render/option_checks.py, and the values themselves (SpecError, EnvVar, the parsers,
the defaults) in submit/render/values.py, which this module re-exports for its callers.
Pure: no Click, no Kubernetes client, no pulumi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.contract.outputs import SlicePoolInfo
from infra.record import field, record
from submit.render.values import (
    ANY as ANY, CONFIG_MOUNT as CONFIG_MOUNT, DEFAULT_MAX_RESTARTS as DEFAULT_MAX_RESTARTS,
    DEFAULT_PRIORITY as DEFAULT_PRIORITY,
    DEFAULT_RESTART_EXIT_CODES as DEFAULT_RESTART_EXIT_CODES,
    DEFAULT_TERMINATION_GRACE_SECONDS as DEFAULT_TERMINATION_GRACE_SECONDS,
    DEFAULT_TTL as DEFAULT_TTL, DEFAULT_TTL_SECONDS as DEFAULT_TTL_SECONDS,
    DNS_1035 as DNS_1035, INT32_MAX as INT32_MAX, LINUX_CAPABILITIES as LINUX_CAPABILITIES,
    MAX_CONFIG_BYTES as MAX_CONFIG_BYTES, NONE as NONE, POD_NAME_SUFFIX as POD_NAME_SUFFIX,
    REPLICATED_JOB as REPLICATED_JOB, EnvVar as EnvVar, SpecError as SpecError,
    _ENV_NAME as _ENV_NAME, check_index as check_index, check_namespace as check_namespace,
    check_range as check_range, check_wait as check_wait,
    check_workload_name as check_workload_name, hostname_budget as hostname_budget,
    index_limits as index_limits, parse_capabilities as parse_capabilities,
    parse_env as parse_env, parse_env_file as parse_env_file,
    parse_exit_codes as parse_exit_codes, parse_grace as parse_grace,
    parse_pull_secrets as parse_pull_secrets, parse_secret_env as parse_secret_env,
    parse_ttl as parse_ttl, read_config_file as read_config_file)

if TYPE_CHECKING:
    from submit.render import mounts as mounts_mod
    from submit.render.checkpointing import LocalCheckpoint
    from submit.render.pathways_options import PathwaysSpec
    from submit.render.diagnostics.options import Diagnostics


@record
class WorkloadSpec:
    name: str
    namespace: str
    queue: str
    pool: SlicePoolInfo
    replicas: int  # slices (TPU) or 1 (GPU/CPU)
    parallelism: int  # pods per replica: VMs per slice, or nodes
    image: str
    command: str | None
    env: tuple[EnvVar, ...] = ()
    priority: str | None = None
    max_restarts: int = 0
    retriable_exit_codes: tuple[int, ...] = ()
    ttl_seconds: int | None = None
    termination_grace_seconds: int | None = None
    config_file_name: str | None = None
    config_file_data: str | None = None
    shm_size: str | None = None
    cpu: str | None = None  # requests per pod (Kueue counts them against CPU quotas)
    memory: str | None = None
    labels: tuple[tuple[str, str], ...] = field(default=())
    # The pod's service-account token is mounted only for jobs that call the Kubernetes API.
    mount_service_account_token: bool = False
    # Capabilities the main container gets back after dropping all (--add-capability).
    capabilities: tuple[str, ...] = ()
    mounts: tuple[mounts_mod.Mount, ...] = ()  # --mount, checked (submit/render/mounts.py)
    service_account: str | None = None  # the namespace's job account, from the contract
    pathways: PathwaysSpec | None = None  # --pathways: rendered by submit/render/pathways.py
    # A fleet's workload: the JobSet's spec.managedBy (MultiKueue), and the workers that
    # can run it (submit/render/fleet.py).
    managed_by: str | None = None
    fleet_workers: tuple[str, ...] = ()
    # --local-checkpoint-dir: the RAM tier of multi-tier checkpointing
    # (submit/render/checkpointing.py).
    local_checkpoint: LocalCheckpoint | None = None
    # --stack-traces, --xla-dump, --debug-logs: rendered by submit/render/diagnostics/.
    diagnostics: Diagnostics | None = None
    image_pull_secrets: tuple[str, ...] = ()  # --image-pull-secret: the pods' imagePullSecrets
    # --parallel-containers: TPU7x, containers per pod (submit/render/parallel_containers.py)
    parallel_containers: int = 1
    ml_diagnostics: bool = False  # --ml-diagnostics (submit/render/diagnostics/ml_diagnostics.py)

    @property
    def replicated_job(self) -> str:
        return REPLICATED_JOB[self.pool.kind]
