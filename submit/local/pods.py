"""The pods a JobSet becomes: one per replicated Job, replica (Job) and completion index, each
with the hostname, labels and annotations JobSet v0.12.0 and the Job controller give it.

Pure: names and UIDs are derived from the JobSet's UID, so a plan is the same every time.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from infra.record import record

# JobSet v0.12.0: api/jobset/v1alpha2/jobset_types.go and pkg/constants/constants.go; every
# key is set both as a label and as an annotation on child Jobs and their pods
# (pkg/controllers/jobset_controller.go, labelAndAnnotateObject).
JS = "jobset.sigs.k8s.io"
JOBSET_NAME = f"{JS}/jobset-name"
JOBSET_UID = f"{JS}/jobset-uid"
REPLICATED_JOB_NAME = f"{JS}/replicatedjob-name"
REPLICATED_JOB_REPLICAS = f"{JS}/replicatedjob-replicas"
GLOBAL_REPLICAS = f"{JS}/global-replicas"
JOB_INDEX = f"{JS}/job-index"
JOB_GLOBAL_INDEX = f"{JS}/job-global-index"
JOB_KEY = f"{JS}/job-key"
RESTART_ATTEMPT = f"{JS}/restart-attempt"
GROUP_NAME = f"{JS}/group-name"
GROUP_REPLICAS = f"{JS}/group-replicas"
JOB_GROUP_INDEX = f"{JS}/job-group-index"
COORDINATOR = f"{JS}/coordinator"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
# The Job controller: the completion index annotation (and label, Kubernetes >= 1.28) and
# the JOB_COMPLETION_INDEX variable it appends to every container of an Indexed Job
# (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/).
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
_POD_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' random name alphabet


def pod_suffix(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(_POD_SUFFIX_CHARS[b % len(_POD_SUFFIX_CHARS)] for b in digest[:5])


@record
class Pod:
    rjob: dict[str, Any]
    job_index: int
    index: int
    hostname: str
    labels: dict[str, str]
    annotations: dict[str, str]


def pods_of(js: dict[str, Any], attempt: int, uid: str) -> list[Pod]:
    name, ns = js["metadata"]["name"], js["metadata"].get("namespace", "default")
    rjobs = js["spec"]["replicatedJobs"]
    total = sum(int(r.get("replicas", 1)) for r in rjobs)
    js_ann = js["metadata"].get("annotations") or {}
    coordinator = js["spec"].get("coordinator")
    subdomain = subdomain_of(js)
    pods = []
    global_base = 0
    group_base: dict[str, int] = {}
    for rj in rjobs:
        replicas = int(rj.get("replicas", 1))
        group = rj.get("groupName", "default")
        group_total = sum(int(r.get("replicas", 1)) for r in rjobs
                          if r.get("groupName", "default") == group)
        job = rj["template"]["spec"]
        tpl_meta = job["template"].get("metadata") or {}
        completions = int(job.get("completions", job.get("parallelism", 1)))
        for j in range(replicas):
            job_name = f"{name}-{rj['name']}-{j}"
            keys = {
                JOBSET_NAME: name, JOBSET_UID: uid, REPLICATED_JOB_NAME: rj["name"],
                RESTART_ATTEMPT: str(attempt), REPLICATED_JOB_REPLICAS: str(replicas),
                GLOBAL_REPLICAS: str(total), JOB_INDEX: str(j),
                JOB_KEY: hashlib.sha1(f"{ns}/{job_name}".encode()).hexdigest(),
                JOB_GLOBAL_INDEX: str(global_base + j), GROUP_NAME: group,
                GROUP_REPLICAS: str(group_total),
                JOB_GROUP_INDEX: str(group_base.get(group, 0) + j),
            }
            if coordinator:
                keys[COORDINATOR] = (f"{name}-{coordinator['replicatedJob']}-"
                                     f"{coordinator.get('jobIndex', 0)}-"
                                     f"{coordinator.get('podIndex', 0)}.{subdomain}")
            job_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{uid}/{job_name}/{attempt}"))
            for i in range(completions):
                labels = {**(tpl_meta.get("labels") or {}), **keys,
                          "batch.kubernetes.io/controller-uid": job_uid,
                          "batch.kubernetes.io/job-name": job_name,
                          "controller-uid": job_uid, "job-name": job_name}
                annotations = {**(tpl_meta.get("annotations") or {}), **keys}
                if EXCLUSIVE_TOPOLOGY in js_ann:
                    annotations[EXCLUSIVE_TOPOLOGY] = js_ann[EXCLUSIVE_TOPOLOGY]
                if job.get("completionMode") == "Indexed":
                    labels[COMPLETION_INDEX] = annotations[COMPLETION_INDEX] = str(i)
                pods.append(Pod(rj, j, i, f"{job_name}-{i}", labels, annotations))
        global_base += replicas
        group_base[group] = group_base.get(group, 0) + replicas
    return pods


def subdomain_of(js: dict[str, Any]) -> str:
    net = js["spec"].get("network") or {}
    return str(net.get("subdomain") or js["metadata"]["name"])


def dns_enabled(js: dict[str, Any]) -> bool:
    # JobSet defaults enableDNSHostnames to true (api/jobset/v1alpha2 defaulting).
    net = js["spec"].get("network") or {}
    return net.get("enableDNSHostnames", True) is not False
