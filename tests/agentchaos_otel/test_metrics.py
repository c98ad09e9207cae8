"""Metrics where users look: a real Prometheus (Debian's package) scrapes configure()'s /metrics endpoint,
and the verdict of a failed episode is on its root span when it reaches the store."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import connect
from agentchaos_otel.trace.metrics import DURATION_BUCKETS, TOKEN_BUCKETS

pytestmark = pytest.mark.ecosystem

AGENT = textwrap.dedent("""
    import os, sys, time, openai, agentchaos_otel
    handle = agentchaos_otel.configure(db=os.environ["DB"], prometheus_port=0, diagnose_live=True)
    print(handle.prometheus_port, flush=True)
    client = openai.OpenAI(base_url=os.environ["BASE_URL"], api_key="sk-metrics", max_retries=0)
    for task, plan, ok in (("m-fail", "llm_error_single", False), ("m-ok", None, True), ("m-ok2", None, True)):
        with agentchaos_otel.episode(task, plan=plan, condition="c-" + str(plan)) as ep:
            client.chat.completions.create(model="sim-core-test", messages=[{"role": "user", "content": "TEXT 1"}])
            ep.set_outcome(success=ok)
    handle.force_flush()
    print("ready", flush=True)
    sys.stdin.read()  # serve /metrics until the test closes stdin
    handle.shutdown()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _query(prom: str, q: str) -> list[dict[str, Any]]:
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    return body["data"]["result"]


def _wait(prom: str, q: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = _query(prom, q)
            if result:
                return result
        except OSError:
            pass  # Prometheus still starting
        if time.monotonic() > deadline:
            raise AssertionError(f"Prometheus never returned {q}")
        time.sleep(0.5)


@pytest.fixture()
def agent(tmp_path: Path, mode_server: Any) -> Any:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    # Prometheus is stopped before the agent: its shutdown need not wait long for a last scrape.
    env.update({"DB": str(tmp_path / "t.duckdb"), "BASE_URL": mode_server.base_url,
                "AGENTCHAOS_PROMETHEUS_WAIT": "2"})
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    yield port, tmp_path / "t.duckdb"
    proc.stdin.close()
    proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read()


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="the prometheus binary is not installed "
                                                               "(.ci/run installs Debian's package)")
def test_prometheus_scrapes_genai_histograms_and_our_counters(agent: Any, tmp_path: Path) -> None:
    metrics_port, _db = agent
    prom_port = _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(textwrap.dedent(f"""
        global: {{scrape_interval: 1s, evaluation_interval: 1s}}
        scrape_configs:
          - job_name: agentchaos
            static_configs: [{{targets: ["127.0.0.1:{metrics_port}"]}}]
    """))
    prom = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{prom_port}"
    try:
        # Every series is shown at zero for one scrape before its value (so increase() sees the first event).
        faults = _wait(base, "agentchaos_faults_injected_total > 0")
        assert [(r["metric"]["type"], r["metric"]["target"], r["metric"]["changed"], r["value"][1])
                for r in faults] == [("error", "content", "true", "1")]
        episodes = {(r["metric"]["outcome"], r["metric"]["condition"]): r["value"][1]
                    for r in _query(base, "agentchaos_episodes_total")}
        # Both outcome series of a condition exist, at zero when none ended that way.
        assert episodes == {("failure", "c-llm_error_single"): "1", ("success", "c-llm_error_single"): "0",
                            ("success", "c-None"): "2", ("failure", "c-None"): "0"}
        diagnoses = _query(base, "agentchaos_diagnoses_total")
        assert [(r["metric"]["type"], r["metric"]["method"], r["value"][1]) for r in diagnoses] == [
            ("error", "rule", "1")]
        calls = _query(base, "sum(gen_ai_client_operation_duration_seconds_count)")
        assert calls[0]["value"][1] == "3"
        les = {float(r["metric"]["le"]) for r in _query(base, "gen_ai_client_operation_duration_seconds_bucket")}
        assert les == {*map(float, DURATION_BUCKETS), float("inf")}  # the GenAI advisory boundaries
        token_les = {float(r["metric"]["le"]) for r in _query(base, "gen_ai_client_token_usage_bucket")}
        assert token_les == {*map(float, TOKEN_BUCKETS), float("inf")}
        tokens = _query(base, 'sum by (gen_ai_token_type) (gen_ai_client_token_usage_sum)')
        by_type = {r["metric"]["gen_ai_token_type"]: float(r["value"][1]) for r in tokens}
        # Every PromQL query of the Grafana dashboard runs on this Prometheus and finds its series.
        from tests.agentchaos_otel.test_dashboard import _targets, promql

        _wait(base, "count_over_time(agentchaos_faults_injected_total[1m]) >= 2")
        for t in _targets("prometheus"):
            found = _query(base, promql(t["expr"]))
            assert found or 'changed="false"' in t["expr"], t["expr"]
    finally:
        prom.terminate()
        prom.wait(timeout=30)
    with duckdb.connect(str(_db), read_only=True) as conn:
        stored = conn.execute("SELECT sum(input_tokens), sum(output_tokens) FROM llm_calls").fetchone()
    assert (by_type["input"], by_type["output"]) == (float(stored[0]), float(stored[1]))


