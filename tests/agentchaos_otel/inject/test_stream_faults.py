"""Stream faults applied with streaming left on, observed through the openai SDK."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import fault_names
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from tests.agentchaos_otel.inject.test_catalog_sdk import _normalise_stream
from tests.conftest import WEATHER_TOOL


def _stream_once(base_url: str, provider: Any, plan: Any, kind: str) -> tuple[Any, list[Any]]:
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode("s", plan=plan, tracer_provider=provider):
            chunks = list(client.chat.completions.create(
                model="sim-core-test", messages=[{"role": "user", "content": f"{kind} q 1"}],
                tools=[WEATHER_TOOL], stream=True, stream_options={"include_usage": True}))
    return _normalise_stream(chunks), chunks


def _chat_span(exporter: Any) -> Any:
    (span,) = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
    return span


@pytest.mark.parametrize("name", fault_names("stream"))
def test_stream_fault_keeps_streaming_and_is_recorded(name: str, mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    kind = "TOOL" if name == "stream_drop_tool_calls" else "TEXT"
    plan = from_fault_names([name]).with_overrides(delay_scale=0.02)
    clean, _ = _stream_once(mode_server.base_url, provider, None, kind)
    exporter.clear()
    (content, calls, finish), chunks = _stream_once(mode_server.base_url, provider, plan, kind)
    span = _chat_span(exporter)
    assert span.attributes[A.GEN_AI_REQUEST_STREAM] is True
    assert span.attributes[A.FAULT_INJECTED] is True and span.attributes[A.FAULT_EXPERIMENT] == name
    assert span.attributes[A.FAULT_CHANGED] is True
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
        assert not content and not calls
    elif name == "stream_stall":
        assert (content, calls, finish) == clean
        assert span.attributes[A.RESPONSE_MAX_CHUNK_GAP_MS] >= 50
    assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ([finish] if finish else [])


def test_stream_span_ends_when_the_consumer_closes_early(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode("s", tracer_provider=provider):
            stream = client.chat.completions.create(model="sim-core-test", stream=True,
                                                    messages=[{"role": "user", "content": "TEXT q 1"}])
            next(iter(stream))
            assert not [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
            stream.close()
    span = _chat_span(exporter)
    assert span.attributes[A.RESPONSE_STREAM_DONE] is False


def test_async_stream_usage_and_finish_recorded(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing

    async def go() -> None:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
        async with openai.AsyncOpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                                      http_client=httpx2.AsyncClient(transport=transport)) as client:
            async with episode("s", plan="stream_truncate", tracer_provider=provider):
                stream = await client.chat.completions.create(
                    model="sim-core-test", stream=True, stream_options={"include_usage": True},
                    messages=[{"role": "user", "content": "TEXT q 2"}])
                async for _ in stream:
                    pass

    asyncio.run(go())
    span = _chat_span(exporter)
    assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ["length"]
    assert span.attributes[A.FAULT_TYPE] == "truncate"
    assert span.attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS] > 0
