"""The seams to outside systems the submitter talks to: the Kubernetes API server (kube.py,
the only module that sends requests to a cluster; kube_client.py makes its client from the
kubeconfig, paging.py reads its lists in pages, watch.py follows a JobSet through it),
stack outputs from the pulumi CLI (stack_outputs.py), and the user's kubeconfig (kubeconfig.py).
parallel.py runs reads of several clusters at once, each bounded in time.

May import: submit.cluster, infra.contract, infra.record, infra.lazy_re
Must not import: click, pulumi, submit.cli, submit.render, submit.state, submit.api
"""
