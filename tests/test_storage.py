"""Storage as stack state: the program under mocks for a stack with every kind of store,
and the config's refusals.

Each resource's inputs are asserted exactly: buckets, the IAM members (by the Workload
Identity Federation principal of each namespace's job account), private services access,
the Filestore, Parallelstore and Lustre instances, and the Kubernetes ServiceAccounts,
PersistentVolumes and claims (also validated against the Kubernetes schemas).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

import schema
from infra.config import stack as config
from infra.contract import outputs as contract
from infra.preview import harness
from infra.preview.harness import Evaluation

PROJECT = "my-ml-project"
NUMBER = harness.PREVIEW_PROJECT_NUMBER
POOL = f"{PROJECT}.svc.id.goog"


def principal(ns: str, ksa: str = "accelstack-workload", number: str = NUMBER) -> str:
    return (f"principal://iam.googleapis.com/projects/{number}/locations/global/"
            f"workloadIdentityPools/{POOL}/subject/ns/{ns}/sa/{ksa}")


BASE: dict[str, Any] = {
    "project": PROJECT, "region": "us-east5", "zones": ["us-east5-b"],
    "clusterName": "trillium", "labels": {"team": "pretraining"},
    # A GPU pool beside the TPU slices: Managed Lustre mounts on GPU pools only (Secure Boot).
    "slices": [{"accelerator": "v6e-256", "count": 4}, {"accelerator": "h100-80gb-8"}],
    "queues": {"namespace": "pretraining",
               "teams": [{"name": "evals", "quota": {"v6e-256": 256}}]},
}
STORES: list[dict[str, Any]] = [
    {"name": "datasets", "kind": "gcs", "create": False, "bucket": "my-ml-datasets",
     "access": {"pretraining": "read-only", "evals": "read-only"}},
    {"name": "checkpoints", "kind": "gcs", "hierarchicalNamespace": True, "softDeleteDays": 14,
     "retentionDays": 1, "labels": {"purpose": "ckpt"},
     "access": {"pretraining": "read-write", "evals": "read-only"}},
    {"name": "scratch", "kind": "filestore", "tier": "ZONAL", "capacityGb": 1024,
     "access": {"pretraining": "read-write"}},
    {"name": "fast", "kind": "parallelstore", "capacityGib": 12000,
     "access": {"pretraining": "read-write", "evals": "read-only"}},
    {"name": "lfs", "kind": "lustre", "capacityGib": 18000, "throughput": 500,
     "filesystem": "lfs1", "access": {"evals": "read-write"}},
    {"name": "old-nfs", "kind": "filestore", "create": False, "instance": "legacy",
     "location": "us-east5-b", "ip": "10.1.2.3", "share": "data", "capacityGb": 2048,
     "access": {"evals": "read-only"}},
]


@pytest.fixture(scope="module")
def ev() -> Evaluation:
    raw = copy.deepcopy(BASE)
    raw["storage"] = {"stores": copy.deepcopy(STORES)}
    return harness.evaluate(raw, "storage")


def _of(ev: Evaluation, type_: str) -> dict[str, dict[str, Any]]:
    return {r.name: harness._plain(r.inputs) for r in ev.of_type(type_)}


def test_buckets(ev: Evaluation) -> None:
    # Only the created bucket is a resource; the referenced one only gets grants.
    assert _of(ev, "gcp:storage/bucket:Bucket") == {"bucket-checkpoints": {
        "name": "my-ml-project-trillium-checkpoints", "project": PROJECT,
        "location": "US-EAST5", "uniformBucketLevelAccess": True,
        "publicAccessPrevention": "enforced", "forceDestroy": False,
        "labels": {"team": "pretraining", "purpose": "ckpt"},
        "hierarchicalNamespace": {"enabled": True},
        "softDeletePolicy": {"retentionDurationSeconds": 14 * 86400},
        "retentionPolicy": {"retentionPeriod": "86400"},
    }}


def test_bucket_grants_name_each_namespace_by_its_principal(ev: Evaluation) -> None:
    assert _of(ev, "gcp:storage/bucketIAMMember:BucketIAMMember") == {
        "grant-datasets-evals-read-only": {
            "bucket": "my-ml-datasets", "role": "roles/storage.objectViewer",
            "member": principal("evals")},
        "grant-datasets-pretraining-read-only": {
            "bucket": "my-ml-datasets", "role": "roles/storage.objectViewer",
            "member": principal("pretraining")},
        "grant-checkpoints-evals-read-only": {
            "bucket": "my-ml-project-trillium-checkpoints",
            "role": "roles/storage.objectViewer", "member": principal("evals")},
        "grant-checkpoints-pretraining-read-write": {
            "bucket": "my-ml-project-trillium-checkpoints",
            "role": "roles/storage.objectUser", "member": principal("pretraining")},
    }
    # No keys and no Google service account for jobs: the node account is the only one.
    assert [r.name for r in ev.of_type("gcp:serviceaccount/account:Account")] == [
        "trillium-nodes"]
    assert ev.of_type("gcp:serviceaccount/key:Key") == []


def test_private_services_access(ev: Evaluation) -> None:
    net = f"projects/{PROJECT}/global/networks/trillium-net"
    assert _of(ev, "gcp:compute/globalAddress:GlobalAddress") == {"storage-psa": {
        "name": "trillium-storage-psa", "project": PROJECT, "network": net,
        "purpose": "VPC_PEERING", "addressType": "INTERNAL", "prefixLength": 20}}
    assert _of(ev, "gcp:servicenetworking/connection:Connection") == {"storage-psa": {
        "network": net, "service": "servicenetworking.googleapis.com",
        "reservedPeeringRanges": ["trillium-storage-psa"], "deletionPolicy": "ABANDON"}}
    fw = _of(ev, "gcp:compute/firewall:Firewall")["storage-lustre"]
    assert fw == {"name": "trillium-lustre", "project": PROJECT, "network": net,
                  "direction": "INGRESS", "sourceRanges": ["10.200.0.0/20"],
                  "allows": [{"protocol": "tcp", "ports": ["988"]}],
                  "description": "Managed Lustre to the cluster's nodes (accelstack)"}
    # Every instance waits for the peering.
    [conn] = ev.of_type("gcp:servicenetworking/connection:Connection")
    for type_ in ("gcp:filestore/instance:Instance", "gcp:parallelstore/instance:Instance",
                  "gcp:lustre/instance:Instance"):
        for r in ev.of_type(type_):
            assert conn.urn in r.dependencies, r.name


def test_instances(ev: Evaluation) -> None:
    net = f"projects/{PROJECT}/global/networks/trillium-net"
    labels = {"team": "pretraining"}
    assert _of(ev, "gcp:filestore/instance:Instance") == {"filestore-scratch": {
        "name": "trillium-scratch", "project": PROJECT, "location": "us-east5-b",
        "tier": "ZONAL", "fileShares": {"name": "vol1", "capacityGb": 1024},
        "networks": [{"network": "trillium-net", "modes": ["MODE_IPV4"],
                      "connectMode": "PRIVATE_SERVICE_ACCESS",
                      "reservedIpRange": "trillium-storage-psa"}],
        "labels": labels}}
    assert _of(ev, "gcp:parallelstore/instance:Instance") == {"parallelstore-fast": {
        "instanceId": "trillium-fast", "project": PROJECT, "location": "us-east5-b",
        "capacityGib": "12000", "network": net, "reservedIpRange": "trillium-storage-psa",
        "deploymentType": "SCRATCH", "labels": labels}}
    assert _of(ev, "gcp:lustre/instance:Instance") == {"lustre-lfs": {
        "instanceId": "trillium-lfs", "project": PROJECT, "location": "us-east5-b",
        "capacityGib": "18000", "filesystem": "lfs1", "network": net,
        "perUnitStorageThroughput": "500", "labels": labels}}


def test_apis_and_csi_drivers(ev: Evaluation) -> None:
    services = {i["service"] for i in _of(ev, "gcp:projects/service:Service").values()}
    assert {"storage.googleapis.com", "file.googleapis.com", "parallelstore.googleapis.com",
            "lustre.googleapis.com", "servicenetworking.googleapis.com"} <= services
    [cluster] = _of(ev, "gcp:container/cluster:Cluster").values()
    addons = cluster["addonsConfig"]
    assert addons["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert addons["gcpFilestoreCsiDriverConfig"] == {"enabled": True}
    assert addons["parallelstoreCsiDriverConfig"] == {"enabled": True}
    assert addons["lustreCsiDriverConfig"] == {"enabled": True}


def _k8s(ev: Evaluation, kind: str) -> dict[str, dict[str, Any]]:
    out = {}
    for r in ev.of_type(f"kubernetes:core/v1:{kind}"):
        obj = harness._plain(r.inputs)
        obj.setdefault("apiVersion", "v1")
        obj.setdefault("kind", kind)
        schema.validate(obj)
        out[r.name] = obj
    return out


def test_service_accounts(ev: Evaluation) -> None:
    sas = _k8s(ev, "ServiceAccount")
    assert sas == {f"serviceaccount-{ns}-accelstack-workload": {
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "accelstack-workload", "namespace": ns,
                     "labels": {"app.kubernetes.io/managed-by": "accelstack"}},
        "automountServiceAccountToken": False} for ns in ("pretraining", "evals")}


def _pv(store: str, ns: str, mode: str, size: str, driver: str, handle: str,
        attrs: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": f"accelstack-{store}-{ns}",
                         "labels": {"app.kubernetes.io/managed-by": "accelstack",
                                    "accelstack.dev/store": store}},
            "spec": {"storageClassName": "", "capacity": {"storage": size},
                     "accessModes": [mode], "persistentVolumeReclaimPolicy": "Retain",
                     "volumeMode": "Filesystem", "claimRef": {"namespace": ns, "name": store},
                     "csi": {"driver": driver, "volumeHandle": handle,
                             "readOnly": mode == "ReadOnlyMany", "volumeAttributes": attrs}}}


def test_persistent_volumes(ev: Evaluation) -> None:
    fs = "filestore.csi.storage.gke.io"
    ps = "parallelstore.csi.storage.gke.io"
    points = "10.200.0.3,10.200.0.4,10.200.0.5"  # the mock instance's access points
    ps_handle = f"{PROJECT}/us-east5-b/trillium-fast/default-pool/default-container"
    expected = [
        _pv("scratch", "pretraining", "ReadWriteMany", "1024Gi", fs,
            "modeInstance/us-east5-b/trillium-scratch/vol1",
            {"ip": "10.200.0.2", "volume": "vol1"}),
        _pv("fast", "evals", "ReadOnlyMany", "12000Gi", ps, ps_handle,
            {"accessPoints": points, "network": "trillium-net", "mountLocality": "pod"}),
        _pv("fast", "pretraining", "ReadWriteMany", "12000Gi", ps, ps_handle,
            {"accessPoints": points, "network": "trillium-net", "mountLocality": "pod"}),
        _pv("lfs", "evals", "ReadWriteMany", "18000Gi", "lustre.csi.storage.gke.io",
            f"{PROJECT}/us-east5-b/trillium-lfs", {"ip": "10.200.0.6", "filesystem": "lfs1"}),
        _pv("old-nfs", "evals", "ReadOnlyMany", "2048Gi", fs,
            "modeInstance/us-east5-b/legacy/data", {"ip": "10.1.2.3", "volume": "data"}),
    ]
    # The Parallelstore CSI driver reference's PV: the provisioned-by annotation, and the
    # mount mode said ("pod": the sidecar pods ask for, submit/render/mounts.py).
    for pv in expected[1:3]:
        pv["metadata"]["annotations"] = {"pv.kubernetes.io/provisioned-by": ps}
    assert _k8s(ev, "PersistentVolume") == {
        f"persistentvolume-{pv['metadata']['name']}": pv for pv in expected}
    claims = _k8s(ev, "PersistentVolumeClaim")
    assert set(claims) == {f"persistentvolumeclaim-{pv['spec']['claimRef']['namespace']}-"
                           f"{pv['spec']['claimRef']['name']}" for pv in expected}
    for pv in expected:
        ref = pv["spec"]["claimRef"]
        claim = claims[f"persistentvolumeclaim-{ref['namespace']}-{ref['name']}"]
        assert claim["metadata"]["namespace"] == ref["namespace"]
        assert claim["spec"] == {"storageClassName": "", "accessModes": pv["spec"]["accessModes"],
                                 "volumeName": pv["metadata"]["name"],
                                 "resources": {"requests": {"storage":
                                                            pv["spec"]["capacity"]["storage"]}}}


def test_contract_exports_stores_and_accounts(ev: Evaluation) -> None:
    out = contract.load(harness.plain_outputs(ev, reveal=True))
    assert out.storage == contract.StorageInfo(
        stores=tuple(contract.StoreInfo(s["name"], s["kind"],
                                        s.get("bucket", "my-ml-project-trillium-checkpoints")
                                        if s["kind"] == "gcs" else s["name"], s["access"])
                     for s in STORES),
        service_accounts={"pretraining": "accelstack-workload", "evals": "accelstack-workload"},
        gke_version=None)


def test_project_number_from_config_skips_the_lookup() -> None:
    raw = copy.deepcopy(BASE)
    raw["storage"] = {"projectNumber": 987654321098, "serviceAccount": "jobs",
                      "stores": [STORES[0]]}
    ev = harness.evaluate(raw, "number")
    members = {i["member"] for i in _of(ev, "gcp:storage/bucketIAMMember:BucketIAMMember")
               .values()}
    assert members == {principal("pretraining", "jobs", "987654321098"),
                       principal("evals", "jobs", "987654321098")}
    # GCS only: no private services access, no VPC instances, no extra CSI drivers.
    assert ev.of_type("gcp:servicenetworking/connection:Connection") == []
    [cluster] = _of(ev, "gcp:container/cluster:Cluster").values()
    assert "lustreCsiDriverConfig" not in cluster["addonsConfig"]


# Was: only created instances enabled their product's API; the GKE guides for existing
# instances list it under "Before you begin" too (infra/specs/storage.py SERVICES).
# servicenetworking stays tied to the private services access connection the stack creates.
def test_referenced_vpc_stores_enable_their_api_but_not_service_networking() -> None:
    raw = copy.deepcopy(BASE)
    raw["storage"] = {"stores": [STORES[5], {
        "name": "old-ps", "kind": "parallelstore", "create": False, "instance": "ps",
        "location": "us-east5-b", "accessPoints": ["10.1.2.4"], "capacityGib": 12000,
        "access": {"evals": "read-only"}}]}
    ev = harness.evaluate(raw, "referenced")
    services = {i["service"] for i in _of(ev, "gcp:projects/service:Service").values()}
    assert {"file.googleapis.com", "parallelstore.googleapis.com"} <= services
    assert "servicenetworking.googleapis.com" not in services
    assert ev.of_type("gcp:servicenetworking/connection:Connection") == []


def test_a_stack_without_storage_still_has_job_accounts() -> None:
    ev = harness.evaluate(copy.deepcopy(BASE), "plain")
    assert len(ev.of_type("kubernetes:core/v1:ServiceAccount")) == 2
    assert ev.of_type("accelstack:storage:WorkloadStorage") == []
    assert not any("storage.googleapis.com" == r.inputs.get("service")
                   for r in ev.of_type("gcp:projects/service:Service"))


# ----------------------------------------------------------------------------------
# Bad input: one message per rule, naming the key path, the value and what is allowed.


def _problems(storage: Any) -> list[str]:
    raw = copy.deepcopy(BASE)
    raw["storage"] = storage
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw)
    return e.value.problems


def _store(**kw: Any) -> dict[str, Any]:
    return {"storage": None, "stores": [kw]}


@pytest.mark.parametrize("store,message", [
    ({"name": "Data", "kind": "gcs", "bucket": "b-1", "access": {"evals": "read-only"}},
     "storage.stores[0].name: 'Data' is not a store name (1-40 lowercase letters, digits and "
     "'-', starting with a letter and ending with a letter or digit)"),
    ({"name": "d", "kind": "nfs", "access": {}},
     "storage.stores[0].kind: 'nfs' is not a store kind; allowed: gcs, filestore, "
     "parallelstore, lustre"),
    ({"name": "d", "kind": "gcs", "access": {"nobody": "read-only"}},
     "storage.stores[0].access.nobody: names no workload namespace or team of this stack "
     "(namespaces and teams: pretraining, evals)"),
    ({"name": "d", "kind": "gcs", "access": {"evals": "write"}},
     "storage.stores[0].access.evals: 'write' is not one of read-only, read-write"),
    ({"name": "d", "kind": "gcs"},
     "storage.stores[0].access: is required: map each namespace or team that may use the "
     "store to read-only or read-write (namespaces and teams: pretraining, evals)"),
    ({"name": "d", "kind": "gcs", "create": False, "access": {"evals": "read-only"}},
     "storage.stores[0].bucket: is required"),
    ({"name": "d", "kind": "gcs", "bucket": "Bad_Bucket", "access": {"evals": "read-only"}},
     "storage.stores[0].bucket: 'Bad_Bucket' is not a Cloud Storage bucket name (3-63 "
     "lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or "
     "digit, not starting with 'goog')"),
    ({"name": "d", "kind": "gcs", "create": False, "bucket": "b-1", "location": "EU",
      "access": {"evals": "read-only"}},
     "storage.stores[0].location: applies to buckets the stack creates (create: true); a "
     "referenced bucket keeps its own settings"),
    ({"name": "d", "kind": "gcs", "softDeleteDays": 3, "access": {"evals": "read-only"}},
     "storage.stores[0].softDeleteDays: 3 is not 0 (off) or 7-90 days"),
    ({"name": "d", "kind": "filestore", "tier": "BASIC_SSD", "capacityGb": 1024,
      "access": {"evals": "read-only"}},
     "storage.stores[0].capacityGb: 1024 GiB is outside what a BASIC_SSD instance holds "
     "(2560-65433 GiB)"),
    ({"name": "d", "kind": "filestore", "tier": "ZONAL", "capacityGb": 10000,
      "access": {"evals": "read-only"}},
     "storage.stores[0].capacityGb: 10000 GiB is outside what a ZONAL instance holds "
     "(1024-9984 or 10240-102400 GiB)"),
    ({"name": "d", "kind": "filestore", "tier": "HIGH", "capacityGb": 1024,
      "access": {"evals": "read-only"}},
     "storage.stores[0].tier: 'HIGH' is not a Filestore tier; allowed: BASIC_HDD, BASIC_SSD, "
     "ZONAL, REGIONAL, ENTERPRISE"),
    ({"name": "d", "kind": "filestore", "tier": "ZONAL", "capacityGb": 1024,
      "location": "us-east5-c", "access": {"evals": "read-only"}},
     "storage.stores[0].location: 'us-east5-c' is not the stack's zone; the store must sit "
     "beside the nodes (allowed: us-east5-b)"),
    ({"name": "d", "kind": "filestore", "tier": "REGIONAL", "capacityGb": 1024,
      "location": "us-central1", "access": {"evals": "read-only"}},
     "storage.stores[0].location: 'us-central1' is not the stack's region; the store must "
     "sit beside the nodes (allowed: us-east5)"),
    ({"name": "d", "kind": "gcs", "location": "us east", "access": {"evals": "read-only"}},
     "storage.stores[0].location: 'us east' is not a Cloud Storage location (a region such "
     "as us-east5, a dual-region or a multi-region such as US)"),
    ({"name": "d", "kind": "filestore", "create": False, "instance": "i", "location": "z",
      "capacityGb": 1024, "ip": "10.0.0.300", "access": {"evals": "read-only"}},
     "storage.stores[0].ip: '10.0.0.300' is not an IPv4 address"),
    ({"name": "d", "kind": "filestore", "create": False, "tier": "ZONAL", "instance": "i",
      "location": "z", "capacityGb": 1024, "ip": "10.0.0.3", "access": {"evals": "read-only"}},
     "storage.stores[0].tier: applies to stores the stack creates (create: true)"),
    ({"name": "d", "kind": "parallelstore", "capacityGib": 13000,
      "access": {"evals": "read-only"}},
     "storage.stores[0].capacityGib: 13000 is not a Parallelstore capacity (12000 to 100000 "
     "GiB in multiples of 4000)"),
    ({"name": "d", "kind": "lustre", "capacityGib": 10000, "throughput": 500,
      "access": {"evals": "read-only"}},
     "storage.stores[0].capacityGib: 10000 is not a capacity of the 500 MBps/TiB tier (18000 "
     "to 20016000 GiB in steps of 18000, 144000 above 3060000)"),
    ({"name": "d", "kind": "lustre", "capacityGib": 9000, "throughput": 300,
      "access": {"evals": "read-only"}},
     "storage.stores[0].throughput: 300 is not a Managed Lustre tier in MBps per TiB; "
     "allowed: 1000, 500, 250, 125"),
    ({"name": "d", "kind": "lustre", "capacityGib": 9000, "filesystem": "toolongname",
      "access": {"evals": "read-only"}},
     "storage.stores[0].filesystem: 'toolongname' is not a Lustre file system name (1-8 "
     "letters and digits)"),
    ({"name": "d", "kind": "gcs", "access": {"evals": "read-only"}, "sizeGb": 3},
     "storage.stores[0].sizeGb: unknown key (allowed: name, kind, create, access, labels, "
     "bucket, location, hierarchicalNamespace, softDeleteDays, retentionDays, storageClass)"),
])
def test_bad_store(store: dict[str, Any], message: str) -> None:
    assert _problems({"stores": [store]}) == [message]


@pytest.mark.parametrize("storage,message", [
    ({"serviceAccount": "default"},
     "storage.serviceAccount: 'default' is not a service account name for jobs (a DNS-1123 "
     "label other than 'default', which every namespace already has)"),
    ({"projectNumber": "my-project"},
     "storage.projectNumber: 'my-project' is not a project number (the digits `gcloud "
     "projects describe PROJECT --format='value(projectNumber)'` prints)"),
    ({"privateServiceAccess": {"prefixLength": 20, "address": "10.16.0.0"}},
     "storage.privateServiceAccess.address: 10.16.0.0/20 overlaps network.podsCidr "
     "(10.16.0.0/14); choose a free range"),
    ({"privateServiceAccess": {"prefixLength": 20, "address": "10.96.0.1"}},
     "storage.privateServiceAccess.address: '10.96.0.1' is not the first address of a /20 "
     "range"),
    ({"privateServiceAccess": {"prefixLength": 28}},
     "storage.privateServiceAccess.prefixLength: 28 is not 8-24 (a range of at least /24)"),
    ({"stores": [STORES[0], dict(STORES[0], bucket="other")]},
     "storage.stores[1].name: 'datasets' is already the name of a store"),
    ({"stores": [STORES[0], dict(STORES[0], name="again")]},
     "storage.stores[1].bucket: 'my-ml-datasets' is already another store's bucket"),
])
def test_bad_storage(storage: dict[str, Any], message: str) -> None:
    assert _problems(storage) == [message]


def test_access_by_team_name_means_its_namespace() -> None:
    raw = copy.deepcopy(BASE)
    raw["queues"]["teams"][0]["namespace"] = "evals-ns"
    raw["storage"] = {"stores": [{"name": "d", "kind": "gcs", "bucket": "b-1",
                                  "create": False, "access": {"evals": "read-only"}}]}
    assert dict(config.parse(raw).storage.stores[0].access) == {"evals-ns": "read-only"}


def _lustre(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "kind": "lustre", "capacityGib": 9000,
            "access": {"pretraining": "read-write"}, **kw}


# Was: every created Lustre store defaulted to the file system name "lustre"; GKE does not
# mount volumes from two instances with the same file system name on one node.
def test_lustre_file_system_names_default_to_the_store_and_are_unique() -> None:
    raw = copy.deepcopy(BASE)
    raw["storage"] = {"stores": [_lustre("train-data"), _lustre("ckpt")]}
    fs = {s.name: s.filesystem for s in config.parse(raw).storage.stores}
    assert fs == {"train-data": "traindat", "ckpt": "ckpt"}
    raw["storage"] = {"stores": [_lustre("checkpoints-a"), _lustre("checkpoints-b"),
                                 _lustre("old", create=False, instance="o", location="z",
                                         ip="10.0.0.9", filesystem="ckpt")]}
    problems = _problems(raw["storage"])
    assert problems == [
        "storage.stores[1].filesystem: 'checkpoi' is already the file system name of store "
        "'checkpoints-a'; GKE cannot mount volumes from two Managed Lustre instances with the "
        "same file system name on one node (GKE concepts/managed-lustre, Limitations): give "
        "each store its own (1-8 letters and digits)"]
    raw["storage"]["stores"][1]["filesystem"] = "ckpt"
    assert _problems(raw["storage"])[0].startswith(
        "storage.stores[2].filesystem: 'ckpt' is already the file system name of store "
        "'checkpoints-b'")


# Was: a Lustre store could be granted to namespaces that run only on TPU or CPU pools,
# whose Secure Boot nodes GKE does not mount Managed Lustre on.
def test_lustre_is_refused_to_namespaces_without_a_gpu_pool() -> None:
    raw = copy.deepcopy(BASE)
    raw["slices"] = [{"accelerator": "v6e-256", "count": 4}]
    raw["storage"] = {"stores": [_lustre("lfs", access={"evals": "read-only"})]}
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw)
    assert e.value.problems == [
        "storage.stores[0].access: namespace 'evals' cannot mount Managed Lustre store 'lfs': "
        "none of its pools is a GPU pool, and GKE mounts Managed Lustre on Secure Boot nodes "
        "(every accelstack pool) of GPU machine types only (https://cloud.google.com/"
        "managed-lustre/docs/connect-from-kubernetes-engine-existing-instance); grant it to a "
        "namespace that runs on GPU pools, or use Parallelstore, Filestore or Cloud Storage "
        "for TPU and CPU pools"]
    # With a GPU pool: the shared namespace may use it; a team that can neither own nor
    # borrow GPU capacity may not.
    raw = copy.deepcopy(BASE)
    raw["queues"]["teams"][0]["borrowingLimit"] = {"v6e-256": 256}
    raw["storage"] = {"stores": [_lustre("lfs", access={"pretraining": "read-write",
                                                        "evals": "read-only"})]}
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw)
    assert [p[:p.index(" Managed")] for p in e.value.problems] == [
        "storage.stores[0].access: namespace 'evals' cannot mount"]
    del raw["queues"]["teams"][0]["borrowingLimit"]
    assert config.parse(raw).storage.stores[0].access == {"pretraining": "read-write",
                                                           "evals": "read-only"}


def test_lustre_on_arm_gpu_pools_needs_their_minimum_version() -> None:
    raw = copy.deepcopy(BASE)
    raw["slices"] = [{"accelerator": "gb200-4", "count": 1,
                      "capacity": {"mode": "reservation", "reservation": "r"}}]
    raw["queues"] = {"namespace": "pretraining"}
    raw["gkeVersion"] = "1.34.1-gke.2540000"
    raw["storage"] = {"stores": [_lustre("lfs")]}
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw)
    assert e.value.problems == [
        "storage.stores[0].access: namespace 'pretraining' cannot mount Managed Lustre store "
        "'lfs': its GPU pools are Arm nodes, which mount it from GKE 1.34.1-gke.2541000; "
        "gkeVersion is 1.34.1-gke.2540000 (https://cloud.google.com/managed-lustre/docs/"
        "connect-from-kubernetes-engine-existing-instance); grant it to a namespace that runs "
        "on GPU pools, or use Parallelstore, Filestore or Cloud Storage for TPU and CPU pools"]
    raw["gkeVersion"] = "1.34.1-gke.2541000"
    assert config.parse(raw).storage.stores[0].filesystem == "lfs"


def test_lustre_needs_a_recent_gke_when_pinned() -> None:
    raw = copy.deepcopy(BASE)
    raw["gkeVersion"] = "1.33.1-gke.1000000"
    raw["storage"] = {"stores": [STORES[4]]}
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw)
    assert e.value.problems == [
        "storage.stores[0].kind: Managed Lustre needs GKE 1.33.2-gke.4655000 or later (nodes "
        "use Lustre's own port); gkeVersion is 1.33.1-gke.1000000"]
    raw["gkeVersion"] = "1.33.2-gke.4655000"
    assert config.parse(raw).storage.stores[0].kind == "lustre"


def test_the_readme_storage_example_is_a_valid_config() -> None:
    from conftest import ROOT

    text = (ROOT / "docs" / "storage.md").read_text()
    start = text.index("```yaml\n  accelstack:storage:") + len("```yaml\n")
    block = yaml.safe_load(text[start:text.index("```", start)])
    raw = copy.deepcopy(BASE)
    raw["storage"] = block["accelstack:storage"]
    stores = config.parse(raw).storage.stores
    assert [(s.name, s.kind, s.create) for s in stores] == [
        ("datasets", "gcs", False), ("checkpoints", "gcs", True),
        ("scratch", "filestore", True), ("fast", "parallelstore", True)]
    # Managed Lustre is shown on the GPU stack that has one (GKE mounts it on GPU nodes
    # only): the page's example is a TPU stack's, and holds pasted into one
    # (test_the_docs_storage_example_holds_on_v6e_training).
    assert "kind: lustre" in (ROOT / "stacks" / "Pulumi.a3mega.yaml").read_text()


def test_a_chosen_private_services_range() -> None:
    raw = copy.deepcopy(BASE)
    raw["storage"] = {"privateServiceAccess": {"prefixLength": 24, "address": "10.96.0.0"},
                      "stores": [STORES[2]]}
    ev = harness.evaluate(raw, "psa")
    [addr] = _of(ev, "gcp:compute/globalAddress:GlobalAddress").values()
    assert (addr["address"], addr["prefixLength"]) == ("10.96.0.0", 24)


# -- the docs' examples hold when run (issue 42) ----------------------------------------------

def test_the_docs_storage_example_holds_on_v6e_training(tmp_path: Any) -> None:
    import re
    from pathlib import Path

    from conftest import ROOT

    page = (ROOT / "docs" / "storage.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", page, re.S)
    assert block is not None and block.group(1).startswith("  accelstack:storage:\n")
    stack = (ROOT / "stacks" / "Pulumi.v6e-training.yaml").read_text()
    start = stack.index("  accelstack:storage:\n")
    after = re.search(r"\n  accelstack:", stack[start + 1:])
    end = start + 1 + after.start() + 1 if after else len(stack)
    path = Path(tmp_path) / "Pulumi.pasted.yaml"
    path.write_text(stack[:start] + block.group(1) + stack[end:])
    ev = harness.evaluate_file(path)  # raises with FILE:LINE problems if refused
    stores = ev.outputs["accelstack"]["storage"]["stores"]
    assert [s["name"] for s in stores] == ["datasets", "checkpoints", "scratch", "fast"]


def test_the_limits_page_names_the_dranet_claim_rendered() -> None:
    import re

    from conftest import ROOT
    from infra.specs import dranet

    [template] = dranet.claim_templates([True], ["training"])
    mode = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"]
    limits = (ROOT / "docs" / "limits.md").read_text()
    dranet_lines = [p for p in limits.split("\n- ") if "DRANET" in p]
    named = {m for p in dranet_lines for m in re.findall(r"allocationMode: (\w+)", p)}
    assert named and mode in named, (named, mode)
    # `All` may be named only as what Kueue refuses, never as what the claim takes.
    assert "takes every `netdev.google.com`" not in limits
