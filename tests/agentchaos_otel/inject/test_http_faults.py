"""Real HTTP faults surface as the openai SDK's own exceptions; its retries are separate spans."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport

MSG = [{"role": "user", "content": "TEXT 1"}]


def _client(base_url: str, provider: Any, retries: int) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=retries,
                         http_client=httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(),
                                                                            tracer_provider=provider)))


def _chat_spans(exporter: Any) -> list[Any]:
    return sorted((s for s in exporter.get_finished_spans()
                   if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT), key=lambda s: s.attributes[A.STEP])


@pytest.mark.parametrize(("fault", "error", "status"), [
    ("http_429", openai.RateLimitError, 429),
    ("http_500", openai.InternalServerError, 500),
    ("http_502", openai.InternalServerError, 502),
    ("http_503", openai.InternalServerError, 503),
    ("http_connect_error", openai.APIConnectionError, None),
    ("http_read_timeout", openai.APITimeoutError, None),
    ("http_remote_protocol_error", openai.APIConnectionError, None),
])
def test_http_fault_raises_sdk_exception(fault: str, error: type, status: int | None, mode_server: Any,
                                         memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with _client(mode_server.base_url, provider, 0) as client, episode("h", plan=fault, tracer_provider=provider):
        with pytest.raises(error) as info:
            client.chat.completions.create(model="sim-core-test", messages=MSG)
    if status is not None:
        assert info.value.status_code == status
    (span,) = _chat_spans(exporter)
    assert span.status.status_code.name == "ERROR"
    assert span.attributes[A.ERROR_TYPE] == (str(status) if status else
                                             {"http_connect_error": "ConnectError",
                                              "http_read_timeout": "ReadTimeout",
                                              "http_remote_protocol_error": "RemoteProtocolError"}[fault])
    assert span.attributes[A.FAULT_INJECTED] is True and span.attributes[A.FAULT_TARGET] == "http"


def test_sdk_retry_after_429_is_a_separate_span(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with _client(mode_server.base_url, provider, 2) as client, episode("r", plan="http_429",
                                                                       tracer_provider=provider):
        completion = client.chat.completions.create(model="sim-core-test", messages=MSG)
    assert "weather in Paris" in completion.choices[0].message.content
    first, second = _chat_spans(exporter)
    assert (first.attributes[A.STEP], second.attributes[A.STEP]) == (0, 1)
    assert first.attributes[A.ERROR_TYPE] == "429" and first.attributes[A.FAULT_TYPE] == "rate_limit"
    assert second.status.status_code.name != "ERROR" and second.attributes[A.FAULT_INJECTED] is False
    assert second.start_time >= first.end_time


def test_async_connect_error_retried_then_succeeds(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing

    async def go() -> str:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
        async with openai.AsyncOpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=1,
                                      http_client=httpx2.AsyncClient(transport=transport)) as client:
            async with episode("a", plan="http_connect_error", tracer_provider=provider):
                c = await client.chat.completions.create(model="sim-core-test", messages=MSG)
                return c.choices[0].message.content

    assert "weather" in asyncio.run(go())
    spans = _chat_spans(exporter)
    assert [s.attributes.get(A.ERROR_TYPE) for s in spans] == ["ConnectError", None]


def test_latency_fault_delays_without_changing_the_body(mode_server: Any, memory_tracing: Any) -> None:
    from agentchaos_otel.plans.plan import from_fault_names

    provider, exporter = memory_tracing
    plan = from_fault_names(["latency_2s"]).with_overrides(delay_scale=0.1)
    with _client(mode_server.base_url, provider, 0) as client, episode("l", plan=plan, tracer_provider=provider):
        c = client.chat.completions.create(model="sim-core-test", messages=MSG)
    assert "weather" in c.choices[0].message.content
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.FAULT_TYPE] == "latency" and span.attributes[A.FAULT_CHANGED] is True
    assert (span.end_time - span.start_time) / 1e9 >= 0.2


def test_provider_error_body_shape_reaches_the_sdk(mode_server: Any, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    with _client(mode_server.base_url, provider, 0) as client, episode("b", plan="http_429",
                                                                       tracer_provider=provider):
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(model="sim-core-test", messages=MSG)
    body = info.value.body
    assert isinstance(body, dict) and body.get("code") in ("rate_limit_exceeded", None) and "message" in body
    assert info.value.response.headers["retry-after"]


def test_loop_guard_stops_a_task_after_100_calls(mode_server: Any, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    with _client(mode_server.base_url, provider, 0) as client, episode("g", plan="llm_error_single",
                                                                       tracer_provider=provider):
        for _ in range(100):
            client.chat.completions.create(model="sim-core-test", messages=MSG)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="sim-core-test", messages=MSG)
