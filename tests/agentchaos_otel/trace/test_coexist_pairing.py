"""The pairing rules on hand-made spans: steps, mirroring, views, the live predictor, zero-code episodes.

The real instrumentations are exercised in ``test_coexist_instrumentations``; here each rule is
pinned on its own with the real OTel SDK and real DuckDB files, including shapes those packages
do not produce today (imported traces with no processor of ours, threads, framework agents).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.binding import EpisodeState
from agentchaos_otel.plans.plan import resolve_plan
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from agentchaos_otel.store.read.live_steps import span_step_kind
from agentchaos_otel.trace.processors import OWN_SCOPE, EpisodeSpanProcessor
from diagnosers.view import EpisodeView

pytestmark = pytest.mark.coexist

CHAT = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT}
OI_LLM = {A.OI_SPAN_KIND: "LLM"}


@pytest.fixture
def tracing() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _store(spans: Any, path: Path) -> Path:
    DuckDBSpanExporter(str(path)).export(list(spans))
    return path


def _q(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _attempt(provider: TracerProvider, **attrs: Any) -> None:
    """Our transport's span of one HTTP attempt."""
    with provider.get_tracer(OWN_SCOPE).start_as_current_span("chat m", kind=SpanKind.CLIENT,
                                                              attributes={**CHAT, **attrs}):
        pass


def test_sdk_span_with_a_retry_inside_numbers_steps_as_without_it(tracing: Any, tmp_path: Path) -> None:
    provider, exporter = tracing
    theirs = provider.get_tracer("their.instrumentation")
    with episode("t", tracer_provider=provider):
        with theirs.start_as_current_span("ChatCompletion", attributes=OI_LLM) as sdk_span:
            _attempt(provider, **{A.FAULT_INJECTED: True, A.FAULT_TYPE: "rate_limit", A.FAULT_CHANGED: True})
            _attempt(provider, **{A.FAULT_INJECTED: False, A.RESPONSE_CONTENT_LENGTH: 12})
            assert sdk_span.attributes[A.STEP_WRAPPED_ATTEMPTS] == 2
        _attempt(provider)
    spans = {(s.name, s.attributes.get(A.STEP)) for s in exporter.get_finished_spans() if A.STEP in s.attributes}
    assert spans == {("ChatCompletion", 0), ("chat m", 0), ("chat m", 1), ("chat m", 2)}
    wrapper = next(s for s in exporter.get_finished_spans() if s.name == "ChatCompletion")
    assert wrapper.attributes[A.FAULT_TYPE] == "rate_limit", "a later clean attempt does not hide the fault"
    assert wrapper.attributes[A.RESPONSE_CONTENT_LENGTH] == 12, "signals of the last attempt, what the SDK returned"
    db = _store(exporter.get_finished_spans(), tmp_path / "t.duckdb")
    assert _q(db, "SELECT step, name FROM llm_calls ORDER BY step") == [(0, "chat m"), (1, "chat m"), (2, "chat m")]
    assert _q(db, "SELECT step, span_name FROM injected_faults") == [(0, "chat m")]
    assert _q(db, "SELECT n_llm_calls, n_faults FROM episodes") == [(3, 1)]


def test_foreign_span_started_beside_ours_is_paired(tracing: Any) -> None:
    provider, exporter = tracing
    theirs = provider.get_tracer("their.instrumentation")
    with episode("t", tracer_provider=provider):
        sibling = theirs.start_span("anthropic.chat", attributes=CHAT)  # started, never made current
        _attempt(provider, **{A.GEN_AI_RESPONSE_ID: "msg_1"})
        sibling.end()
    ours = next(s for s in exporter.get_finished_spans() if s.name == "chat m")
    assert ours.attributes[A.STEP_WRAPPER_SPAN_ID] == format(sibling.get_span_context().span_id, "016x")
    assert ours.attributes[A.STEP] == sibling.attributes[A.STEP] == 0


