"""What a stack costs: the dated price table (prices.yaml, read by table.py), the pure
pricing of a stack's desired state (price.py) and of a `submit run` (run.py), and the
maintainer's refresh of the table from the Cloud Billing Catalog API (refresh.py, the
one module that may reach that API, through its REST surface with requests and google-auth).

A price that is not in the table is unknown, never zero.

May import: infra.cost, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
