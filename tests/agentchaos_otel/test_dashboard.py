"""dashboards/agentchaos.json holds together: Grafana's dashboard essentials, template variables, PromQL
that Prometheus's own parser accepts (promtool), TraceQL over attribute names we actually write, and
links from the metric panels to the traces behind them. (test_metrics.py runs every query on a real
Prometheus and compares the answers with the trace file.)"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from agentchaos_otel import attributes as A
from tests.support import REPO

pytestmark = pytest.mark.ecosystem

DASHBOARD = REPO / "dashboards" / "agentchaos.json"
# Prometheus names of what configure() exports (OTel's Prometheus exporter: dots to underscores,
# unit suffix for seconds, _total for counters, _bucket/_sum/_count for histograms).
EXPORTED = {"agentchaos_faults_injected_total", "agentchaos_episodes_total", "agentchaos_diagnoses_total",
            *(f"gen_ai_client_operation_duration_seconds_{s}" for s in ("bucket", "sum", "count")),
            *(f"gen_ai_client_token_usage_{s}" for s in ("bucket", "sum", "count"))}
PROMQL_WORDS = {"sum", "by", "rate", "increase", "histogram_quantile", "le", "type", "condition", "outcome",
                "changed", "gen_ai_request_model", "gen_ai_token_type", "success", "failure", "true", "false",
                "or", "method", "service_name"}
# Template variables: the label each one lists, and the metric it reads the values from.
VARIABLES = {"service": ("target_info", "service_name"), "condition": ("agentchaos_episodes_total", "condition"),
             "model": ("gen_ai_client_operation_duration_seconds_count", "gen_ai_request_model")}
OUR_NAMES = {v for k, v in vars(A).items() if k.isupper() and isinstance(v, str)}


def _dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def _targets(kind: str) -> list[dict[str, Any]]:
    return [t for p in _dashboard()["panels"] for t in p["targets"] if t["datasource"]["type"] == kind]


def promql(expr: str, *, rate_interval: str = "1m", range_: str = "1h", **values: str) -> str:
    """An expression as Grafana sends it: interval variables filled in, template variables at "All" (``.*``)
    unless a value is given (``service="diagnose"``)."""
    expr = expr.replace("$__rate_interval", rate_interval).replace("$__range", range_)
    for name in VARIABLES:
        # A value is a regular expression inside a PromQL string, whose own escapes double the backslash.
        value = re.escape(values[name]).replace("\\", "\\\\") if name in values else ".*"
        expr = expr.replace(f"${name}", value)
    return expr


def test_grafana_dashboard_essentials() -> None:
    d = _dashboard()
    assert d["uid"] and d["title"] and isinstance(d["schemaVersion"], int)
    variables = {v["name"]: v for v in d["templating"]["list"] if v["type"] == "datasource"}
    assert {v["query"] for v in variables.values()} == {"prometheus", "tempo"}
    queries = {v["name"]: v for v in d["templating"]["list"] if v["type"] == "query"}
    assert set(queries) == set(VARIABLES)
    for name, (metric, label) in VARIABLES.items():
        v = queries[name]
        assert v["query"]["query"] == f"label_values({metric}, {label})" and v["datasource"]["uid"] == "${prometheus}"
        assert v["includeAll"] and v["multi"] and v["allValue"] == ".*"
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)) == 8
    for p in d["panels"]:
        assert p["type"] in {"timeseries", "bargauge", "barchart", "table"} and p["title"]
        g = p["gridPos"]
        assert all(isinstance(g[k], int) for k in "xywh") and 0 <= g["x"] and g["x"] + g["w"] <= 24
        for ds in [p["datasource"], *(t["datasource"] for t in p["targets"])]:
            name = re.fullmatch(r"\$\{(\w+)\}", ds["uid"]).group(1)
            assert variables[name]["query"] == ds["type"]
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(refs) == len(set(refs))
    titles = " ".join(p["title"].lower() for p in d["panels"])
    for subject in ("fault", "success", "latency", "tokens", "diagnoses"):
        assert subject in titles


def test_promql_names_only_what_we_export() -> None:
    for t in _targets("prometheus"):
        expr = re.sub(r'"[^"]*"', '""', promql(t["expr"]))  # label values are not names
        names = set(re.findall(r"[a-zA-Z_][a-zA-Z0-9_]*", expr)) - PROMQL_WORDS - {"m", "h"}
        assert names and names <= EXPORTED, names - EXPORTED


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus package) is missing")
def test_promql_parses_with_promtool(tmp_path: Path) -> None:
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:panel{i}", "expr": promql(t["expr"])} for i, t in enumerate(_targets("prometheus"))]}]}
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps(rules))  # JSON is YAML
    result = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(rules['groups'][0]['rules'])} rules found" in result.stdout
    broken = tmp_path / "broken.yml"
    broken.write_text(json.dumps({"groups": [{"name": "x", "rules": [{"record": "x:y", "expr": "sum by (type ("}]}]}))
    assert subprocess.run(["promtool", "check", "rules", str(broken)], capture_output=True).returncode != 0


def _traceql_ok(q: str) -> None:
    assert q.startswith("{") and q.count("{") == q.count("}") and q.count("(") == q.count(")"), q
    spanset = q.split("|")[0]
    assert re.fullmatch(r"\{ .+ \} ?", spanset), q
    for attr in re.findall(r"span\.([a-z_.]+)", q):
        assert attr in OUR_NAMES, attr


def test_traceql_shape_and_attribute_names() -> None:
    queries = [t["query"] for t in _targets("tempo")]
    assert len(queries) == 3
    for q in queries:
        _traceql_ok(q)


def test_every_prometheus_panel_filters_by_the_variables() -> None:
    for p in _dashboard()["panels"]:
        for t in p["targets"]:
            if t["datasource"]["type"] != "prometheus":
                continue
            assert 'service_name=~"$service"' in t["expr"], p["title"]
            if "episodes" in t["expr"]:
                assert 'condition=~"$condition"' in t["expr"], p["title"]
            if "gen_ai_client" in t["expr"]:
                assert 'gen_ai_request_model=~"$model"' in t["expr"], p["title"]


def test_fault_latency_success_and_diagnosis_panels_link_to_their_traces() -> None:
    linked = {}
    for p in _dashboard()["panels"]:
        for link in p.get("fieldConfig", {}).get("defaults", {}).get("links", []):
            url = urllib.parse.urlsplit(link["url"])
            assert url.path == "/explore" and link["title"]
            panes = json.loads(urllib.parse.parse_qs(url.query)["panes"][0])
            (query,) = panes["a"]["queries"]
            assert panes["a"]["datasource"] == query["datasource"]["uid"] == "${tempo}"
            assert panes["a"]["range"] == {"from": "${__from}", "to": "${__to}"}
            # The clicked series' labels narrow the traces: every label the link names is one the panel groups by.
            labels = re.findall(r"\$\{__field\.labels\.(\w+):percentencode\}", query["query"])
            assert labels and all(f"by ({lab}" in " ".join(t["expr"] for t in p["targets"]) or
                                  f", {lab})" in " ".join(t["expr"] for t in p["targets"]) for lab in labels)
            _traceql_ok(re.sub(r"\$\{[^}]+\}", "x", query["query"]))
            linked[p["id"]] = p["title"]
    titles = " ".join(linked.values()).lower()
    for subject in ("fault", "latency", "success", "diagnoses"):
        assert subject in titles, linked
