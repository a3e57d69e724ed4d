"""The typed stack config: a stack file's `accelstack:*` keys parsed into frozen dataclasses,
with FILE:LINE errors that name the key path, the bad value and what is allowed (errors.py).

May import: infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
