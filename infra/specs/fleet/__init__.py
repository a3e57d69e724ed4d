"""The fleet stack's desired state, as data: MultiKueue on the manager, access on the workers.

    checks.py   what the referenced stacks' contracts must satisfy (versions, namespaces,
                queues, the manager's way in)
    access.py   what each worker gives the manager: a ServiceAccount, its ClusterRole, a
                token, the kubeconfig Secret built from them, the mirrored LocalQueues
    manager.py  the manager's MultiKueue objects: MultiKueueClusters, MultiKueueConfigs,
                AdmissionChecks, flavors, ClusterQueues and LocalQueues per scope
    plan.py     the whole plan from the config and the contracts, and the fleet's outputs

Facts and their sources are in each module.

May import: infra.specs, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes, kubernetes, click, submit
"""
