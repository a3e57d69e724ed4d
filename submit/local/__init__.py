"""Run a rendered workload as local processes: a pure plan (plan.py, policy.py) and a runner
(run.py) that starts the processes; `submit workload run-local` lives in submit/cli/local.py.

May import: submit.local, submit.render, submit.cli.output, infra.record, infra.lazy_re
Must not import: kubernetes, pulumi, submit.cluster, submit.api
"""
