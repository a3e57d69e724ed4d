"""`accelstack-adopt`: the command that reads a cluster through the GKE API seam
(infra/adopt/gke/api.py) and writes the adopted stack file (infra/adopt/plan.py). Click
only; the plan is pure.

May import: infra
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, submit
"""


def main() -> None:
    """The `accelstack-adopt` console script (pyproject.toml)."""
    from infra.adopt.cli.command import adopt

    adopt()
