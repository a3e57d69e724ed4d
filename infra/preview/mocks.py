"""What the mock engine answers for the program's resources: the Pulumi SDK's ``Mocks``
(the state a resource would have, the data sources' results) and the monitor that records
each registration's order and options, with the stand-in values only the cloud knows (a
cluster's endpoint and CA, a service account's email, a token) and the secret wrapper.

Used by harness.py, which runs the program under them; imports pulumi. Must not import
submit.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping

import pulumi
from pulumi.runtime import mocks as _mocks

from infra.record import record

SECRET_SIG = "4dabf18193072939515e22adb298388d"
MASK = "[secret]"
PREVIEW_ENDPOINT = "203.0.113.10"  # TEST-NET-3: a documentation address, never routed
PREVIEW_DNS_SUFFIX = "dns-endpoint.example"
PREVIEW_NAT_BASE = "203.0.113."  # Cloud NAT's reserved addresses: TEST-NET-3 .64 on
PREVIEW_PROJECT_NUMBER = "123456789012"  # stands in for the project's number
PREVIEW_CA = base64.b64encode(b"accelstack offline preview: no certificate").decode()


@record
class Secret:
    """A secret input value, kept apart so it is never printed."""

    value: Any

    def __repr__(self) -> str:
        return MASK


def unwrap(value: Any) -> Any:
    """Inputs as the engine sends them, with each secret as a ``Secret``."""
    if isinstance(value, dict):
        if value.get(SECRET_SIG) == "1b47061264138c4ac30d75fd1eb44270":
            return Secret(unwrap(value.get("value")))
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """``value`` with every ``Secret`` replaced by what it holds."""
    if isinstance(value, Secret):
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


# What the token controller puts in a service-account-token Secret, in a preview.
PREVIEW_TOKEN = "accelstack-preview-token"


class Mocks(pulumi.runtime.Mocks):
    # Existing buckets the mock engine reports without hierarchical namespace (tests set
    # it). Only Cloud Storage knows a bucket's namespace: an offline preview takes every
    # existing bucket to have one; a real preview reads it (infra/components/checkpointing.py).
    flat_buckets: frozenset[str] = frozenset()

    def __init__(self, references: Mapping[str, Any] | None = None) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.transforms: dict[tuple[str, str], int] = {}
        self.references = dict(references or {})  # stack name -> its outputs

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            # A StackReference is read, not registered: its state is the stack's outputs.
            target = str(args.inputs.get("name"))
            self.inputs[(args.typ, args.name)] = {"name": target}
            return target, {"name": target, "outputs": self.references.get(target, {}),
                            "secretOutputNames": []}
        inputs = unwrap(dict(args.inputs))
        self.inputs[(args.typ, args.name)] = inputs
        self.transforms[(args.typ, args.name)] = len(args.transforms)
        state = plain(inputs)
        name = state.get("name", args.name)
        project = state.get("project", "preview-project")
        rid = f"{args.name}-id"
        if args.typ == "gcp:container/cluster:Cluster":
            loc = state.get("location")
            rid = f"projects/{project}/locations/{loc}/clusters/{name}"
            state["endpoint"] = PREVIEW_ENDPOINT
            state["masterAuth"] = {"clusterCaCertificate": PREVIEW_CA}
            dns = (state.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")
            if dns is not None:
                # GKE's name is <uid>.<region>.gke.goog; .example is reserved (RFC 2606).
                dns["endpoint"] = f"{name}.{loc}.{PREVIEW_DNS_SUFFIX}"
        elif args.typ == "gcp:monitoring/dashboard:Dashboard":
            # The API names a dashboard projects/<number>/dashboards/<id>.
            rid = f"projects/{project}/dashboards/{args.name}"
        elif args.typ == "gcp:serviceaccount/account:Account":
            state["email"] = f"{state['accountId']}@{project}.iam.gserviceaccount.com"
        elif args.typ == "gcp:compute/network:Network":
            rid = f"projects/{project}/global/networks/{name}"
        elif args.typ == "gcp:compute/subnetwork:Subnetwork":
            rid = f"projects/{project}/regions/{state.get('region')}/subnetworks/{name}"
        elif args.typ == "gcp:compute/address:Address":
            # A reserved external address (Cloud NAT's): TEST-NET-3, never routed.
            index = int(str(name).rsplit("-", 1)[-1]) if str(name)[-1:].isdigit() else 0
            state.setdefault("address", f"{PREVIEW_NAT_BASE}{64 + index}")
            state["selfLink"] = (f"https://www.googleapis.com/compute/v1/projects/{project}/"
                                 f"regions/{state.get('region')}/addresses/{name}")
        elif args.typ == "gcp:compute/globalAddress:GlobalAddress":
            state.setdefault("address", "10.200.0.0")  # the range Google would allocate
        elif args.typ == "gcp:filestore/instance:Instance":
            for net in state.get("networks") or []:
                net["ipAddresses"] = ["10.200.0.2"]
        elif args.typ == "gcp:parallelstore/instance:Instance":
            state["accessPoints"] = ["10.200.0.3", "10.200.0.4", "10.200.0.5"]
        elif (args.typ == "kubernetes:core/v1:Secret"
              and state.get("type") == "kubernetes.io/service-account-token"):
            # The token controller fills a service-account-token Secret (pulumi-kubernetes
            # waits for it): a stand-in token and CA.
            state["data"] = {"token": base64.b64encode(PREVIEW_TOKEN.encode()).decode(),
                             "ca.crt": PREVIEW_CA}
        elif args.typ == "gcp:vertex/aiTensorboard:AiTensorboard":
            # Vertex AI names an instance by project number and a numeric id.
            rid = (f"projects/{PREVIEW_PROJECT_NUMBER}/locations/{state.get('region')}/"
                   f"tensorboards/1234567890")
            state["name"] = rid
        elif args.typ == "gcp:lustre/instance:Instance":
            state["mountPoint"] = f"10.200.0.6@tcp:/{state.get('filesystem')}"
        state["id"] = rid
        return rid, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        if args.token == "gcp:organizations/getProject:getProject":
            project = args.args.get("projectId", "preview-project")
            return {"projectId": project, "number": PREVIEW_PROJECT_NUMBER,
                    "name": project}, []
        if args.token == "gcp:storage/getBucket:getBucket":
            name = args.args.get("name")
            return {"name": name, "hierarchicalNamespaces": [
                {"enabled": name not in self.flat_buckets}]}, []
        return {}, []


class Monitor(_mocks.MockMonitor):
    def __init__(self, mocks: Mocks) -> None:
        super().__init__(mocks)
        self.order: list[tuple[str, str, str, bool, tuple[str, ...]]] = []
        # (type, name) -> (import ID, ignore_changes): the options an adoption sets
        self.options: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (the gRPC method name)
        self.options[(request.type, request.name)] = (
            str(getattr(request, "importId", "") or ""),
            tuple(getattr(request, "ignoreChanges", ()) or ()))
        if request.type != "pulumi:pulumi:Stack":
            self.order.append((request.type, request.name, request.parent,
                               bool(request.custom), tuple(request.dependencies)))
        return super().RegisterResource(request)  # type: ignore[no-untyped-call]

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 (the gRPC method name)
        # A StackReference is read: recorded too, so tests see which stacks a fleet reads.
        self.order.append((request.type, request.name, request.parent, True, ()))
        return super().ReadResource(request)  # type: ignore[no-untyped-call]

