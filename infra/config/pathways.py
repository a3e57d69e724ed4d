"""The ``pathways`` section of the stack config: what a cluster needs to run Pathways.

Pathways (one JAX client driving many TPU slices through a proxy) needs, beside the TPU
slice pools, a CPU node pool for the ``pathways-head`` pod (the resource manager, the
IFRT proxy and the user's client), a Cloud Storage scratch location the head and the
workers share, and pinned component images. This layer turns the section into a frozen
``Pathways`` and the head pool into an ordinary CPU ``SlicePool``, so the node pool, its
Kueue flavor and quota (infra/specs/kueue.py), its pod sizing (infra/catalog/pod_resources.py) and
its entry in the outputs contract come from the code every pool goes through. It sits
above ``infra.config.slices`` and below ``infra.config.stack``. Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from infra.catalog import boot_disks
from infra.catalog import tables as catalog
from infra.config.fields import MAX_NODES_PER_POOL_ZONE, check_gke_name
from infra.config.capacity import Capacity
from infra.config.slices import SlicePool
from infra.config.errors import show
from infra.contract.images import image_problem, pin_problem
from infra.config.reader import Reader
from infra.record import record, replace

PATHWAYS_KEYS = ("enabled", "headPool", "scratch", "images")
HEAD_POOL_KEYS = ("name", "machineType", "minNodes", "maxNodes", "diskSizeGb")
IMAGE_KEYS = ("server", "proxy", "colocatedPython")

# Google's Pathways images (cloud.google.com/ai-hypercomputer/docs/workloads/
# pathways-on-cloud, "Pathways container images": .../pathways/server:jax-<jax-version>
# runs the resource manager and the workers, .../pathways/proxy_server:jax-<jax-version>
# the IFRT proxy). The tag names the JAX release the client must run; jax-0.10.0 matches
# the JAX 0.10 the rest of accelstack assumes (submit/render/jobset.py). axlearn pins a dated
# tag of the same repository (axlearn/cloud/gcp/pathways_utils.py); neither uses :latest.
IMAGE_REPOSITORY = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways"
IMAGE_TAG = "jax-0.10.0"
DEFAULT_SERVER_IMAGE = f"{IMAGE_REPOSITORY}/server:{IMAGE_TAG}"
DEFAULT_PROXY_IMAGE = f"{IMAGE_REPOSITORY}/proxy_server:{IMAGE_TAG}"

# The head pool: Google's "Create a GKE cluster with Pathways" page creates the CPU pool
# for the Pathways controller with PW_CPU_MACHINE_TYPE="n2-standard-64" (xpk's
# cluster create-pathways, whose README says "Pathways clusters need a CPU nodepool of
# n2-standard-64 or higher"; its machine filter asks at least 49 vCPUs and 233 GiB,
# src/xpk/core/pathways.py). The Cluster Toolkit variant of that page uses
# n4-standard-64 (Hyperdisk boot disks only; infra/catalog/boot_disks.py gives each series its type).
DEFAULT_HEAD_POOL = "pathways-head"
DEFAULT_HEAD_MACHINE = "n2-standard-64"
MIN_HEAD_VCPUS = 49
MIN_HEAD_MEMORY_GB = 233 * 1024**3 / 1e9  # xpk's 233 GiB, in Compute Engine's GB
_GCS_PATH = re.compile(r"^gs://[a-z0-9][-_.a-z0-9]{1,220}[a-z0-9](/[^\s]*)?\Z")
# store:NAME[/PREFIX]: a Cloud Storage store of the stack's storage section (resolve_scratch).
_STORE_PATH = re.compile(r"^store:(?P<name>[a-z]([-a-z0-9]*[a-z0-9])?)(?P<prefix>/[^\s]*)?\Z")


@record
class Pathways:
    head_pool: str  # the name of the CPU slice pool the head runs on
    scratch: str  # gs://BUCKET[/PREFIX]
    server_image: str = DEFAULT_SERVER_IMAGE
    proxy_image: str = DEFAULT_PROXY_IMAGE
    # The colocated Python sidecar a run adds to the workers (submit --pathways-colocated-
    # python): an image the project builds with its own Python packages (Google's "Run
    # colocated Python with Pathways"), so there is no default.
    colocated_python_image: str | None = None

    @property
    def scratch_bucket(self) -> str:
        return self.scratch.removeprefix("gs://").split("/", 1)[0]


def parse_pathways(r: Reader, value: Any, pools: Sequence[SlicePool],
                   zones: Sequence[str]) -> tuple[Pathways | None, SlicePool | None]:
    """The section and the head pool to add to the stack's slices (None, None when off)."""
    if value is None:
        return None, None
    raw = r.obj(value, "pathways", PATHWAYS_KEYS)
    if not r.get(raw, "enabled", "pathways", bool, default=True):
        return None, None
    before = len(r.problems)
    scratch = r.get(raw, "scratch", "pathways", str)
    if scratch is None:
        r.fail("pathways.scratch", "is required: a Cloud Storage location such as "
               "gs://BUCKET/pathways that the Pathways head and workers use for scratch data")
    elif not (_GCS_PATH.match(scratch) or _STORE_PATH.match(scratch)):
        r.fail("pathways.scratch", f"{show(scratch)} is not a Cloud Storage location "
               "(gs://BUCKET or gs://BUCKET/PREFIX, or store:NAME[/PREFIX] for a Cloud Storage "
               "store of the storage section)")
    images = r.obj(raw.get("images") or {}, "pathways.images", IMAGE_KEYS)
    server = _image(r, images, "server", DEFAULT_SERVER_IMAGE)
    proxy = _image(r, images, "proxy", DEFAULT_PROXY_IMAGE)
    colocated = (_image(r, images, "colocatedPython", "")
                 if images.get("colocatedPython") is not None else None)
    head = _head_pool(r, raw.get("headPool"), pools, zones)
    if not any(p.accelerator.kind == "tpu" and p.accelerator.multi_host for p in pools):
        r.fail("pathways.enabled", "Pathways runs its workers on multi-host TPU slices, and "
               "the stack declares no multi-host TPU slice pool")
    if head is None or scratch is None or len(r.problems) > before:
        return None, None
    return Pathways(head.name, scratch, server, proxy, colocated), head


