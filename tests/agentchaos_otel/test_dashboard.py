"""dashboards/agentchaos.json holds together: Grafana's dashboard essentials, PromQL that Prometheus's
own parser accepts (promtool), TraceQL over attribute names we actually write."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
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
                "changed", "gen_ai_request_model", "gen_ai_token_type", "success", "failure", "true", "false"}
OUR_NAMES = {v for k, v in vars(A).items() if k.isupper() and isinstance(v, str)}


def _dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def _targets(kind: str) -> list[dict[str, Any]]:
    return [t for p in _dashboard()["panels"] for t in p["targets"] if t["datasource"]["type"] == kind]


def promql(expr: str) -> str:
    """An expression with Grafana's interval variables filled in, as Grafana sends it."""
    return expr.replace("$__rate_interval", "1m").replace("$__range", "1h")


def test_grafana_dashboard_essentials() -> None:
    d = _dashboard()
    assert d["uid"] and d["title"] and isinstance(d["schemaVersion"], int)
    variables = {v["name"]: v for v in d["templating"]["list"] if v["type"] == "datasource"}
    assert {v["query"] for v in variables.values()} == {"prometheus", "tempo"}
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


def test_traceql_shape_and_attribute_names() -> None:
    queries = [t["query"] for t in _targets("tempo")]
    assert len(queries) == 3
    for q in queries:
        assert q.startswith("{") and q.count("{") == q.count("}") and q.count("(") == q.count(")")
        spanset = q.split("|")[0]
        assert re.fullmatch(r"\{ .+ \} ", spanset)
        for attr in re.findall(r"span\.([a-z_.]+)", q):
            assert attr in OUR_NAMES, attr
