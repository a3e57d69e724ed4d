"""Pure desired state computed from the config and the catalog: pools, cluster, network,
add-ons, Kueue objects, storage, the outputs contract. Plain data, tested without a cloud.

May import: infra.specs, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
