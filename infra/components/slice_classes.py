"""The slice classes component: one GKE ComputeClass per class of the stack.

Thin over ``infra.specs.slice_classes.computeclass``: each object is declared through the
add-ons' Kubernetes provider as a custom resource of GKE's ComputeClass CRD (served by GKE
in every cluster from 1.30.3-gke.1451000). Node pools for a class are made and deleted by
GKE, never declared here; the cluster's auto-provisioning limits that they may need are
part of the cluster (infra/specs/cluster.py).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.config.stack import StackConfig
from infra.specs.slice_classes import computeclass


class SliceClasses(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: StackConfig, *, provider: k8s.Provider,
                 service_account: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:slice_classes:SliceClasses", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        self.classes: dict[str, Any] = {}
        for cls in cfg.slice_classes:
            obj = computeclass.compute_class(cls, service_account=service_account)
            self.classes[cls.name] = k8s.apiextensions.CustomResource(
                f"computeclass-{cls.name}", api_version=obj["apiVersion"], kind=obj["kind"],
                metadata=obj["metadata"], spec=obj["spec"], opts=child)
        self.register_outputs({"classes": sorted(self.classes)})
