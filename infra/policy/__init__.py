"""Platform rules over a stack's desired state (rules.py, over the items of items.py; pure),
and the CrossGuard pack that runs the same rules under
`pulumi preview --policy-pack infra/policy/pack` (pack/).

May import: infra.policy, infra.cost, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
