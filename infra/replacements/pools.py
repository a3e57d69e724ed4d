"""What an accelerator node pool holds, from its own inputs: the accelerator (the catalog's
entry for its machine type and TPU topology), its slices, chips and hosts, its capacity mode
and what it costs per hour (infra.cost's rates and shipped price table).

Read from a node pool's inputs rather than from the stack config, so that the offline
preview and the real CLI's ``pulumi preview --json`` (whose old state holds the same
inputs) describe a pool the same way.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from infra.catalog.labels import TPU_ACCELERATOR_LABEL, TPU_TOPOLOGY_LABEL
from infra.catalog.tables import Accelerator, all_accelerators
from infra.cost import price, table as prices
from infra.record import record

SLICE_POOL_LABEL = "accelstack.dev/slice-pool"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"  # GKE's label on every node of a pool
SPOT_LABEL = "cloud.google.com/gke-spot"


@record
class PoolFacts:
    """One accelerator node pool as it stands (the side that a change destroys)."""

    name: str  # the node pool's name
    slice_pool: str  # the stack's slice pool (label accelstack.dev/slice-pool), or the name
    accelerator: str  # catalog name, e.g. v5litepod-16
    kind: str  # "tpu" or "gpu"
    slices: int
    chips_per_slice: int
    hosts: int  # VMs
    mode: str  # spot, flex-start, queued, reservation, on-demand
    per_hour: float | None  # None: not in the price table
    price_basis: str
    node_labels: tuple[tuple[str, str], ...]  # labels every node of the pool carries

    @property
    def chips(self) -> int:
        return self.slices * self.chips_per_slice

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "slicePool": self.slice_pool,
                "accelerator": self.accelerator, "kind": self.kind, "slices": self.slices,
                "chipsPerSlice": self.chips_per_slice, "chips": self.chips,
                "hosts": self.hosts, "mode": self.mode,
                "perHour": None if self.per_hour is None else round(self.per_hour, 4),
                "priceBasis": self.price_basis, "nodeLabels": dict(self.node_labels)}


@lru_cache(maxsize=1)
def _by_shape() -> dict[tuple[str, str | None], Accelerator]:
    out: dict[tuple[str, str | None], Accelerator] = {}
    for accel in all_accelerators():
        if accel.kind in ("tpu", "gpu"):
            out.setdefault((accel.machine_type, accel.topology if accel.kind == "tpu" else None),
                           accel)
    return out


def accelerator(inputs: Mapping[str, Any]) -> Accelerator | None:
    """The catalog entry of a node pool's inputs; None for a pool of plain CPU VMs."""
    node = inputs.get("nodeConfig") or {}
    machine = str(node.get("machineType") or "")
    topology = (inputs.get("placementPolicy") or {}).get("tpuTopology")
    found = _by_shape().get((machine, topology)) or _by_shape().get((machine, None))
    if found is None and topology is None:
        # A single-host TPU pool names no topology: the entry with one VM per slice.
        found = next((a for (m, _), a in _by_shape().items()
                      if m == machine and a.kind == "tpu" and a.vms_per_slice == 1), None)
    return found


def mode(inputs: Mapping[str, Any]) -> str:
    """The capacity mode of a node pool's inputs, as infra.cost prices it."""
    node = inputs.get("nodeConfig") or {}
    if (inputs.get("queuedProvisioning") or {}).get("enabled"):
        return "queued"
    if node.get("flexStart"):
        return "flex-start"
    if node.get("spot") or node.get("preemptible"):
        return "spot"
    affinity = (node.get("reservationAffinity") or {}).get("consumeReservationType")
    if affinity in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
        return "reservation"
    return "on-demand"


def _region(location: str) -> str | None:
    # A region is two dash-separated words (us-west4), a zone three (us-west4-a).
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) >= 2 else None


def _nodes(inputs: Mapping[str, Any]) -> int:
    """Nodes the pool holds at its largest: its node count, else its autoscaling maximum
    (per zone for maxNodeCount, GKE's rule), else its initial count."""
    if inputs.get("nodeCount") is not None:
        per_zone = int(inputs["nodeCount"])
    else:
        scale = inputs.get("autoscaling") or {}
        if scale.get("totalMaxNodeCount") is not None:
            return int(scale["totalMaxNodeCount"])
        per_zone = int(scale.get("maxNodeCount") or inputs.get("initialNodeCount") or 0)
    zones = len(inputs.get("nodeLocations") or []) or 1
    return per_zone * zones


def facts(name: str, inputs: Mapping[str, Any],
          table: prices.Table | None = None) -> PoolFacts | None:
    """What the node pool ``name`` with these inputs holds; None when it holds no
    accelerator (a CPU pool, such as the system pool)."""
    accel = accelerator(inputs)
    if accel is None:
        return None
    hosts = _nodes(inputs)
    slices = max(1, hosts // accel.vms_per_slice) if hosts else 0
    capacity = mode(inputs)
    rate = price.rate(table or prices.shipped(), accel, capacity,
                      _region(str(inputs.get("location") or "")))
    units = price.units(accel, slices)
    per_hour = rate.price.usd * units if rate.price is not None else None
    basis = (f"{units} x {price.usd(rate.price.usd)}/{rate.unit} ({rate.item}, "
             f"{rate.price.cite()})" if rate.price is not None
             else rate.missing(_region(str(inputs.get("location") or ""))))
    node = inputs.get("nodeConfig") or {}
    labels = dict(node.get("labels") or {})
    labels[NODE_POOL_LABEL] = name
    if accel.kind == "tpu":
        labels.update({TPU_ACCELERATOR_LABEL: str(accel.gke_accelerator),
                       TPU_TOPOLOGY_LABEL: str(accel.topology)})
    else:
        labels.update(accel.node_selector)
    if capacity == "spot":
        labels[SPOT_LABEL] = "true"
    return PoolFacts(name, str(labels.get(SLICE_POOL_LABEL) or name), accel.name, accel.kind,
                     slices, accel.chips, hosts, capacity, per_hour, basis,
                     tuple(sorted(labels.items())))