def test_live_verdict_on_the_root_equals_the_offline_diagnosis(agent: Any) -> None:
    from diagnosers.base import diagnose_episodes
    from diagnosers.rules import RuleDiagnoser
    from diagnosers.tracefile import load

    _port, db = agent
    # The store's own reader waits out a writer that still holds the file (the agent runs on).
    with connect(db, read_only=True) as conn:
        roots = conn.execute("SELECT e.task_id, s.attributes, s.events FROM episodes e "
                             "JOIN spans s USING (trace_id, span_id) ORDER BY e.task_id").fetchall()
    live = {}
    for task, attrs, events in roots:
        attrs, events = json.loads(attrs), json.loads(events)
        verdicts = [e["attributes"] for e in events if e["name"] == A.EVENT_DIAGNOSIS]
        live[task] = (attrs.get(A.DIAGNOSIS_TYPE), attrs.get(A.DIAGNOSIS_SPAN_ID), len(verdicts))
        if verdicts:
            assert verdicts[0][A.DIAGNOSIS_LIVE] is True
    offline = {d.task_id: (d.fault_type, d.span_id, 1) for d in
               diagnose_episodes(RuleDiagnoser(), [e for e in load(db) if e.success is False])}
    assert live == {"m-fail": offline["m-fail"], "m-ok": (None, None, 0), "m-ok2": (None, None, 0)}
    assert offline["m-fail"][0] == "error"


