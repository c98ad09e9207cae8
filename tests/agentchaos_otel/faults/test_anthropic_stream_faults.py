"""Stream faults on Anthropic Messages streams, with streaming left on, through the official anthropic SDK.

Every stream entry of the catalog is driven through ``messages.stream`` (whose accumulator refuses
events out of grammar and whose ``get_final_message`` asserts a ``message_start`` was seen), so a
fault that broke the event grammar would fail here; the span must record that the fault changed
what the agent received, with truthful digests.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import anthropic
import httpx2
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import fault_names, get_fault
from agentchaos_otel.faults.messages_stream import MessagesStreamFaulter, assemble_message, render_message_sse
from agentchaos_otel.inject.transport import AsyncChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from agentchaos_otel.sse import SSEParser
from tests.agentchaos_otel.faults.test_anthropic_stream_catalog import MODEL, TOOLS, as_chat, streamed, sync_client


def _chat_span(exporter: Any) -> Any:
    (span,) = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
    return span


def _stream_once(root_url: str, provider: Any, plan: Any, kind: str) -> Any:
    with sync_client(root_url, provider) as client:
        with episode("s", plan=plan, tracer_provider=provider):
            return as_chat(streamed(client, model=MODEL, max_tokens=512, tools=TOOLS,
                                    messages=[{"role": "user", "content": f"{kind} q 1"}]))


@pytest.mark.parametrize("name", fault_names("stream"))
def test_stream_fault_keeps_streaming_and_is_recorded(name: str, mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    kind = "TOOL" if name == "stream_drop_tool_calls" else "TEXT"
    clean = _stream_once(mode_server.root_url, provider, None, kind)
    exporter.clear()
    content, calls, finish = _stream_once(mode_server.root_url, provider,
                                          from_fault_names([name]).with_overrides(delay_scale=0.02), kind)
    span = _chat_span(exporter)
    assert span.attributes[A.GEN_AI_REQUEST_STREAM] is True
    assert span.attributes[A.FAULT_INJECTED] is True and span.attributes[A.FAULT_EXPERIMENT] == name
    assert span.attributes[A.FAULT_CHANGED] is True
    if name != "stream_stall":
        assert span.attributes[A.FAULT_DIGEST_BEFORE] != span.attributes[A.FAULT_DIGEST_AFTER]
    if name.startswith("stream_cut"):
        assert finish is None and len(content or "") < len(clean[0])
        assert span.attributes[A.RESPONSE_STREAM_DONE] is (name == "stream_cut")
    elif name == "stream_truncate":
        assert finish == "length" and clean[0].startswith(content) and len(content) < len(clean[0])
    elif name == "stream_corrupt":
        assert content != clean[0] and finish == clean[2]
    elif name == "stream_drop_tool_calls":
        assert clean[1] and not calls and finish == "stop"
    elif name == "stream_empty":
        assert not content and not calls and finish is None
    elif name == "stream_stall":
        assert (content, calls, finish) == clean
        assert span.attributes[A.RESPONSE_MAX_CHUNK_GAP_MS] >= 50
    reasons = list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS])
    assert len(reasons) == (1 if finish else 0)


def test_async_stream_truncate_records_stop_reason_and_usage(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing

    async def go() -> Any:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
        async with anthropic.AsyncAnthropic(base_url=mode_server.root_url, api_key="sk-ant-test", max_retries=0,
                                            open_telemetry=False,
                                            http_client=httpx2.AsyncClient(transport=transport)) as client:
            async with episode("s", plan="stream_truncate", tracer_provider=provider):
                async with client.messages.stream(model=MODEL, max_tokens=512,
                                                  messages=[{"role": "user", "content": "TEXT q 2"}]) as stream:
                    async for _ in stream:
                        pass
                    return await stream.get_final_message()

    message = asyncio.run(go())
    assert message.stop_reason == "max_tokens"
    span = _chat_span(exporter)
    assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ["max_tokens"]
    assert span.attributes[A.FAULT_TYPE] == "truncate" and span.attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS] > 0


def test_raw_event_iteration_survives_a_cut_without_message_stop(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with sync_client(mode_server.root_url, provider) as client:
        with episode("s", plan="stream_cut_no_done", tracer_provider=provider):
            events = list(client.messages.create(model=MODEL, max_tokens=512, stream=True,
                                                 messages=[{"role": "user", "content": "TEXT q 3"}]))
    assert events[0].type == "message_start" and events[-1].type != "message_stop"
    assert _chat_span(exporter).attributes[A.RESPONSE_STREAM_DONE] is False


def _events(body: dict[str, Any]) -> list[Any]:
    parser = SSEParser()
    return parser.feed(render_message_sse(body, chunk_chars=4)) + parser.close()


TOOL_FIRST = {"id": "msg_1", "type": "message", "role": "assistant", "model": "sim-x", "stop_reason": "tool_use",
              "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 9},
              "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "Oslo"}},
                          {"type": "text", "text": "Looking that up now."}]}


def test_render_and_assemble_round_trip() -> None:
    assert assemble_message(_events(TOOL_FIRST)) == TOOL_FIRST


def test_dropping_a_tool_block_renumbers_the_blocks_after_it() -> None:
    faulter = MessagesStreamFaulter(get_fault("stream_drop_tool_calls"), random.Random(0))
    parser = SSEParser()
    out = b"".join(b for e in _events(TOOL_FIRST) for b in faulter.process(e) if isinstance(b, bytes))
    seen = parser.feed(out) + parser.close()
    indices = {e.json()["index"] for e in seen if "index" in (e.json() or {})}
    assert indices == {0} and faulter.changed
    body = assemble_message(seen)
    assert body["content"] == [{"type": "text", "text": "Looking that up now."}]
    assert body["stop_reason"] == "end_turn"


def test_stream_faulter_passes_unknown_events_through_byte_identical() -> None:
    faulter = MessagesStreamFaulter(get_fault("stream_corrupt"), random.Random(0))
    parser = SSEParser()
    odd = b": keep-alive\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\nevent: custom\ndata: not json\n\n"
    assert b"".join(b for e in parser.feed(odd) for b in faulter.process(e)) == odd
    assert not faulter.changed


def test_a_fault_with_nothing_to_act_on_records_no_change(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    clean = _stream_once(mode_server.root_url, provider, None, "TEXT")
    exporter.clear()
    seen = _stream_once(mode_server.root_url, provider, "stream_drop_tool_calls", "TEXT")
    span = _chat_span(exporter)
    assert seen == clean and span.attributes[A.FAULT_CHANGED] is False
    assert span.attributes[A.FAULT_DIGEST_BEFORE] == span.attributes[A.FAULT_DIGEST_AFTER]


def test_simulated_messages_api_refuses_like_the_real_one(mode_server: Any) -> None:
    with anthropic.Anthropic(base_url=mode_server.root_url, api_key="k", max_retries=0,
                             open_telemetry=False) as client:
        with pytest.raises(anthropic.BadRequestError) as info:
            client.messages.create(model=MODEL, max_tokens=0, messages=[{"role": "user", "content": "TEXT 1"}])
    assert info.value.body["type"] == "error" and info.value.body["error"]["type"] == "invalid_request_error"
