"""The cluster add-ons component: JobSet and Kueue installs, then the Kueue objects,
workload namespaces and image-cache DaemonSets that need them.

Every argument comes from the pure ``*_spec`` modules; this class only declares resources
through a Kubernetes provider built from the cluster's kubeconfig. Custom resources depend
on both installs, so they are created only once Kueue's webhooks serve.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.specs import addons as addons_spec
from infra.specs import dra_driver as dra_driver_spec
from infra.specs import dranet as dranet_spec
from infra.specs import image_cache as image_cache_spec
from infra.specs import kueue as kueue_spec
from infra.specs import network as network_spec
from infra.config.stack import StackConfig


def _object_name(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    ns = f"{meta['namespace']}-" if meta.get("namespace") else ""
    return f"{obj['kind'].lower()}-{ns}{meta['name']}"


class ClusterAddons(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig, *, kubeconfig: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:addons:ClusterAddons", name, None, opts)
        provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig,
                                enable_server_side_apply=True,
                                opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        self.provider = provider

        nodes = addons_spec.node_count(cfg)

        def size_jobset(args: pulumi.ResourceTransformArgs
                        ) -> pulumi.ResourceTransformResult | None:
            sized = addons_spec.size_jobset_controller(dict(args.props), nodes,
                                                       addons_spec.controller_selector(cfg))
            return None if sized is None else pulumi.ResourceTransformResult(sized, args.opts)

        jobset = k8s.yaml.v2.ConfigFile(
            "jobset", file=addons_spec.jobset_manifest_url(cfg),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                transforms=[size_jobset])))
        # JobSet first: Kueue's JobSet integration finds the JobSet CRD when it starts.
        # Neither waits on the other afterwards: Kueue's webhooks only see the workload
        # namespaces (addons_spec.MANAGED_NAMESPACE_LABEL) and JobSet's only JobSets and
        # their pods, so upgrading either one never needs the other to serve.
        kueue = k8s.helm.v3.Release(
            "kueue", opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                depends_on=[jobset])), **addons_spec.kueue_release_args(cfg))
        installs = [kueue, jobset]

        namespaces: dict[str, k8s.core.v1.Namespace] = {}
        self.namespaces = namespaces
        extra_ns = [dra_driver_spec.namespace()] if dra_driver_spec.needed(cfg) else []
        for ns in kueue_spec.namespaces(cfg) + [image_cache_spec.namespace()] + extra_ns:
            namespaces[ns["metadata"]["name"]] = k8s.core.v1.Namespace(
                _object_name(ns), opts=child, metadata=ns["metadata"])

        after_installs = pulumi.ResourceOptions(parent=self, provider=provider,
                                                depends_on=installs + list(namespaces.values()))
        for obj in kueue_spec.kueue_objects(cfg):
            k8s.yaml.v2.ConfigGroup(_object_name(obj), opts=after_installs, objs=[obj])

        # GKE managed DRANET: the claim template the pods on DRANET pools name.
        for obj in dranet_spec.claim_templates([p.dranet for p in cfg.slices],
                                               [ns["metadata"]["name"]
                                                for ns in kueue_spec.namespaces(cfg)]):
            k8s.yaml.v2.ConfigGroup(_object_name(obj), opts=pulumi.ResourceOptions(
                parent=self, provider=provider,
                depends_on=[namespaces[obj["metadata"]["namespace"]]]), objs=[obj])

        # GPUDirect: the pods' data networks and the NCCL plugin installers.
        for obj in network_spec.k8s_network_objects(cfg):
            k8s.yaml.v2.ConfigGroup(_object_name(obj), opts=child, objs=[obj])
        for url in network_spec.nccl_installer_urls(cfg):
            k8s.yaml.v2.ConfigFile(url.rsplit("/", 1)[-1].removesuffix(".yaml"), opts=child,
                                   file=url)

        # A4X: NVIDIA's DRA driver for ComputeDomains, in its namespace under its quota.
        if dra_driver_spec.needed(cfg):
            dra_ns = namespaces[dra_driver_spec.NAMESPACE]
            quota_obj = dra_driver_spec.resource_quota(cfg)
            quota = k8s.core.v1.ResourceQuota(
                _object_name(quota_obj), metadata=quota_obj["metadata"], spec=quota_obj["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=provider,
                                            depends_on=[dra_ns]))
            # After Kueue's release: its webhooks (failurePolicy Fail) cover Deployments,
            # so the driver's controller is created once they serve.
            k8s.helm.v3.Release(
                "nvidia-dra-driver-gpu",
                opts=pulumi.ResourceOptions(parent=self, provider=provider,
                                            depends_on=[dra_ns, quota, kueue]),
                **dra_driver_spec.release_args(cfg))

        cache_ns = [namespaces[image_cache_spec.NAMESPACE]]
        for ds in image_cache_spec.daemonsets(cfg):
            k8s.apps.v1.DaemonSet(_object_name(ds), metadata=ds["metadata"], spec=ds["spec"],
                                  opts=pulumi.ResourceOptions(parent=self, provider=provider,
                                                              depends_on=cache_ns))
        self.register_outputs({"kueueVersion": cfg.addons.kueue_version,
                               "jobsetVersion": cfg.addons.jobset_version})
