"""The Kubernetes seam: the only module that talks to a cluster's API server.

It uses the official Python client with credentials from the stack's kubeconfig (which
runs ``gke-gcloud-auth-plugin``), applies objects server-side under one field manager, and
turns every failure into a KubeError whose message says what happened and what to do.
Transient faults (429, 5xx, dropped connections) are retried a bounded number of times by
urllib3's ``Retry`` (the HTTP library under the Kubernetes client), with exponential backoff
and the server's Retry-After honoured up to a cap.
The client is imported on first use, so rendering and --dry-run never load it; it is made
from the kubeconfig in kube_client.py. Every list is read in pages (paging.py).

The kubeconfig holds credentials (tokens, client keys and certificates), so no message
here ever quotes it: a kubeconfig that does not parse is reported by line and column only,
and every message is scrubbed of the kubeconfig's credential values and of bearer tokens
before it leaves this module (a proxy or webhook may echo a request's headers).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator, TypeVar

from submit.cluster import kube_client, paging
from submit.cluster.kube_http import RETRY_AFTER_MAX, KubeError, NotFound, error
from submit.cluster.redact import server_message

__all__ = ["RETRY_AFTER_MAX", "Cluster", "KubeError", "NotFound"]

FIELD_MANAGER = "accelstack-submit"
JOBSET = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
WORKLOAD = ("kueue.x-k8s.io", "v1beta2", "workloads")
COMPUTE_DOMAIN = ("resource.nvidia.com", "v1beta1", "computedomains")  # A4X multi-node
# GKE's Slice (dynamic slicing), cluster-scoped: https://docs.cloud.google.com/
# kubernetes-engine/docs/reference/crds/slice (apiVersion accelerator.gke.io/v1beta1).
SLICE = ("accelerator.gke.io", "v1beta1", "slices")
KUEUE = ("kueue.x-k8s.io", "v1beta2")
# Kueue's on-demand visibility API, served by the Kueue controller through an APIService:
# group visibility.kueue.x-k8s.io, version v1beta2, subresource pendingworkloads of
# ClusterQueues and of namespaced LocalQueues (Kueue's apis/visibility/v1beta2/types.go;
# https://kueue.sigs.k8s.io/docs/tasks/manage/monitor_pending_workloads/pending_workloads_on_demand/:
# `kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/NS/localqueues/Q/pendingworkloads`).
VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"
RETRIES = 3
TIMEOUT = 30.0

T = TypeVar("T")


class Cluster:
    """One cluster, reached through a kubeconfig's text."""

    def __init__(self, kubeconfig: str, *, timeout: float = TIMEOUT, retries: int = RETRIES,
                 backoff: float = 0.5) -> None:
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.api: Any
        self.api, self._secrets = kube_client.make(kubeconfig, retries, backoff)
        from kubernetes import client

        self.core: Any = client.CoreV1Api(self.api)
        self.custom: Any = client.CustomObjectsApi(self.api)

    # -- error handling -----------------------------------------------------------------

    def scrub(self, message: str) -> str:
        """``message`` without the kubeconfig's credentials or any bearer token."""
        return kube_client.scrub(message, self._secrets)

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """``fn``'s answer, or the KubeError saying why not: urllib3 has already retried
        what is worth retrying (see ``kube_http.retry_policy``)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError, MaxRetryError

        try:
            return fn()
        except ApiException as e:
            raise error(what, e.status or 0, self.scrub(server_message(e))) from None
        except (HTTPError, OSError) as e:
            cause = e.reason if isinstance(e, MaxRetryError) and e.reason else e
            why = ("timed out after " f"{self.timeout:g}s" if "timed out" in str(cause).lower()
                   else f"connection failed ({e.__class__.__name__})")
            raise KubeError(f"{what}: the API server did not answer: {why}, "
                            f"{self.retries + 1} tries") from None

    def _json(self, what: str, method: Callable[..., Any], *args: Any,
              **kwargs: Any) -> dict[str, Any]:
        """The JSON object the API server answered ``method``'s request with, whatever
        its 2xx code. The generated client deserializes only the codes its OpenAPI names and
        returns None for the others (37.x: only '200' for a custom object's patch and
        delete), yet kube-apiserver answers 201 Created to a server-side apply that creates
        (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go, PatchResource:
        ``if wasCreated { status = http.StatusCreated }``) and 202 Accepted to some deletes
        (handlers/delete.go). So every write, and every read of a custom object, takes the
        raw answer and decodes it here: a caller never gets None."""
        kwargs.setdefault("_request_timeout", self.timeout)

        def call() -> dict[str, Any]:
            response = method(*args, _preload_content=False, **kwargs)
            try:
                body = json.loads(response.data)
            except ValueError:
                body = None
            if not isinstance(body, dict):
                raise KubeError(f"{what}: the API server answered {response.status} "
                                "without a JSON object", response.status)
            return body

        return self._call(what, call)

    def _model(self, what: str, method: Callable[..., Any], *args: Any,
               **kwargs: Any) -> dict[str, Any]:
        """A read of core objects (always 200) through the client's models, as a dict in
        the client's own rendering (timestamps as ``datetime.isoformat``)."""
        result = self._call(what, lambda: method(*args, _request_timeout=self.timeout,
                                                 **kwargs))
        return dict(self.api.sanitize_for_serialization(result))

    def _pages(self, what: str, read: Callable[..., dict[str, Any]], method: Callable[..., Any],
               *args: Any, **kwargs: Any) -> Iterator[list[dict[str, Any]]]:
        """A list in pages (``limit``, ``continue``; submit/cluster/paging.py); ``read``:
        ``self._json`` (custom objects) or ``self._model`` (core kinds)."""
        def fetch(limit: int, token: str | None) -> dict[str, Any]:
            more = {"_continue": token} if token else {}
            return read(what, method, *args, limit=limit, **more, **kwargs)
        return paging.pages(fetch)

    def _custom(self, what: str, gvr: tuple[str, str, str], namespace: str | None = None,
                **kwargs: Any) -> Iterator[list[dict[str, Any]]]:
        """Custom objects in pages, of a namespace or (None) cluster-scoped."""
        group, version, plural = gvr
        if namespace is None:
            return self._pages(what, self._json, self.custom.list_cluster_custom_object,
                               group, version, plural, **kwargs)
        return self._pages(what, self._json, self.custom.list_namespaced_custom_object,
                           group, version, namespace, plural, **kwargs)

    # -- operations ---------------------------------------------------------------------

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply of a JobSet, ConfigMap or ComputeDomain under accelstack's
        field manager: the object as the server stored it, created (201) or changed (200)."""
        kind, meta = obj["kind"], obj["metadata"]
        what = f"apply {kind} {meta['namespace']}/{meta['name']}"
        kwargs = dict(field_manager=FIELD_MANAGER, _content_type="application/apply-patch+yaml")
        if kind == "ConfigMap":
            return self._json(what, self.core.patch_namespaced_config_map, meta["name"],
                              meta["namespace"], obj, **kwargs)
        custom = {"JobSet": JOBSET, "ComputeDomain": COMPUTE_DOMAIN}.get(kind)
        if custom is None:
            raise KubeError(f"cannot apply a {kind}")
        return self._json(what, self.custom.patch_namespaced_custom_object, *custom[:2],
                          meta["namespace"], custom[2], meta["name"], obj,
                          field_validation="Strict", **kwargs)

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._json(f"get JobSet {namespace}/{name}",
                              self.custom.get_namespaced_custom_object, *JOBSET[:2], namespace,
                              JOBSET[2], name)
        except NotFound:
            return None

    def patch_jobset(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        """A JSON merge patch (RFC 7386) of a JobSet: ``release`` adds its queue label."""
        return self._json(f"patch JobSet {namespace}/{name}",
                          self.custom.patch_namespaced_custom_object, *JOBSET[:2], namespace,
                          JOBSET[2], name, patch, _content_type="application/merge-patch+json")

    def get_config_map(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._model(f"get ConfigMap {namespace}/{name}",
                               self.core.read_namespaced_config_map, name, namespace)
        except NotFound:
            return None

    def list_config_maps(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        return paging.flat(self._pages(f"list ConfigMaps in {namespace}", self._model,
                                       self.core.list_namespaced_config_map, namespace,
                                       label_selector=selector))

    def jobset_pages(self, namespace: str, selector: str | None = None
                     ) -> Iterator[list[dict[str, Any]]]:
        return self._custom(f"list JobSets in {namespace}", JOBSET, namespace,
                            label_selector=selector)

    def list_jobsets(self, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
        return paging.flat(self.jobset_pages(namespace, selector))

    def list_jobset(self, namespace: str, name: str) -> tuple[dict[str, Any] | None, str]:
        """One JobSet by a list with a field selector (None when there is none), and the
        list's resourceVersion: where a watch of it starts."""
        result = self._json(f"list JobSets in {namespace}",
                            self.custom.list_namespaced_custom_object, *JOBSET[:2], namespace,
                            JOBSET[2], field_selector=f"metadata.name={name}")
        items = result.get("items") or []
        version = (result.get("metadata") or {}).get("resourceVersion") or ""
        return (dict(items[0]) if items else None), str(version)

    def watch_jobset(self, namespace: str, name: str, resource_version: str,
                     seconds: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """The changes of one JobSet after ``resource_version`` as (event type, object),
        through the client's ``Watch`` for at most ``seconds`` (the watch's timeoutSeconds;
        the read timeout bounds a server that ignores it). An expired resourceVersion raises
        a KubeError with status 410 (Gone): the caller lists again
        (https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes)."""
        from kubernetes import watch

        stream = watch.Watch().stream(  # type: ignore[no-untyped-call]
            self.custom.list_namespaced_custom_object, *JOBSET[:2], namespace, JOBSET[2],
            field_selector=f"metadata.name={name}", resource_version=resource_version,
            allow_watch_bookmarks=True, timeout_seconds=seconds,
            _request_timeout=(self.timeout, seconds + self.timeout))
        try:
            while True:
                event = self._call(f"watch JobSet {namespace}/{name}",
                                   lambda: next(stream, None))
                if event is None:
                    return
                yield str(event["type"]), dict(event["object"])
        finally:
            stream.close()

    def workload_pages(self, namespace: str) -> Iterator[list[dict[str, Any]]]:
        return self._custom(f"list Kueue workloads in {namespace}", WORKLOAD, namespace)

    def list_workloads(self, namespace: str) -> list[dict[str, Any]]:
        return paging.flat(self.workload_pages(namespace))

    def delete_jobset(self, namespace: str, name: str) -> dict[str, Any]:
        """The API server's answer: the JobSet, marked for deletion, while the garbage
        collector removes its Jobs and pods first (Foreground), or a Status once it is gone."""
        return self._json(f"delete JobSet {namespace}/{name}",
                          self.custom.delete_namespaced_custom_object, *JOBSET[:2], namespace,
                          JOBSET[2], name, propagation_policy="Foreground")

    def delete_config_map(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The API server's answer (a Status once it is gone), None when there was none."""
        try:
            return self._json(f"delete ConfigMap {namespace}/{name}",
                              self.core.delete_namespaced_config_map, name, namespace)
        except NotFound:
            return None

    def secret_type(self, namespace: str, name: str) -> str | None:
        """The ``type`` of a Secret (``kubernetes.io/dockerconfigjson``, ...), or None when
        the namespace has no Secret of that name. Its data is dropped unread: nothing but
        the type leaves this method (--image-pull-secret's check)."""
        try:
            found = self._call(f"get Secret {namespace}/{name}", lambda: (
                self.core.read_namespaced_secret(name, namespace,
                                                 _request_timeout=self.timeout)))
        except NotFound:
            return None
        return str(found.type or "Opaque")

    def delete_compute_domain(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._json(f"delete ComputeDomain {namespace}/{name}",
                              self.custom.delete_namespaced_custom_object,
                              *COMPUTE_DOMAIN[:2], namespace, COMPUTE_DOMAIN[2], name)
        except NotFound:
            return None

    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        return paging.flat(self._pages(f"list pods in {namespace}", self._model,
                                       self.core.list_namespaced_pod, namespace,
                                       label_selector=selector))

    def list_nodes(self, selector: str) -> list[dict[str, Any]]:
        """Nodes with these labels (where a workload's slices run and from which capacity)."""
        return paging.flat(self._pages("list nodes", self._model, self.core.list_node,
                                       label_selector=selector))

    def node_versions(self, selector: str) -> list[str] | None:
        """The kubelet versions (``v1.33.5-gke.1080000``) of the nodes ``selector`` picks, or
        None when the submitter may not list nodes (a cluster-scoped read many job
        submitters' RBAC does not grant)."""
        try:
            items = self.list_nodes(selector)
        except KubeError as e:
            if e.status == 403:
                return None
            raise
        return [str((n.get("status") or {}).get("nodeInfo", {}).get("kubeletVersion", ""))
                for n in items]

    def events(self, namespace: str, kind: str, name: str) -> list[dict[str, Any]]:
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        return paging.flat(self._pages(f"list events of {kind} {name}", self._model,
                                       self.core.list_namespaced_event, namespace,
                                       field_selector=selector))

    def logs(self, namespace: str, pod: str, container: str, follow: bool = False,
             tail: int | None = None) -> Iterator[str]:
        what = f"logs of {namespace}/{pod}"
        resp = self._call(what, lambda: self.core.read_namespaced_pod_log(
            pod, namespace, container=container, follow=follow, tail_lines=tail,
            _preload_content=False, _request_timeout=None if follow else self.timeout))
        from urllib3.exceptions import HTTPError

        buf = b""
        try:
            for chunk in resp.stream(1024, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    yield line.decode("utf-8", "replace")
        except (HTTPError, OSError) as e:
            raise KubeError(f"{what}: the connection was lost while reading "
                            f"({e.__class__.__name__}); run the command again") from None
        if buf:
            yield buf.decode("utf-8", "replace")

    # -- Kueue queues and the visibility API (describe, `workload queue`) ----------------

    def get_local_queue(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._json(f"get LocalQueue {namespace}/{name}",
                              self.custom.get_namespaced_custom_object, *KUEUE, namespace,
                              "localqueues", name)
        except NotFound:
            return None

    def list_slices(self) -> list[dict[str, Any]] | None:
        """GKE's Slices; None when the cluster does not serve them (404: no slice
        controller) or the account may not list them (403)."""
        try:
            return paging.flat(self._custom("list Slices", SLICE))
        except KubeError as e:
            if e.status in (403, 404):
                return None
            raise

    def list_cluster_queues(self) -> list[dict[str, Any]]:
        return paging.flat(self._custom("list ClusterQueues", (*KUEUE, "clusterqueues")))

    def pending_workloads(self, path: str) -> list[dict[str, Any]] | None:
        """Items of a pendingworkloads summary (``path``: ``clusterqueues/CQ`` or
        ``namespaces/NS/localqueues/LQ``), in queue order; None when the visibility API is
        not served or this user may not read it (the caller says so)."""
        def call() -> Any:
            # No generated API class for this aggregated API: the client's own request path.
            params = self.api.param_serialize(
                "GET", f"{VISIBILITY}/{path}/pendingworkloads",
                header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
            resp = self.api.call_api(*params, _request_timeout=self.timeout)
            resp.read()
            return self.api.response_deserialize(resp, {"200": "object"}).data
        try:
            result = self._call(f"read pending workloads of {path}", call)
        except KubeError as e:
            if e.status in (401, 403, 404, 503):
                return None
            raise
        return list((result or {}).get("items") or [])

    def list_multikueue_clusters(self) -> list[dict[str, Any]]:
        """The manager's MultiKueueClusters: its ``Active`` condition is Kueue's own word on
        whether it reaches the worker (v0.19.2 MultiKueueClusterActive)."""
        return paging.flat(self._custom("list MultiKueueClusters",
                                        (*KUEUE, "multikueueclusters")))

    def list_admission_checks(self) -> list[dict[str, Any]]:
        return paging.flat(self._custom("list AdmissionChecks", (*KUEUE, "admissionchecks")))

    # -- maintenance: hold and resume a pool's queues, the control plane's version -------

    def list_resource_flavors(self) -> list[dict[str, Any]]:
        """Kueue's ResourceFlavors: their spec.nodeLabels say which pool's nodes they are."""
        return paging.flat(self._custom("list ResourceFlavors", (*KUEUE, "resourceflavors")))

    def set_stop_policy(self, cluster_queue: str, policy: str | None) -> dict[str, Any]:
        """Set a ClusterQueue's spec.stopPolicy (``Hold``, ``HoldAndDrain``) or remove it
        (None: Kueue's default, ``None``, admits again) with a JSON merge patch (RFC 7386:
        null deletes the key). Kueue's v1beta2 ClusterQueue: "if set to a value different
        from None, the ClusterQueue is considered Inactive, no new reservation being made";
        HoldAndDrain also evicts admitted workloads, Hold lets them run to completion."""
        return self._json(f"patch ClusterQueue {cluster_queue}",
                          self.custom.patch_cluster_custom_object, *KUEUE, "clusterqueues",
                          cluster_queue, {"spec": {"stopPolicy": policy}},
                          _content_type="application/merge-patch+json")

    def control_plane_version(self) -> str | None:
        """The API server's gitVersion (``v1.33.5-gke.1080000``; GET /version), None when
        it does not say."""
        from kubernetes import client

        info = self._json("read the API server's version", client.VersionApi(self.api).get_code)
        version = info.get("gitVersion")
        return version if isinstance(version, str) and version else None
