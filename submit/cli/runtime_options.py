"""Run-time options of `submit workload create` that xpk users reach for (docs/
submitting.md): declared here, listed in create_options.py, checked by submit/render/spec.py
and rendered by submit/render/jobset.py.
"""

from __future__ import annotations

import click

RUNTIME_OPTIONS = [
    click.option("--image-pull-secret", "image_pull_secret", multiple=True, metavar="NAME",
                 help="A Secret of the namespace (type kubernetes.io/dockerconfigjson) the "
                      "kubelet pulls the images with; checked against the namespace's "
                      "Secrets when the cluster is reached. Repeatable."),
    click.option("--pathways-server-image", metavar="IMAGE",
                 help="With --pathways: the Pathways server image (resource manager and "
                      "workers) for this run instead of the stack's."),
    click.option("--pathways-proxy-image", metavar="IMAGE",
                 help="With --pathways: the IFRT proxy image for this run instead of the "
                      "stack's."),
    click.option("--pathways-colocated-python", is_flag=True,
                 help="With --pathways: a colocated Python sidecar beside every worker, "
                      "from the stack's pathways.images.colocatedPython."),
    click.option("--pathways-colocated-python-image", metavar="IMAGE",
                 help="With --pathways: the colocated Python sidecar from this image "
                      "(implies --pathways-colocated-python)."),
    click.option("--pathways-server-arg", multiple=True, metavar="--FLAG=VALUE",
                 help="With --pathways: an extra flag of the resource manager. Repeatable."),
    click.option("--pathways-proxy-arg", multiple=True, metavar="--FLAG=VALUE",
                 help="With --pathways: an extra flag of the proxy. Repeatable."),
    click.option("--pathways-worker-arg", multiple=True, metavar="--FLAG=VALUE",
                 help="With --pathways: an extra flag of the workers. Repeatable."),
    click.option("--parallel-containers", type=int, metavar="N",
                 help="TPU7x: run N containers per VM, each with chips/N of the VM's chips "
                      "(xpk's --use-parallel-containers; GKE's multi-container NUMA "
                      "sample uses 2). N must divide the chips of one VM."),
]
