"""The image cache where it cannot work: pools that start empty (a warning pointing at the
secondary boot disk) and the pod slots its DaemonSets take on every node (a refusal)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from conftest import MINIMAL, ROOT
from infra.config import stack as config
from infra.config.errors import ConfigError
from infra.preview.cli import desired_state
from infra.specs import image_cache as image_cache_spec

IMAGE = "us-docker.pkg.dev/p/r/trainer:1.0"


def _raw(capacity: Any, images: list[Any], **pool: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["slices"] = [{"accelerator": "v5litepod-4", "count": 4, "capacity": capacity, **pool}]
    raw["imageCache"] = images
    return raw


# Was: a DaemonSet image cache on pools whose nodes are created for the jobs gave no hint
# that it pulls nothing ahead there.
@pytest.mark.parametrize("capacity,pool,warned", [
    ({"mode": "flex-start"}, {}, True),
    ({"mode": "queued"}, {}, True),
    ("on-demand", {}, True),  # single-host, autoscaling from minCount 0
    ("on-demand", {"minCount": 2}, False),
    ({"mode": "reservation", "reservation": "r"}, {}, False),
])
def test_a_cache_only_on_pools_that_start_empty_is_warned(capacity: Any, pool: dict[str, Any],
                                                          warned: bool) -> None:
    cfg = config.parse(_raw(capacity, [IMAGE], **pool))
    found = image_cache_spec.warnings(cfg)
    assert bool(found) is warned
    if warned:
        assert found == [
            "imageCache[0] (trainer): every pool it selects (v5litepod-4) starts empty and "
            "creates nodes for the jobs, where the DaemonSet starts with the job's pod and "
            "pulls nothing ahead; preload the image with slices[].secondaryBootDisk (GKE's "
            "CONTAINER_IMAGE_CACHE) instead"]


def test_the_preview_reports_the_warning(tmp_path: Path) -> None:
    from infra.preview.cli import main

    raw = _raw({"mode": "flex-start"}, [IMAGE])
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    path = stacks / "Pulumi.flex.yaml"
    path.write_text(yaml.safe_dump({"config": {f"accelstack:{k}": v for k, v in raw.items()}}))
    assert desired_state(path)["warnings"] == image_cache_spec.warnings(config.parse(raw))
    result = CliRunner().invoke(main, ["--quiet", str(path)])
    assert result.exit_code == 0, result.output
    assert "flex: warning: imageCache[0] (trainer): every pool it selects" in result.stderr


# Was: each DaemonSet's pod on every node was not counted against the pool's
# maxPodsPerNode (15 on TPU pools by default).
def test_the_daemonsets_pods_count_against_max_pods_per_node() -> None:
    images = [{"image": IMAGE, "name": f"img{i}"} for i in range(7)]
    raw = _raw({"mode": "reservation", "reservation": "r"}, images)
    with pytest.raises(ConfigError) as e:
        config.parse(raw)
    assert e.value.problems == [
        "imageCache: 7 image-cache DaemonSets (img0, img1, img2, img3, img4, img5, img6) and "
        "the job's pod make 8 pods on every node of pool 'v5litepod-4', more than the 7 of "
        "its maxPodsPerNode (15) not left to GKE's own system pods; cache fewer images "
        "there, or raise the pool's maxPodsPerNode"]
    assert len(config.parse(_raw({"mode": "reservation", "reservation": "r"},
                                 images[:6])).image_cache) == 6
    raw["slices"][0]["maxPodsPerNode"] = 32
    assert len(config.parse(raw).image_cache) == 7
