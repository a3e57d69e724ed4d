"""Run a rendered workload as local processes: a pure plan (plan.py, policy.py) and a runner
(run.py); commands.py is the `submit workload run-local` command."""
