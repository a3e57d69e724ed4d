"""The workload image repository in the stack: config, resources under mocks, the contract."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conftest import MINIMAL
from infra.config import stack as config_mod
from infra.contract import outputs as contract
from infra.preview import harness
from infra.config.errors import ConfigError
from infra.preview.harness import Evaluation

REPO = "gcp:artifactregistry/repository:Repository"
REPO_IAM = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"


def _raw(registry: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["registry"] = registry
    return raw


def _ev(registry: Any) -> Evaluation:
    return harness.evaluate(_raw(registry), "test")


# The job identities' project roles to record goodput (infra/specs/observability; on by
# default, docs/observability.md): not the node service account's, which these tests are about.
GOODPUT_ROLES = {"roles/logging.logWriter", "roles/monitoring.metricWriter",
                 "roles/logging.viewer"}


def _node_roles(ev: harness.Evaluation) -> list[str]:
    return sorted(role for r in ev.of_type(PROJECT_IAM)
                  if (role := harness._plain(r.inputs)["role"]) not in GOODPUT_ROLES)


def test_no_registry_keeps_project_wide_read_and_exports_null() -> None:
    ev = harness.evaluate(copy.deepcopy(MINIMAL), "test")
    assert ev.of_type(REPO) == [] and ev.of_type(REPO_IAM) == []
    roles = _node_roles(ev)
    assert roles == ["roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount",
                     "roles/serviceusage.serviceUsageConsumer"]
    assert contract.load(harness.plain_outputs(ev, reveal=True)).image_repository is None


def test_created_repository_with_default_cleanup() -> None:
    ev = _ev({"create": True})
    [repo] = ev.of_type(REPO)
    assert repo.parent_name == "workloads"
    inputs = harness._plain(repo.inputs)
    assert inputs == {
        "repositoryId": "test-workloads", "location": "us-central1", "project": "test-project",
        "format": "DOCKER",
        "description": "Workload images built by `submit ... --script-dir` (accelstack)",
        "labels": {},
        "cleanupPolicyDryRun": False,
        "cleanupPolicies": [
            {"id": "delete-untagged", "action": "DELETE",
             "condition": {"tagState": "UNTAGGED", "olderThan": "7d"}},
            {"id": "delete-old", "action": "DELETE",
             "condition": {"tagState": "ANY", "olderThan": "30d"}},
            {"id": "keep-recent", "action": "KEEP", "mostRecentVersions": {"keepCount": 10}},
        ],
    }
    [member] = ev.of_type(REPO_IAM)
    m = harness._plain(member.inputs)
    assert (m["repository"], m["location"], m["project"], m["role"]) == (
        "test-workloads", "us-central1", "test-project", "roles/artifactregistry.reader")
    assert m["member"].startswith("serviceAccount:")
    # Read is scoped to the repository: no project-wide reader any more.
    roles = _node_roles(ev)
    assert roles == ["roles/container.defaultNodeServiceAccount",
                     "roles/serviceusage.serviceUsageConsumer"]
    assert contract.load(harness.plain_outputs(ev, reveal=True)).image_repository == \
        "us-central1-docker.pkg.dev/test-project/test-workloads"


def test_cleanup_settings_and_policies_turned_off() -> None:
    ev = _ev({"name": "imgs", "location": "us", "cleanup": {
        "keepCount": 3, "olderThanDays": 14, "untaggedAfterDays": None, "dryRun": True}})
    inputs = harness._plain(ev.of_type(REPO)[0].inputs)
    assert inputs["location"] == "us" and inputs["repositoryId"] == "imgs"
    assert inputs["cleanupPolicyDryRun"] is True
    assert [p["id"] for p in inputs["cleanupPolicies"]] == ["delete-old", "keep-recent"]
    assert inputs["cleanupPolicies"][1]["mostRecentVersions"] == {"keepCount": 3}
    ev = _ev({"cleanup": False})
    assert "cleanupPolicies" not in harness._plain(ev.of_type(REPO)[0].inputs)


def test_existing_repository_is_referenced_not_created() -> None:
    ev = _ev({"create": False, "name": "shared-images", "project": "other-project",
              "location": "europe-west4", "readAllRepositories": True})
    assert ev.of_type(REPO) == []
    m = harness._plain(ev.of_type(REPO_IAM)[0].inputs)
    assert (m["repository"], m["project"], m["location"]) == (
        "shared-images", "other-project", "europe-west4")
    roles = sorted(harness._plain(r.inputs)["role"] for r in ev.of_type(PROJECT_IAM))
    assert "roles/artifactregistry.reader" in roles  # readAllRepositories keeps it
    assert contract.load(harness.plain_outputs(ev, reveal=True)).image_repository == \
        "europe-west4-docker.pkg.dev/other-project/shared-images"


@pytest.mark.parametrize("registry, message", [
    ({"name": "Bad_Name"}, "registry.name: 'Bad_Name' is not an Artifact Registry repository "
                           "ID (lowercase letters, digits and hyphens; starts with a letter; "
                           "at most 63)"),
    ({"location": "us-central-1"}, "registry.location: 'us-central-1' is not an Artifact "
                                   "Registry location such as us-central1 or us "
                                   "(multi-region)"),
    ({"create": False, "cleanup": {"keepCount": 2}},
     "registry.cleanup: applies only to a repository the stack creates (registry.create: "
     "true); set the cleanup policies of an existing repository where it is managed"),
    ({"cleanup": {"keepCount": 0}}, "registry.cleanup.keepCount: 0 is below 1"),
    ({"cleanup": {"olderThanDays": 0}},
     "registry.cleanup.olderThanDays: 0 is below 1 (days); null turns it off"),
    ({"cleanup": {"keepcount": 2}}, "registry.cleanup.keepcount: unknown key; did you mean "
                                    "keepCount? (allowed: keepCount, olderThanDays, "
                                    "untaggedAfterDays, dryRun)"),
    ({"create": "yes"}, "registry.create: 'yes' is not true or false"),
    ("repo", "registry: 'repo' is not a mapping; expected keys: create, name, location, "
             "project, cleanup, readAllRepositories"),
])
def test_config_errors(registry: Any, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        config_mod.parse(_raw(registry))
    assert e.value.problems == [message]


def test_cached_images_in_other_repositories_of_the_project_need_read_all() -> None:
    raw = _raw({"create": True})
    raw["imageCache"] = [
        "us-central1-docker.pkg.dev/test-project/test-workloads/app1:1",  # the stack's own
        "us-central1-docker.pkg.dev/other-project/r/app2:1",  # another project: unaffected
        "us-docker.pkg.dev/test-project/images/app3:1",
        "gcr.io/test-project/app4:1",
        "python:3.12",
    ]
    with pytest.raises(ConfigError) as e:
        config_mod.parse(raw)
    assert e.value.problems == [
        f"imageCache[{i}].image: {raw['imageCache'][i]!r} is in another Artifact Registry "
        "repository of the project, which the nodes cannot read once `registry` limits them "
        "to its own; set registry.readAllRepositories: true" for i in (2, 3)]
    raw["registry"]["readAllRepositories"] = True
    assert config_mod.parse(raw).registry is not None


def test_readme_registry_example_parses() -> None:
    import re

    import yaml

    from conftest import ROOT

    text = (ROOT / "docs" / "shipping-code.md").read_text()
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S)
               if "accelstack:registry" in b]
    raw = copy.deepcopy(MINIMAL)
    raw["registry"] = yaml.safe_load(block)["config"]["accelstack:registry"]
    reg = config_mod.parse(raw).registry
    assert reg is not None and reg.cleanup is not None
    assert (reg.cleanup.keep_count, reg.cleanup.older_than_days) == (20, 60)
    assert reg.url == "us-central1-docker.pkg.dev/test-project/test-workloads"


# ----------------------------------------------------------------------------------
# Artifact Registry's API (issue 22)

SERVICE = "gcp:projects/service:Service"


def _services(ev: Evaluation) -> dict[tuple[str, str], Any]:
    out = {}
    for r in ev.of_type(SERVICE):
        inputs = harness._plain(r.inputs)
        out[(inputs["project"], inputs["service"])] = r
    return out


def _waits_for(ev: Evaluation, r: Any, target: Any) -> bool:
    by_urn = {x.urn: x for x in ev.resources}
    seen: set[str] = set()
    todo = list(r.dependencies)
    while todo:
        urn = todo.pop()
        if urn == target.urn:
            return True
        if urn in seen:
            continue
        seen.add(urn)
        if urn in by_urn:
            todo += by_urn[urn].dependencies
            # waiting for a component is waiting for its children
            todo += [x.urn for x in ev.resources if x.parent == urn]
    return False


# Was: no artifactregistry.googleapis.com among the APIs and the repository not ordered
# after them: a first `pulumi up` on a fresh project failed creating the repository.
def test_a_created_repository_waits_for_artifact_registrys_api() -> None:
    ev = _ev({"create": True})
    api = _services(ev)[("test-project", "artifactregistry.googleapis.com")]
    assert api.name == "api-artifactregistry"
    assert harness._plain(api.inputs)["disableOnDestroy"] is False
    [repo] = ev.of_type(REPO)
    [member] = ev.of_type(REPO_IAM)
    assert _waits_for(ev, repo, api) and _waits_for(ev, member, api)


def test_a_repository_created_in_another_project_enables_the_api_there() -> None:
    ev = _ev({"create": True, "project": "images-project"})
    services = _services(ev)
    assert ("test-project", "artifactregistry.googleapis.com") not in services
    api = services[("images-project", "artifactregistry.googleapis.com")]
    assert api.name == "api-artifactregistry-images-project"
    [repo] = ev.of_type(REPO)
    assert _waits_for(ev, repo, api)


def test_a_referenced_repository_enables_the_api_only_in_the_stacks_project() -> None:
    same = _services(_ev({"create": False}))
    assert ("test-project", "artifactregistry.googleapis.com") in same
    other = _services(_ev({"create": False, "project": "images-project"}))
    assert not any(s == "artifactregistry.googleapis.com" for _, s in other)


def test_no_registry_no_artifact_registry_api() -> None:
    ev = harness.evaluate(copy.deepcopy(MINIMAL), "test")
    assert not any(s == "artifactregistry.googleapis.com" for _, s in _services(ev))
