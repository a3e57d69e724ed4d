"""Ephemeral runs: bring a stack up, run one piece of work on it, always take it down.

plan.py is pure (names, tags, config, exit codes, what a reaper takes) and events.py folds
Pulumi's engine events into progress, also pure; pulumi_process.py is the one place that
starts the `pulumi` process for the Automation API; runner.py carries a plan out (the
Automation API on this project's own program, the work through submit.api, signals);
teardown.py destroys and removes one stack; reaper.py finds expired ephemeral stacks;
pools_work.py deletes the work queued to a pools stack before either destroys it.
check.py parses a run's config with the program's own parser (infra.config, pure) before
the pulumi CLI is looked for; derive.py derives the outputs and the cost of the run's stack
from it offline, with the preview's harness and pricing (infra.preview, infra.cost): the
same code `accelstack-preview` runs, so that a run checks its work against, and prices,
exactly what the preview shows (the harness loads pulumi and its providers, under the SDK's
mock engine, only when a run is checked; infra.program and infra.components.pools only for
the errors it raises).
The Automation API is imported only by runner, teardown, reaper, pools_work and
pulumi_process, and only when they run (`submit --help` never loads pulumi).

May import: submit.ephemeral, submit.api, submit.cluster, submit.render.spec, infra.record, infra.lazy_re,
    submit.experiment, infra.contract, infra.config.stack_file, infra.config.errors,
    infra.config, infra.catalog, infra.preview, infra.cost, infra.program, infra.components.pools
Must not import: click, pulumi_gcp, pulumi_kubernetes, submit.cli
"""
