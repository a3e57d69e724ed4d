"""Slice classes as plain data: the ComputeClass objects, the cluster's auto-provisioning
limits they need, what pods select to land on them, and their Kueue flavors.

``computeclass`` builds the GKE objects; ``placement`` what a pod on a class selects and
tolerates (also what the outputs contract tells the submitter); ``autoscaling`` the
cluster-level node auto-provisioning limits. The Kueue flavors and quotas live with the
other flavors in ``infra.specs.kueue``, which reads ``placement``.

May import: infra.specs, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
