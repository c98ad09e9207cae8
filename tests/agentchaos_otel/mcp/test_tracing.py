"""MCP client operations as the OTel MCP conventions describe them, over stdio and Streamable HTTP.

Real SDK client, real server process on loopback; the agent code below is plain SDK use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel import mcp as chaos_mcp
from agentchaos_otel.episode_scope import episode
from tests.support.mcp_harness import HTTP, MAJOR, STDIO, rpc_code, session

TRANSPORTS = [STDIO, HTTP]


def _spans(exporter: Any, prefix: str = "") -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith(prefix)
            and s.instrumentation_scope.name == "agentchaos_otel" and A.MCP_METHOD_NAME in (s.attributes or {})]


def _url(transport: str, http: tuple[str, Path]) -> str | None:
    return http[0] if transport == HTTP else None


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_requests_are_client_spans_per_the_conventions(transport: str, tracing: Any,
                                                             http: tuple[str, Path]) -> None:
    provider, exporter = tracing
    tracer = provider.get_tracer("agent")
    with episode("trace-1", tracer_provider=provider):
        async with session(transport, url=_url(transport, http)) as s:
            await s.list_tools()
            with tracer.start_as_current_span("agent step") as agent_span:
                with chaos_mcp.tool_call_id("call_7"):
                    result = await s.call_tool("get_quote", {"symbol": "NVDA"})
            failed = await s.call_tool("fail_plain", {})
            if MAJOR == 2:  # MCPServer passes a tool's JSON-RPC error on; FastMCP (1.x) makes it an isError result
                with pytest.raises(Exception) as raised:
                    await s.call_tool("fail_rpc", {"code": -32602})
                assert rpc_code(raised.value) == -32602
            else:
                await s.call_tool("fail_rpc", {"code": -32602})
    pipe = transport == STDIO
    by_name = {s.name: s for s in _spans(exporter)}
    assert set(by_name) >= {"initialize", "tools/list", "tools/call get_quote", "tools/call fail_plain",
                            "tools/call fail_rpc"}
    ids = set()
    for span in by_name.values():
        attrs = span.attributes or {}
        assert span.kind is SpanKind.CLIENT
        assert attrs[A.MCP_METHOD_NAME] == span.name.split(" ")[0]
        assert attrs[A.NETWORK_TRANSPORT] == (A.TRANSPORT_PIPE if pipe else A.TRANSPORT_TCP)
        assert (A.MCP_SESSION_ID in attrs) is not pipe, "stdio has no MCP session id; Streamable HTTP does"
        assert attrs[A.MCP_PROTOCOL_VERSION]
        ids.add(attrs[A.JSONRPC_REQUEST_ID])
        if span.name.startswith("tools/call"):
            assert attrs[A.GEN_AI_OPERATION_NAME] == A.OP_EXECUTE_TOOL and attrs[A.STEP] is not None
            assert attrs[A.GEN_AI_TOOL_NAME] == span.name.split(" ")[1]
        else:
            assert A.GEN_AI_OPERATION_NAME not in attrs and A.STEP not in attrs
    assert len(ids) == len(by_name), "every request has its own JSON-RPC id"
    call = by_name["tools/call get_quote"]
    attrs = call.attributes or {}
    assert call.parent is not None and call.parent.span_id == agent_span.get_span_context().span_id
    assert attrs[A.GEN_AI_TOOL_CALL_ID] == "call_7"
    assert attrs[A.MCP_TOOL_READ_ONLY] is True and attrs[A.TOOL_CALL_INDEX] == 0
    assert attrs[A.TOOL_RESULT_KEYS] == tuple(sorted(result.structuredContent if MAJOR == 1
                                                     else result.structured_content))
    assert attrs[A.TOOL_RESULT_IS_ERROR] is False and call.status.status_code is StatusCode.UNSET
    assert A.GEN_AI_TOOL_CALL_RESULT not in attrs and A.GEN_AI_TOOL_CALL_ARGUMENTS not in attrs
    assert (failed.isError if MAJOR == 1 else failed.is_error) is True
    tool_error = by_name["tools/call fail_plain"]
    assert tool_error.attributes[A.ERROR_TYPE] == A.ERROR_TYPE_TOOL_ERROR
    assert tool_error.attributes[A.TOOL_RESULT_IS_ERROR] is True
    assert tool_error.status.status_code is StatusCode.ERROR
    rpc = by_name["tools/call fail_rpc"]
    assert rpc.attributes[A.TOOL_RESULT_IS_ERROR] is True and rpc.status.status_code is StatusCode.ERROR
    if MAJOR == 2:
        assert rpc.attributes[A.ERROR_TYPE] == rpc.attributes[A.RPC_RESPONSE_STATUS_CODE] == "-32602"
        assert [e.attributes for e in rpc.events if e.name == "exception"] == [
            {A.EXCEPTION_TYPE: type(raised.value).__qualname__}], "the type only, never the server's message"
    else:
        assert rpc.attributes[A.ERROR_TYPE] == A.ERROR_TYPE_TOOL_ERROR
    steps = sorted(s.attributes[A.STEP] for s in by_name.values() if s.name.startswith("tools/call"))
    assert steps == [0, 1, 2]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_trace_context_reaches_the_server_in_params_meta(transport: str, tracing: Any,
                                                               http: tuple[str, Path]) -> None:
    provider, exporter = tracing
    async with session(transport, url=_url(transport, http)) as s:
        with provider.get_tracer("agent").start_as_current_span("agent"):
            seen = await s.call_tool("trace_context", {})
    [span] = _spans(exporter, "tools/call")
    traceparent = seen.content[0].text
    _, trace_id, parent_id, _ = traceparent.split("-")
    assert trace_id == format(span.context.trace_id, "032x")
    if MAJOR == 1:  # 2.x sends it from its own span under ours when a global SDK provider records that one
        assert parent_id == format(span.context.span_id, "016x")


async def test_content_is_recorded_only_when_asked(tracing: Any, http: tuple[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _, exporter = tracing
    monkeypatch.setenv(A.CAPTURE_CONTENT_ENV, "true")
    async with session(HTTP, url=http[0]) as s:
        await s.call_tool("echo", {"text": "hello there"})
    [span] = _spans(exporter, "tools/call")
    assert json.loads(span.attributes[A.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"text": "hello there"}
    assert span.attributes[A.GEN_AI_TOOL_CALL_RESULT] == "hello there"


async def test_concurrent_calls_on_one_session_keep_their_own_ids_and_parents(tracing: Any,
                                                                               http: tuple[str, Path]) -> None:
    provider, exporter = tracing
    tracer = provider.get_tracer("agent")
    parents: dict[str, int] = {}

    async with session(HTTP, url=http[0]) as s:
        async def one(i: int) -> None:
            with tracer.start_as_current_span(f"task {i}") as span:
                parents[f"slept {0.05 * (5 - i):.2f}"] = span.get_span_context().span_id
                await s.call_tool("slow", {"seconds": round(0.05 * (5 - i), 2)})

        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(one, i)
    calls = _spans(exporter, "tools/call slow")
    assert len(calls) == 5 and len({c.attributes[A.JSONRPC_REQUEST_ID] for c in calls}) == 5
    assert {c.parent.span_id for c in calls} == set(parents.values())


async def test_a_session_opened_before_instrumenting_is_traced(tracing: Any, http: tuple[str, Path]) -> None:
    provider, exporter = tracing
    chaos_mcp.uninstrument()
    async with session(HTTP, url=http[0]) as s:
        await s.call_tool("echo", {"text": "before"})
        assert _spans(exporter) == [], "nothing while not instrumented"
        chaos_mcp.instrument(provider)
        await s.call_tool("echo", {"text": "after"})
    [span] = _spans(exporter)
    assert span.name == "tools/call echo" and span.attributes[A.GEN_AI_OPERATION_NAME] == A.OP_EXECUTE_TOOL
    assert A.NETWORK_TRANSPORT not in span.attributes, "its transport was opened before: unknown, not guessed"


async def test_uninstrument_restores_the_sdk(tracing: Any) -> None:
    from mcp.client.session import ClientSession

    assert hasattr(ClientSession.call_tool, "__wrapped__")
    chaos_mcp.uninstrument()
    assert not hasattr(ClientSession.call_tool, "__wrapped__")
    assert not chaos_mcp.is_instrumented()


def test_the_instrumentor_switches_the_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from agentchaos_otel.instrumentor import AgentChaosInstrumentor
    from agentchaos_otel.mcp import hooks
    from agentchaos_otel.settings import MCP

    provider = TracerProvider()
    instrumentor = AgentChaosInstrumentor()
    for env, kwargs, expected in (("", {}, True), ("off", {}, False), ("off", {"mcp": True}, True),
                                  ("", {"mcp": False}, False)):
        monkeypatch.setenv(MCP.name, env)
        instrumentor.instrument(tracer_provider=provider, plan=None, **kwargs)
        try:
            assert hooks.active() is expected, (env, kwargs)
        finally:
            instrumentor.uninstrument()
        assert not hooks.active()
