"""Diagnosis of episodes stored through the real OTel SDK and DuckDB exporter, and blindness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import connect, open_store
from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes
from diagnosers.base import diagnose_episodes
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.rules import RuleDiagnoser
from diagnosers.tracefile import DiagnoseError, load, write_diagnoses

CONFIGS = ["llm_error_single", "llm_truncate_burst", "tool_schema_single", "compound_stale_cache",
           "compound_slow_response", "tools_bursty", "tools_independent"]


@pytest.fixture(scope="module")
def corpus() -> list:
    return synthetic.make_corpus(3, 1, configs=CONFIGS)


@pytest.fixture()
def store(tmp_path: Path, corpus: list) -> Path:
    path = tmp_path / "traces.duckdb"
    assert write_episodes(corpus, path) == len(corpus)
    return path


def _key(d) -> tuple:
    return (d.task_id, d.fault_type, d.target, d.step, d.confidence, d.evidence)


def _by_task(diags) -> list:
    return sorted(_key(d) for d in diags)


def test_round_trip_keeps_steps_labels_and_diagnoses(store: Path, corpus: list) -> None:
    loaded = load(store)
    assert len(loaded) == len(corpus)
    src = {(e.task_id, e.condition, e.seed): e for e in corpus}
    for ep in loaded:
        orig = src[(ep.task_id, ep.condition, ep.seed)]
        assert [s.step for s in ep.steps] == [s.step for s in orig.steps]
        labels = [(f.step, f.fault_type) for f in orig.faults()]
        assert [(f.step, f.fault_type) for f in ep.faults()] == labels
        assert ep.success == orig.success
    rule = RuleDiagnoser()
    assert _by_task(diagnose_episodes(rule, loaded)) == _by_task(diagnose_episodes(rule, corpus))


def _strip_ground_truth(path: Path) -> int:
    """Remove every ground-truth attribute from every stored span (JSON merge-patch with nulls)."""
    conn = connect(path, read_only=False)
    try:
        rows = conn.execute("SELECT DISTINCT unnest(json_keys(attributes)) FROM spans").fetchall()
        keys = [k for (k,) in rows if A.is_ground_truth(k)]
        if not keys:
            return 0
        patch = json.dumps({k: None for k in keys})
        touched = conn.execute("SELECT count(*) FROM spans WHERE list_has_any(json_keys(attributes), ?)",
                               [keys]).fetchone()[0]
        conn.execute("UPDATE spans SET attributes = json_merge_patch(attributes, ?::JSON)", [patch])
        return int(touched)
    finally:
        conn.close()


def test_stripping_ground_truth_from_the_file_changes_no_diagnosis(store: Path) -> None:
    before = load(store)
    assert any(ep.triggered for ep in before)
    methods = [RuleDiagnoser(), TextOnlyDiagnoser()]
    diag_before = {m.name: _by_task(diagnose_episodes(m, before)) for m in methods}
    assert _strip_ground_truth(store) > 0
    after = load(store)
    assert not any(ep.triggered for ep in after)
    assert all(not A.is_ground_truth(k) for ep in after for s in ep.steps for k in s.attributes)
    for m in methods:
        assert _by_task(diagnose_episodes(m, after)) == diag_before[m.name]


def test_filters_and_missing_file(store: Path, tmp_path: Path) -> None:
    only = load(store, conditions=["tools_bursty"])
    assert only and {ep.condition for ep in only} == {"tools_bursty"}
    assert {ep.task_id for ep in load(store, tasks=["task-001"])} == {"task-001"}
    assert load(store, tasks=["no-such-task"]) == []
    with pytest.raises(DiagnoseError, match="no such file"):
        load(tmp_path / "missing.duckdb")
    bad = tmp_path / "bad.duckdb"
    bad.write_text("not a database")
    with pytest.raises(DiagnoseError):
        load(bad)


def test_diagnoses_table_is_replaced_per_method(store: Path) -> None:
    eps = [ep for ep in load(store) if ep.success is False]
    rule = diagnose_episodes(RuleDiagnoser(), eps)
    text = diagnose_episodes(TextOnlyDiagnoser(), eps)
    assert write_diagnoses(store, rule) == len(rule)
    write_diagnoses(store, rule)
    write_diagnoses(store, text)
    with open_store(store) as conn:
        counts = dict(conn.execute("SELECT method, count(*) FROM diagnoses GROUP BY method").fetchall())
        row = conn.execute("SELECT fault_type, step, span_id, evidence FROM diagnoses WHERE method = 'rule' "
                           "AND trace_id = ?", [rule[0].trace_id]).fetchone()
    assert counts == {"rule": len(rule), "text": len(text)}
    assert row == (rule[0].fault_type, rule[0].step, rule[0].span_id, rule[0].evidence)


def test_openinference_trace_through_the_store(tmp_path: Path) -> None:
    """A trace from an OpenInference instrumentation: no agentchaos attributes, no outcome, no steps."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from typer.testing import CliRunner

    from agentchaos_otel.store.exporter import DuckDBSpanExporter
    from diagnosers.cli import app

    path = tmp_path / "oi.duckdb"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(path)))
    tracer = provider.get_tracer("openinference-like")
    t = 1_000_000_000
    root = tracer.start_span("agent", attributes={A.OI_SPAN_KIND: "AGENT"}, start_time=t)
    ctx = trace.set_span_in_context(root)

    def llm(i: int, content: str, finish: str = "stop") -> None:
        body = {"choices": [{"finish_reason": finish, "message": {"content": content}}]}
        tracer.start_span("ChatCompletion", context=ctx, start_time=t + i * 10**9, attributes={
            A.OI_SPAN_KIND: "LLM", A.OI_LLM_MODEL_NAME: "gpt-x",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": content,
            A.OI_OUTPUT_VALUE: json.dumps(body)}).end(end_time=t + i * 10**9 + 5 * 10**8)

    def tool(i: int, out: object) -> None:
        tracer.start_span("search", context=ctx, start_time=t + i * 10**9, attributes={
            A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "search",
            A.OI_OUTPUT_VALUE: json.dumps(out)}).end(end_time=t + i * 10**9 + 10**7)

    llm(1, "Let me search.")
    tool(2, {"hits": [1, 2], "total": 2})
    llm(3, "The answer is", "length")
    tool(4, {"hits": [3], "total": 1})
    root.end(end_time=t + 10 * 10**9)
    provider.shutdown()
    (ep,) = load(path)
    assert ep.success is None and [s.kind for s in ep.steps] == ["llm", "tool", "llm", "tool"]
    result = CliRunner().invoke(app, [str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    (d,) = json.loads(result.stdout)
    assert (d["fault_type"], d["step"], d["target"]) == ("truncate", 2, "content")
