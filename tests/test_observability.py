"""The stack's observability as data: metric packages, Kueue's scrape, the dashboard and
the alert policies, held to their sources: the Monitoring API's discovery schemas, the GMP
CRDs, Google's metric lists and Kueue's metrics.go, and a real PromQL parser."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import monitoring_schema as ms
from conftest import REFERENCE, STACK_FILES
from infra.config import stack as stack_config
from infra.config.errors import ConfigError
from infra.preview import harness
from infra.specs.observability import alerts, dashboard, kueue_scrape, metrics, packages

UPSTREAM = REFERENCE / "upstream"


def _need(path: Path) -> None:
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} not found and CI=true")
        pytest.skip(f"{path} not found (../shared/reference/ beside the project root)")


def _cfg(path: Path) -> stack_config.StackConfig:
    return stack_config.parse(harness.read_stack_file(path))


CONFIGS = {p.name.removeprefix("Pulumi.").removesuffix(".yaml"): p for p in STACK_FILES}


def _promql() -> Any:
    try:
        import promql_parser
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("promql-parser (the dev extra) is not installed and CI=true")
        pytest.skip("promql-parser (the dev extra) is not installed")
    return promql_parser


# ----------------------------------------------------------------------------- names

def _reference_types() -> set[str]:
    _need(UPSTREAM / "gke-metric-types" / "metrics.yaml")
    data = yaml.safe_load((UPSTREAM / "gke-metric-types" / "metrics.yaml").read_text())
    return {t for group in data.values() if isinstance(group, dict) and "types" in group
            for t in group["types"]}


def _kueue_names() -> set[str]:
    _need(UPSTREAM / "kueue-v0.19.2-metrics" / "metrics.go")
    text = (UPSTREAM / "kueue-v0.19.2-metrics" / "metrics.go").read_text()
    found = re.findall(r'Subsystem:\s*constants\.KueueName,\s*Name:\s*"([a-z_]+)"', text)
    return {f"kueue_{n}" for n in found}


def metric_names(query: str) -> set[str]:
    """Every metric a query names, from the parser's tree: a selector's name, or its
    ``__name__`` matcher (Cloud Monitoring types), with _bucket/_sum/_count taken off."""
    pp = _promql()
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, pp.VectorSelector):
            if node.name:
                names.add(node.name)
            for matcher in node.matchers.matchers:
                if matcher.name == "__name__":
                    names.add(matcher.value)
        for attr in ("expr", "lhs", "rhs", "vector_selector", "param"):
            child = getattr(node, attr, None)
            if child is not None and not isinstance(child, (str, int, float)):
                visit(child)
        for arg in getattr(node, "args", None) or []:
            visit(arg)

    visit(pp.parse(query))
    return names


def _known(name: str, types: set[str], kueue: set[str]) -> bool:
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    if "/" in name:
        return name in types or base in types
    if name in kueue or base in kueue:
        return True
    return metrics.PROMETHEUS_TYPES.get(name) in types


def _all_queries(cfg: stack_config.StackConfig) -> list[str]:
    return ([q for _, q, _ in dashboard.queries(cfg)]
            + [p.query for p in alerts.policies(cfg)])


@pytest.mark.parametrize("stack", sorted(CONFIGS))
def test_every_query_parses_and_names_only_listed_metrics(stack: str) -> None:
    cfg = _cfg(CONFIGS[stack])
    types, kueue = _reference_types(), _kueue_names()
    queries = _all_queries(cfg)
    assert queries
    for query in queries:
        names = metric_names(query)
        assert names, query
        assert [n for n in names if not _known(n, types, kueue)] == [], query


def test_an_unlisted_metric_is_caught() -> None:
    types, kueue = _reference_types(), _kueue_names()
    names = metric_names('avg({__name__="kubernetes.io/container/accelerator/duty_cylce"})')
    assert [n for n in names if not _known(n, types, kueue)] == [
        "kubernetes.io/container/accelerator/duty_cylce"]
    assert not _known("kueue_pending_workload", types, kueue)


def test_a_broken_query_does_not_parse() -> None:
    pp = _promql()
    with pytest.raises(ValueError):
        pp.parse("sum by (cluster_queue) (kueue_pending_workloads{cluster=\"x\"} > 0")


def test_kueue_metrics_used_are_in_metrics_go() -> None:
    assert set(metrics.KUEUE_METRICS) <= _kueue_names()


# ----------------------------------------------------------------------------- packages

def test_packages_per_stack() -> None:
    gpu = packages.enable_components(_cfg(CONFIGS["a3mega"]))
    tpu = packages.enable_components(_cfg(CONFIGS["v5e-spot"]))
    assert gpu == ["SYSTEM_COMPONENTS", "POD", "DCGM", "JOBSET"]
    assert tpu == ["SYSTEM_COMPONENTS", "POD", "JOBSET"]


def test_a_package_below_its_floor_is_refused(raw: dict[str, Any]) -> None:
    raw.update(gkeVersion="1.31.5-gke.1000000",
               observability={"metricPackages": ["JOBSET", "DCGMX"]})
    with pytest.raises(ConfigError) as e:
        stack_config.parse(raw)
    assert "observability.metricPackages[0]: JOBSET needs GKE 1.32.1-gke.1357001 or " \
           "later; gkeVersion is 1.31.5-gke.1000000" in e.value.problems
    assert any(p.startswith("observability.metricPackages[1]: 'DCGMX' is not a GKE metric "
                            "package; allowed: SYSTEM_COMPONENTS,") for p in e.value.problems)


def test_channels_and_thresholds_are_checked(raw: dict[str, Any]) -> None:
    raw["observability"] = {"alerts": {"idleMinutes": 2, "idleDutyCycle": 100},
                            "notificationChannels": [{"email": "nobody"},
                                                     {"webhook": "http://x"},
                                                     {"pubsub": "projects/my-proj/topics/alerts"},
                                                     {"sms": "1"}]}
    with pytest.raises(ConfigError) as e:
        stack_config.parse(raw)
    assert e.value.problems == [
        "observability.alerts.idleDutyCycle: 100 is not a percentage above 0 and below 100",
        "observability.alerts.idleMinutes: 2 is not between 5 and 1440",
        "observability.notificationChannels[0].email: 'nobody' is not an email address",
        "observability.notificationChannels[1].webhook: 'http://x' is not an https:// URL",
        "observability.notificationChannels[3].sms: unknown channel kind; allowed: email, "
        "pubsub, webhook",
    ]


def test_observability_off(raw: dict[str, Any]) -> None:
    raw["observability"] = False
    cfg = stack_config.parse(raw)
    assert packages.enable_components(cfg) == ["SYSTEM_COMPONENTS"]
    assert alerts.policies(cfg) == []


# ----------------------------------------------------------------------------- shapes

@pytest.mark.parametrize("stack", sorted(CONFIGS))
def test_dashboard_is_a_valid_dashboard(stack: str) -> None:
    _need(ms.DISCOVERY)
    board = json.loads(dashboard.dashboard_json(_cfg(CONFIGS[stack])))
    assert ms.validate(board, "Dashboard", "v1") == []


def test_the_dashboard_validator_catches_a_typo() -> None:
    _need(ms.DISCOVERY)
    board = dashboard.dashboard(_cfg(CONFIGS["v5e-spot"]))
    board["mosaicLayout"]["tiles"][1]["widget"]["xyChart"]["dataSets"][0]["plotTyp"] = "LINE"
    board["mosaicLayout"]["tiles"][1]["widget"]["xyChart"]["dataSets"][0]["plotType"] = "PIE"
    found = ms.validate(board, "Dashboard", "v1")
    assert len(found) == 2 and "plotTyp: not a field of DataSet" in found[0] + found[1]


@pytest.mark.parametrize("stack", sorted(CONFIGS))
def test_dashboard_tiles_fit_and_do_not_overlap(stack: str) -> None:
    board = dashboard.dashboard(_cfg(CONFIGS[stack]))
    cells: set[tuple[int, int]] = set()
    for tile in board["mosaicLayout"]["tiles"]:
        assert tile["xPos"] + tile["width"] <= board["mosaicLayout"]["columns"]
        area = {(x, y) for x in range(tile["xPos"], tile["xPos"] + tile["width"])
                for y in range(tile["yPos"], tile["yPos"] + tile["height"])}
        assert not area & cells, tile["widget"]["title"]
        cells |= area


def test_dashboard_sections() -> None:
    v6e = dashboard.queries(_cfg(CONFIGS["v6e-training"]))
    titles = [t for t, _, _ in v6e]
    assert any(t.startswith("Multislice collective") for t in titles)
    assert "TPU duty cycle per pod (%)" in titles
    headers = [h for h, _ in dashboard.sections(_cfg(CONFIGS["v6e-training"]))]
    assert headers[-3:] == ["multislice", "Kueue", "node pools"]
    assert not any(t.startswith("GPU") for t in titles)
    a3 = [t for t, _, _ in dashboard.queries(_cfg(CONFIGS["a3mega"]))]
    assert any(t.startswith("GPU utilisation") for t in a3)
    assert not any("TPU" in t for t in a3)


@pytest.mark.parametrize("stack", ["v5e-spot", "a3mega"])
def test_alert_policies_are_valid_alert_policies(stack: str) -> None:
    _need(ms.DISCOVERY)
    cfg = _cfg(CONFIGS[stack])
    policies = alerts.policies(cfg)
    assert {p.key for p in policies} >= {"pending", "restarts", "repair"}
    for policy in policies:
        args = ms.snake_to_camel(alerts.policy_args(cfg, policy, ["projects/p/x/1"]))
        args.pop("project")
        args["notificationChannels"] = list(args["notificationChannels"])
        assert ms.validate(args, "AlertPolicy", "v3") == []


def test_kueue_scrape_is_valid_against_the_gmp_crd() -> None:
    path = UPSTREAM / "gmp-prometheus-engine-crds" / \
        "monitoring.googleapis.com_clusterpodmonitorings.yaml"
    _need(path)
    crd = yaml.safe_load(path.read_text())
    v1 = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = _closed(v1["schema"]["openAPIV3Schema"])
    obj = kueue_scrape.pod_monitoring()
    jsonschema.validate(obj, schema)
    bad = json.loads(json.dumps(obj))
    bad["spec"]["endpoints"][0]["schem"] = "https"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def _closed(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed(v) for k, v in schema.items() if k != "x-kubernetes-validations"}
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if "properties" in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    if "metadata" in out.get("properties", {}):
        out["properties"]["metadata"] = {"type": "object"}
    return out


def test_kueue_scrape_core_objects_are_valid() -> None:
    import schema

    for obj in kueue_scrape.objects():
        if obj["kind"] != "ClusterPodMonitoring":  # the GMP CRD: the test above
            schema.validate(obj)


def test_kueue_scrape_matches_kueues_endpoint() -> None:
    _need(UPSTREAM / "kueue-v0.19.2-metrics" / "manager.yaml")
    manager = (UPSTREAM / "kueue-v0.19.2-metrics" / "manager.yaml").read_text()
    assert "containerPort: 8443\n          name: metrics" in manager
    role = yaml.safe_load((UPSTREAM / "kueue-v0.19.2-metrics" /
                           "metrics_reader_role.yaml").read_text())
    objs = {o["kind"]: o for o in kueue_scrape.objects()}
    assert objs["ClusterRole"]["rules"] == role["rules"]
    endpoint = objs["ClusterPodMonitoring"]["spec"]["endpoints"][0]
    assert (endpoint["port"], endpoint["scheme"], endpoint["path"]) == ("metrics", "https",
                                                                        "/metrics")
    assert objs["Secret"]["metadata"]["namespace"] == \
        endpoint["authorization"]["credentials"]["secret"]["namespace"]


# ----------------------------------------------------------------------------- program

def test_the_program_declares_and_exports_it() -> None:
    ev = harness.evaluate_file(CONFIGS["v6e-training"])
    [board] = ev.of_type("gcp:monitoring/dashboard:Dashboard")
    assert json.loads(board.inputs["dashboardJson"])["displayName"].startswith("accelstack ")
    policies = ev.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    [channel] = ev.of_type("gcp:monitoring/notificationChannel:NotificationChannel")
    assert channel.inputs["type"] == "email"
    assert channel.inputs["labels"] == {"email_address": "ml-oncall@example.com"}
    assert {p.name for p in policies} == {f"observability-alert-{k}" for k in
                                          ("idle-tpu", "pending", "restarts", "repair")}
    for p in policies:
        assert p.inputs["notificationChannels"] == ["observability-channel-0-id"]
    pending = next(p for p in policies if p.name.endswith("pending"))
    condition = pending.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]
    assert condition["duration"] == "7200s"  # the stack's pendingMinutes: 120
    assert condition["disableMetricValidation"] is True
    kinds = {r.inputs["objs"][0]["kind"] for r in ev.of_type("kubernetes:yaml/v2:ConfigGroup")
             if r.name.startswith(("clusterpodmonitoring-", "secret-accelstack-metrics"))}
    assert kinds == {"ClusterPodMonitoring", "Secret"}
    monitoring = ev.outputs["accelstack"]["monitoring"]
    assert monitoring == {"project": "my-ml-project", "goodput": True,
                          "dashboard": "projects/my-ml-project/dashboards/"
                                       "observability-dashboard"}
    roles = {r.inputs["role"] for r in ev.of_type("gcp:projects/iAMMember:IAMMember")
             if r.name.startswith("goodput-")}
    assert roles == {"roles/logging.logWriter", "roles/monitoring.metricWriter",
                     "roles/logging.viewer"}


def test_observability_off_declares_none_of_it(tmp_path: Path) -> None:
    text = CONFIGS["v5e-spot"].read_text() + "  accelstack:observability: false\n"
    path = tmp_path / "stacks" / "Pulumi.v5e-spot.yaml"
    path.parent.mkdir()
    path.write_text(text)
    ev = harness.evaluate_file(path)
    assert not [r for r in ev.resources if r.type.startswith("gcp:monitoring/")]
    assert "monitoring" not in ev.outputs["accelstack"]
