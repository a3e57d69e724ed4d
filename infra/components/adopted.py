"""Resource options of an adopted cluster's resources (infra/config/adopted.py): the import
ID on the first ``up`` (Pulumi's ``import`` option) and the fields kept as they are
(``ignore_changes``). Thin: the IDs and field lists are the config's."""

from __future__ import annotations

import pulumi

from infra.config.adopted import CLUSTER, CLUSTER_KEPT, POOL_KEPT
from infra.config.stack import StackConfig


def cluster_options(cfg: StackConfig) -> pulumi.ResourceOptions:
    adopt = cfg.adopt
    if not adopt.importing:
        return pulumi.ResourceOptions()
    kept = [*CLUSTER_KEPT, *(p for p in adopt.kept(CLUSTER) if p not in CLUSTER_KEPT)]
    return pulumi.ResourceOptions(import_=adopt.cluster_import, ignore_changes=kept)


def node_pool_options(cfg: StackConfig, node_pool: str) -> pulumi.ResourceOptions:
    adopt = cfg.adopt
    pid = adopt.node_pool_imports.get(node_pool)
    if pid is None:
        return pulumi.ResourceOptions()
    kept = [*POOL_KEPT, *(p for p in adopt.kept(node_pool) if p not in POOL_KEPT)]
    return pulumi.ResourceOptions(import_=pid, ignore_changes=kept)
