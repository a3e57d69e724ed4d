"""How much CPU and memory a workload pod gets on a node: the one sizing rule.

Every workload pod runs alone on its node (it asks for all the node's chips, or on CPU
pools for most of its vCPUs), so its CPU and memory are derived from the machine type:

1. allocatable = the VM's capacity less what GKE reserves for the kubelet, the container
   runtime and the OS, and less the kubelet's 100 MiB eviction threshold. GKE documents
   the reservations (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes
   #memory_and_cpu_reservations):
   CPU: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% of any above 4;
   memory: 255 MiB below 1 GiB, else 25% of the first 4 GiB, 20% of the next 4, 10% of
   the next 8, 6% of the next 112 and 2% of any above 128 GiB.
2. the pod gets allocatable less a headroom for the node's DaemonSets (GKE's logging,
   metrics, networking, metadata server and device plugins, image streaming's own memory
   reservation, and accelstack's image cache): 10% of allocatable,
   and at least 1 vCPU and 2 GiB. GKE publishes no figure for those; 10% is a documented
   choice of ours, conservative for the large accelerator VMs.
   On A3 High and A3 Mega the pod also runs the GPUDirect daemon as a sidecar; its
   requests (gpudirect_release.py) come out of the workload container's part
   (``container_share``), so the pod as a whole still asks exactly the share.
3. requests = limits = that share (Guaranteed QoS: the kubelet evicts the pod last and a
   memory leak hits the pod's limit before the node's), unless ``--cpu``/``--memory`` say
   otherwise; a value above the share is refused, because the pod could never schedule.

Kueue counts the same figures: each accelerator flavor's CPU and memory quota is the share
times the nodes behind it (infra/specs/kueue.py), so a render's requests always fit the
quota of its own pool's flavor. Capacity is read with Compute Engine's "GB" as 10^9
bytes, the smaller of its two readings, so the share never exceeds what the node reports.
Pure: imported by the Pulumi program and by the submitter.
"""

from __future__ import annotations


from infra.catalog.tables import GPU_MODELS, VmShape, vm_shape
from infra.lazy_re import later
from infra.record import record

HEADROOM_FRACTION = 0.10
MIN_HEADROOM_MILLI = 1000
MIN_HEADROOM_MI = 2048
EVICTION_MI = 100
_MI = 1024 * 1024
_GI_MI = 1024


@record
class PodShare:
    """The CPU (millicores) and memory (MiB) one workload pod may have on a node."""

    cpu_milli: int
    memory_mi: int

    @property
    def cpu(self) -> str:
        return cpu_quantity(self.cpu_milli)

    @property
    def memory(self) -> str:
        return f"{self.memory_mi}Mi"


def cpu_quantity(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _reserved_cpu_milli(vcpus: int) -> float:
    tiers = ((1, 0.06), (1, 0.01), (2, 0.005), (float("inf"), 0.0025))
    left, out = float(vcpus), 0.0
    for size, rate in tiers:
        take = min(left, size)
        out += take * 1000 * rate
        left -= take
        if left <= 0:
            break
    return out


def _reserved_memory_mi(memory_mi: float) -> float:
    if memory_mi < _GI_MI:
        return 255
    tiers = ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (float("inf"), 0.02))
    left, out = memory_mi, 0.0
    for size_gi, rate in tiers:
        take = min(left, size_gi * _GI_MI)
        out += take * rate
        left -= take
        if left <= 0:
            break
    return out


def allocatable(shape: VmShape) -> PodShare:
    """What GKE leaves for pods on a node of this shape (node allocatable)."""
    memory_mi = shape.memory_gb * 1e9 / _MI
    cpu = shape.vcpus * 1000 - _reserved_cpu_milli(shape.vcpus)
    mem = memory_mi - _reserved_memory_mi(memory_mi) - EVICTION_MI
    return PodShare(int(cpu), int(mem))


