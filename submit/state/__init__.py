"""What the cluster says about a workload, read as data: its status, why it is pending and
where it stands in its queue. Pure functions over objects the cluster seam fetched.

May import: submit.state, submit.render, infra.record, infra.lazy_re
Must not import: click, kubernetes, pulumi, urllib3, requests, submit.cli, submit.cluster, submit.api
"""