def test_metrics_reach_the_users_otlp_pipeline(tmp_path: Path, mode_server: Any) -> None:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    from tests.support.collector import otlp_collector

    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent("""
        import os, openai, agentchaos_otel
        handle = agentchaos_otel.configure(db=None)
        client = openai.OpenAI(base_url=os.environ["BASE_URL"], api_key="sk-otlp-metrics", max_retries=0)
        with agentchaos_otel.episode("o-1", plan="llm_error_single") as ep:
            client.chat.completions.create(model="sim-core-test", messages=[{"role": "user", "content": "TEXT 1"}])
            ep.set_outcome(success=False)
        handle.shutdown()
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    with otlp_collector() as (url, posts):
        env.update({"BASE_URL": mode_server.base_url, "OTEL_EXPORTER_OTLP_ENDPOINT": url})
        result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    received = [ExportMetricsServiceRequest.FromString(p.body) for p in posts if p.path == "/v1/metrics"]
    metrics = {m.name: m for req in received for rm in req.resource_metrics for sm in rm.scope_metrics
               for m in sm.metrics}
    duration = metrics[A.METRIC_OPERATION_DURATION].histogram.data_points[0]
    assert list(duration.explicit_bounds) == list(DURATION_BUCKETS) and duration.count == 1
    tokens = metrics[A.METRIC_TOKEN_USAGE].histogram.data_points
    assert {list(p.explicit_bounds) == list(TOKEN_BUCKETS) for p in tokens} == {True}
    faults = metrics[A.METRIC_FAULTS_INJECTED].sum.data_points
    assert [(dict((a.key, a.value.string_value) for a in p.attributes), p.as_int) for p in faults] == [
        ({"type": "error", "target": "content", "changed": "true"}, 1)]
    episodes = metrics[A.METRIC_EPISODES].sum.data_points
    assert sorted((tuple(sorted((a.key, a.value.string_value) for a in p.attributes)), p.as_int)
                  for p in episodes) == [((("condition", "llm_error_single"), ("outcome", "failure")), 1),
                                         ((("condition", "llm_error_single"), ("outcome", "success")), 0)]


# --- Every panel of the dashboard against the trace file ---------------------------------------

def _prometheus(tmp_path: Path, targets: list[int]) -> tuple[subprocess.Popen[bytes], str]:
    prom_port = _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(textwrap.dedent(f"""
        global: {{scrape_interval: 1s, evaluation_interval: 1s}}
        scrape_configs:
          - job_name: agentchaos
            static_configs: [{{targets: {json.dumps([f"127.0.0.1:{p}" for p in targets])}}}]
    """))
    proc = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{prom_port}"
    _wait(base, "vector(1)")
    return proc, base


def _query_at(prom: str, q: str, at: float) -> list[dict[str, Any]]:
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": q, "time": f"{at:.3f}"})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    return body["data"]["result"]


def _last_sample(prom: str, metric: str, service: str) -> float:
    """When Prometheus last scraped a service's series: panels are read at the end of its run."""
    found = _query(prom, f'{metric}{{service_name="{service}"}}[30m]')
    assert found, (metric, service)
    return max(float(ts) for r in found for ts, _ in r["values"])


def _panel(title: str) -> list[str]:
    from tests.agentchaos_otel.test_dashboard import _dashboard

    (panel,) = [p for p in _dashboard()["panels"] if p["title"] == title]
    return [t["expr"] for t in panel["targets"]]


def _agentchaos(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentchaos_otel.cli", *args], env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="the prometheus binary is not installed "
                                                               "(.ci/run installs Debian's package)")
def test_every_panel_shows_what_the_trace_file_holds(tmp_path: Path) -> None:
    """A short campaign (two conditions never succeed), then `diagnose` and `report` publishing their
    counts: each Prometheus panel, read at the end of the run it shows, equals a count from the file."""
    from tests.agentchaos_otel.test_dashboard import promql

    db = tmp_path / "campaign.duckdb"
    campaign, diagnose, report = _free_port(), _free_port(), _free_port()
    prom, base = _prometheus(tmp_path, [campaign, diagnose, report])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    try:
        conditions = "none,llm_error_single,llm_truncate_single"
        run = _agentchaos("campaign", "run", "--tasks", "4", "--conditions", conditions, "--db", str(db),
                          "--no-progress", "--workers", "2",
                          env={**env, "AGENTCHAOS_PROMETHEUS_PORT": str(campaign), "OTEL_SERVICE_NAME": "chaos-run",
                               "AGENTCHAOS_PROMETHEUS_WAIT": "30"})
        assert run.returncode == 0, run.stderr
        assert "did not collect" not in run.stderr  # the campaign's last values were scraped before it exited
        done = _agentchaos("diagnose", str(db), "--metrics-port", str(diagnose), "--metrics-wait", "30", env=env)
        assert done.returncode == 0 and "metrics collected by Prometheus" in done.stderr, done.stderr
        rep = _agentchaos("report", str(db), "--resamples", "20", "--metrics-port", str(report), "--metrics-wait", "30",
                          env=env)
        assert rep.returncode == 0 and "metrics collected by Prometheus" in rep.stderr, rep.stderr

        with duckdb.connect(str(db), read_only=True) as conn:
            outcomes = {c: (s, k) for c, s, k in conn.execute(
                "SELECT condition, count(*) FILTER (WHERE success), count(*) FILTER (WHERE success IS NOT NULL) "
                "FROM episodes GROUP BY 1").fetchall()}
            faults = dict(conn.execute(
                "SELECT json_extract_string(attributes, '$.\"agentchaos.fault.type\"'), count(*) FROM spans "
                "WHERE json_extract_string(attributes, '$.\"agentchaos.fault.injected\"') = 'true' "
                "AND json_extract_string(attributes, '$.\"agentchaos.fault.changed\"') = 'true' "
                "AND json_extract(attributes, '$.\"agentchaos.step.wrapped_attempts\"') IS NULL GROUP BY 1").fetchall())
            tokens = conn.execute("SELECT sum(input_tokens), sum(output_tokens) FROM llm_calls").fetchone()
            durations = sorted(d / 1e3 for (d,) in conn.execute("SELECT duration_ms FROM llm_calls").fetchall())
            verdicts = {(t, m): n for t, m, n in conn.execute(
                "SELECT fault_type, method, count(*) FROM diagnoses GROUP BY 1, 2").fetchall()}
        assert {c for c, (s, k) in outcomes.items() if k and not s} >= {"llm_error_single", "llm_truncate_single"}

        def success(service: str) -> None:
            at = _last_sample(base, "agentchaos_episodes_total", service)
            (expr,) = _panel("Episode success rate by condition")
            got = {r["metric"]["condition"]: float(r["value"][1])
                   for r in _query_at(base, promql(expr, service=service), at)}
            assert got == {c: s / k for c, (s, k) in outcomes.items() if k}, service  # 0.0 where none succeeded

        def fault_rate(service: str) -> None:
            at = _last_sample(base, "agentchaos_faults_injected_total", service)
            changed, _unchanged = _panel("Injected faults per second by type")
            # The rate over a window holding the whole run, times the window, is the run's count.
            got = {r["metric"]["type"]: float(r["value"][1]) * 3600
                   for r in _query_at(base, promql(changed, rate_interval="1h", service=service), at)}
            assert got == pytest.approx(faults), service

        for service in ("chaos-run", "agentchaos-report"):  # live counters, and the file's counts from `report`
            success(service)
            fault_rate(service)

        at = _last_sample(base, "gen_ai_client_token_usage_count", "chaos-run")
        (expr,) = _panel("Tokens per second by type")
        got = {r["metric"]["gen_ai_token_type"]: float(r["value"][1]) * 3600
               for r in _query_at(base, promql(expr, rate_interval="1h", service="chaos-run"), at)}
        assert got == pytest.approx({"input": float(tokens[0]), "output": float(tokens[1])})

        p50, p95 = _panel("LLM call latency (p50, p95)")
        for expr, q in ((p50, 0.5), (p95, 0.95)):
            (r,) = _query_at(base, promql(expr, rate_interval="1h", service="chaos-run"), at)
            estimate = float(r["value"][1])
            true = durations[min(len(durations) - 1, int(q * len(durations)))]
            # histogram_quantile interpolates inside the bucket holding the quantile: the estimate and the
            # span durations' own quantile share a bucket (or a neighbour, when the latter sits at an edge).
            edges = [0.0, *DURATION_BUCKETS]
            bucket = next(i for i, e in enumerate(edges[1:]) if estimate <= e)
            lo, hi = edges[max(0, bucket - 1)], edges[min(len(edges) - 1, bucket + 2)]
            assert lo <= true <= hi, (q, estimate, true)

        at = _last_sample(base, "agentchaos_diagnoses_total", "agentchaos-diagnose")
        (expr,) = _panel("Diagnoses by fault type")
        got = {(r["metric"]["type"], r["metric"]["method"]): float(r["value"][1])
               for r in _query_at(base, promql(expr, service="agentchaos-diagnose"), at)}
        assert got == pytest.approx({k: float(v) for k, v in verdicts.items()})
    finally:
        prom.terminate()
        prom.wait(timeout=30)
