"""A response that breaks while it is read: same outcome for the agent as without the injector,
and a span that ends with the error and what was received.

Every scenario runs the same client twice against a real loopback socket server, once with the
bare transport and once under ``ChaosTransport``: the exception (class, message, and whether it
came from ``send()`` or while reading), the status, the headers and the bytes before the error
must be identical. The plan either can fire on the call (the injector must read the body whole
first) or cannot (the body is observed as it flows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import duckdb
import httpx
import httpx2
import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from tests.support.inject_harness import SCENARIOS, SSE_TEXT, Outcome, RawServer, run_async, run_sync, scenario_names

pytestmark = pytest.mark.reliability

MESSAGES = [{"role": "user", "content": "weather in Paris?"}]
BROKEN = scenario_names(lambda s: s.broken)
# plans: one whose response-stage rule can fire on every call (forces buffering), and none
PLANS = ["llm_error_persistent", None]


@pytest.fixture(scope="module")
def server() -> Iterator[RawServer]:
    with RawServer() as s:
        yield s


def _outcome(module: Any, is_async: bool, url: str, streamed: bool, provider: Any | None,
             plan: str | None) -> Outcome:
    if is_async:
        async def go() -> Outcome:
            transport: Any = module.AsyncHTTPTransport(verify=False)  # plain http: skip loading CA files
            if provider is None:
                return await run_async(module, transport, url, streamed)
            async with episode("broken-read", plan=plan, tracer_provider=provider):
                return await run_async(module, AsyncChaosTransport(transport, tracer_provider=provider),
                                       url, streamed)

        return asyncio.run(go())
    transport = module.HTTPTransport(verify=False)
    if provider is None:
        return run_sync(module, transport, url, streamed)
    with episode("broken-read", plan=plan, tracer_provider=provider):
        return run_sync(module, ChaosTransport(transport, tracer_provider=provider), url, streamed)


def _chat_span(exporter: Any) -> Any:
    spans = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
    assert len(spans) == 1, "the chat span was never ended"
    return spans[0]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("scenario", BROKEN)
def test_broken_read_reaches_the_client_as_without_the_injector(scenario: str, module: Any, is_async: bool,
                                                                server: RawServer, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    url = server.url(scenario)
    sent = SCENARIOS[scenario].body_sent
    for streamed in (True, False):
        bare = _outcome(module, is_async, url, streamed, None, None)
        if streamed:
            assert bare.raised_at == ("read" if scenario != "sse_done_then_short" else "read"), bare
        for plan in PLANS:
            if scenario == "sse_done_then_short" and plan is not None:
                continue  # the fault fires on a stream complete up to [DONE]: see the SDK tests below
            exporter.clear()
            ours = _outcome(module, is_async, url, streamed, provider, plan)
            assert ours == bare, (streamed, plan)
            span = _chat_span(exporter)
            assert span.status.status_code == StatusCode.ERROR, (streamed, plan)
            assert span.attributes[A.ERROR_TYPE] == bare.exc_type
            assert span.attributes[A.RESPONSE_STATUS_CODE] == 200
            assert span.attributes[A.RESPONSE_BODY_BYTES] == len(sent), (streamed, plan)
            if sent:
                assert span.attributes[A.RESPONSE_BODY_CHUNKS] >= 1
            assert any(e.name == "exception" for e in span.events)


def test_broken_reads_reach_the_duckdb_store(server: RawServer, tmp_path: Any) -> None:
    """The most common real outage must be visible to ``diagnose``: the span is stored as an error."""
    db = tmp_path / "traces.duckdb"
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(db))))
    scenarios = ["json_reset_mid_body", "gzip_length_too_large", "sse_chunked_no_last"]
    for scenario in scenarios:
        _outcome(httpx2, False, server.url(scenario), True, provider, "llm_error_persistent")
    provider.shutdown()
    with duckdb.connect(str(db), read_only=True) as conn:
        rows = conn.execute("SELECT status_code, attributes->>'error.type' FROM spans "
                            "WHERE name LIKE 'chat%'").fetchall()
    assert sorted(rows) == sorted([("ERROR", "ReadError"), ("ERROR", "RemoteProtocolError"),
                                   ("ERROR", "RemoteProtocolError")])


def test_partial_stream_signals_on_the_span(server: RawServer, memory_tracing: Any) -> None:
    """What the agent received of a broken stream is described: chunks, no [DONE], text so far."""
    provider, exporter = memory_tracing
    for plan in PLANS:
        exporter.clear()
        out = _outcome(httpx2, False, server.url("sse_reset_mid_stream"), True, provider, plan)
        assert out.raised_at == "read"
        span = _chat_span(exporter)
        assert span.attributes[A.RESPONSE_STREAM_DONE] is False
        assert span.attributes[A.RESPONSE_CONTENT_LENGTH] == len("The weather in Paris ")


@pytest.mark.parametrize("plan", ["llm_error_persistent", "llm_error_single", None])
def test_openai_stream_ending_after_done_before_content_length(plan: str | None, server: RawServer,
                                                               memory_tracing: Any) -> None:
    """The SDK stops at [DONE]; a buffered read must tolerate the short body as the SDK does."""
    provider, exporter = memory_tracing
    url = server.base_url("sse_done_then_short")

    def read(http_client: Any) -> str:
        with openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0, http_client=http_client) as client:
            stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    assert read(httpx2.Client()) == SSE_TEXT
    with episode("done-short", plan=plan, tracer_provider=provider):
        text = read(httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)))
    span = _chat_span(exporter)
    if plan is None:
        assert text == SSE_TEXT
        assert span.attributes[A.FAULT_INJECTED] is False
    else:
        assert text.startswith("[API ERROR]")
        assert span.attributes[A.FAULT_INJECTED] is True
    assert span.status.status_code != StatusCode.ERROR  # the agent read a complete stream


def test_async_openai_stream_ending_after_done_before_content_length(server: RawServer,
                                                                     memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    url = server.base_url("sse_done_then_short")

    async def go() -> str:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
        async with openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0,
                                      http_client=httpx2.AsyncClient(transport=transport)) as client:
            async with episode("done-short", plan="llm_error_persistent", tracer_provider=provider):
                stream = await client.chat.completions.create(model="m", messages=MESSAGES,
                                                              stream=True)
                return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert asyncio.run(go()).startswith("[API ERROR]")
    assert _chat_span(exporter).attributes[A.FAULT_INJECTED] is True


def test_openai_broken_stream_same_error_and_text(server: RawServer, memory_tracing: Any) -> None:
    """``stream=True``: the SDK yields the chunks that arrived, then raises, with and without us."""
    provider, exporter = memory_tracing

    def read(http_client: Any) -> tuple[str, str]:
        text = ""
        with openai.OpenAI(base_url=server.base_url("sse_reset_mid_stream"), api_key="sk-test", max_retries=0,
                           http_client=http_client) as client:
            try:
                for chunk in client.chat.completions.create(model="m", messages=MESSAGES, stream=True):
                    text += chunk.choices[0].delta.content or ""
            except Exception as exc:
                return text, type(exc).__name__
        return text, "no error"

    bare = read(httpx2.Client())
    with episode("sdk", plan="llm_error_persistent", tracer_provider=provider):
        ours = read(httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)))
    assert ours == bare == ("The weather in Paris ", "APIConnectionError")
    assert _chat_span(exporter).attributes[A.ERROR_TYPE] == "ReadError"


def test_openai_non_streamed_broken_body_same_error(server: RawServer, memory_tracing: Any) -> None:
    """The SDK wraps the read error the same way with and without the injector."""
    provider, _ = memory_tracing

    def call(http_client: Any) -> str:
        with openai.OpenAI(base_url=server.base_url("json_reset_mid_body"), api_key="sk-test", max_retries=0,
                           http_client=http_client) as client:
            try:
                client.chat.completions.create(model="m", messages=MESSAGES)
            except openai.APIError as exc:
                return f"{type(exc).__name__}:{type(exc.__cause__).__name__}"
        return "no error"

    bare = call(httpx2.Client())
    with episode("sdk", plan="llm_error_persistent", tracer_provider=provider):
        ours = call(httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)))
    assert ours == bare == "APIConnectionError:ReadError"
