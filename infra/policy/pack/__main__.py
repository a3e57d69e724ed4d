"""Entry point Pulumi runs for ``--policy-pack infra/policy/pack``: serve the pack."""

from pulumi_policy import EnforcementLevel, PolicyPack

from infra.policy.pack.crossguard import PACK_NAME, policies

PolicyPack(name=PACK_NAME, enforcement_level=EnforcementLevel.MANDATORY, policies=policies())
