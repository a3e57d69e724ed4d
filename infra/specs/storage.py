"""Stores, job identities and their grants, as data: what ``infra.components.storage`` declares.

Jobs run as one Kubernetes service account per workload namespace and reach Google Cloud
through Workload Identity Federation for GKE: IAM grants name the account directly by its
principal, so there are no keys and no Google service accounts to manage. Buckets get
bucket-level grants (read-only or read-write as the config says). Filestore, Parallelstore
and Managed Lustre live on the VPC through private services access and reach pods as
PersistentVolumes bound one claim per namespace that may use them; their access levels are
enforced by the claims (ReadOnlyMany or ReadWriteMany) and read-only mounts, not by IAM
(an NFS or Lustre mount is not an IAM-checked call).
Must not import pulumi: values only the cloud knows (a project number, an instance's
address) are passed in by the component.
"""

from __future__ import annotations

from typing import Any

from infra.config.stack import StackConfig, Store
from infra.record import record

MANAGED_BY = {"app.kubernetes.io/managed-by": "accelstack"}
# Workload Identity Federation for GKE roles on a bucket, as the GCS FUSE CSI driver
# documents them: "roles/storage.objectViewer" to read, "roles/storage.objectUser" to read
# and write (GoogleCloudPlatform/gcs-fuse-csi-driver docs/authentication.md; GKE
# cloud-storage-fuse-csi-driver-setup#authentication). objectUser also covers the folder
# operations of buckets with a hierarchical namespace.
BUCKET_ROLES = {"read-only": "roles/storage.objectViewer",
                "read-write": "roles/storage.objectUser"}
CSI_DRIVERS = {"filestore": "filestore.csi.storage.gke.io",
               "parallelstore": "parallelstore.csi.storage.gke.io",
               "lustre": "lustre.csi.storage.gke.io"}
# The cluster add-ons (pulumi-gcp ClusterAddonsConfig fields) that run each CSI driver.
CSI_ADDONS = {"filestore": "gcp_filestore_csi_driver_config",
              "parallelstore": "parallelstore_csi_driver_config",
              "lustre": "lustre_csi_driver_config"}
# APIs per kind: storage for buckets; file, parallelstore and lustre for the instances. The
# GKE guides for EXISTING instances list the product's API under "Before you begin" as well
# ("Enable the Parallelstore API and the Google Kubernetes Engine API", GKE
# parallelstore-csi-existing-instance; likewise the Filestore and Managed Lustre guides), so
# a referenced store enables it too (it lives in the stack's project: its volume handle names
# that project). servicenetworking only where the stack creates the private services access
# connection its instances use (gcp.servicenetworking.Connection).
SERVICES = {"gcs": ("storage.googleapis.com",),
            "filestore": ("file.googleapis.com",),
            "parallelstore": ("parallelstore.googleapis.com",),
            "lustre": ("lustre.googleapis.com",)}
# Managed Lustre's LNet port. GKE nodes from 1.33.2-gke.4655000 no longer clash with the
# metadata server on it, so instances are created without gke-support-enabled (which moves
# them to 6988) and the CSI driver without the legacy port (LustreCsiDriverConfig
# enable_legacy_lustre_port, GKE API reference). The GKE guide has a firewall rule let TCP
# traffic in from the private services range
# (kubernetes-engine/docs/how-to/persistent-volumes/lustre-csi-driver-new-volume).
LUSTRE_PORT = 988
PSA_SERVICE = "servicenetworking.googleapis.com"
# The Parallelstore CSI driver reference's PersistentVolume carries this annotation naming
# the driver (https://docs.cloud.google.com/parallelstore/docs/csi-driver-reference).
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
PARALLELSTORE_MOUNT_LOCALITY = "pod"


