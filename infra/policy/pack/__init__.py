"""The CrossGuard policy pack: a directory the Pulumi CLI runs; pulumi-policy is its only
outside dependency.

May import: infra.policy, infra.config, infra.catalog, infra.contract, infra.record
Must not import: pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
