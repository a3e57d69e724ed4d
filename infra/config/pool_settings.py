"""Per-pool settings that clusters made by xpk, gcloud or Cluster Toolkit commonly carry,
so that an adopted pool can be declared as it is (docs/adopt.md), and any new pool can ask
for them too: GCP labels, node taints, the host maintenance interval, gVNIC, the
autoscaling location policy, extra node networks, OAuth scopes and explicit node pool names.

Allowed values come from the GKE API: NodePoolAutoscaling.locationPolicy (BALANCED, ANY)
and NodeTaint.effect in the v1 discovery document
(../shared/reference/upstream/gke-container-v1-discovery/container.v1.json);
HostMaintenancePolicy.maintenanceInterval (AS_NEEDED, PERIODIC) in v1beta1 only
(https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1beta1/HostMaintenancePolicy;
gcloud's --host-maintenance-interval takes the same two). Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.config.errors import one_of, show
from infra.config.fields import GKE_NAME, check_gke_name, parse_labels
from infra.config.reader import Reader
from infra.record import field, record

KEYS = ("gcpLabels", "taints", "hostMaintenanceInterval", "gvnic", "locationPolicy",
        "extraNetworks", "oauthScopes", "nodePoolNames")
MAINTENANCE_INTERVALS = ("AS_NEEDED", "PERIODIC")
LOCATION_POLICIES = ("BALANCED", "ANY")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_SCOPE = re.compile(r"^https://www\.googleapis\.com/auth/[a-z][-a-z0-9._]*\Z")
_TAINT_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*"
                        r"[A-Za-z0-9])?\Z")
_TAINT_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?\Z")


@record
class NodeTaint:
    key: str
    value: str
    effect: str  # Kubernetes spelling: NoSchedule, PreferNoSchedule, NoExecute


@record
class PoolSettings:
    gcp_labels: Mapping[str, str] = field(default_factory=dict)  # GCP labels on the VMs
    taints: tuple[NodeTaint, ...] = ()
    host_maintenance_interval: str | None = None  # None: GKE's default
    gvnic: bool = True
    location_policy: str | None = None  # None: the stack's rule (infra/specs/nodepool.py)
    extra_networks: tuple[tuple[str, str], ...] = ()  # (network, subnetwork) per extra NIC
    oauth_scopes: tuple[str, ...] | None = None  # None: the stack's node scopes
    node_pool_names: tuple[str, ...] = ()  # () : NAME, or NAME-0..N-1 per multi-host slice


def scopes(r: Reader, value: Any, path: str) -> tuple[str, ...] | None:
    """A list of OAuth scope URLs (GKE stores full URLs; gcloud's aliases are expanded)."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        r.fail(path, f"{show(value)} is not a non-empty list of OAuth scope URLs such as "
               "https://www.googleapis.com/auth/cloud-platform")
        return None
    for i, item in enumerate(value):
        if not isinstance(item, str) or not _SCOPE.match(item):
            r.fail(f"{path}[{i}]", f"{show(item)} is not an OAuth scope URL "
                   "(https://www.googleapis.com/auth/NAME)")
            return None
    return tuple(value)


def parse(r: Reader, raw: Mapping[str, Any], path: str, kind: str, count: int,
          multi_host: bool) -> PoolSettings:
    """The settings of one ``slices[i]`` entry (``raw`` already checked for unknown keys);
    ``kind`` is the accelerator's (tpu, gpu, cpu)."""
    labels = parse_labels(r, raw.get("gcpLabels"), f"{path}.gcpLabels")
    taints = _taints(r, raw.get("taints"), f"{path}.taints")
    interval = r.get(raw, "hostMaintenanceInterval", path, str)
    if interval is not None:
        if interval not in MAINTENANCE_INTERVALS:
            r.fail(f"{path}.hostMaintenanceInterval", f"{show(interval)} is not a host "
                   f"maintenance interval; allowed: {one_of(MAINTENANCE_INTERVALS)}")
        elif kind == "cpu":
            r.fail(f"{path}.hostMaintenanceInterval", "applies to TPU and GPU pools only "
                   "(xpk's --host-maintenance-interval; GKE HostMaintenancePolicy)")
        elif isinstance(raw.get("capacity"), Mapping) and "hostMaintenanceInterval" in \
                raw["capacity"]:
            r.fail(f"{path}.hostMaintenanceInterval", "is also set as "
                   "capacity.hostMaintenanceInterval; set it once")
    gvnic = r.get(raw, "gvnic", path, bool, default=True)
    policy = r.get(raw, "locationPolicy", path, str)
    if policy is not None and policy not in LOCATION_POLICIES:
        r.fail(f"{path}.locationPolicy", f"{show(policy)} is not an autoscaling location "
               f"policy; allowed: {one_of(LOCATION_POLICIES)}")
    elif policy is not None and kind == "tpu" and multi_host:
        r.fail(f"{path}.locationPolicy", "a multi-host TPU slice pool does not autoscale by "
               "location (its nodes are one slice in one zone)")
    networks = _networks(r, raw.get("extraNetworks"), f"{path}.extraNetworks")
    oauth = scopes(r, raw.get("oauthScopes"), f"{path}.oauthScopes")
    names = _names(r, raw.get("nodePoolNames"), f"{path}.nodePoolNames",
                   count if multi_host else 1)
    return PoolSettings(labels, tuple(taints), interval, bool(gvnic), policy,
                        tuple(networks), oauth, tuple(names))


def _taints(r: Reader, value: Any, path: str) -> list[NodeTaint]:
    if value is None:
        return []
    if not isinstance(value, list):
        r.fail(path, f"{show(value)} is not a list of {{key, value, effect}}")
        return []
    out = []
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        raw = r.obj(item, where, ("key", "value", "effect"))
        key = r.get(raw, "key", where, str, required=True)
        val = r.get(raw, "value", where, str, default="")
        effect = r.get(raw, "effect", where, str, default="NoSchedule")
        if key is not None and not _TAINT_KEY.match(key):
            r.fail(f"{where}.key", f"{show(key)} is not a Kubernetes taint key")
        elif not _TAINT_VALUE.match(val):
            r.fail(f"{where}.value", f"{show(val)} is not a Kubernetes label value")
        elif effect not in TAINT_EFFECTS:
            r.fail(f"{where}.effect", f"{show(effect)} is not a taint effect; allowed: "
                   f"{one_of(TAINT_EFFECTS)}")
        elif key is not None:
            out.append(NodeTaint(key, val, effect))
    return out


def _networks(r: Reader, value: Any, path: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        r.fail(path, f"{show(value)} is not a list of {{network, subnetwork}}")
        return []
    out = []
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        raw = r.obj(item, where, ("network", "subnetwork"))
        net = r.get(raw, "network", where, str, required=True)
        sub = r.get(raw, "subnetwork", where, str, required=True)
        for key, val in (("network", net), ("subnetwork", sub)):
            if val is not None and not GKE_NAME.match(val):
                r.fail(f"{where}.{key}", f"{show(val)} is not a VPC resource name")
        if net and sub:
            out.append((net, sub))
    return out


def _names(r: Reader, value: Any, path: str, expected: int) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) != expected:
        r.fail(path, f"{show(value)} is not a list of {expected} node pool name(s), one per "
               "node pool the entry makes")
        return []
    for i, name in enumerate(value):
        if not isinstance(name, str):
            r.fail(f"{path}[{i}]", f"{show(name)} is not a node pool name")
            return []
        check_gke_name(r, f"{path}[{i}]", name)
    if len(set(value)) != len(value):
        r.fail(path, "names a node pool twice")
    return list(value)
