"""--image-pull-secret against the cluster: each Secret the pods will pull with exists in the
namespace and holds registry credentials, checked before anything is applied (a pod whose
pull Secret is missing only shows ErrImagePull much later). A submitter who may not read
Secrets is told so and the workload is submitted unchecked. Never reads or prints a value.
"""

from __future__ import annotations

from typing import Any

import click

from submit.cli.context import Context

# The Secret types the kubelet reads registry credentials from (Kubernetes "Pull an Image
# from a Private Registry" and "Secrets: Docker config Secrets").
PULL_TYPES = ("kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg")


def check(ctx: Context, objs: list[dict[str, Any]]) -> None:
    from submit.cluster.kube import KubeError

    js = next((o for o in objs if o.get("kind") == "JobSet"), None)
    if js is None:
        return
    ns = js["metadata"]["namespace"]
    names = dict.fromkeys(s["name"] for rj in js["spec"]["replicatedJobs"]
                          for s in rj["template"]["spec"]["template"]["spec"]
                          .get("imagePullSecrets") or [])
    for name in names:
        try:
            kind = ctx.cluster.secret_type(ns, name)
        except KubeError as e:
            if e.status != 403:
                raise click.ClickException(str(e)) from None
            click.echo(f"note: --image-pull-secret {name}: not checked, your account may not "
                       f"get Secrets in namespace {ns}", err=True)
            continue
        if kind is None:
            raise click.BadParameter(
                f"{name!r} is not a Secret in namespace {ns!r}; create it with `kubectl create "
                f"secret docker-registry {name} -n {ns} ...`", param_hint="'--image-pull-secret'")
        if kind not in PULL_TYPES:
            raise click.BadParameter(
                f"Secret {name!r} in namespace {ns!r} is of type {kind}, which holds no "
                f"registry credentials; allowed: {', '.join(PULL_TYPES)}",
                param_hint="'--image-pull-secret'")
