"""`accelstack-adopt`: the command that reads a cluster through the GKE API seam and writes
the adopted stack file (infra/adopt/plan.py). Click only; the plan is pure.

May import: infra
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, submit
"""
