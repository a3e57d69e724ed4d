"""What a change destroys: which resources a preview replaces or deletes, judged from the
provider's own ForceNew fields (forcenew.json, data with its source commit and FILE:LINE),
what the accelerator pools among them hold (slices, chips, hosts, $/hour), and the guard
that refuses replacing or deleting one without a written allowance.

Pure: typed inputs in, records out. The offline preview (infra/preview) and the real CLI's
`pulumi preview --json` (pulumi_json.py) feed the same summary; `submit cluster at-risk`
adds the live workloads through the Kubernetes seam (submit/cluster/), never from here.

May import: infra.replacements, infra.catalog, infra.cost, infra.config, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
