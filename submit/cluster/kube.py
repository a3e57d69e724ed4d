"""The Kubernetes seam: the only module that talks to a cluster's API server.

It uses the official Python client with credentials from the stack's kubeconfig (which
runs ``gke-gcloud-auth-plugin``), applies objects server-side under one field manager, and
turns every failure into a KubeError whose message says what happened and what to do.
Transient faults (429, 5xx, dropped connections) are retried a bounded number of times by
urllib3's ``Retry`` (the HTTP library under the Kubernetes client), with exponential backoff
and the server's Retry-After honoured up to a cap.
The client is imported on first use, so rendering and --dry-run never load it.

The kubeconfig holds credentials (tokens, client keys and certificates), so no message
here ever quotes it: a kubeconfig that does not parse is reported by line and column only,
and every message is scrubbed of the kubeconfig's credential values and of bearer tokens
before it leaves this module (a proxy or webhook may echo a request's headers).
"""

from __future__ import annotations

import logging
import shutil
from typing import Any, Callable, Iterator, TypeVar

import yaml

from submit.cluster.redact import BEARER, REDACTED, credentials, server_message, yaml_problem

FIELD_MANAGER = "accelstack-submit"
JOBSET = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
WORKLOAD = ("kueue.x-k8s.io", "v1beta2", "workloads")
COMPUTE_DOMAIN = ("resource.nvidia.com", "v1beta1", "computedomains")  # A4X multi-node
KUEUE = ("kueue.x-k8s.io", "v1beta2")
# Kueue's on-demand visibility API, served by the Kueue controller through an APIService:
# group visibility.kueue.x-k8s.io, version v1beta2, subresource pendingworkloads of
# ClusterQueues and of namespaced LocalQueues (Kueue's apis/visibility/v1beta2/types.go;
# https://kueue.sigs.k8s.io/docs/tasks/manage/monitor_pending_workloads/pending_workloads_on_demand/:
# `kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/NS/localqueues/Q/pendingworkloads`).
VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"
RETRIES = 3
TIMEOUT = 30.0
# An API server (or a proxy before it) may answer 429 or 503 with Retry-After: honoured,
# but never waited for longer than this.
RETRY_AFTER_MAX = 30.0
BACKOFF_MAX = 10.0
AUTH_PLUGIN = "gke-gcloud-auth-plugin"

T = TypeVar("T")


