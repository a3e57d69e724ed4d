"""Kueue and JobSet already running on a cluster, and what the stack's install meets there.

Pure: from a Kubernetes List of Deployments (what `kubectl get deployments -A -o json`
prints, or the Kubernetes API's list of apps/v1 Deployments; recorded for offline use) to
the versions running, read from the controllers' image tags: Kueue's
``kueue-controller-manager`` in ``kueue-system`` (registry.k8s.io/kueue/kueue:vX, the
release manifests' image) and JobSet's ``jobset-controller-manager`` in ``jobset-system``
(registry.k8s.io/jobset/jobset:vX; infra/specs/addons.py names the same Deployment).

What an install in place meets (``notes``): the stack installs Kueue as the Helm release
``kueue`` and JobSet from its release manifest, both through pulumi-kubernetes, which by
default errors on an object that exists already ("By default, Pulumi will error if a
resource already exists in the cluster": pulumi_kubernetes Provider upsertExistingObjects,
v4.29.0); Helm 3 refuses to install over objects it does not own (its ownership check:
"invalid ownership metadata" unless the objects carry the release's
meta.helm.sh/release-name annotation). So `up` stops with an error at the existing install;
nothing of it is replaced behind the user's back.
"""

from __future__ import annotations

from typing import Any, Mapping

COMPONENTS = {
    "Kueue": ("kueue-system", "kueue-controller-manager", "/kueue/kueue:"),
    "JobSet": ("jobset-system", "jobset-controller-manager", "/jobset/jobset:"),
}


def installed(deployments: Mapping[str, Any]) -> dict[str, str]:
    """Component name -> the version its controller's image runs (``v0.12.3``)."""
    out: dict[str, str] = {}
    for item in deployments.get("items") or []:
        meta = item.get("metadata") or {}
        for name, (namespace, deployment, marker) in COMPONENTS.items():
            if (meta.get("namespace"), meta.get("name")) != (namespace, deployment):
                continue
            containers = (((item.get("spec") or {}).get("template") or {}).get("spec")
                          or {}).get("containers") or []
            for c in containers:
                image = str(c.get("image") or "")
                if marker in image:
                    out[name] = image.split(marker, 1)[1].split("@", 1)[0]
    return out


def notes(running: Mapping[str, str], wanted: Mapping[str, str]) -> list[str]:
    """One line per component that runs already: its version against the stack's, and what
    the stack's install does there."""
    out = []
    how = {"Kueue": "the Helm release kueue in kueue-system",
           "JobSet": "its release manifest in jobset-system"}
    for name, version in sorted(running.items()):
        want = wanted.get(name)
        if want is None:
            continue
        same = "the stack's version" if version == want else f"the stack's is {want}"
        out.append(f"{name} {version} runs on the cluster ({same}); the stack installs it as "
                   f"{how[name]}, over objects another tool applied: `pulumi up` stops with "
                   "an error at the first of them (pulumi-kubernetes does not take over "
                   "existing objects, nor Helm objects it does not own); remove the running {name} first (its CRDs, and the "
                   "workloads they hold, go with it), then `pulumi up` installs the stack's "
                   "(docs/adopt.md)")
    return out
