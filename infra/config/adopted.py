"""Stack keys for a cluster that was made elsewhere and adopted (docs/adopt.md).

``adopt``: the import ID of the cluster and of each node pool the stack declares, and the
fields kept as they are (``keep``: resource -> pulumi path -> the live value when adopted;
the program puts them in ``ignore_changes``). ``nodeServiceAccount``: an existing node
service account and its OAuth scopes instead of the one the stack makes. ``defaultPool``:
the cluster's default node pool, kept as it is (never declared, changed or removed).
``autoscalingProfile``: the cluster autoscaler's profile.

Import ID formats are the ones pulumi-gcp 10.2.0 documents (the installed SDK's
``gcp.container.Cluster`` and ``gcp.container.NodePool`` docstrings, "## Import"):
``projects/{{project_id}}/locations/{{location}}/clusters/{{cluster_id}}`` for a cluster and
``{{project_id}}/{{location}}/{{cluster_id}}/{{pool_id}}`` for a node pool; the provider's
importers parse both (terraform-provider-google-beta 93c65b2,
google-beta/services/container/resource_container_cluster.go:8968,
resource_container_node_pool.go:1196). Autoscaling profiles: the GKE API's
ClusterAutoscaling.autoscalingProfile (v1 discovery document). Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Collection, Mapping

from infra.config.errors import one_of, show
from infra.config.fields import check_gke_name
from infra.config.pool_settings import scopes
from infra.config.reader import Reader
from infra.record import field, record

KEYS = ("adopt", "nodeServiceAccount", "defaultPool", "autoscalingProfile")
ADOPT_KEYS = ("cluster", "nodePools", "keep")
AUTOSCALING_PROFILES = ("BALANCED", "OPTIMIZE_UTILIZATION")
CLUSTER = "cluster"  # the key of the cluster in ``adopt.keep``
# Kept on every adopted node pool: GKE's NodePool.initialNodeCount is the count the pool was
# created with, and the provider marks it ForceNew (resource_container_node_pool.go:480 at
# 93c65b2); the stack's own value (its autoscaling floor) is another number, and a slice
# is not worth replacing for a creation-time value.
POOL_KEPT = ("initialNodeCount",)
# What the cluster component ignores on every stack (infra/components/cluster.py).
CLUSTER_KEPT = ("nodeConfig", "initialNodeCount")
_EMAIL = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z][-a-z0-9.]*\.gserviceaccount\.com\Z")
_PATH = re.compile(r"^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*\Z")


@record
class NodeServiceAccount:
    email: str  # an email, or "default": the Compute Engine default service account
    oauth_scopes: tuple[str, ...]


@record
class AdoptSettings:
    cluster_import: str | None = None  # projects/P/locations/L/clusters/C
    node_pool_imports: Mapping[str, str] = field(default_factory=dict)  # node pool -> ID
    keep: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    node_service_account: NodeServiceAccount | None = None
    default_pool: str | None = None  # the default pool's name, kept as it is
    autoscaling_profile: str | None = None
    # An in-cluster stack (infra/config/in_cluster.py): the node pool the controllers run
    # on, selected by GKE's cloud.google.com/gke-nodepool label; None: the stack's system pool.
    controller_pool: str | None = None

    @property
    def importing(self) -> bool:
        return self.cluster_import is not None

    def kept(self, resource: str) -> list[str]:
        """The pulumi paths kept as they are on ``resource`` (CLUSTER or a node pool)."""
        return list(self.keep.get(resource, {}))


def cluster_id(project: str, location: str, name: str) -> str:
    return f"projects/{project}/locations/{location}/clusters/{name}"


def node_pool_id(project: str, location: str, cluster: str, pool: str) -> str:
    return f"{project}/{location}/{cluster}/{pool}"


def parse(r: Reader, top: Mapping[str, Any], *, project: str | None, location: str | None,
          cluster_name: str | None, node_pools: Collection[str] | None) -> AdoptSettings:
    """The adoption keys of ``top``; ``node_pools``: the node pools the stack declares (None
    when a slice entry did not parse: its problem is reported once, there)."""
    known = node_pools is not None
    node_pools = node_pools or ()
    account = _account(r, top.get("nodeServiceAccount"))
    default_pool = r.get(top, "defaultPool", "", str)
    if default_pool is not None:
        check_gke_name(r, "defaultPool", default_pool)
        if default_pool in node_pools:
            r.fail("defaultPool", f"{show(default_pool)} is also a node pool the stack "
                   "declares; a kept default pool is not declared")
    profile = r.get(top, "autoscalingProfile", "", str)
    if profile is not None and profile not in AUTOSCALING_PROFILES:
        r.fail("autoscalingProfile", f"{show(profile)} is not an autoscaling profile; "
               f"allowed: {one_of(AUTOSCALING_PROFILES)}")
        profile = None
    raw = r.obj(top.get("adopt"), "adopt", ADOPT_KEYS)
    if not raw:
        return AdoptSettings(node_service_account=account, default_pool=default_pool,
                             autoscaling_profile=profile)
    want = cluster_id(project or "PROJECT", location or "REGION", cluster_name or "CLUSTER")
    want_pool = node_pool_id(project or "PROJECT", location or "REGION",
                             cluster_name or "CLUSTER", "{}")
    cluster = r.get(raw, "cluster", "adopt", str, required=True)
    if cluster is not None and cluster != want:
        r.fail("adopt.cluster", f"{show(cluster)} is not this stack's cluster; the import ID "
               f"of project, region and clusterName is {want}")
    pools: dict[str, str] = {}
    for name, pid in (r.get(raw, "nodePools", "adopt", dict, default={}) or {}).items():
        where = f"adopt.nodePools.{name}"
        if known and name not in node_pools:
            r.fail(where, f"{show(name)} is not a node pool the stack declares"
                   f"{'; declared: ' + one_of(sorted(node_pools)) if node_pools else ''}")
        elif pid != want_pool.format(name):
            r.fail(where, f"{show(pid)} is not the import ID of node pool {name} of this "
                   f"stack's cluster ({want_pool.format(name)})")
        else:
            pools[str(name)] = pid
    keep: dict[str, dict[str, Any]] = {}
    for resource, fields in (r.get(raw, "keep", "adopt", dict, default={}) or {}).items():
        where = f"adopt.keep.{resource}"
        if resource != CLUSTER and resource not in pools and (
                known or resource not in (raw.get("nodePools") or {})):
            r.fail(where, f"{show(resource)} is neither {CLUSTER} nor an adopted node pool "
                   "(adopt.nodePools)")
            continue
        if not isinstance(fields, Mapping):
            r.fail(where, f"{show(fields)} is not a mapping of field paths to live values")
            continue
        for path in fields:
            if not isinstance(path, str) or not _PATH.match(path):
                r.fail(f"{where}.{path}", "is not a field path in pulumi's names such as "
                       "nodeConfig.shieldedInstanceConfig")
        keep[str(resource)] = dict(fields)
    return AdoptSettings(cluster, pools, keep, account, default_pool, profile)


def _account(r: Reader, value: Any) -> NodeServiceAccount | None:
    if value is None:
        return None
    path = "nodeServiceAccount"
    raw = r.obj(value, path, ("email", "oauthScopes"))
    email = r.get(raw, "email", path, str, required=True)
    if email is not None and email != "default" and not _EMAIL.match(email):
        r.fail(f"{path}.email", f"{show(email)} is not a service account email "
               "(NAME@PROJECT.iam.gserviceaccount.com) or 'default' (the Compute Engine "
               "default service account)")
    oauth = scopes(r, raw.get("oauthScopes"), f"{path}.oauthScopes")
    if email is None:
        return None
    return NodeServiceAccount(email, oauth or ("https://www.googleapis.com/auth/cloud-platform",))
