"""The `submit` CLI and the Python API under it (api.py), in layers:
cli (Click commands) -> api -> render (pure: a spec to manifests), state (pure: what the
cluster says, read as data) and cluster (the seams to the Kubernetes API and to stack
outputs); experiment/, local/ and bundle/ are each a pure plan and a thin runner.
The stack is known only through infra.contract (and accelerator facts through infra.catalog).

May import: submit, infra.catalog, infra.contract, infra.config.errors, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes
"""
