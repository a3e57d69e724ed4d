"""Experiments and job groups: a sweep file expanded into trials (expand.py), each trial rendered
as one JobSet and recorded in the cluster as one object (trials.py), and a group file of several
roles with dependencies rendered as one JobSet (group.py). Pure plans; the cli layer carries them
out through the API.

May import: submit.experiment, submit.render, submit.api, infra.catalog, infra.contract, infra.record, infra.lazy_re,
    infra.config.errors
Must not import: click, kubernetes, pulumi, submit.cli, submit.cluster
"""
