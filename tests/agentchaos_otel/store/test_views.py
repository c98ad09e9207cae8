"""The views over `spans`: GenAI and OpenInference traces land in the same columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import open_store
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode, provider


def rows(path: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    with open_store(path) as conn:
        cur = conn.execute(sql, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


@pytest.fixture
def genai_store(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "traces.duckdb"
    llm0 = {
        A.GEN_AI_PROVIDER_NAME: "openai", A.GEN_AI_REQUEST_MODEL: "qwen3",
        A.GEN_AI_RESPONSE_MODEL: "qwen3-4b",
        A.GEN_AI_RESPONSE_ID: "chatcmpl-1", A.GEN_AI_REQUEST_STREAM: False,
        A.GEN_AI_RESPONSE_FINISH_REASONS: ("tool_calls",), A.GEN_AI_USAGE_INPUT_TOKENS: 120,
        A.GEN_AI_USAGE_OUTPUT_TOKENS: 17, A.RESPONSE_CONTENT_LENGTH: 0, A.RESPONSE_TOOL_CALL_COUNT: 1,
        A.RESPONSE_ERROR_MARKER: "", A.LOGPROBS_ENTROPY_MEAN: 0.05, A.LOGPROBS_ENTROPY_MAX: 0.9,
        A.LOGPROBS_TOP_MASS: 0.99997,
    }
    tool1 = {A.GEN_AI_TOOL_NAME: "get_weather", A.GEN_AI_TOOL_CALL_ID: "call_1",
             A.TOOL_RESULT_IS_ERROR: True, A.TOOL_RESULT_EMPTY: False,
             A.FAULT_INJECTED: True, A.FAULT_TYPE: "rate_limit", A.FAULT_TARGET: "tool_result",
             A.FAULT_EXPERIMENT: "bursty", A.FAULT_STRATEGY: "bursty", A.FAULT_CHANGED: True,
             A.FAULT_DIGEST_BEFORE: "aaaa", A.FAULT_DIGEST_AFTER: "bbbb"}
    llm2 = {A.GEN_AI_REQUEST_MODEL: "qwen3", A.FAULT_INJECTED: True, A.FAULT_TYPE: "empty",
            A.FAULT_TARGET: "content", A.FAULT_CHANGED: False, A.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",)}
    with provider(db) as (tracer, _, _):
        tid = emit_episode(tracer, "task-7", [Step("llm", llm0), Step("tool", tool1),
                                              Step("llm", llm2, error="RateLimitError")],
                           condition="bursty", seed=3, success=False, agent="bfcl", simulated=True,
                           error="gave up")
    return db, tid


def test_llm_calls_columns(genai_store: tuple[Path, str]) -> None:
    db, tid = genai_store
    calls = rows(db, "SELECT * FROM llm_calls ORDER BY step")
    assert [c["step"] for c in calls] == [0, 2]
    c0, c2 = calls
    assert c0["trace_id"] == tid and len(tid) == 32 and len(c0["span_id"]) == 16
    assert c0["task_id"] == "task-7" and c0["name"] == "chat qwen3"
    assert (c0["provider"], c0["request_model"], c0["response_model"], c0["response_id"]) == (
        "openai", "qwen3", "qwen3-4b", "chatcmpl-1")
    assert c0["stream"] is False
    assert c0["finish_reasons"] == ["tool_calls"]
    assert (c0["input_tokens"], c0["output_tokens"]) == (120, 17)
    assert (c0["content_length"], c0["tool_call_count"], c0["error_marker"]) == (0, 1, "")
    assert c0["entropy_mean"] == pytest.approx(0.05) and c0["top_mass"] == pytest.approx(0.99997)
    assert c0["fault_injected"] is False and c0["fault_type"] is None
    assert c0["status_code"] == "UNSET" and c0["duration_ms"] >= 0
    assert c2["status_code"] == "ERROR" and c2["error_type"] == "RateLimitError"
    assert c2["fault_injected"] is True and c2["fault_changed"] is False and c2["fault_type"] == "empty"


def test_tool_calls_and_steps(genai_store: tuple[Path, str]) -> None:
    db, _ = genai_store
    (tool,) = rows(db, "SELECT * FROM tool_calls")
    assert (tool["tool_name"], tool["tool_call_id"], tool["step"]) == ("get_weather", "call_1", 1)
    assert tool["result_is_error"] is True and tool["result_empty"] is False
    assert tool["fault_injected"] is True and tool["fault_type"] == "rate_limit" and tool["fault_changed"]
    steps = rows(db, "SELECT step, kind, name, fault_target FROM steps ORDER BY step")
    assert [(s["step"], s["kind"]) for s in steps] == [(0, "llm"), (1, "tool"), (2, "llm")]
    assert steps[1]["fault_target"] == "tool_result"


def test_episode_row(genai_store: tuple[Path, str]) -> None:
    db, tid = genai_store
    (ep,) = rows(db, "SELECT * FROM episodes")
    assert ep["trace_id"] == tid and ep["span_id"] is not None
    assert (ep["task_id"], ep["agent_name"], ep["condition"], ep["seed"]) == ("task-7", "bfcl", "bursty", 3)
    assert ep["success"] is False and ep["error"] == "gave up"
    assert (ep["n_steps"], ep["n_llm_calls"], ep["n_tool_calls"]) == (3, 2, 1)
    # The unchanged fault on step 2 fired but changed nothing, so it does not count.
    assert ep["n_faults"] == 1 and ep["triggered"] is True
    assert ep["simulated"] is True
    assert ep["end_ns"] >= ep["start_ns"]


def test_injected_faults_ground_truth(genai_store: tuple[Path, str]) -> None:
    db, tid = genai_store
    faults = rows(db, "SELECT * FROM injected_faults ORDER BY step")
    assert [(f["step"], f["fault_type"], f["changed"]) for f in faults] == [
        (1, "rate_limit", True), (2, "empty", False)]
    f = faults[0]
    assert (f["trace_id"], f["task_id"], f["span_name"]) == (tid, "task-7", "execute_tool get_weather")
    assert (f["target"], f["experiment"], f["strategy"]) == ("tool_result", "bursty", "bursty")
    assert (f["digest_before"], f["digest_after"]) == ("aaaa", "bbbb")


def test_openinference_trace_normalises(tmp_path: Path) -> None:
    db = tmp_path / "oi.duckdb"
    with provider(db) as (tracer, _, _):
        with tracer.start_as_current_span("Agent.run", attributes={
                A.OI_SPAN_KIND: "AGENT", A.OI_AGENT_NAME: "phoenix-agent"}) as root:
            with tracer.start_as_current_span("ChatCompletion", kind=SpanKind.CLIENT, attributes={
                    A.OI_SPAN_KIND: "LLM", A.OI_LLM_MODEL_NAME: "gpt-x", A.OI_LLM_PROVIDER: "openai",
                    A.OI_LLM_TOKEN_COUNT_PROMPT: 50, A.OI_LLM_TOKEN_COUNT_COMPLETION: 7,
                    A.OI_LLM_FINISH_REASON: "stop"}):
                pass
            with tracer.start_as_current_span("lookup", attributes={A.OI_SPAN_KIND: "TOOL",
                                                                     A.OI_TOOL_NAME: "lookup"}):
                pass
            with tracer.start_as_current_span("retrieve", attributes={A.OI_SPAN_KIND: "RETRIEVER"}):
                pass
            tid = format(root.get_span_context().trace_id, "032x")
    (llm,) = rows(db, "SELECT * FROM llm_calls")
    assert (llm["request_model"], llm["response_model"], llm["provider"]) == ("gpt-x", "gpt-x", "openai")
    assert (llm["input_tokens"], llm["output_tokens"], llm["finish_reasons"]) == (50, 7, ["stop"])
    assert llm["task_id"] is None and llm["step"] == 0
    (tool,) = rows(db, "SELECT * FROM tool_calls")
    assert tool["tool_name"] == "lookup" and tool["step"] == 1
    (ep,) = rows(db, "SELECT * FROM episodes")
    assert ep["trace_id"] == tid and ep["agent_name"] == "phoenix-agent"
    assert (ep["n_steps"], ep["n_llm_calls"], ep["n_tool_calls"], ep["n_faults"]) == (2, 1, 1, 0)
    assert ep["success"] is None and ep["simulated"] is False


def test_rootless_trace_and_exception_events(tmp_path: Path) -> None:
    """A foreign agent: no agent span, no step numbers, failure only as an exception event."""
    db = tmp_path / "foreign.duckdb"
    with provider(db) as (tracer, _, _):
        with tracer.start_as_current_span("handle_request"):
            with tracer.start_as_current_span("chat a", kind=SpanKind.CLIENT,
                                              attributes={A.GEN_AI_OPERATION_NAME: "chat"}):
                pass
            with tracer.start_as_current_span("text b", attributes={
                    A.GEN_AI_OPERATION_NAME: A.OP_TEXT_COMPLETION}) as sp:
                sp.record_exception(TimeoutError("slow"))
                sp.set_status(Status(StatusCode.ERROR))
    steps = rows(db, "SELECT step, name, status_code, error_type FROM steps ORDER BY step")
    assert [(s["step"], s["name"]) for s in steps] == [(0, "chat a"), (1, "text b")]
    assert steps[1]["error_type"] == "TimeoutError" and steps[0]["error_type"] is None
    (ep,) = rows(db, "SELECT * FROM episodes")
    (root,) = rows(db, "SELECT span_id FROM spans WHERE name = 'handle_request'")
    assert ep["span_id"] == root["span_id"], "the application's root span is the episode's root"
    assert ep["task_id"] is None and ep["n_llm_calls"] == 2


def test_nested_agent_is_not_an_episode(tmp_path: Path) -> None:
    db = tmp_path / "nested.duckdb"
    with provider(db) as (tracer, _, _):
        with tracer.start_as_current_span("invoke_agent outer", attributes={
                A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.TASK_ID: "outer"}):
            with tracer.start_as_current_span("invoke_agent sub", attributes={
                    A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.TASK_ID: "sub"}):
                with tracer.start_as_current_span("chat m", attributes={A.GEN_AI_OPERATION_NAME: "chat"}):
                    pass
    eps = rows(db, "SELECT task_id, n_steps FROM episodes")
    assert eps == [{"task_id": "outer", "n_steps": 1}]
    # The step has no task id of its own, so it inherits the root's.
    assert rows(db, "SELECT task_id FROM steps") == [{"task_id": "outer"}]


def test_two_episodes_two_traces(tmp_path: Path) -> None:
    db = tmp_path / "two.duckdb"
    with provider(db) as (tracer, _, _):
        a = emit_episode(tracer, "a", [Step("llm")], condition="none", success=True)
        b = emit_episode(tracer, "b", [Step("llm"), Step("tool"), Step("llm")], condition="independent",
                         success=False)
    eps = {e["trace_id"]: e for e in rows(db, "SELECT trace_id, task_id, n_steps FROM episodes")}
    assert eps[a]["task_id"] == "a" and eps[a]["n_steps"] == 1
    assert eps[b]["task_id"] == "b" and eps[b]["n_steps"] == 3
    per_trace = rows(db, "SELECT trace_id, list(step ORDER BY step) AS s FROM steps GROUP BY trace_id")
    assert {r["trace_id"]: r["s"] for r in per_trace} == {a: [0], b: [0, 1, 2]}
