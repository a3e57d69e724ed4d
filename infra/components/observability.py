"""The observability component: the stack's dashboard, alert policies and notification
channels (Cloud Monitoring), and Managed Prometheus's scrape of Kueue (Kubernetes objects).
Thin over infra/specs/observability/; the metric packages are the cluster's own
monitoringConfig (infra/specs/cluster.py)."""

from __future__ import annotations

import functools
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.components import child_options
from infra.config.stack import StackConfig
from infra.specs.observability import alerts as alerts_spec
from infra.specs.observability import dashboard as dashboard_spec
from infra.specs.observability import goodput as goodput_spec
from infra.specs.observability import kueue_scrape


def _member(cfg: StackConfig, grant: goodput_spec.Grant, number: Any) -> str:
    return str(goodput_spec.grant_args(cfg, grant, str(number))["member"])


def _object_name(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    ns = f"{meta['namespace']}-" if meta.get("namespace") else ""
    return f"{obj['kind'].lower()}-{ns}{meta['name']}".replace(":", "-")


class Observability(pulumi.ComponentResource):
    """``dashboard_id``: the dashboard's resource name (projects/NUMBER/dashboards/ID), or
    None when the stack has no dashboard."""

    def __init__(self, name: str, cfg: StackConfig, *, provider: pulumi.ProviderResource,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelstack:observability:Observability", name, None, opts)
        # Children wait for what the component waits for (the APIs, the add-ons).
        child = child_options(self, opts)
        obs = cfg.observability
        self.dashboard_id: pulumi.Output[str] | None = None
        if obs.dashboard:
            board = gcp.monitoring.Dashboard(
                f"{name}-dashboard", project=cfg.project,
                dashboard_json=dashboard_spec.dashboard_json(cfg), opts=child)
            self.dashboard_id = board.id
        channels = [gcp.monitoring.NotificationChannel(
            f"{name}-channel-{i}", opts=child, **alerts_spec.channel_args(cfg, i, ch)).id
            for i, ch in enumerate(obs.channels)]
        for policy in alerts_spec.policies(cfg):
            gcp.monitoring.AlertPolicy(f"{name}-alert-{policy.key}", opts=child,
                                       **alerts_spec.policy_args(cfg, policy, channels))
        # Goodput recording: each workload namespace's job identity may write the
        # library's log entries and metrics (infra/specs/observability/goodput.py).
        goodput = goodput_spec.grants(cfg)
        if goodput:
            number: pulumi.Input[str] = cfg.storage.project_number or (
                gcp.organizations.get_project_output(
                    project_id=cfg.project, opts=pulumi.InvokeOutputOptions(parent=self)).number)
            for grant in goodput:
                gcp.projects.IAMMember(grant.resource_name, opts=child, project=cfg.project,
                                       role=grant.role,
                                       member=pulumi.Output.from_input(number).apply(
                                           functools.partial(_member, cfg, grant)))
        # Kueue's metrics: after Kueue (the caller orders this component after the
        # add-ons) and after GKE's Managed Prometheus, which serves the CRD.
        k8s_opts = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(provider=provider))
        namespace = None
        for obj in kueue_scrape.objects():
            deps: list[pulumi.Resource] = [namespace] if namespace is not None else []
            made = k8s.yaml.v2.ConfigGroup(_object_name(obj), objs=[obj],
                                           opts=pulumi.ResourceOptions.merge(
                                               k8s_opts, pulumi.ResourceOptions(depends_on=deps)))
            if obj["kind"] == "Namespace":
                namespace = made
        self.goodput = bool(goodput)
        self.register_outputs({"dashboard": self.dashboard_id})
