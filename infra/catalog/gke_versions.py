"""GKE versions: the documented minimum versions of features the stack uses, the release
channels' default versions, and the one comparison every check uses.

A stack either pins ``gkeVersion`` or follows a release channel. A floor is checked against
the version the cluster's nodes will run: the pinned one, else the channel's default for
cluster creation (a stack with neither is on the Regular channel: infra/config/cluster.py). At submit time the
version the nodes report comes first (submit/cluster/kube.py reads it).

Where the channel defaults come from and how they are kept fresh: ``CHANNEL_DEFAULTS`` is
the "Default patch version for cluster creation" row of the "Current versions" table of the
GKE release notes (https://cloud.google.com/kubernetes-engine/docs/release-notes), as read on
``CHANNEL_DEFAULTS_AS_OF``; `gcloud container get-server-config` prints the same per region
(``channels[].defaultVersion``). Defaults only move forward, so a stale table can refuse a
feature a newer default would allow (the safe side), never the reverse; refresh the table
from that row when a check refuses a stack on a channel (docs/fresh-project.md).
Pure: no pulumi.
"""

from __future__ import annotations

import re

from infra.record import record



RELEASE_NOTES = "https://cloud.google.com/kubernetes-engine/docs/release-notes"
CHANNEL_DEFAULTS_AS_OF = "2026-11-25"
CHANNEL_DEFAULTS = {
    "RAPID": "1.36.4-gke.1082000",
    "REGULAR": "1.35.7-gke.1222000",
    "STABLE": "1.35.6-gke.1250000",
    "EXTENDED": "1.35.7-gke.1222000",
}
DEFAULT_CHANNEL = "REGULAR"


@record
class GkeVersion:
    """The version a check compares against, and where it comes from (for messages)."""

    text: str
    source: str  # "gkeVersion", "the REGULAR channel's default version (...)", ...

    def said(self) -> str:
        return f"{self.source} is {self.text}"


def version_tuple(text: str) -> tuple[int, ...]:
    """``1.33.5-gke.1080000`` (or a node's ``v1.33.5-gke.1080000``) as (1, 33, 5, 1080000);
    missing parts are 0."""
    nums = [int(x) for x in re.findall(r"\d+", text)]
    return tuple((nums + [0] * 4)[:4])


def shown(least: tuple[int, ...]) -> str:
    """A version floor kept as numbers, (1, 33, 2, 4655000), as GKE writes it."""
    return "{}.{}.{}-gke.{}".format(*least)


def below(version: str, floor: str) -> bool:
    """Whether ``version`` is older than ``floor``. A minor-only version (``1.33``) may
    still get any patch of its minor, so it is below only when its minor is."""
    v, f = version_tuple(version), version_tuple(floor)
    if len(re.findall(r"\d+", version)) <= 2:
        return v[:2] < f[:2]
    return v < f


def effective(release_channel: str | None, gke_version: str | None,
              defaults: dict[str, str] | None = None) -> GkeVersion:
    """The version the stack's nodes run at creation: the pinned one, else the channel's
    default (``defaults``: CHANNEL_DEFAULTS unless a test gives its own)."""
    if gke_version:
        return GkeVersion(gke_version, "gkeVersion")
    table = CHANNEL_DEFAULTS if defaults is None else defaults
    channel = release_channel or DEFAULT_CHANNEL
    return GkeVersion(table[channel], f"the {channel} channel's default version "
                      f"(GKE release notes, {CHANNEL_DEFAULTS_AS_OF})")


def node_version(kubelet_version: str) -> GkeVersion:
    """A version a node reports (``status.nodeInfo.kubeletVersion``)."""
    return GkeVersion(kubelet_version.lstrip("v"), "the nodes' version")


# Floors read by both the stack config and the submitter (the others live beside the rule
# that checks them: infra/config/slices.py, infra/config/gpu.py).
# Lustre instances are created without gke-support-enabled, so nodes must be new enough to
# use Lustre's own port: "no longer required as of GKE node version 1.33.2-gke.4655000"
# (GKE API LustreCsiDriverConfig.enable_legacy_lustre_port).
LUSTRE = "1.33.2-gke.4655000"
# Arm nodes mount Managed Lustre from 1.34.1-gke.2541000 (GKE concepts/managed-lustre,
# Limitations: "for the ARM architecture ... 1.34.1-gke.2541000 or later").
LUSTRE_ARM = "1.34.1-gke.2541000"
# Pods on the hosts' network authenticate the GCS FUSE sidecar with the pod's own service
# account (volume attribute hostNetworkPodKSA) from 1.33.3-gke.1226000 on Standard clusters
# (GoogleCloudPlatform/gcs-fuse-csi-driver docs/releases.md, "Host networking support").
GCSFUSE_HOST_NETWORK = "1.33.3-gke.1226000"