def test_imported_trace_without_our_processor_counts_inner_spans(tmp_path: Path) -> None:
    """Nested LLM spans from two other instrumentations, no injector: the innermost is the call."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("elsewhere")
    with tracer.start_as_current_span("handle"):
        for i in range(2):
            with tracer.start_as_current_span("openai.chat", attributes={A.LLM_REQUEST_TYPE: "chat"}):
                with tracer.start_as_current_span("chat m", attributes={**CHAT, A.GEN_AI_RESPONSE_ID: f"r{i}"}):
                    pass
        with tracer.start_as_current_span("ChatCompletion", attributes={**OI_LLM, A.GEN_AI_RESPONSE_ID: "r2"}):
            pass  # nothing under it: itself the call
    db = _store(exporter.get_finished_spans(), tmp_path / "i.duckdb")
    assert _q(db, "SELECT step, name FROM steps ORDER BY step") == [(0, "chat m"), (1, "chat m"), (2, "ChatCompletion")]
    (ep,) = load_episodes(db)
    view = EpisodeView(ep)
    assert not any(view.response_seen_before(o) for o in view.obs), "one call through two spans is not a replay"


def test_response_seen_before_still_fires_on_a_real_replay(tracing: Any, tmp_path: Path) -> None:
    provider, exporter = tracing
    theirs = provider.get_tracer("their.instrumentation")
    with episode("t", tracer_provider=provider):
        for _ in range(2):
            with theirs.start_as_current_span("chat m", attributes={**CHAT, A.GEN_AI_RESPONSE_ID: "same"}):
                _attempt(provider, **{A.GEN_AI_RESPONSE_ID: "same"})
    (ep,) = load_episodes(_store(exporter.get_finished_spans(), tmp_path / "r.duckdb"))
    view = EpisodeView(ep)
    assert [view.response_seen_before(o) for o in view.obs] == [False, True]


def test_live_predictor_skips_the_enclosing_span(tracing: Any) -> None:
    provider, exporter = tracing
    with episode("t", tracer_provider=provider):
        with provider.get_tracer("their").start_as_current_span("ChatCompletion", attributes=OI_LLM):
            _attempt(provider)
    kinds = {s.name: span_step_kind(s.attributes) for s in exporter.get_finished_spans()}
    assert kinds == {"ChatCompletion": None, "chat m": "llm", "invoke_agent agent": None}


def test_each_root_trace_is_its_own_episode_under_zero_code(tracing: Any, tmp_path: Path) -> None:
    provider, exporter = tracing
    binding.set_process_default(EpisodeState(task_id=None, plan=resolve_plan("llm_error_single"), seed=4))
    try:
        app = provider.get_tracer("my-app")

        def task(name: str, root_attrs: dict[str, Any]) -> None:
            with app.start_as_current_span(name, attributes=root_attrs):
                state = binding.active_state()
                assert state is not None and state is not binding.process_default()
                for _ in range(3):
                    _attempt(provider)
                    with app.start_as_current_span("tool", attributes={A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL}):
                        pass

        threads = [threading.Thread(target=task, args=("request a", {})),
                   threading.Thread(target=task, args=("invoke_agent planner", {
                       A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: "planner"}))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert binding.trace_state(0) is None and not binding._by_trace, "states are dropped with their root"
    finally:
        binding.set_process_default(None)
    db = _store(exporter.get_finished_spans(), tmp_path / "z.duckdb")
    rows = _q(db, "SELECT agent_name, condition, seed, n_steps FROM episodes ORDER BY agent_name NULLS FIRST")
    assert rows == [(None, "llm_error_single", 4, 6), ("planner", "llm_error_single", 4, 6)]
    for (trace_id,) in _q(db, "SELECT trace_id FROM episodes"):
        steps = [s for (s,) in _q(db, f"SELECT step FROM steps WHERE trace_id = '{trace_id}' ORDER BY step")]
        assert steps == list(range(6))


def test_a_call_outside_any_span_keeps_the_process_state(tracing: Any) -> None:
    provider, exporter = tracing
    default = EpisodeState(task_id=None, plan=resolve_plan(None), seed=0)
    binding.set_process_default(default)
    try:
        _attempt(provider)
        _attempt(provider)
    finally:
        binding.set_process_default(None)
    assert sorted(s.attributes[A.STEP] for s in exporter.get_finished_spans()) == [0, 1]
