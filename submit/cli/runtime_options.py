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
]
