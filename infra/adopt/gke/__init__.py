"""The GKE API seam: the one module that reads clusters from the Kubernetes Engine API
(api.py, REST over requests with google-auth credentials). Tests put a fake GKE HTTP
server on loopback in its place (tests/fake_gke_api.py).

May import: infra.adopt.gke, infra.record
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
