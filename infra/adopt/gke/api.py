"""The one module that reads the Kubernetes Engine API: a cluster with its node pools.

REST over ``requests`` with an OAuth access token from google-auth's Application Default
Credentials (or ``ACCELSTACK_GKE_TOKEN``, a token such as ``gcloud auth
print-access-token`` prints). It reads through v1beta1, the version pulumi-gcp's provider
(google-beta) reads, because v1's NodeConfig has no hostMaintenancePolicy
(../shared/reference/upstream/gke-container-v1-discovery/container.v1.json), and an xpk TPU
pool carries one. ``projects.locations.clusters.get`` answers the Cluster with its
``nodePools``, each with its full config, so one GET is the whole read.

Errors are one line (GkeApiError), naming the cluster and what to do; a 403 names the
permission GKE reports missing.
"""

from __future__ import annotations

import json
import os
from typing import Any

import requests

ENDPOINT = "https://container.googleapis.com/v1beta1/"
ENDPOINT_ENV = "ACCELSTACK_GKE_ENDPOINT"  # another API root (tests: a fake on loopback)
TOKEN_ENV = "ACCELSTACK_GKE_TOKEN"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
TIMEOUT = 30.0


class GkeApiError(Exception):
    """A read that failed; the message is one line for the user."""


def _token() -> str:
    token = os.environ.get(TOKEN_ENV)
    if token:
        return token
    try:
        import google.auth
        from google.auth.transport.requests import Request

        credentials, _ = google.auth.default(scopes=[SCOPE])
        credentials.refresh(Request())  # type: ignore[no-untyped-call]
    except Exception as e:  # google.auth raises several kinds; all mean "no credentials"
        raise GkeApiError(f"no Google Cloud credentials ({type(e).__name__}): run `gcloud "
                          f"auth application-default login`, or set {TOKEN_ENV}") from None
    return str(credentials.token)


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
        return str(body["error"]["message"]).splitlines()[0]
    except (ValueError, KeyError, TypeError, IndexError):
        return response.reason or ""


def get_cluster(project: str, location: str, name: str, *, endpoint: str | None = None,
                token: str | None = None, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The Cluster resource (JSON) of projects/PROJECT/locations/LOCATION/clusters/NAME."""
    resource = f"projects/{project}/locations/{location}/clusters/{name}"
    root = endpoint or os.environ.get(ENDPOINT_ENV) or ENDPOINT
    url = root.rstrip("/") + "/" + resource
    headers = {"Authorization": f"Bearer {token or _token()}", "Accept": "application/json"}
    try:
        response = requests.get(url, headers=headers, timeout=timeout)
    except requests.RequestException as e:
        raise GkeApiError(f"{resource}: the GKE API did not answer ({type(e).__name__}); "
                          "check the network, or adopt offline from a recorded answer with "
                          "--answer FILE") from None
    if response.status_code == 403:
        raise GkeApiError(f"{resource}: permission denied (403: {_message(response)}); the "
                          "account needs container.clusters.get, e.g. roles/container."
                          f"clusterViewer on project {project}")
    if response.status_code == 404:
        raise GkeApiError(f"{resource}: no such cluster (404: {_message(response)}); check "
                          "PROJECT/LOCATION/CLUSTER with `gcloud container clusters list`")
    if response.status_code == 401:
        raise GkeApiError(f"{resource}: the credentials were refused (401); run `gcloud auth "
                          "application-default login`")
    if response.status_code != 200:
        raise GkeApiError(f"{resource}: the GKE API answered {response.status_code} "
                          f"({_message(response)})")
    try:
        data = response.json()
    except json.JSONDecodeError:
        raise GkeApiError(f"{resource}: the GKE API's answer is not JSON") from None
    if not isinstance(data, dict):
        raise GkeApiError(f"{resource}: the GKE API's answer is not a Cluster")
    return data