def pod_share(machine_type: str, reserved_mi: int = 0) -> PodShare | None:
    """The requests (and limits) of a workload pod on this machine; None when the
    machine's vCPUs and memory are not published (then pods carry no default).
    ``reserved_mi``: node memory taken outside any pod's request, which the pod leaves
    free (a multi-tier checkpointing RAM disk: infra/config/checkpointing.py)."""
    shape = vm_shape(machine_type)
    if shape is None:
        return None
    node = allocatable(shape)
    cpu_headroom = max(MIN_HEADROOM_MILLI, int(node.cpu_milli * HEADROOM_FRACTION))
    mem_headroom = max(MIN_HEADROOM_MI, int(node.memory_mi * HEADROOM_FRACTION))
    cpu = (node.cpu_milli - cpu_headroom) // 100 * 100  # whole tenths of a vCPU
    mem = (node.memory_mi - mem_headroom - reserved_mi) // 64 * 64
    return PodShare(max(cpu, 0), max(mem, 0))


def sidecar_share(machine_type: str) -> PodShare | None:
    """What the GPUDirect daemon sidecar (TCPX, TCPXO) requests on this machine; None
    where pods run no sidecar (infra/catalog/gpudirect_release.py has the figures)."""
    for model in GPU_MODELS:
        if machine_type not in model.machines.values():
            continue
        from infra.catalog import gpudirect_release  # late: GPU machines only

        if model.networking in gpudirect_release.DAEMON_NETWORKING:
            return PodShare(gpudirect_release.DAEMON_CPU_MILLI,
                            gpudirect_release.DAEMON_MEMORY_MI)
    return None


def container_share(machine_type: str, reserved_mi: int = 0) -> PodShare | None:
    """The workload container's requests (and limits): the pod's share less its sidecar's,
    so the whole pod (what Kueue counts) is still ``pod_share``."""
    share = pod_share(machine_type, reserved_mi)
    side = sidecar_share(machine_type)
    if share is None or side is None:
        return share
    return PodShare(share.cpu_milli - side.cpu_milli, share.memory_mi - side.memory_mi)


# Our own small quantity parsing, not kubernetes.utils.parse_quantity: this runs on the
# render path (`create --dry-run`, and infra/), which must not load the Kubernetes client
# (tests/test_layers.py), and importing anything from the `kubernetes` package loads
# kubernetes.client. It accepts a subset of Kubernetes quantities (no exponents, no P/E);
# tests/test_pod_resources.py checks that it reads each of them as parse_quantity does.
_CPU = later(r"^(?P<n>[0-9]+(\.[0-9]{1,3})?)(?P<m>m?)\Z")
_MEM = later(r"^(?P<n>[0-9]+(\.[0-9]+)?)(?P<u>Ki|Mi|Gi|Ti|k|M|G|T)?\Z")
_MEM_UNITS = {None: 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
              "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def cpu_milli(quantity: str) -> int | None:
    """Millicores of a CPU quantity such as 30, 2.5 or 3500m; None if it is not one."""
    m = _CPU.match(quantity)
    if not m:
        return None
    n = float(m.group("n"))
    return int(round(n if m.group("m") else n * 1000))


def memory_mi(quantity: str) -> float | None:
    """MiB of a memory quantity such as 100Gi or 64G; None if it is not one."""
    m = _MEM.match(quantity)
    if not m:
        return None
    return float(m.group("n")) * _MEM_UNITS[m.group("u")] / _MI


def check_request(machine_type: str, cpu: str | None, memory: str | None,
                  reserved_mi: int = 0) -> tuple[str, str] | None:
    """(option, problem) when --cpu or --memory asks more than a pod on this machine can
    have, or asks anything of a machine whose size is not published; None when fine."""
    share = container_share(machine_type, reserved_mi)
    why = ("node allocatable less 10% for DaemonSets"
           + (" and the GPUDirect daemon's share" if sidecar_share(machine_type) else "")
           + (f" and the {reserved_mi}Mi checkpoint RAM disk" if reserved_mi else ""))
    for option, value in (("--cpu", cpu), ("--memory", memory)):
        if value is None:
            continue
        if share is None:
            return option, (f"{value!r} cannot be checked: the vCPUs and memory of "
                            f"{machine_type} are not published, so accelstack sets no CPU "
                            "or memory on its pods")
        if option == "--cpu":
            asked = cpu_milli(value)
            if asked is not None and asked > share.cpu_milli:
                return option, (f"{value!r} is more than a pod on {machine_type} can have: "
                                f"at most {share.cpu} ({why})")
        else:
            asked_mi = memory_mi(value)
            if asked_mi is not None and asked_mi > share.memory_mi:
                return option, (f"{value!r} is more than a pod on {machine_type} can have: "
                                f"at most {share.memory} ({why})")
    return None
