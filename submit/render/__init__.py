"""Pure renders: a workload as the user asked for it (spec.py), checked against the stack's
outputs contract, turned into JobSets and ConfigMaps (jobset.py) with placement, GPU networking,
DRANET, mounts and Pathways. Same code for --dry-run and a real submit.

May import: submit.render, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: click, kubernetes, pulumi, urllib3, requests, submit.cli, submit.cluster, submit.api
"""
