"""The add-on config (addons, queues, imageCache, secondaryBootDisk): every rule's exact message.

Messages are compared whole, as in test_config: a user reads them, so a changed word is a
changed contract. Bugs found while writing these tests, since fixed, are regression tests
at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import addons as addons_config
from infra.config import stack as config
from infra.preview import harness
from infra.contract import images
from infra.config.addons import CachedImage, Team
from infra.config.errors import ConfigError

QUEUE_ALLOWED = ("namespace, localQueue, clusterQueue, cohort, topologyAwareScheduling, "
                 "cpuQuota, teams")
TEAM_ALLOWED = "name, namespace, quota, borrowingLimit"
IMAGE_ALLOWED = "name, image, slicePools"
NOT_AN_IMAGE = ("is not a container image reference ([registry/]repository[:tag]"
                "[@sha256:digest], lowercase repository)")
DIGEST = "sha256:" + "0123456789abcdef" * 4
NOT_A_DISK = "is not a disk image (global/images/NAME or projects/PROJECT/global/images/NAME)"


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config.parse(raw)
    return info.value.problems


def with_pools(raw: dict[str, Any], *pools: dict[str, Any]) -> dict[str, Any]:
    raw["slices"] = list(pools)
    return raw


# ----------------------------------------------------------------------------------
# Defaults


def test_defaults(raw: dict[str, Any]) -> None:
    cfg = config.parse(raw)
    assert cfg.addons == addons_config.Addons("v0.12.0", "v0.19.2")
    q = cfg.queues
    assert (q.namespace, q.local_queue, q.cluster_queue, q.cohort) == (
        "training", "main", "cluster-queue", "accelstack")
    assert q.topology_aware == "auto"
    assert q.cpu_quota is None
    assert q.teams == ()
    assert cfg.image_cache == ()
    assert cfg.slices[0].secondary_boot_disk is None


def test_full_queue_config_is_parsed(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-16", "count": 4}]
    raw["addons"] = {"jobsetVersion": "v0.13.1", "kueueVersion": "v0.20.0"}
    raw["queues"] = {"namespace": "ml", "localQueue": "q.main", "clusterQueue": "shared",
                     "cohort": "org", "topologyAwareScheduling": "off",
                     "cpuQuota": {"cpu": 16, "memoryGi": 64},
                     "teams": [{"name": "a", "quota": {"v5litepod-16": 16}},
                               {"name": "b", "namespace": "team-b",
                                "quota": {"v5litepod-16": 32},
                                "borrowingLimit": {"v5litepod-16": 0}}]}
    cfg = config.parse(raw)
    assert cfg.addons == addons_config.Addons("v0.13.1", "v0.20.0")
    q = cfg.queues
    assert (q.namespace, q.local_queue, q.cluster_queue, q.cohort, q.topology_aware) == (
        "ml", "q.main", "shared", "org", "off")
    assert q.cpu_quota == (16, 64)
    assert q.teams == (Team("a", "a", {"v5litepod-16": 16}, None),
                       Team("b", "team-b", {"v5litepod-16": 32}, {"v5litepod-16": 0}))


# ----------------------------------------------------------------------------------
# Unknown keys


def test_unknown_addons_key(raw: dict[str, Any]) -> None:
    raw["addons"] = {"kueueVersions": "v0.19.2", "certManager": True}
    assert problems(raw) == [
        "addons.kueueVersions: unknown key; did you mean kueueVersion? "
        "(allowed: jobsetVersion, kueueVersion)",
        "addons.certManager: unknown key (allowed: jobsetVersion, kueueVersion)",
    ]


def test_unknown_queues_key(raw: dict[str, Any]) -> None:
    raw["queues"] = {"clusterqueue": "x", "priority": "high"}
    assert problems(raw) == [
        f"queues.clusterqueue: unknown key; did you mean clusterQueue? (allowed: {QUEUE_ALLOWED})",
        f"queues.priority: unknown key (allowed: {QUEUE_ALLOWED})",
    ]


def test_unknown_team_key(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quotas": {"v5litepod-16": 4}}]}
    assert problems(raw) == [
        f"queues.teams[0].quotas: unknown key; did you mean quota? (allowed: {TEAM_ALLOWED})"]


def test_unknown_cpu_quota_key(raw: dict[str, Any]) -> None:
    raw["queues"] = {"cpuQuota": {"cpu": 4, "memory": 16}}
    assert problems(raw) == [
        "queues.cpuQuota.memory: unknown key; did you mean memoryGi? (allowed: cpu, memoryGi)",
        "queues.cpuQuota.memoryGi: is required",
    ]


def test_unknown_image_cache_key(raw: dict[str, Any]) -> None:
    raw["imageCache"] = [{"image": "busybox:1.37", "slicePool": ["v5litepod-16"]},
                         {"name": "b", "image": "busybox:1.36", "pullPolicy": "Always"}]
    assert problems(raw) == [
        "imageCache[0].slicePool: unknown key; did you mean slicePools? "
        f"(allowed: {IMAGE_ALLOWED})",
        f"imageCache[1].pullPolicy: unknown key (allowed: {IMAGE_ALLOWED})",
    ]


def test_sections_of_the_wrong_type(raw: dict[str, Any]) -> None:
    raw["addons"] = "latest"
    raw["queues"] = ["main"]
    raw["imageCache"] = "busybox:1.37"
    assert problems(raw) == [
        "addons: 'latest' is not a mapping; expected keys: jobsetVersion, kueueVersion",
        f"queues: ['main'] is not a mapping; expected keys: {QUEUE_ALLOWED}",
        "imageCache: 'busybox:1.37' is not a list of images to pre-pull",
    ]


# ----------------------------------------------------------------------------------
# Versions


@pytest.mark.parametrize("key,default", [("jobsetVersion", "v0.12.0"),
                                         ("kueueVersion", "v0.19.2")])
@pytest.mark.parametrize("bad", ["0.12.0", "v0.12", "latest", "v0.12.0-rc.1", "V0.12.0",
                                 " v0.12.0"])
def test_bad_version(raw: dict[str, Any], key: str, default: str, bad: str) -> None:
    raw["addons"] = {key: bad}
    assert problems(raw) == [
        f"addons.{key}: {bad!r} is not a release version such as {default}"]


def test_version_of_the_wrong_type(raw: dict[str, Any]) -> None:
    raw["addons"] = {"jobsetVersion": 0.12, "kueueVersion": True}
    assert problems(raw) == ["addons.jobsetVersion: 0.12 is not a string",
                             "addons.kueueVersion: true is not a string"]


# ----------------------------------------------------------------------------------
# Image references


@pytest.mark.parametrize("ref", [
    "gcr.io/Distroless/static:nonroot",  # uppercase repository
    "Busybox:1.37",
    "gcr.io/my project/trainer:v1",  # space
    "busybox :1.37",
    "busybox:1.37 ",
    "us-docker.pkg.dev/p/r/trainer:",  # empty tag
    "busybox@sha256:xyz",  # digest: not hex
    "busybox@sha256:abc123",  # digest: too short
    "busybox@" + "0123456789abcdef" * 4,  # digest: no algorithm
    "busybox:" + "t" * 129,  # tag longer than 128 characters
    "busybox:-rc1",  # tag starting with '-'
    "gcr.io//trainer:v1",
    "",
])
def test_bad_image_reference(raw: dict[str, Any], ref: str) -> None:
    raw["imageCache"] = [{"name": "img", "image": ref}]
    assert problems(raw) == [f"imageCache[0].image: {ref!r} {NOT_AN_IMAGE}"]
    assert images.image_problem(ref) == f"{ref!r} {NOT_AN_IMAGE}"


@pytest.mark.parametrize("ref,tag,digest", [
    ("busybox", None, False),
    ("busybox:1.37.0-musl", "1.37.0-musl", False),
    ("gcr.io/distroless/python3-debian12:nonroot", "nonroot", False),
    ("localhost:5000/trainer", None, False),
    ("registry.example.com:5000/team/trainer:v1.2_rc", "v1.2_rc", False),
    (f"us-docker.pkg.dev/p/repo/trainer@{DIGEST}", None, True),
    (f"us-docker.pkg.dev/p/repo/trainer:2026.11.1@{DIGEST}", "2026.11.1", True),
    (f"registry.example.com:443/a/b__c/d-e:latest@{DIGEST}", "latest", True),
])
def test_valid_image_reference(raw: dict[str, Any], ref: str, tag: str | None,
                               digest: bool) -> None:
    assert images.image_problem(ref) is None
    assert images.image_tag(ref) == tag
    assert images.image_has_digest(ref) is digest
    raw["imageCache"] = [{"name": "img", "image": ref}]
    assert config.parse(raw).image_cache == (CachedImage("img", ref, ("v5litepod-16",)),)


def test_image_cache_entries(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-16"}, {"accelerator": "l4-1", "count": 2},
                     {"accelerator": "n2-standard-32-4"}]
    raw["imageCache"] = ["gcr.io/distroless/python3-debian12:nonroot",
                         {"name": "trainer", "image": "us-docker.pkg.dev/p/r/trainer:v1",
                          "slicePools": ["l4-1"]},
                         f"us-docker.pkg.dev/p/r/eval.tool@{DIGEST}"]
    assert config.parse(raw).image_cache == (
        CachedImage("python3-debian12", "gcr.io/distroless/python3-debian12:nonroot",
                    ("v5litepod-16", "l4-1")),
        CachedImage("trainer", "us-docker.pkg.dev/p/r/trainer:v1", ("l4-1",)),
        CachedImage("eval-tool", f"us-docker.pkg.dev/p/r/eval.tool@{DIGEST}",
                    ("v5litepod-16", "l4-1")),
    )


def test_image_cache_missing_image_and_bad_name(raw: dict[str, Any]) -> None:
    raw["imageCache"] = [{"name": "no-image"}, {"name": "Trainer", "image": "busybox:1"},
                         7]
    assert problems(raw) == [
        "imageCache[0].image: is required",
        "imageCache[1].name: 'Trainer' is not a DNS-1123 label (lowercase letters, digits and "
        "'-', starting and ending with a letter or digit, at most 63 characters)",
        f"imageCache[2]: 7 is not a mapping; expected keys: {IMAGE_ALLOWED}",
        "imageCache[2].image: is required",
    ]


def test_image_cache_duplicate_name(raw: dict[str, Any]) -> None:
    raw["imageCache"] = ["gcr.io/a/trainer:v1", "gcr.io/b/trainer:v2"]
    assert problems(raw) == [
        "imageCache[1].name: 'trainer' is used by another cached image; give one a name"]


def test_image_cache_missing_pool(raw: dict[str, Any]) -> None:
    raw["imageCache"] = [{"image": "busybox:1", "slicePools": ["v5litepod-61", "gpu"]}]
    assert problems(raw) == [
        "imageCache[0].slicePools[0]: 'v5litepod-61' is not an accelerator slice pool of this "
        "stack; did you mean v5litepod-16? (pools: v5litepod-16)",
        "imageCache[0].slicePools[1]: 'gpu' is not an accelerator slice pool of this stack "
        "(pools: v5litepod-16)",
    ]


def test_image_cache_cpu_pool_is_refused(raw: dict[str, Any]) -> None:
    with_pools(raw, {"accelerator": "v5litepod-16"}, {"name": "cpu", "accelerator":
                                                       "n2-standard-32-4"})
    raw["imageCache"] = [{"image": "busybox:1", "slicePools": ["cpu"]}]
    assert problems(raw) == [
        "imageCache[0].slicePools[0]: 'cpu' is not an accelerator slice pool of this stack "
        "(pools: v5litepod-16)"]


def test_image_cache_empty_pool_list(raw: dict[str, Any]) -> None:
    raw["imageCache"] = [{"image": "busybox:1", "slicePools": []}]
    assert problems(raw) == ["imageCache[0].slicePools: is empty"]


def test_image_cache_without_accelerator_pools(raw: dict[str, Any]) -> None:
    with_pools(raw, {"accelerator": "n2-standard-32-4"})
    raw["imageCache"] = ["busybox:1"]
    assert problems(raw) == [
        "imageCache[0].slicePools: selects no slice pool; the stack has no accelerator pools "
        "to cache images on"]


# ----------------------------------------------------------------------------------
# Queues and teams


def test_team_quota_names_a_missing_pool(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-61": 4, "h100": 8}}]}
    assert problems(raw) == [
        "queues.teams[0].quota.v5litepod-61: names no slice pool of this stack; did you mean "
        "v5litepod-16? (pools: v5litepod-16)",
        "queues.teams[0].quota.h100: names no slice pool of this stack (pools: v5litepod-16)",
    ]


def test_team_borrowing_limit_names_a_missing_pool(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "borrowingLimit": {"v5litepod": 4}}]}
    assert problems(raw) == [
        "queues.teams[0].borrowingLimit.v5litepod: names no slice pool of this stack; did you "
        "mean v5litepod-16? (pools: v5litepod-16)"]


def test_team_quota_in_a_nap_only_stack(raw: dict[str, Any]) -> None:
    raw["slices"] = []
    raw["nodeAutoProvisioning"] = {"accelerators": {"tpu-v6e-slice": 64}}
    raw["queues"] = {"teams": [{"name": "a", "quota": {"tpu-v6e-slice": 8}}]}
    assert problems(raw) == [
        "queues.teams[0].quota.tpu-v6e-slice: names no slice pool of this stack (pools: none)"]


def test_negative_quota(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-16": -4},
                                "borrowingLimit": {"v5litepod-16": -1}}]}
    assert problems(raw) == [
        "queues.teams[0].quota.v5litepod-16: -4 is negative; a quota is 0 or more chips",
        "queues.teams[0].borrowingLimit.v5litepod-16: -1 is negative; a quota is 0 or more "
        "chips",
    ]


@pytest.mark.parametrize("amount,shown", [("4", "'4'"), (4.5, "4.5"), (True, "true"),
                                          (None, "null")])
def test_quota_not_a_whole_number(raw: dict[str, Any], amount: Any, shown: str) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-16": amount}}]}
    assert problems(raw) == [
        f"queues.teams[0].quota.v5litepod-16: {shown} is not a whole number of chips"]


def test_quota_not_a_mapping(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quota": 16}]}
    assert problems(raw) == [
        "queues.teams[0].quota: 16 is not a mapping of slice pool names to chip counts"]


def test_team_quota_above_the_pool(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-16": 17},
                                "borrowingLimit": {"v5litepod-16": 32}}]}
    assert problems(raw) == [
        "queues.teams[0].quota.v5litepod-16: 17 is more than the 16 chips pool v5litepod-16 "
        "declares",
        "queues.teams[0].borrowingLimit.v5litepod-16: 32 is more than the 16 chips pool "
        "v5litepod-16 declares",
    ]


def test_team_quota_equal_to_the_pool_is_allowed(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-16": 16}}]}
    assert config.parse(raw).queues.teams[0].quota == {"v5litepod-16": 16}


def test_cpu_pool_quota_counts_vcpus(raw: dict[str, Any]) -> None:
    with_pools(raw, {"name": "cpu", "accelerator": "n2-standard-32-4", "count": 2})
    raw["queues"] = {"teams": [{"name": "a", "quota": {"cpu": 257}}]}
    assert problems(raw) == [
        "queues.teams[0].quota.cpu: 257 is more than the 256 chips pool cpu declares"]


def test_teams_quotas_sum_above_the_pool(raw: dict[str, Any]) -> None:
    with_pools(raw, {"accelerator": "v5litepod-16", "count": 2},
               {"accelerator": "l4-1", "count": 4})
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-16": 24, "l4-1": 2}},
                               {"name": "b", "quota": {"v5litepod-16": 16, "l4-1": 2}},
                               {"name": "c", "quota": {"l4-1": 1}}]}
    assert problems(raw) == [
        "queues.teams: the teams' quotas for v5litepod-16 add up to 40 chips, more than the "
        "32 the pool declares; the shared queue's quota would be negative",
        "queues.teams: the teams' quotas for l4-1 add up to 5 chips, more than the 4 the pool "
        "declares; the shared queue's quota would be negative",
    ]


def test_teams_quotas_summing_to_the_pool_are_allowed(raw: dict[str, Any]) -> None:
    with_pools(raw, {"accelerator": "v5litepod-16", "count": 2})
    raw["queues"] = {"teams": [{"name": "a", "quota": {"v5litepod-16": 16}},
                               {"name": "b", "quota": {"v5litepod-16": 16}}]}
    assert [t.quota for t in config.parse(raw).queues.teams] == [
        {"v5litepod-16": 16}, {"v5litepod-16": 16}]


def test_duplicate_team_namespace(raw: dict[str, Any]) -> None:
    raw["queues"] = {"teams": [{"name": "a", "namespace": "ml"},
                               {"name": "b", "namespace": "ml"}]}
    assert problems(raw) == [
        "queues.teams[1].namespace: 'ml' already holds another queue's LocalQueue; give each "
        "team its own namespace"]


def test_team_namespace_is_the_shared_namespace(raw: dict[str, Any]) -> None:
    raw["queues"] = {"namespace": "jobs", "teams": [{"name": "jobs"}]}
    assert problems(raw) == [
        "queues.teams[0].namespace: 'jobs' already holds another queue's LocalQueue; give each "
        "team its own namespace"]


def test_team_names(raw: dict[str, Any]) -> None:
    raw["queues"] = {"clusterQueue": "shared",
                     "teams": [{"name": "shared", "namespace": "s"}, {"name": "a"},
                               {"name": "a", "namespace": "a2"}, {"name": "Evals"},
                               {"namespace": "x"}]}
    assert problems(raw) == [
        "queues.teams[0].name: 'shared' is already the name of a queue",
        "queues.teams[2].name: 'a' is already the name of a queue",
        "queues.teams[3].name: 'Evals' is not a DNS-1123 label",
        "queues.teams[3].namespace: 'Evals' is not a DNS-1123 label (lowercase letters, digits "
        "and '-', starting and ending with a letter or digit, at most 63 characters)",
        "queues.teams[4].name: is required",
    ]


def test_queue_names(raw: dict[str, Any]) -> None:
    raw["queues"] = {"namespace": "ML", "localQueue": "-main", "clusterQueue": "a_b",
                     "cohort": "x" * 254}
    label = ("(lowercase letters, digits and '-', starting and ending with a letter or digit, "
             "at most 63 characters)")
    assert problems(raw) == [
        f"queues.namespace: 'ML' is not a DNS-1123 label {label}",
        f"queues.localQueue: '-main' is not a DNS-1123 subdomain {label}",
        f"queues.clusterQueue: 'a_b' is not a DNS-1123 subdomain {label}",
        f"queues.cohort: {'x' * 254!r} is not a DNS-1123 subdomain {label}",
    ]


@pytest.mark.parametrize("value,shown", [("yes", "'yes'"), ("On", "'On'"), ("", "''")])
def test_topology_aware_scheduling_bad_value(raw: dict[str, Any], value: str,
                                             shown: str) -> None:
    raw["queues"] = {"topologyAwareScheduling": value}
    assert problems(raw) == [
        f"queues.topologyAwareScheduling: {shown} is not one of auto, on, off"]


@pytest.mark.parametrize("value", ["auto", "on", "off"])
def test_topology_aware_scheduling_values(raw: dict[str, Any], value: str) -> None:
    raw["queues"] = {"topologyAwareScheduling": value}
    assert config.parse(raw).queues.topology_aware == value


def test_cpu_quota_negative(raw: dict[str, Any]) -> None:
    raw["queues"] = {"cpuQuota": {"cpu": -1, "memoryGi": -8}}
    assert problems(raw) == ["queues.cpuQuota.cpu: -1 is negative",
                             "queues.cpuQuota.memoryGi: -8 is negative"]


def test_cpu_quota_types(raw: dict[str, Any]) -> None:
    raw["queues"] = {"cpuQuota": {"cpu": "8", "memoryGi": 32.5}}
    assert problems(raw) == ["queues.cpuQuota.cpu: '8' is not an integer",
                             "queues.cpuQuota.memoryGi: 32.5 is not an integer"]


def test_cpu_quota_zero_is_allowed(raw: dict[str, Any]) -> None:
    raw["queues"] = {"cpuQuota": {"cpu": 0, "memoryGi": 0}}
    assert config.parse(raw).queues.cpu_quota == (0, 0)


# ----------------------------------------------------------------------------------
# Secondary boot disks


@pytest.mark.parametrize("image", ["global/images/trainer-cache",
                                   "projects/my-ml-project/global/images/trainer-cache"])
def test_secondary_boot_disk(raw: dict[str, Any], image: str) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-16", "secondaryBootDisk": image}]
    assert config.parse(raw).slices[0].secondary_boot_disk == image


@pytest.mark.parametrize("image", [
    "trainer-cache",
    "global/images/Trainer",
    "projects/p/global/images/trainer-cache",  # project id too short
    "projects/my-ml-project/images/trainer-cache",
    "https://www.googleapis.com/compute/v1/projects/my-ml-project/global/images/x",
    "global/images/",
    "global/images/trainer-",
])
def test_bad_secondary_boot_disk(raw: dict[str, Any], image: str) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-16", "secondaryBootDisk": image}]
    assert problems(raw) == [f"slices[0].secondaryBootDisk: {image!r} {NOT_A_DISK}"]


def test_secondary_boot_disk_of_the_wrong_type(raw: dict[str, Any]) -> None:
    raw["slices"] = [{"accelerator": "v5litepod-16", "secondaryBootDisk": ["a"]}]
    assert problems(raw) == ["slices[0].secondaryBootDisk: ['a'] is not a string"]


# ----------------------------------------------------------------------------------
# Regression tests for bugs found while writing these tests (once strict xfails)

RESERVED = ("accelstack-system, kueue-system, jobset-system, kube-system, kube-public, "
            "kube-node-lease")
LABEL = ("(lowercase letters, digits and '-', starting and ending with a letter or digit, "
         "at most 63 characters)")


# Was: the default name came from split(':')[0], which cut a registry host:port reference at
# the port: 'registry.example.com:5000/team/trainer:v1' was named 'registry-example-com'.
@pytest.mark.parametrize("ref", [
    "registry.example.com:5000/team/trainer:v1",
    "registry.example.com:5000/team/trainer",
    "localhost:5000/trainer",
    f"localhost:5000/trainer@{DIGEST}",
    f"registry.example.com:443/a/trainer:v1@{DIGEST}",
])
def test_default_image_name_with_registry_port(raw: dict[str, Any], ref: str) -> None:
    raw["imageCache"] = [ref]
    assert config.parse(raw).image_cache == (CachedImage("trainer", ref, ("v5litepod-16",)),)


# Was: two images from one registry with a port both defaulted to the registry's host name,
# so a valid list was refused: "imageCache[1].name: 'localhost' is used by another cached
# image".
def test_two_images_from_a_registry_with_port(raw: dict[str, Any]) -> None:
    raw["imageCache"] = ["localhost:5000/team/trainer:v1", "localhost:5000/team/evaluator:v1"]
    assert [c.name for c in config.parse(raw).image_cache] == ["trainer", "evaluator"]


def test_same_repository_from_two_ported_registries_still_collides(raw: dict[str, Any]
                                                                    ) -> None:
    raw["imageCache"] = ["localhost:5000/trainer:v1", "registry.example.com:5000/trainer:v2"]
    assert problems(raw) == [
        "imageCache[1].name: 'trainer' is used by another cached image; give one a name"]


# Was: the patterns ended in '$', which in Python also matches before a trailing newline, so
# 'busybox:1.37\n' (e.g. from a YAML block scalar) passed and reached the DaemonSet.
@pytest.mark.parametrize("key,value,message", [
    ("imageCache", ["busybox:1.37\n"], f"imageCache[0].image: 'busybox:1.37\\n' {NOT_AN_IMAGE}"),
    ("imageCache", [{"name": "img\n", "image": "busybox:1.37"}],
     f"imageCache[0].name: 'img\\n' is not a DNS-1123 label {LABEL}"),
    ("addons", {"jobsetVersion": "v0.12.0\n"},
     "addons.jobsetVersion: 'v0.12.0\\n' is not a release version such as v0.12.0"),
    ("queues", {"namespace": "training\n"},
     f"queues.namespace: 'training\\n' is not a DNS-1123 label {LABEL}"),
    ("queues", {"localQueue": "main\n"},
     f"queues.localQueue: 'main\\n' is not a DNS-1123 subdomain {LABEL}"),
    ("queues", {"teams": [{"name": "a", "namespace": "team-a\n"}]},
     f"queues.teams[0].namespace: 'team-a\\n' is not a DNS-1123 label {LABEL}"),
    ("slices", [{"accelerator": "v5litepod-16", "secondaryBootDisk": "global/images/x\n"}],
     f"slices[0].secondaryBootDisk: 'global/images/x\\n' {NOT_A_DISK}"),
], ids=["image", "image-name", "version", "namespace", "local-queue", "team-namespace",
        "boot-disk"])
def test_trailing_newline_is_refused(raw: dict[str, Any], key: str, value: Any,
                                     message: str) -> None:
    raw[key] = value
    assert problems(raw) == [message]


def test_trailing_newline_in_an_image_reference() -> None:
    assert images.image_problem("busybox:1.37\n") == f"'busybox:1.37\\n' {NOT_AN_IMAGE}"


# Was: the tag pattern used \w, which in Python str patterns matches any Unicode letter or
# digit; the reference grammar allows only [A-Za-z0-9_], so 'busybox:café' was accepted and
# failed only at pull time on every node.
@pytest.mark.parametrize("ref", ["busybox:café", "busybox:\u00e9t\u00e9", "busybox:v\uff11",
                                 "busybox:\u0663"])
def test_non_ascii_tag_is_refused(raw: dict[str, Any], ref: str) -> None:
    assert images.image_problem(ref) == f"{ref!r} {NOT_AN_IMAGE}"
    raw["imageCache"] = [{"name": "img", "image": ref}]
    assert problems(raw) == [f"imageCache[0].image: {ref!r} {NOT_AN_IMAGE}"]


# Was: YAML 1.1 (PyYAML in harness.read_stack_file, and Pulumi's own yaml.v2 stack-file
# loader) reads an unquoted 'off'/'on' as a boolean, so the documented value
# 'topologyAwareScheduling: off' in a stack file was refused with 'false is not a string'.
@pytest.mark.parametrize("written,mode", [("off", "off"), ("on", "on"), ("'off'", "off"),
                                          ("auto", "auto")])
def test_unquoted_on_off_in_a_stack_file(tmp_path: Path, written: str, mode: str) -> None:
    path = tmp_path / "Pulumi.tas.yaml"
    path.write_text(
        "config:\n"
        "  accelstack:project: test-project\n"
        "  accelstack:region: us-central1\n"
        "  accelstack:zones: [us-central1-a]\n"
        "  accelstack:clusterName: test\n"
        "  accelstack:slices:\n"
        "    - accelerator: h100-mega-80gb-8\n"
        "  accelstack:queues:\n"
        f"    topologyAwareScheduling: {written}\n")
    assert config.parse(harness.read_stack_file(path)).queues.topology_aware == mode


@pytest.mark.parametrize("value,mode", [(True, "on"), (False, "off")])
def test_topology_aware_scheduling_boolean(raw: dict[str, Any], value: bool, mode: str
                                           ) -> None:
    raw["queues"] = {"topologyAwareScheduling": value}
    assert config.parse(raw).queues.topology_aware == mode
    assert raw["queues"] == {"topologyAwareScheduling": value}  # the input is left as it was


def test_topology_aware_scheduling_other_types_are_refused(raw: dict[str, Any]) -> None:
    raw["queues"] = {"topologyAwareScheduling": 1}
    assert problems(raw) == ["queues.topologyAwareScheduling: 1 is not a string"]


# Was (with test_addons.test_workload_namespace_may_not_be_a_system_namespace): a workload
# namespace equal to one the add-ons use was accepted and declared twice.
@pytest.mark.parametrize("ns", ["accelstack-system", "kueue-system", "jobset-system",
                                "kube-system", "kube-public", "kube-node-lease"])
def test_reserved_namespaces(raw: dict[str, Any], ns: str) -> None:
    raw["queues"] = {"namespace": ns, "teams": [{"name": "a", "namespace": ns},
                                                {"name": ns}]}
    reserved = f"{ns!r} is reserved for the cluster's system components ({RESERVED}); " \
               "choose another"
    assert problems(raw) == [f"queues.namespace: {reserved}",
                             f"queues.teams[0].namespace: {reserved}",
                             f"queues.teams[1].namespace: {reserved}"]


# Was (with test_addons.test_long_cached_image_names_are_refused): names longer than 51
# characters were truncated in the DaemonSet name, after the uniqueness check.
def test_image_name_length(raw: dict[str, Any]) -> None:
    raw["imageCache"] = [{"name": "n" * 51, "image": "busybox:1"},
                         {"name": "n" * 52, "image": "busybox:2"},
                         {"name": "n" * 63, "image": "busybox:3"}]
    assert problems(raw) == [
        f"imageCache[1].name: {'n' * 52!r} is 52 characters; at most 51 (the DaemonSet is "
        "named image-cache-<name>)",
        f"imageCache[2].name: {'n' * 63!r} is 63 characters; at most 51 (the DaemonSet is "
        "named image-cache-<name>)",
    ]
    del raw["imageCache"][1:]
    assert [c.name for c in config.parse(raw).image_cache] == ["n" * 51]


def test_long_default_image_name_fits(raw: dict[str, Any]) -> None:
    # a default name is the repository cut to 40 characters, so it is never refused
    raw["imageCache"] = ["gcr.io/p/" + "r" * 60 + ":v1"]
    assert [c.name for c in config.parse(raw).image_cache] == ["r" * 40]
