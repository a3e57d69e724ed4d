"""The vocabulary a stack shares with the submitter: the versioned outputs contract and
container image references. The bottom layer: pure, and read by both `infra` and `submit`.

May import: infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
