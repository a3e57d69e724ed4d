"""What the provider holds after importing a cluster or node pool, from the GKE API's answer.

GKE answers in its own field names (NodePool.config, maxPodsConstraint, accelerators with
acceleratorType); pulumi-gcp holds the same values under its names (nodeConfig,
maxPodsPerNode, guestAccelerators with type). This module maps the fields that decide
replacement and the ones the adoption reads, as the provider's flatten functions do
(google-beta/services/container/node_config.go flattenNodeConfig,
resource_container_node_pool.go flattenNodePool, at 93c65b2). Nothing else is mapped:
a field missing here is one the replacement check does not see, so the tests compare every
ForceNew path of the list with these keys.
"""

from __future__ import annotations

from typing import Any, Mapping


def _drop_empty(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def _sub(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def node_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """NodeConfig (GKE) as the provider's nodeConfig block."""
    accelerators = [{
        "type": a.get("acceleratorType"),
        "count": int(a.get("acceleratorCount") or 0),
        "gpuDriverInstallationConfig": {"gpuDriverVersion": _sub(a, "gpuDriverInstallationConfig")
                                        .get("gpuDriverVersion")}
        if a.get("gpuDriverInstallationConfig") else None,
        "gpuPartitionSize": a.get("gpuPartitionSize"),
    } for a in config.get("accelerators") or []]
    affinity = _sub(config, "reservationAffinity")
    shielded = _sub(config, "shieldedInstanceConfig")
    maintenance = _sub(config, "hostMaintenancePolicy")
    out = {
        "machineType": config.get("machineType"),
        "diskSizeGb": config.get("diskSizeGb"),
        "diskType": config.get("diskType"),
        "imageType": config.get("imageType"),
        "serviceAccount": config.get("serviceAccount"),
        "oauthScopes": list(config.get("oauthScopes") or []),
        "metadata": dict(config.get("metadata") or {}),
        "labels": dict(config.get("labels") or {}),
        "resourceLabels": dict(config.get("resourceLabels") or {}),
        "taints": [{"key": t.get("key"), "value": t.get("value"), "effect": t.get("effect")}
                   for t in config.get("taints") or []],
        "spot": config.get("spot"),
        "preemptible": config.get("preemptible"),
        "flexStart": config.get("flexStart"),
        "maxRunDuration": config.get("maxRunDuration"),
        "minCpuPlatform": config.get("minCpuPlatform"),
        "bootDiskKmsKey": config.get("bootDiskKmsKey"),
        "localSsdCount": config.get("localSsdCount"),
        "guestAccelerators": accelerators,
        "reservationAffinity": {
            "consumeReservationType": affinity.get("consumeReservationType"),
            "key": affinity.get("key"),
            "values": list(affinity.get("values") or []),
        } if affinity else None,
        # The provider sets the block from GKE's answer as it is: absent when GKE has none.
        "shieldedInstanceConfig": {
            "enableSecureBoot": bool(shielded.get("enableSecureBoot")),
            "enableIntegrityMonitoring": bool(shielded.get("enableIntegrityMonitoring")),
        } if shielded else None,
        "workloadMetadataConfig": {"mode": _sub(config, "workloadMetadataConfig").get("mode")},
        "gvnic": {"enabled": bool(_sub(config, "gvnic").get("enabled"))},
        "gcfsConfig": {"enabled": bool(_sub(config, "gcfsConfig").get("enabled"))},
        # v1beta1 only (the GKE API's v1 NodeConfig has no hostMaintenancePolicy); the
        # provider reads through v1beta1.
        "hostMaintenancePolicy": {"maintenanceInterval": maintenance.get("maintenanceInterval")}
        if maintenance else None,
        "ephemeralStorageLocalSsdConfig": {
            "localSsdCount": _sub(config, "ephemeralStorageLocalSsdConfig").get("localSsdCount"),
            "dataCacheCount": _sub(config, "ephemeralStorageLocalSsdConfig").get("dataCacheCount"),
        } if config.get("ephemeralStorageLocalSsdConfig") else None,
        "secondaryBootDisks": [{"diskImage": d.get("diskImage"), "mode": d.get("mode")}
                               for d in config.get("secondaryBootDisks") or []],
    }
    result: dict[str, Any] = _drop_empty(out)
    return result


def node_pool(pool: Mapping[str, Any], *, project: str, location: str,
              cluster: str) -> dict[str, Any]:
    """A NodePool (GKE) as the provider's state after ``pulumi import`` of
    PROJECT/LOCATION/CLUSTER/NAME: the importer takes project, location and cluster (the
    cluster's name) from that ID (resource_container_node_pool.go:1196 at 93c65b2), and
    Read never sets ``cluster``."""
    auto = _sub(pool, "autoscaling")
    placement = _sub(pool, "placementPolicy")
    network = _sub(pool, "networkConfig")
    out = {
        "name": pool.get("name"),
        "project": project,
        "location": location,
        "cluster": cluster,
        "initialNodeCount": pool.get("initialNodeCount"),
        "nodeLocations": list(pool.get("locations") or []),
        "maxPodsPerNode": int(_sub(pool, "maxPodsConstraint").get("maxPodsPerNode") or 0)
        or None,
        "nodeConfig": node_config(_sub(pool, "config")),
        "autoscaling": {
            "minNodeCount": auto.get("minNodeCount"),
            "maxNodeCount": auto.get("maxNodeCount"),
            "totalMinNodeCount": auto.get("totalMinNodeCount"),
            "totalMaxNodeCount": auto.get("totalMaxNodeCount"),
            "locationPolicy": auto.get("locationPolicy"),
        } if auto.get("enabled") else None,
        "management": {"autoRepair": bool(_sub(pool, "management").get("autoRepair")),
                       "autoUpgrade": bool(_sub(pool, "management").get("autoUpgrade"))},
        "placementPolicy": {"type": placement.get("type"),
                            "tpuTopology": placement.get("tpuTopology"),
                            "policyName": placement.get("policyName")} if placement else None,
        "queuedProvisioning": {"enabled": True}
        if _sub(pool, "queuedProvisioning").get("enabled") else None,
        "networkConfig": {
            "additionalNodeNetworkConfigs": [
                {"network": n.get("network"), "subnetwork": n.get("subnetwork")}
                for n in network.get("additionalNodeNetworkConfigs") or []],
            "podRange": network.get("podRange"),
            "podIpv4CidrBlock": network.get("podIpv4CidrBlock"),
            "acceleratorNetworkProfile": network.get("acceleratorNetworkProfile"),
        },
    }
    result: dict[str, Any] = _drop_empty(out)
    return result


def cluster(data: Mapping[str, Any], *, project: str) -> dict[str, Any]:
    """A Cluster (GKE) as the provider's state after ``pulumi import`` of
    projects/PROJECT/locations/LOCATION/clusters/NAME."""
    alloc = _sub(data, "ipAllocationPolicy")
    private = _sub(data, "privateClusterConfig")
    net = _sub(data, "networkConfig")
    out = {
        "name": data.get("name"),
        "project": project,
        "location": data.get("location"),
        "network": data.get("network"),
        "subnetwork": data.get("subnetwork"),
        "datapathProvider": net.get("datapathProvider"),
        "networkingMode": "VPC_NATIVE" if alloc.get("useIpAliases") else "ROUTES",
        "clusterIpv4Cidr": data.get("clusterIpv4Cidr"),
        "defaultMaxPodsPerNode": _sub(data, "defaultMaxPodsConstraint").get("maxPodsPerNode"),
        "enableTpu": data.get("enableTpu"),
        "enableAutopilot": _sub(data, "autopilot").get("enabled"),
        "enableKubernetesAlpha": data.get("enableKubernetesAlpha"),
        "description": data.get("description"),
        "ipAllocationPolicy": {
            "clusterSecondaryRangeName": alloc.get("clusterSecondaryRangeName"),
            "servicesSecondaryRangeName": alloc.get("servicesSecondaryRangeName"),
            "clusterIpv4CidrBlock": alloc.get("clusterIpv4CidrBlock"),
            "servicesIpv4CidrBlock": alloc.get("servicesIpv4CidrBlock"),
            "stackType": alloc.get("stackType"),
        } if alloc.get("useIpAliases") else None,
        "privateClusterConfig": {
            "enablePrivateNodes": private.get("enablePrivateNodes"),
            "enablePrivateEndpoint": private.get("enablePrivateEndpoint"),
            "masterIpv4CidrBlock": private.get("masterIpv4CidrBlock"),
        } if private else None,
        "nodeConfig": node_config(_sub(data, "nodeConfig")),
    }
    result: dict[str, Any] = _drop_empty(out)
    return result
