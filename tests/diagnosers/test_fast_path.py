"""The fast diagnose path gives the diagnoses of the plain one, on a mixed store.

The fast path: ``span_roles`` takes the attributes every view reads from one JSON parse, chunks
materialise the step spans and skip the duplicate-span sort a DuckDB store does not need, steps
are blinded as they are parsed. The plain reference: each attribute extracted by its own
``json_extract_string`` (the views' former SQL), the whole store read in one query per view,
episodes loaded unblinded and blinded afterwards by ``EpisodeTrace.blind``, and, for the
simulated episodes, the in-memory episodes that were never stored at all.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes
from diagnosers.base import diagnose_episodes
from diagnosers.driver import diagnose_store
from diagnosers.observe import observe_step
from diagnosers.rules import RuleDiagnoser
from tests.agentchaos_otel.store.test_streaming import whole_store
from tests.support.scale import odd_traces


def _foreign_traces(path: Path) -> None:
    """An OpenInference agent (content only, no agentchaos signals) and a GenAI-conventions one."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(path)))
    tracer = provider.get_tracer("foreign")
    t = 9_000_000_000
    root = tracer.start_span("agent", attributes={A.OI_SPAN_KIND: "AGENT"}, start_time=t)
    ctx = trace.set_span_in_context(root)
    for i, (content, finish) in enumerate([("Let me search.", "stop"), ("The answer is", "length")]):
        body = {"choices": [{"finish_reason": finish, "message": {"content": content}}]}
        tracer.start_span("ChatCompletion", context=ctx, start_time=t + (2 * i + 1) * 10**9, attributes={
            A.OI_SPAN_KIND: "LLM", A.OI_LLM_MODEL_NAME: "gpt-x",
            "llm.output_messages.0.message.content": content,
            A.OI_OUTPUT_VALUE: json.dumps(body)}).end(end_time=t + (2 * i + 1) * 10**9 + 5 * 10**8)
        tracer.start_span("search", context=ctx, start_time=t + (2 * i + 2) * 10**9, attributes={
            A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "search",
            A.OI_OUTPUT_VALUE: json.dumps({"hits": [i], "total": 1} if i == 0 else {"error": "rate limit"})}
        ).end(end_time=t + (2 * i + 2) * 10**9 + 10**7)
    root.end(end_time=t + 10 * 10**9)
    root = tracer.start_span("invoke_agent helper", start_time=t, attributes={
        A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: "helper"})
    ctx = trace.set_span_in_context(root)
    out = [{"role": "assistant", "parts": [{"type": "text", "content": "<html>502 Bad Gateway</html>"}],
            "finish_reason": "stop"}]
    tracer.start_span("chat gpt-x", context=ctx, start_time=t + 10**9, attributes={
        A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_PROVIDER_NAME: "openai",
        A.GEN_AI_OUTPUT_MESSAGES: json.dumps(out), A.GEN_AI_USAGE_OUTPUT_TOKENS: 9}).end(end_time=t + 2 * 10**9)
    root.end(end_time=t + 3 * 10**9)
    provider.shutdown()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    path = tmp_path_factory.mktemp("fast") / "traces.duckdb"
    corpus = synthetic.make_corpus(2, 1, heldout=True)  # every fault configuration, held-out wordings
    write_episodes(corpus[: len(corpus) // 2], path)
    odd_traces(path)
    _foreign_traces(path)
    write_episodes(corpus[len(corpus) // 2:], path)
    return path, corpus


def test_one_parse_extraction_equals_per_key_extraction(mixed: tuple[Path, list]) -> None:
    path, _ = mixed

    def per_key(key: str) -> str:
        return f"json_extract_string(attributes, '$.\"{key}\"')"

    with open_store(path) as conn:
        conn.execute("SET enable_progress_bar = false")
        got = conn.execute("SELECT trace_id, span_id, a_task_id, a_step, a_wrapper_span_id, a_error_type, "
                           "a_fault_injected, a_fault_type, a_fault_target, a_fault_experiment, a_fault_changed, "
                           "a_simulated, role FROM span_roles ORDER BY trace_id, span_id").fetchall()
        step = per_key(A.STEP)
        want = conn.execute(f"""
            SELECT trace_id, span_id, {per_key(A.TASK_ID)},
                   COALESCE(TRY_CAST({step} AS BIGINT), TRY_CAST(TRY_CAST({step} AS DOUBLE) AS BIGINT)),
                   {per_key(A.STEP_WRAPPER_SPAN_ID)}, {per_key(A.ERROR_TYPE)},
                   TRY_CAST({per_key(A.FAULT_INJECTED)} AS BOOLEAN), {per_key(A.FAULT_TYPE)},
                   {per_key(A.FAULT_TARGET)}, {per_key(A.FAULT_EXPERIMENT)},
                   TRY_CAST({per_key(A.FAULT_CHANGED)} AS BOOLEAN), TRY_CAST({per_key(A.SIMULATED)} AS BOOLEAN),
                   CASE WHEN {per_key(A.GEN_AI_OPERATION_NAME)} IN ('chat', 'text_completion', 'generate_content')
                          OR upper({per_key(A.OI_SPAN_KIND)}) = 'LLM'
                          OR {per_key(A.LLM_REQUEST_TYPE)} IN ('chat', 'completion') THEN 'llm'
                        WHEN {per_key(A.GEN_AI_OPERATION_NAME)} = 'execute_tool'
                          OR upper({per_key(A.OI_SPAN_KIND)}) = 'TOOL' THEN 'tool'
                        WHEN {per_key(A.GEN_AI_OPERATION_NAME)} = 'invoke_agent'
                          OR upper({per_key(A.OI_SPAN_KIND)}) = 'AGENT' THEN 'agent' END
            FROM spans ORDER BY trace_id, span_id""").fetchall()
    assert set(A.LLM_OPERATIONS) == {"chat", "text_completion", "generate_content"}
    assert len(got) == len(want) > 200
    assert got == want
    roles = {r[-1] for r in got}
    assert {"llm", "tool", "agent"} <= roles
    assert any(r[6] for r in got) and any(r[7] for r in got)  # ground truth is there to extract


def test_fast_path_diagnoses_equal_the_plain_reference(mixed: tuple[Path, list]) -> None:
    path, corpus = mixed
    reference_eps = whole_store(path)  # one query per view, unblinded
    assert any(ep.task_id is None for ep in reference_eps)  # the foreign traces are in
    reference = diagnose_episodes(RuleDiagnoser(), [ep for ep in reference_eps if ep.success is not True])
    assert {d.fault_type for d in reference} >= {"none_found"} and len({d.fault_type for d in reference}) > 8
    for chunk_spans in (9, 5_000):
        got = diagnose_store(path, RuleDiagnoser(), chunk_spans=chunk_spans)
        assert got.diagnoses == reference
    # Loading blind (ground truth dropped while parsing) is the blind view of the unblinded load.
    assert load_episodes(path) == [ep.blind() for ep in load_episodes(path, blind=False)]
    # The simulated episodes diagnose as they did before they were ever stored.
    never_stored = {(ep.task_id, ep.condition, ep.seed): d for ep, d in zip(
        corpus, diagnose_episodes(RuleDiagnoser(), corpus), strict=True)}
    stored = {(ep.task_id, ep.condition, ep.seed): ep for ep in reference_eps if ep.task_id is not None}
    compared = 0
    for d in diagnose_store(path, RuleDiagnoser(), include_success=True).diagnoses:
        key = next((k for k, ep in stored.items() if ep.trace_id == d.trace_id), None)
        if key in never_stored:
            want = never_stored[key]
            assert (d.fault_type, d.target, d.step, d.confidence, d.evidence, d.rule) == (
                want.fault_type, want.target, want.step, want.confidence, want.evidence, want.rule)
            compared += 1
    assert compared == len(corpus)


def test_observations_of_stored_steps_equal_those_of_the_episodes_written(mixed: tuple[Path, list]) -> None:
    path, corpus = mixed
    src = {(ep.task_id, ep.condition, ep.seed): ep for ep in corpus}
    loaded = [ep for ep in load_episodes(path) if (ep.task_id, ep.condition, ep.seed) in src]
    assert len(loaded) == len(corpus)
    for ep in loaded:
        orig = src[(ep.task_id, ep.condition, ep.seed)].blind()
        # Span ids are the SDK's own once stored; everything observed is the same.
        assert ([replace(observe_step(s, i), span_id="") for i, s in enumerate(ep.steps)]
                == [replace(observe_step(s, i), span_id="") for i, s in enumerate(orig.steps)])


def test_views_digest_tracks_the_view_sql() -> None:
    assert schema.views_digest() == schema.views_digest()
    con = duckdb.connect()
    con.execute(schema.SPANS_DDL)
    schema.create_views(con)  # the one-parse SQL is valid on an empty store
    assert con.execute("SELECT count(*) FROM steps").fetchone() == (0,)