def resolve_scratch(r: Reader, pathways: Pathways | None,
                    buckets: Mapping[str, str | None]) -> Pathways | None:
    """``store:NAME[/PREFIX]`` as the store's ``gs://`` location. ``buckets``: each store's
    bucket (None for stores that are not Cloud Storage)."""
    if pathways is None:
        return None
    m = _STORE_PATH.match(pathways.scratch)
    if m is None:
        return pathways
    name = m.group("name")
    if name not in buckets:
        r.fail("pathways.scratch", f"{show(pathways.scratch)}: no store {name!r} in the "
               f"storage section; its stores: {', '.join(sorted(buckets)) or 'none'}")
        return None
    bucket = buckets[name]
    if bucket is None:
        r.fail("pathways.scratch", f"{show(pathways.scratch)}: store {name!r} is not a Cloud "
               "Storage bucket (Pathways scratch data goes to Cloud Storage)")
        return None
    return replace(pathways, scratch=f"gs://{bucket}{m.group('prefix') or ''}")


def _image(r: Reader, raw: Any, key: str, default: str) -> str:
    path = f"pathways.images.{key}"
    image = str(r.get(raw, key, "pathways.images", str, default=default))
    problem = image_problem(image)
    if problem:
        r.fail(path, problem)
    elif pin_problem(image, IMAGE_TAG):  # the same rule as a run's own images
        r.fail(path, f"{show(image)} {pin_problem(image, IMAGE_TAG)}")
    return image


def _head_pool(r: Reader, value: Any, pools: Sequence[SlicePool],
               zones: Sequence[str]) -> SlicePool | None:
    path = "pathways.headPool"
    raw = r.obj(value or {}, path, HEAD_POOL_KEYS)
    before = len(r.problems)
    name = r.get(raw, "name", path, str, default=DEFAULT_HEAD_POOL)
    check_gke_name(r, f"{path}.name", name)
    if any(name in p.node_pool_names() or name == p.name for p in pools) or name == "system":
        r.fail(f"{path}.name", f"{show(name)} is already a node pool of the stack; give the "
               "head pool its own name")
    machine = r.get(raw, "machineType", path, str, default=DEFAULT_HEAD_MACHINE)
    accel = None
    try:
        accel = catalog.resolve(f"{machine}-1")
    except catalog.UnknownAccelerator:
        pass
    shape = catalog.vm_shape(machine)
    if accel is None or accel.kind != "cpu" or shape is None:
        r.fail(f"{path}.machineType", f"{show(machine)} is not a CPU machine type of a known "
               "series (such as n2-standard-64 or n2-highmem-64)")
    elif shape.vcpus < MIN_HEAD_VCPUS or shape.memory_gb < MIN_HEAD_MEMORY_GB:
        r.fail(f"{path}.machineType", f"{show(machine)} has {shape.vcpus} vCPUs and "
               f"{shape.memory_gb:g} GB; the Pathways head needs at least {MIN_HEAD_VCPUS} "
               f"vCPUs and {MIN_HEAD_MEMORY_GB:.0f} GB (such as {DEFAULT_HEAD_MACHINE})")
    max_nodes = r.get(raw, "maxNodes", path, int, default=1)
    min_nodes = r.get(raw, "minNodes", path, int, default=0)
    if not 1 <= max_nodes <= MAX_NODES_PER_POOL_ZONE:
        r.fail(f"{path}.maxNodes", f"{max_nodes} is outside 1-{MAX_NODES_PER_POOL_ZONE} (one "
               "head pod per node: the most Pathways workloads that run at once)")
    elif not 0 <= min_nodes <= max_nodes:
        r.fail(f"{path}.minNodes", f"{min_nodes} is outside 0-{max_nodes} (maxNodes)")
    disk = r.get(raw, "diskSizeGb", path, int, default=200)
    r.check(disk >= 10, f"{path}.diskSizeGb", f"{disk} is below GKE's 10 GB minimum")
    if accel is None or len(r.problems) > before:
        return None
    # Beside the workers: the zone of the first multi-host TPU pool.
    tpu = [p for p in pools if p.accelerator.kind == "tpu" and p.accelerator.multi_host]
    zone = tpu[0].zones[0] if tpu else zones[0]
    return SlicePool(
        name=name, accelerator=accel, count=max_nodes, capacity=Capacity("on-demand"),
        zones=(zone,), placement="none", min_count=min_nodes, disk_size_gb=disk,
        disk_type=boot_disks.default(accel.machine_type), gpu_driver_version="LATEST",
        labels={"accelstack-role": "pathways-head"})
