"""Accelerator facts: the one table of TPU, GPU and CPU machines (tables.py), their machine
shapes, the GPUDirect release and the pod sizing rule. Node pools, quotas and renders all read it.

May import: infra.catalog, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
