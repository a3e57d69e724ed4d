"""The stack's Cloud Monitoring dashboard, as the Monitoring API v1 ``Dashboard`` JSON
(``gcp.monitoring.Dashboard`` dashboardJson; schema in the API's discovery document,
monitoring.v1.json, which tests/test_observability_dashboard.py validates against).

One dashboard per stack, built from the stack: per accelerator pool its TPU duty cycle,
TensorCore utilisation and HBM used (node metrics, narrowed to the pool's nodes), the
TPU duty cycle and HBM used per pod (container metrics), the multislice collective and DCN latencies when a pool has more than one slice, DCGM's GPU
utilisation and framebuffer memory for GPU pools, Kueue's pending and admitted workloads
per ClusterQueue, and the node pools' status (repairs show as Reconciling or Error) and
interruptions. Every chart is a PromQL query (metrics.py says how names are written).

Pinned filters on ``namespace_name`` and ``top_level_controller_name`` let a link narrow
the dashboard to one workload (submit's describe builds it: infra/contract/observability.py).
Pure; no pulumi.
"""

from __future__ import annotations

import json
from typing import Any

from infra.config.stack import SlicePool, StackConfig
from infra.specs.observability import metrics as m

_WIDTH = 48  # MosaicLayout columns (the console's grid is 48 wide)
_HALF = 24
_HEIGHT = 16


def display_name(cfg: StackConfig) -> str:
    return f"accelstack {cfg.cluster_name}"


def _chart(title: str, query: str, *, unit: str = "", legend: str = "") -> dict[str, Any]:
    data: dict[str, Any] = {"timeSeriesQuery": {"prometheusQuery": query},
                            "plotType": "LINE", "targetAxis": "Y1"}
    if unit:
        data["timeSeriesQuery"]["unitOverride"] = unit
    if legend:
        data["legendTemplate"] = legend
    return {"title": title, "xyChart": {"dataSets": [data], "chartOptions": {"mode": "COLOR"},
                                        "yAxis": {"scale": "LINEAR"}}}


def _header(title: str, subtitle: str) -> dict[str, Any]:
    return {"title": title, "sectionHeader": {"subtitle": subtitle, "dividerBelow": True}}


def _pool_nodes(cfg: StackConfig, pool: SlicePool) -> str:
    # GKE names a node after its instance, gke-<cluster>-<node pool>-<hash>-<suffix>
    # (long names are shortened; not verified against a Google page, so the pattern only
    # anchors on the node pool name between dashes).
    return "~" + f"gke-.*-({m.regex_of(pool.node_pool_names())})-.*"


def tpu_queries(cfg: StackConfig, pool: SlicePool) -> list[tuple[str, str, str]]:
    """(title, query, unit) of a TPU pool's charts."""
    where = {"cluster_name": cfg.cluster_name, "node_name": _pool_nodes(cfg, pool)}
    return [
        (f"{pool.name}: TPU duty cycle (%)",
         f"avg by (node_name) ({m.selector(m.NODE_DUTY_CYCLE, **where)})", "%"),
        (f"{pool.name}: TensorCore utilisation (%)",
         f"avg by (node_name) ({m.selector(m.NODE_TENSORCORE, **where)})",
         "%"),
        (f"{pool.name}: HBM used",
         f"sum by (node_name) ({m.selector(m.NODE_HBM_USED, **where)})", "By"),
    ]


def multislice_queries(cfg: StackConfig) -> list[tuple[str, str, str]]:
    out = []
    for title, metric in (("Multislice collective end-to-end latency, p99",
                           m.COLLECTIVE_LATENCY),
                          ("Multislice DCN transfer latency, p99", m.DCN_LATENCY)):
        sel = m.selector(metric, cluster_name=cfg.cluster_name)
        out.append((title, f"histogram_quantile(0.99, sum by (le, namespace_name) "
                           f"(rate({sel}[5m])))", ""))
    return out


def gpu_queries(cfg: StackConfig) -> list[tuple[str, str, str]]:
    where = {"cluster": cfg.cluster_name}
    return [
        ("GPU utilisation (%, DCGM)",
         f"avg by (instance) ({m.selector(m.GPU_UTIL, **where)})", "%"),
        ("GPU tensor pipes active (DCGM)",
         f"avg by (instance) ({m.selector(m.GPU_TENSOR_ACTIVE, **where)})", "1"),
        ("GPU framebuffer memory used (MiB, DCGM)",
         f"sum by (instance) ({m.selector(m.GPU_FB_USED, **where)})", "MiBy"),
    ]


