"""The Kubernetes client of the seam (submit/cluster/kube.py), made from the stack's
kubeconfig: the text parsed and checked (a cluster to reach, the credential plugin on PATH),
the credentials it holds listed for scrubbing, and the client configured with the retry
policy. The credential plugin runs here (the client runs it while loading); nothing is sent
to the cluster. No message quotes the kubeconfig: it holds credentials.
"""

from __future__ import annotations

import logging
import shutil
from typing import Any

import yaml

from submit.cluster.kube_http import Collect, KubeError, retry_policy
from submit.cluster.kubeconfig import exec_commands
from submit.cluster.redact import BEARER, REDACTED, credentials, yaml_problem

AUTH_PLUGIN = "gke-gcloud-auth-plugin"


def scrub(message: str, secrets: list[str]) -> str:
    """``message`` without the kubeconfig's credentials or any bearer token."""
    for secret in secrets:
        message = message.replace(secret, REDACTED)
    return BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", message)


def make(kubeconfig: str, retries: int, backoff: float) -> tuple[Any, list[str]]:
    """(the client's ApiClient, the kubeconfig's credentials, longest first), or the
    KubeError saying why the kubeconfig cannot be used."""
    try:
        config = yaml.safe_load(kubeconfig)
    except yaml.YAMLError as e:
        raise KubeError(f"the stack's kubeconfig is not YAML ({yaml_problem(e)}; its "
                        "content is not shown: it holds credentials)") from None
    if not isinstance(config, dict) or not config.get("clusters"):
        raise KubeError("the stack's outputs hold no usable kubeconfig (an offline preview "
                        "has none: run `pulumi up` first, then read the stack's outputs)")
    # Longest first, so a secret containing another is scrubbed whole.
    secrets = sorted(set(credentials(config)), key=len, reverse=True)
    for cmd in exec_commands(config):
        if shutil.which(cmd) is None:
            hint = (" (gcloud components install gke-gcloud-auth-plugin)"
                    if cmd == AUTH_PLUGIN else "")
            raise KubeError(f"{cmd} is not on PATH; the kubeconfig needs it to "
                            f"authenticate{hint}")
    from kubernetes import client, config as kconfig

    # The client runs the exec plugin while loading, and only logs its failure (and the
    # root logger's default handler would print it as is): collect it, say it once.
    plugin_errors = Collect()
    logging.getLogger().addHandler(plugin_errors)
    try:
        configuration = client.Configuration()
        kconfig.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            config, client_configuration=configuration)
        configuration.retries = retry_policy(retries, backoff)
        api = client.ApiClient(configuration)
    except Exception as e:  # the client raises ConfigException and plain errors alike
        raise KubeError(scrub(f"cannot use the stack's kubeconfig: {e}", secrets)) from None
    finally:
        logging.getLogger().removeHandler(plugin_errors)
    if plugin_errors.messages:
        detail = " ".join(" ".join(plugin_errors.messages).split())
        raise KubeError(scrub(
            f"the kubeconfig's credential plugin failed ({detail}); run `gcloud auth "
            "login` (and check the plugin with `gke-gcloud-auth-plugin --version`)", secrets))
    return api, secrets