def principal(project_number: str, project: str, namespace: str, ksa: str) -> str:
    """A Kubernetes service account as an IAM principal (Workload Identity Federation for
    GKE: https://cloud.google.com/kubernetes-engine/docs/concepts/workload-identity)."""
    return (f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
            f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{namespace}/sa/{ksa}")


def namespaces(cfg: StackConfig) -> list[str]:
    return [cfg.queues.namespace] + [t.namespace for t in cfg.queues.teams]


def services(cfg: StackConfig) -> list[str]:
    out: list[str] = []
    for store in cfg.storage.stores:
        for s in SERVICES[store.kind]:
            if s not in out:
                out.append(s)
    if cfg.storage.needs_private_service_access:
        out.append(PSA_SERVICE)
    return out


def csi_addons(cfg: StackConfig) -> dict[str, Any]:
    """The ``addons_config`` entries turning on the CSI drivers the stores need."""
    return {CSI_ADDONS[k]: {"enabled": True}
            for k in sorted({s.kind for s in cfg.storage.stores} - {"gcs"})}


# ----------------------------------------------------------------------------------
# Cloud Storage


def bucket_args(cfg: StackConfig, store: Store) -> dict[str, Any]:
    args: dict[str, Any] = {
        "name": store.bucket,
        "project": cfg.project,
        "location": store.location,
        # Uniform bucket-level access: IAM alone decides access (no object ACLs), which
        # Workload Identity Federation needs for read-write workloads (gcs-fuse-csi-driver
        # docs/authentication.md) and hierarchical namespaces require.
        "uniform_bucket_level_access": True,
        "public_access_prevention": "enforced",
        "force_destroy": False,
        "labels": {**cfg.labels, **store.labels} or None,
        "storage_class": store.storage_class,
    }
    if store.hierarchical_namespace:
        args["hierarchical_namespace"] = {"enabled": True}
    if store.soft_delete_days is not None:
        args["soft_delete_policy"] = {"retention_duration_seconds":
                                      store.soft_delete_days * 86400}
    if store.retention_days is not None:
        args["retention_policy"] = {"retention_period": str(store.retention_days * 86400)}
    return {k: v for k, v in args.items() if v is not None}


@record
class Grant:
    store: str
    namespace: str
    access: str

    @property
    def role(self) -> str:
        return BUCKET_ROLES[self.access]

    @property
    def resource_name(self) -> str:
        return f"{self.store}-{self.namespace}-{self.access}"


def bucket_grants(store: Store) -> list[Grant]:
    return [Grant(store.name, ns, level) for ns, level in sorted(store.access.items())]


def grant_member(cfg: StackConfig, grant: Grant, project_number: str) -> str:
    return principal(project_number, cfg.project, grant.namespace, cfg.storage.service_account)


def grant_args(grant: Grant, bucket: Any, member: Any) -> dict[str, Any]:
    return {"bucket": bucket, "role": grant.role, "member": member}


# ----------------------------------------------------------------------------------
# Private services access and the VPC stores


def network_id(cfg: StackConfig) -> str:
    return f"projects/{cfg.project}/global/networks/{cfg.network.name}"


def psa_range_name(cfg: StackConfig) -> str:
    return f"{cfg.cluster_name}-storage-psa"[:63]


def psa_address_args(cfg: StackConfig) -> dict[str, Any]:
    """The internal range Google's storage services take their addresses from (private
    services access: https://cloud.google.com/vpc/docs/configure-private-services-access)."""
    psa = cfg.storage.private_service_access
    args = {"name": psa_range_name(cfg), "project": cfg.project, "network": network_id(cfg),
            "purpose": "VPC_PEERING", "address_type": "INTERNAL",
            "prefix_length": psa.prefix_length, "address": psa.address}
    return {k: v for k, v in args.items() if v is not None}


def psa_connection_args(cfg: StackConfig, range_name: Any) -> dict[str, Any]:
    return {"network": network_id(cfg), "service": PSA_SERVICE,
            "reserved_peering_ranges": [range_name],
            # A destroy that removes the peering while an instance still uses it fails;
            # abandoning it keeps `pulumi destroy` from getting stuck on that order.
            "deletion_policy": "ABANDON"}


def lustre_firewall_args(cfg: StackConfig, source_range: Any) -> dict[str, Any]:
    return {"name": f"{cfg.cluster_name}-lustre"[:63], "project": cfg.project,
            "network": network_id(cfg), "direction": "INGRESS",
            "source_ranges": [source_range],
            "allows": [{"protocol": "tcp", "ports": [str(LUSTRE_PORT)]}],
            "description": "Managed Lustre to the cluster's nodes (accelstack)"}


def _labels(cfg: StackConfig, store: Store) -> dict[str, str] | None:
    return {**cfg.labels, **store.labels} or None


def filestore_args(cfg: StackConfig, store: Store, range_name: Any) -> dict[str, Any]:
    args = {
        "name": store.instance, "project": cfg.project, "location": store.location,
        "tier": store.tier,
        "file_shares": {"name": store.share, "capacity_gb": store.capacity_gib},
        # Private services access: Filestore takes its address from the stack's reserved
        # range, like Parallelstore and Lustre (Filestore "connect mode").
        "networks": [{"network": cfg.network.name, "modes": ["MODE_IPV4"],
                      "connect_mode": "PRIVATE_SERVICE_ACCESS",
                      "reserved_ip_range": range_name}],
        "labels": _labels(cfg, store),
    }
    return {k: v for k, v in args.items() if v is not None}


def parallelstore_args(cfg: StackConfig, store: Store, range_name: Any) -> dict[str, Any]:
    args = {
        "instance_id": store.instance, "project": cfg.project, "location": store.location,
        "capacity_gib": str(store.capacity_gib), "network": network_id(cfg),
        "reserved_ip_range": range_name, "deployment_type": store.deployment_type,
        "labels": _labels(cfg, store),
    }
    return {k: v for k, v in args.items() if v is not None}


def lustre_args(cfg: StackConfig, store: Store) -> dict[str, Any]:
    args = {
        "instance_id": store.instance, "project": cfg.project, "location": store.location,
        "capacity_gib": str(store.capacity_gib), "filesystem": store.filesystem,
        "network": network_id(cfg), "per_unit_storage_throughput": str(store.throughput),
        "labels": _labels(cfg, store),
    }
    return {k: v for k, v in args.items() if v is not None}


def lustre_ip(mount_point: str) -> str:
    """An instance's mountPoint is ``IP@tcp:/FILESYSTEM``; the CSI driver wants the IP."""
    return mount_point.split("@", 1)[0]


# ----------------------------------------------------------------------------------
# Kubernetes objects


def service_accounts(cfg: StackConfig) -> list[dict[str, Any]]:
    """The account jobs run as, in every workload namespace. Its token is not mounted
    into pods: Workload Identity Federation hands pods tokens through the GKE metadata
    server, and the CSI drivers get theirs from the kubelet."""
    return [{"apiVersion": "v1", "kind": "ServiceAccount",
             "metadata": {"name": cfg.storage.service_account, "namespace": ns,
                          "labels": dict(MANAGED_BY)},
             "automountServiceAccountToken": False}
            for ns in namespaces(cfg)]


@record
class Endpoint:
    """Where a VPC store answers: Filestore and Lustre an IP, Parallelstore access points."""

    ip: Any = None
    access_points: Any = None  # a comma-separated string of IPs
    network: str | None = None


def volume_handle(cfg: StackConfig, store: Store) -> str:
    # Documented static-provisioning handles: Filestore
    # "modeInstance/LOCATION/INSTANCE/SHARE" (GKE "Access pre-existing Filestore
    # instances"), Parallelstore "PROJECT/LOCATION/INSTANCE/default-pool/default-container",
    # Lustre "PROJECT/LOCATION/INSTANCE" (GKE "Access existing Managed Lustre instances").
    if store.kind == "filestore":
        return f"modeInstance/{store.location}/{store.instance}/{store.share}"
    if store.kind == "parallelstore":
        return f"{cfg.project}/{store.location}/{store.instance}/default-pool/default-container"
    return f"{cfg.project}/{store.location}/{store.instance}"


def _volume_attributes(store: Store, endpoint: Endpoint) -> dict[str, Any]:
    if store.kind == "filestore":
        return {"ip": endpoint.ip, "volume": store.share}
    if store.kind == "parallelstore":
        attrs = {"accessPoints": endpoint.access_points}
        if endpoint.network:
            attrs["network"] = endpoint.network
        # The mount mode, said rather than left to the driver's default: "pod" mounts
        # through a sidecar in each pod (pods ask for it with the gke-parallelstore/volumes
        # annotation, submit/render/mounts.py); "node" would share one dfuse per node.
        # "supported values are node or pod. The default is pod" (Parallelstore CSI driver
        # reference, https://docs.cloud.google.com/parallelstore/docs/csi-driver-reference).
        attrs["mountLocality"] = PARALLELSTORE_MOUNT_LOCALITY
        return attrs
    return {"ip": endpoint.ip, "filesystem": store.filesystem}


def pv_name(store: Store, namespace: str) -> str:
    return f"accelstack-{store.name}-{namespace}"[:253]


def claim_name(store: Store) -> str:
    """Each namespace with access has a claim named after the store."""
    return store.name


def volume_objects(cfg: StackConfig, store: Store, endpoint: Endpoint
                   ) -> list[dict[str, Any]]:
    """A PersistentVolume and its claim per namespace with access, bound to each other
    (static provisioning: the claim names the volume, the volume reserves the claim)."""
    out: list[dict[str, Any]] = []
    size = f"{store.capacity_gib}Gi"
    for ns, level in sorted(store.access.items()):
        mode = "ReadOnlyMany" if level == "read-only" else "ReadWriteMany"
        labels = {**MANAGED_BY, "accelstack.dev/store": store.name}
        out.append({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": pv_name(store, ns), "labels": labels,
                         **({"annotations": {PROVISIONED_BY: CSI_DRIVERS[store.kind]}}
                            if store.kind == "parallelstore" else {})},
            "spec": {
                "storageClassName": "",
                "capacity": {"storage": size},
                "accessModes": [mode],
                # The data outlives the claim: deleting the stack's objects never
                # deletes an instance's files.
                "persistentVolumeReclaimPolicy": "Retain",
                "volumeMode": "Filesystem",
                "claimRef": {"namespace": ns, "name": claim_name(store)},
                "csi": {"driver": CSI_DRIVERS[store.kind],
                        "volumeHandle": volume_handle(cfg, store),
                        "readOnly": level == "read-only",
                        "volumeAttributes": _volume_attributes(store, endpoint)},
            },
        })
        out.append({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name(store), "namespace": ns, "labels": labels},
            "spec": {"storageClassName": "", "accessModes": [mode],
                     "volumeName": pv_name(store, ns),
                     "resources": {"requests": {"storage": size}}},
        })
    return out


def referenced_endpoint(store: Store) -> Endpoint:
    return Endpoint(ip=store.ip, access_points=",".join(store.access_points) or None,
                    network=store.network)


def mount_source(store: Store) -> str:
    """What a pod mounts: the bucket, or the claim of the store in its namespace."""
    return str(store.bucket) if store.kind == "gcs" else claim_name(store)
