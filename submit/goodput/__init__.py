"""Goodput of a workload from ml-goodput-measurement's Cloud Logging entries: a pure plan
(what the workload's recorder is told: run name, log name) and the report, which calls the
library's GoodputCalculator with a log source it is given (docs/observability.md).

May import: submit.goodput, infra.contract, infra.record
Must not import: click, kubernetes, pulumi, submit.cli, submit.cluster
"""
