"""What the stack observes, as data: GKE's managed metric packages, Managed Prometheus's
scrape of Kueue, the stack's Cloud Monitoring dashboard and its alert policies.

    metrics.py       every metric the dashboard and alerts name, and how PromQL spells it
    packages.py      monitoringConfig.enableComponents for the stack's pools and version
    kueue_scrape.py  the ClusterPodMonitoring for Kueue's metrics endpoint and its token
    dashboard.py     the dashboard's JSON (Monitoring API v1 Dashboard)
    alerts.py        the alert policies (v3 AlertPolicy, PromQL conditions) and channels

Facts and their sources are in each module; docs/observability.md explains the whole.

May import: infra.specs, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