class KubeError(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class NotFound(KubeError):
    pass


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _retry_policy(retries: int, backoff: float) -> Any:
    """urllib3's Retry for every request of the client: 429 and 5xx answers, timeouts and
    dropped connections are tried ``retries`` more times, whatever the method (an apply is
    a server-side apply, a delete or a merge patch gives the same result twice), waiting
    ``backoff`` x 2^n between tries or the server's Retry-After (capped). When the tries run
    out the last answer is returned as is, so the client raises its ApiException with the
    server's own message (``raise_on_status=False``)."""
    from urllib3.util.retry import Retry

    class _CappedRetry(Retry):
        def parse_retry_after(self, retry_after: str) -> float:
            return min(super().parse_retry_after(retry_after), RETRY_AFTER_MAX)

    return _CappedRetry(
        total=retries, connect=retries, read=retries, status=retries, other=retries,
        redirect=0, allowed_methods=None, status_forcelist=frozenset([429, *range(500, 600)]),
        backoff_factor=backoff, backoff_max=BACKOFF_MAX,
        raise_on_status=False, raise_on_redirect=False, respect_retry_after_header=True)


class Cluster:
    """One cluster, reached through a kubeconfig's text."""

    def __init__(self, kubeconfig: str, *, timeout: float = TIMEOUT, retries: int = RETRIES,
                 backoff: float = 0.5) -> None:
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._secrets: list[str] = []
        try:
            config = yaml.safe_load(kubeconfig)
        except yaml.YAMLError as e:
            raise KubeError(f"the stack's kubeconfig is not YAML ({yaml_problem(e)}; its "
                            "content is not shown: it holds credentials)") from None
        if not isinstance(config, dict) or not config.get("clusters"):
            raise KubeError("the stack's outputs hold no usable kubeconfig (an offline preview "
                            "has none: run `pulumi up` first, then read the stack's outputs)")
        # Longest first, so a secret containing another is scrubbed whole.
        self._secrets = sorted(set(credentials(config)), key=len, reverse=True)
        users = config.get("users")
        for user in users if isinstance(users, list) else []:
            spec = user.get("user") if isinstance(user, dict) else None
            exec_ = spec.get("exec") if isinstance(spec, dict) else None
            cmd = exec_.get("command") if isinstance(exec_, dict) else None
            if isinstance(cmd, str) and cmd and shutil.which(cmd) is None:
                hint = (" (gcloud components install gke-gcloud-auth-plugin)"
                        if cmd == AUTH_PLUGIN else "")
                raise KubeError(f"{cmd} is not on PATH; the kubeconfig needs it to "
                                f"authenticate{hint}")
        from kubernetes import client, config as kconfig

        self.api: Any
        self.core: Any
        self.custom: Any

        # The client runs the exec plugin while loading, and only logs its failure (and the
        # root logger's default handler would print it as is): collect it, say it once.
        plugin_errors = _Collect()
        logging.getLogger().addHandler(plugin_errors)
        try:
            configuration = client.Configuration()
            kconfig.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
                config, client_configuration=configuration)
            configuration.retries = _retry_policy(retries, backoff)
            self.api = client.ApiClient(configuration)
        except Exception as e:  # the client raises ConfigException and plain errors alike
            raise KubeError(self.scrub(f"cannot use the stack's kubeconfig: {e}")) from None
        finally:
            logging.getLogger().removeHandler(plugin_errors)
        if plugin_errors.messages:
            detail = " ".join(" ".join(plugin_errors.messages).split())
            raise KubeError(self.scrub(
                f"the kubeconfig's credential plugin failed ({detail}); run `gcloud auth "
                "login` (and check the plugin with `gke-gcloud-auth-plugin --version`)"))
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)

    # -- error handling -----------------------------------------------------------------

    def scrub(self, message: str) -> str:
        """``message`` without the kubeconfig's credentials or any bearer token."""
        for secret in self._secrets:
            message = message.replace(secret, REDACTED)
        return BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", message)

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """``fn``'s answer, or the KubeError saying why not: urllib3 has already retried
        what is worth retrying (see ``_retry_policy``)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError, MaxRetryError

        try:
            return fn()
        except ApiException as e:
            raise self._error(what, e.status or 0, self.scrub(server_message(e))) from None
        except (HTTPError, OSError) as e:
            cause = e.reason if isinstance(e, MaxRetryError) and e.reason else e
            why = ("timed out after " f"{self.timeout:g}s" if "timed out" in str(cause).lower()
                   else f"connection failed ({e.__class__.__name__})")
            raise KubeError(f"{what}: the API server did not answer: {why}, "
                            f"{self.retries + 1} tries") from None

    @staticmethod
    def _error(what: str, status: int, message: str) -> KubeError:
        # Webhooks deny with 400, 403 or 422; their message says so, whatever the code.
        if "admission webhook" in message or "denied the request" in message or status == 422:
            return KubeError(f"{what}: rejected by the cluster: {message}", status)
        if status == 401:
            return KubeError(f"{what}: not authenticated ({message}); run `gcloud auth login` "
                             "and check the stack's kubeconfig", status)
        if status == 403:
            return KubeError(f"{what}: forbidden ({message}); your account needs a role such "
                             "as roles/container.developer on the project", status)
        if status == 404:
            return NotFound(f"{what}: not found ({message})", status)
        if status == 409:
            return KubeError(f"{what}: already exists or conflicts ({message}); delete it with "
                             "`submit workload delete NAME`, or create it under another "
                             "--workload name", status)
        return KubeError(f"{what}: the API server answered {status}: {message}", status)

    # -- operations ---------------------------------------------------------------------

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply of a JobSet or ConfigMap under accelstack's field manager."""
        kind, meta = obj["kind"], obj["metadata"]
        what = f"apply {kind} {meta['namespace']}/{meta['name']}"
        kwargs = dict(field_manager=FIELD_MANAGER, _content_type="application/apply-patch+yaml",
                      _request_timeout=self.timeout)
        if kind == "JobSet":
            return self._call(what, lambda: self.custom.patch_namespaced_custom_object(
                *JOBSET[:2], meta["namespace"], JOBSET[2], meta["name"], obj,
                field_validation="Strict", **kwargs))
        if kind == "ConfigMap":
            result = self._call(what, lambda: self.core.patch_namespaced_config_map(
                meta["name"], meta["namespace"], obj, **kwargs))
            return dict(self.api.sanitize_for_serialization(result))
        if kind == "ComputeDomain":
            return self._call(what, lambda: self.custom.patch_namespaced_custom_object(
                *COMPUTE_DOMAIN[:2], meta["namespace"], COMPUTE_DOMAIN[2], meta["name"], obj,
                field_validation="Strict", **kwargs))
        raise KubeError(f"cannot apply a {kind}")

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = self._call(f"get JobSet {namespace}/{name}", lambda: (
                self.custom.get_namespaced_custom_object(*JOBSET[:2], namespace, JOBSET[2], name,
                                                         _request_timeout=self.timeout)))
            return found
        except NotFound:
            return None

    def patch_jobset(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        """A JSON merge patch (RFC 7386) of a JobSet: ``release`` adds its queue label."""
        result: dict[str, Any] = self._call(f"patch JobSet {namespace}/{name}", lambda: (
            self.custom.patch_namespaced_custom_object(
                *JOBSET[:2], namespace, JOBSET[2], name, patch,
                _content_type="application/merge-patch+json", _request_timeout=self.timeout)))
        return result

    def get_config_map(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            result = self._call(f"get ConfigMap {namespace}/{name}", lambda: (
                self.core.read_namespaced_config_map(name, namespace,
                                                     _request_timeout=self.timeout)))
        except NotFound:
            return None
        return dict(self.api.sanitize_for_serialization(result))

    def list_config_maps(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        result = self._call(f"list ConfigMaps in {namespace}", lambda: (
            self.core.list_namespaced_config_map(namespace, label_selector=selector,
                                                 _request_timeout=self.timeout)))
        return list(self.api.sanitize_for_serialization(result).get("items", []))

    def list_jobsets(self, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
        result = self._call(f"list JobSets in {namespace}", lambda: (
            self.custom.list_namespaced_custom_object(
                *JOBSET[:2], namespace, JOBSET[2], label_selector=selector,
                _request_timeout=self.timeout)))
        return list(result.get("items", []))

    def list_jobset(self, namespace: str, name: str) -> tuple[dict[str, Any] | None, str]:
        """One JobSet by a list with a field selector (None when there is none), and the
        list's resourceVersion: where a watch of it starts."""
        result = self._call(f"list JobSets in {namespace}", lambda: (
            self.custom.list_namespaced_custom_object(
                *JOBSET[:2], namespace, JOBSET[2], field_selector=f"metadata.name={name}",
                _request_timeout=self.timeout)))
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

    def list_workloads(self, namespace: str) -> list[dict[str, Any]]:
        result = self._call(f"list Kueue workloads in {namespace}", lambda: (
            self.custom.list_namespaced_custom_object(
                *WORKLOAD[:2], namespace, WORKLOAD[2], _request_timeout=self.timeout)))
        return list(result.get("items", []))

    def delete_jobset(self, namespace: str, name: str) -> None:
        # Foreground: the Jobs and pods go before the JobSet does.
        self._call(f"delete JobSet {namespace}/{name}", lambda: (
            self.custom.delete_namespaced_custom_object(
                *JOBSET[:2], namespace, JOBSET[2], name, propagation_policy="Foreground",
                _request_timeout=self.timeout)))

    def delete_config_map(self, namespace: str, name: str) -> None:
        try:
            self._call(f"delete ConfigMap {namespace}/{name}", lambda: (
                self.core.delete_namespaced_config_map(name, namespace,
                                                       _request_timeout=self.timeout)))
        except NotFound:
            pass

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

    def delete_compute_domain(self, namespace: str, name: str) -> None:
        try:
            self._call(f"delete ComputeDomain {namespace}/{name}", lambda: (
                self.custom.delete_namespaced_custom_object(
                    *COMPUTE_DOMAIN[:2], namespace, COMPUTE_DOMAIN[2], name,
                    _request_timeout=self.timeout)))
        except NotFound:
            pass

    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        result = self._call(f"list pods in {namespace}", lambda: (
            self.core.list_namespaced_pod(namespace, label_selector=selector,
                                          _request_timeout=self.timeout)))
        return list(self.api.sanitize_for_serialization(result).get("items", []))

    def list_nodes(self, selector: str) -> list[dict[str, Any]]:
        """Nodes with these labels (where a workload's slices run and from which capacity)."""
        result = self._call("list nodes", lambda: (
            self.core.list_node(label_selector=selector, _request_timeout=self.timeout)))
        return list(self.api.sanitize_for_serialization(result).get("items", []))

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
        result = self._call(f"list events of {kind} {name}", lambda: (
            self.core.list_namespaced_event(namespace, field_selector=selector,
                                            _request_timeout=self.timeout)))
        return list(self.api.sanitize_for_serialization(result).get("items", []))

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
            found: dict[str, Any] = self._call(f"get LocalQueue {namespace}/{name}", lambda: (
                self.custom.get_namespaced_custom_object(
                    *KUEUE, namespace, "localqueues", name, _request_timeout=self.timeout)))
            return found
        except NotFound:
            return None

    def list_cluster_queues(self) -> list[dict[str, Any]]:
        result = self._call("list ClusterQueues", lambda: (
            self.custom.list_cluster_custom_object(*KUEUE, "clusterqueues",
                                                   _request_timeout=self.timeout)))
        return list(result.get("items", []))

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
