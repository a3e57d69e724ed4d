"""Node pools of the GKE API's answer as ``slices`` entries of our config language.

Each TPU pool becomes a slice of the catalog's type (machine type and TPU topology looked
up in infra/catalog), each GPU pool one of the catalog's GPU machines, each other pool a
CPU entry; multi-host TPU pools named NAME-0..NAME-N-1 with the same shape become one entry
of N slices, as the stack would name them (xpk names its pools CLUSTER-np-I,
AI-Hypercomputer/xpk src/xpk/core/nodepool.py). Capacity is read from the pool: queued
provisioning, flex-start, Spot, a specific reservation (with its block), else on-demand.
Pure.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.adopt.errors import AdoptError
from infra.catalog import tables as catalog
from infra.catalog.tables import Accelerator
from infra.config.slices import GPU_DRIVER_VERSIONS
from infra.specs.nodepool import SPOT_TAINT

_INDEXED = re.compile(r"^(?P<prefix>[a-z][-a-z0-9]*)-(?P<index>\d+)\Z")
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule",
            "NO_EXECUTE": "NoExecute"}
SKIP_HINT = "adopt the others with --skip-pool {name}, which leaves it as it is"


def _sub(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def accelerator(pool: Mapping[str, Any], where: str) -> Accelerator:
    """The catalog entry of a node pool's machines; AdoptError when there is none."""
    config = _sub(pool, "config")
    machine = str(config.get("machineType") or "")
    name = pool.get("name")
    topology = _sub(pool, "placementPolicy").get("tpuTopology")
    tpus = [a for a in catalog.all_accelerators() if a.kind == "tpu"
            and a.machine_type == machine]
    if tpus:
        found = [a for a in tpus if (a.topology == topology if topology else
                                     a.vms_per_slice == 1)]
        if not found and topology:
            raise AdoptError(f"{where}: node pool {name}: {machine} with TPU topology "
                             f"{topology} is not a slice type of the catalog (`submit "
                             f"accelerators` lists them); {SKIP_HINT.format(name=name)}")
        if found:
            return found[0]
    accels = config.get("accelerators") or []
    if accels:
        kind = accels[0].get("acceleratorType")
        gpus = [a for a in catalog.all_accelerators() if a.kind == "gpu"
                and a.machine_type == machine and a.gke_accelerator == kind]
        if not gpus:
            raise AdoptError(f"{where}: node pool {name}: {machine} with {kind} GPUs is not a "
                             "GPU machine of the catalog (`submit accelerators` lists them); "
                             f"{SKIP_HINT.format(name=name)}")
        return gpus[0]
    try:
        cpu = catalog.resolve(f"{machine}-1")
    except catalog.UnknownAccelerator:
        cpu = None
    if cpu is None or cpu.kind != "cpu":
        raise AdoptError(f"{where}: node pool {name}: machine type {machine or '(none)'} is "
                         "not a TPU, GPU or CPU machine the catalog knows; "
                         f"{SKIP_HINT.format(name=name)}")
    return cpu


def capacity(pool: Mapping[str, Any]) -> dict[str, Any]:
    config = _sub(pool, "config")
    if _sub(pool, "queuedProvisioning").get("enabled"):
        return {"mode": "queued"}
    if config.get("flexStart"):
        out: dict[str, Any] = {"mode": "flex-start"}
        if config.get("maxRunDuration"):
            out["maxRunDuration"] = config["maxRunDuration"]
        return out
    if config.get("spot"):
        return {"mode": "spot"}
    affinity = _sub(config, "reservationAffinity")
    if affinity.get("consumeReservationType") == "SPECIFIC_RESERVATION" and affinity.get(
            "values"):
        value = str(affinity["values"][0])
        reservation, _, block = value.partition("/reservationBlocks/")
        return {"mode": "reservation", "reservation": reservation,
                **({"block": block} if block else {})}
    return {"mode": "on-demand"}


def _counts(pool: Mapping[str, Any]) -> tuple[int, int]:
    """(most nodes, fewest nodes) of a single-host pool, over all its zones."""
    auto = _sub(pool, "autoscaling")
    zones = max(1, len(pool.get("locations") or []))
    if auto.get("enabled"):
        top = auto.get("totalMaxNodeCount") or (auto.get("maxNodeCount") or 0) * zones
        low = auto.get("totalMinNodeCount") or (auto.get("minNodeCount") or 0) * zones
        return int(top), int(low)
    fixed = int(pool.get("initialNodeCount") or 0) * zones
    return fixed, fixed


