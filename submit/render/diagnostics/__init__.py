"""Diagnostics of a run, rendered into its pods: the stack-trace sidecar (--stack-traces),
XLA dumps uploaded to a store (--xla-dump), libtpu's debug log levels (--debug-logs).

options.py checks the options (alone, then against the stack's storage contract) and holds
the frozen ``Diagnostics`` record the WorkloadSpec carries; pod.py adds volumes, env and
native sidecars to a rendered pod template; describe.py reads them back from a live JobSet
for `submit workload describe`. Pure: no Click, no Kubernetes client, no pulumi.

May import: submit.render, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: click, kubernetes, pulumi, urllib3, requests, submit.cli, submit.cluster, submit.api
"""
