"""Adopting a GKE cluster made elsewhere (xpk, gcloud, Cluster Toolkit) into a stack.

Pure: from the GKE API's answer (a Cluster with its node pools, as JSON) to a stack file in
our own config language, the import IDs each resource needs, and the fields our config
cannot express (plan.py); the provider's view of that answer (live.py) and the offline
replacement check against the provider's ForceNew list (forcenew.py, diff.py). The one
module that talks to the GKE API is gke/api.py; the command is cli/.

May import: infra.adopt, infra.config, infra.catalog, infra.specs, infra.contract,
    infra.record, infra.lazy_re, infra.replacements
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit, requests,
    google
"""
