"""Ephemeral runs: bring a stack up, run one piece of work on it, always take it down.

plan.py is pure (names, tags, config, exit codes, what a reaper takes) and events.py folds
Pulumi's engine events into progress, also pure; pulumi_process.py is the one place that
starts the `pulumi` process for the Automation API; runner.py carries a plan out (the
Automation API on this project's own program, the work through submit.api, signals);
teardown.py destroys and removes one stack; reaper.py finds expired ephemeral stacks;
pools_work.py deletes the work queued to a pools stack before either destroys it.
check.py parses a run's config with the program's own parser (infra.config, pure) before
the pulumi CLI is looked for.
The Automation API is imported only by runner, teardown, reaper, pools_work and
pulumi_process, and only when they run (`submit --help` never loads pulumi).

May import: submit.ephemeral, submit.api, submit.cluster, submit.render.spec, infra.record, infra.lazy_re,
    submit.experiment, infra.contract, infra.config.stack_file, infra.config.errors,
    infra.config, infra.catalog
Must not import: click, pulumi_gcp, pulumi_kubernetes, submit.cli
"""
