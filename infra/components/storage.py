"""The storage components: buckets, grants and VPC instances on Google Cloud, and the job
service accounts, PersistentVolumes and claims in the cluster.

Thin: every argument comes from ``infra.specs.storage``. Only values the cloud knows are
resolved here (the project number, an instance's address) and handed back to the spec.
"""

from __future__ import annotations

from typing import Any, Callable

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.specs import storage as spec
from infra.components import child_options
from infra.config.stack import StackConfig


def _member(cfg: StackConfig, grant: spec.Grant) -> Callable[[Any], str]:
    return lambda number: spec.grant_member(cfg, grant, str(number))


def _first_address(networks: Any) -> str:
    """A Filestore instance's address: its (only) network's first IP."""
    return str(networks[0].ip_addresses[0])


def _merge(base: pulumi.ResourceOptions, **extra: Any) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(**extra))


class WorkloadStorage(pulumi.ComponentResource):
    """The stores of the stack and the IAM grants to the namespaces' service accounts."""

    def __init__(self, name: str, cfg: StackConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:storage:WorkloadStorage", name, None, opts)
        child = child_options(self, opts)
        st = cfg.storage
        number: pulumi.Input[str] = st.project_number or gcp.organizations.get_project_output(
            project_id=cfg.project, opts=pulumi.InvokeOutputOptions(parent=self)).number
        self.endpoints: dict[str, spec.Endpoint] = {}

        range_name: Any = None
        connection: list[pulumi.Resource] = []
        source_range: Any = None
        if st.needs_private_service_access:
            address = gcp.compute.GlobalAddress(f"{name}-psa", opts=child,
                                                **spec.psa_address_args(cfg))
            range_name = address.name
            prefix = st.private_service_access.prefix_length
            source_range = address.address.apply(lambda a: f"{a}/{prefix}")
            connection = [gcp.servicenetworking.Connection(
                f"{name}-psa", opts=child, **spec.psa_connection_args(cfg, address.name))]
        after_psa = _merge(child, depends_on=connection) if connection else child

        for store in st.stores:
            if store.kind == "gcs":
                bucket: Any = store.bucket
                if store.create:
                    bucket = gcp.storage.Bucket(f"bucket-{store.name}", opts=child,
                                                **spec.bucket_args(cfg, store)).name
                for grant in spec.bucket_grants(store):
                    member = pulumi.Output.from_input(number).apply(
                        _member(cfg, grant))
                    gcp.storage.BucketIAMMember(f"grant-{grant.resource_name}", opts=child,
                                                **spec.grant_args(grant, bucket, member))
            elif not store.create:
                self.endpoints[store.name] = spec.referenced_endpoint(store)
            elif store.kind == "filestore":
                fs = gcp.filestore.Instance(f"filestore-{store.name}", opts=after_psa,
                                            **spec.filestore_args(cfg, store, range_name))
                self.endpoints[store.name] = spec.Endpoint(
                    ip=fs.networks.apply(_first_address))
            elif store.kind == "parallelstore":
                ps = gcp.parallelstore.Instance(f"parallelstore-{store.name}", opts=after_psa,
                                                **spec.parallelstore_args(cfg, store,
                                                                          range_name))
                self.endpoints[store.name] = spec.Endpoint(
                    access_points=ps.access_points.apply(lambda a: ",".join(a or [])),
                    network=cfg.network.name)
            else:
                lu = gcp.lustre.Instance(f"lustre-{store.name}", opts=after_psa,
                                         **spec.lustre_args(cfg, store))
                self.endpoints[store.name] = spec.Endpoint(ip=lu.mount_point.apply(spec.lustre_ip))
        if any(s.kind == "lustre" and s.create for s in st.stores):
            gcp.compute.Firewall(f"{name}-lustre", opts=child,
                                 **spec.lustre_firewall_args(cfg, source_range))
        self.register_outputs({"stores": [s.name for s in st.stores]})


def _name(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    ns = f"{meta['namespace']}-" if meta.get("namespace") else ""
    return f"{obj['kind'].lower()}-{ns}{meta['name']}"


class StorageObjects(pulumi.ComponentResource):
    """The job service account in every workload namespace and the claims of VPC stores."""

    def __init__(self, name: str, cfg: StackConfig, *, provider: pulumi.ProviderResource,
                 endpoints: dict[str, spec.Endpoint],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:storage:StorageObjects", name, None, opts)
        child = _merge(child_options(self, opts), provider=provider)
        for sa in spec.service_accounts(cfg):
            k8s.core.v1.ServiceAccount(_name(sa), opts=child, metadata=sa["metadata"],
                                       automount_service_account_token=False)
        for store in cfg.storage.stores:
            if store.kind == "gcs":
                continue
            for obj in spec.volume_objects(cfg, store, endpoints[store.name]):
                kind = (k8s.core.v1.PersistentVolume if obj["kind"] == "PersistentVolume"
                        else k8s.core.v1.PersistentVolumeClaim)
                kind(_name(obj), opts=child, metadata=obj["metadata"], spec=obj["spec"])
        self.register_outputs({})