def entry(pool: Mapping[str, Any], accel: Accelerator, cluster_labels: Mapping[str, str],
          scopes: list[str]) -> dict[str, Any]:
    """One ``slices`` entry for ``pool`` alone (count 1 for a multi-host TPU slice)."""
    config = _sub(pool, "config")
    cap = capacity(pool)
    out: dict[str, Any] = {"name": pool["name"], "accelerator": accel.name}
    if accel.vms_per_slice > 1:
        out["count"] = 1
    else:
        top, low = _counts(pool)
        out["count"] = max(1, top)
        if cap["mode"] not in ("flex-start", "queued"):
            out["minCount"] = min(low, out["count"])
    out["capacity"] = cap
    out["zones"] = list(pool.get("locations") or [])
    if accel.vms_per_slice == 1:
        out["placement"] = "compact" if _sub(pool, "placementPolicy").get(
            "type") == "COMPACT" else "none"
    max_pods = _sub(pool, "maxPodsConstraint").get("maxPodsPerNode")
    if max_pods:
        out["maxPodsPerNode"] = int(max_pods)
    if config.get("diskSizeGb"):
        out["diskSizeGb"] = int(config["diskSizeGb"])
    if config.get("diskType"):
        out["diskType"] = config["diskType"]
    accels = config.get("accelerators") or []
    driver = _sub(accels[0], "gpuDriverInstallationConfig").get("gpuDriverVersion") \
        if accels else None
    if driver in GPU_DRIVER_VERSIONS:
        out["gpuDriverVersion"] = driver
    boot = [d for d in config.get("secondaryBootDisks") or []
            if d.get("mode") == "CONTAINER_IMAGE_CACHE"]
    if boot:
        out["secondaryBootDisk"] = boot[0].get("diskImage")
    gcp_labels = {k: v for k, v in (config.get("resourceLabels") or {}).items()
                  if cluster_labels.get(k) != v}
    if gcp_labels:
        out["gcpLabels"] = gcp_labels
    ours = {(SPOT_TAINT.key, SPOT_TAINT.value)} if cap["mode"] == "spot" else set()
    taints = [{"key": t.get("key"), "value": t.get("value", ""),
               "effect": _EFFECTS.get(str(t.get("effect")), str(t.get("effect")))}
              for t in config.get("taints") or [] if (t.get("key"), t.get("value")) not in ours]
    if taints:
        out["taints"] = taints
    interval = _sub(config, "hostMaintenancePolicy").get("maintenanceInterval")
    if interval and accel.kind != "cpu":
        out["hostMaintenanceInterval"] = interval
    if not _sub(config, "gvnic").get("enabled"):
        out["gvnic"] = False
    policy = _sub(pool, "autoscaling").get("locationPolicy")
    if policy and accel.vms_per_slice == 1:
        out["locationPolicy"] = policy
    nets = _sub(pool, "networkConfig").get("additionalNodeNetworkConfigs") or []
    if nets:
        out["extraNetworks"] = [{"network": n.get("network"), "subnetwork": n.get("subnetwork")}
                                for n in nets]
    own = list(config.get("oauthScopes") or [])
    if own and sorted(own) != sorted(scopes):
        out["oauthScopes"] = own
    return out


def group(entries: list[dict[str, Any]], multi_host: dict[str, bool]) -> list[dict[str, Any]]:
    """Multi-host TPU entries named PREFIX-0..PREFIX-N-1 with one shape as one entry of N
    slices named PREFIX; every other pool keeps its name through nodePoolNames when the
    stack would name it otherwise."""
    by_shape: dict[str, list[dict[str, Any]]] = {}
    out: list[dict[str, Any]] = []
    for e in entries:
        m = _INDEXED.match(e["name"])
        if multi_host[e["name"]] and m:
            shape = repr(({k: v for k, v in e.items() if k != "name"}, m.group("prefix")))
            by_shape.setdefault(shape, []).append(e)
        else:
            out.append(e)
    for members in by_shape.values():
        prefix = _INDEXED.match(members[0]["name"]).group("prefix")  # type: ignore[union-attr]
        indices = sorted(int(_INDEXED.match(e["name"]).group("index"))  # type: ignore[union-attr]
                         for e in members)
        if indices == list(range(len(members))):
            out.append({"name": prefix, **{k: v for k, v in members[0].items() if k != "name"},
                        "count": len(members)})
        else:
            out.extend(members)
    for e in out:
        if multi_host[e["name"]] if e["name"] in multi_host else False:
            e["nodePoolNames"] = [e["name"]]  # one slice whose pool keeps its own name
    return sorted(out, key=lambda e: str(e["name"]))


def system_pool(pool: Mapping[str, Any]) -> dict[str, Any]:
    """``systemPool`` from a CPU pool named system (nodes per zone, as the key counts)."""
    auto = _sub(pool, "autoscaling")
    config = _sub(pool, "config")
    zones = max(1, len(pool.get("locations") or []))
    fixed = int(pool.get("initialNodeCount") or 1)
    out: dict[str, Any] = {
        "machineType": config.get("machineType"),
        "minNodes": int(auto.get("minNodeCount") or (auto.get("totalMinNodeCount") or 0)
                        // zones or 1) if auto.get("enabled") else fixed,
        "maxNodes": int(auto.get("maxNodeCount") or (auto.get("totalMaxNodeCount") or 0)
                        // zones or 1) if auto.get("enabled") else fixed,
    }
    if config.get("diskSizeGb"):
        out["diskSizeGb"] = int(config["diskSizeGb"])
    max_pods = _sub(pool, "maxPodsConstraint").get("maxPodsPerNode")
    if max_pods:
        out["maxPodsPerNode"] = int(max_pods)
    return out