def kueue_queries(cfg: StackConfig) -> list[tuple[str, str, str]]:
    where = {"cluster": cfg.cluster_name}
    return [
        ("Kueue pending workloads per ClusterQueue",
         f"sum by (cluster_queue, status) ({m.selector(m.KUEUE_PENDING, **where)})", "1"),
        ("Kueue admitted workloads per ClusterQueue",
         f"sum by (cluster_queue) ({m.selector(m.KUEUE_ADMITTED_ACTIVE, **where)})", "1"),
        ("Kueue admission wait, p90",
         f"histogram_quantile(0.9, sum by (le, cluster_queue) "
         f"(rate({m.KUEUE_ADMISSION_WAIT}_bucket{{cluster=\"{cfg.cluster_name}\"}}[10m])))",
         "s"),
    ]


def node_pool_queries(cfg: StackConfig) -> list[tuple[str, str, str]]:
    where = {"cluster_name": cfg.cluster_name}
    return [
        ("Node pools not Running (Reconciling, Error: repairs and upgrades)",
         f"max by (node_pool_name, status) "
         f"({m.selector(m.NODE_POOL_STATUS, status='~Provisioning|Reconciling|Error|Stopping', **where)})",
         "1"),
        ("Node pool interruptions",
         f"sum by (node_pool_name) (increase({m.selector(m.NODE_POOL_INTERRUPTIONS, **where)}[1h]))",
         "1"),
    ]


def workload_queries(cfg: StackConfig) -> list[tuple[str, str, str]]:
    """Per pod of the workloads (container metrics carry namespace_name and pod_name, so
    the dashboard's namespace filter narrows them to a workload's namespace)."""
    where = {"cluster_name": cfg.cluster_name}
    return [
        ("TPU duty cycle per pod (%)",
         f"avg by (namespace_name, pod_name) ({m.selector(m.TPU_DUTY_CYCLE, **where)})", "%"),
        ("HBM used per pod",
         f"sum by (namespace_name, pod_name) ({m.selector(m.HBM_USED, **where)})", "By"),
    ]


def sections(cfg: StackConfig) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The dashboard's sections in order: (header, [(title, PromQL, unit)])."""
    out: list[tuple[str, list[tuple[str, str, str]]]] = []
    tpu = [p for p in cfg.slices if p.accelerator.kind == "tpu"]
    for pool in tpu:
        out.append((f"accelerator pool {pool.name}", tpu_queries(cfg, pool)))
    if tpu:
        out.append(("workloads (pods)", workload_queries(cfg)))
    if any(p.count > 1 for p in tpu):
        out.append(("multislice", multislice_queries(cfg)))
    if any(p.accelerator.kind == "gpu" for p in cfg.slices):
        out.append(("GPUs (DCGM)", gpu_queries(cfg)))
    out.append(("Kueue", kueue_queries(cfg)))
    out.append(("node pools", node_pool_queries(cfg)))
    return out


def queries(cfg: StackConfig) -> list[tuple[str, str, str]]:
    """Every chart of the dashboard, in order: (title, PromQL, unit)."""
    return [q for _, charts in sections(cfg) for q in charts]


def dashboard(cfg: StackConfig) -> dict[str, Any]:
    """The Dashboard object: a mosaic of two charts a row, each section under a header."""
    tiles: list[dict[str, Any]] = []
    y = 0
    for header, charts in sections(cfg):
        tiles.append({"xPos": 0, "yPos": y, "width": _WIDTH, "height": 4,
                      "widget": _header(header, f"stack {cfg.cluster_name}")})
        y += 4
        for i, (title, query, unit) in enumerate(charts):
            tiles.append({"xPos": (i % 2) * _HALF, "yPos": y + (i // 2) * _HEIGHT,
                          "width": _HALF, "height": _HEIGHT,
                          "widget": _chart(title, query, unit=unit)})
        y += ((len(charts) + 1) // 2) * _HEIGHT
    return {
        "displayName": display_name(cfg),
        "mosaicLayout": {"columns": _WIDTH, "tiles": tiles},
        "dashboardFilters": [
            {"labelKey": "namespace_name", "filterType": "RESOURCE_LABEL"},
            {"labelKey": "top_level_controller_name", "filterType": "SYSTEM_METADATA_LABEL"},
        ],
        "labels": {"accelstack": ""},
    }


def dashboard_json(cfg: StackConfig) -> str:
    return json.dumps(dashboard(cfg), sort_keys=True)
