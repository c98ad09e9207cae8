"""The response guard through the official ``openai`` SDK against a loopback server.

The typed exceptions must come out of ``client.chat.completions.create`` as they are (the SDK
neither retries nor wraps them), retries must really re-send, and every decision must be on the
chat span of its attempt when the injector's transport is underneath.
"""

from __future__ import annotations

import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.guards import (
    EmptyAnswer,
    GuardError,
    GuardPolicy,
    InvalidArguments,
    LengthStop,
    SchemaMismatch,
    guard_client,
)
from agentchaos_otel.inject.install import instrument_client
from tests.support.guards import ORDER_TOOL, completion, replay_server, tool_call

MESSAGES = [{"role": "user", "content": "buy 3 NVDA"}]


def _client(server, provider=None, policy="raise", *, chaos: bool = True) -> openai.OpenAI:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=2)
    if chaos:
        instrument_client(client._client, tracer_provider=provider)
    return guard_client(client, policy)


def _chat_spans(exporter) -> list:
    return [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]


@pytest.mark.parametrize(("body", "error"), [
    (completion("Bought 3 NV", finish_reason="length"), LengthStop),
    (completion(None), EmptyAnswer),
    (completion(tool_calls=[tool_call('{"symbol": "NVDA", "amount": ')]), InvalidArguments),
    (completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": "three"})]), SchemaMismatch),
])
def test_typed_exception_comes_out_of_the_sdk_unwrapped_and_unretried(memory_tracing, body, error) -> None:
    provider, exporter = memory_tracing
    with replay_server([body]) as server:
        client = _client(server, provider)
        with pytest.raises(error) as info:
            client.chat.completions.create(model="m", messages=MESSAGES, tools=[ORDER_TOOL])
    exc = info.value
    assert isinstance(exc, GuardError) and isinstance(exc, openai.APIResponseValidationError)
    assert exc.status_code == 200 and exc.body["id"] == "chatcmpl-1" and exc.findings[0].kind == error.kind
    assert len(server.requests) == 1  # the SDK's max_retries=2 did not resend
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.GUARD_ACTION] == "raise"
    assert list(span.attributes[A.GUARD_FINDINGS]) == [error.kind]


def test_retry_resends_until_a_good_answer_and_records_each_attempt(memory_tracing) -> None:
    provider, exporter = memory_tracing
    bodies = [completion(None), completion(tool_calls=[tool_call({"symbol": "NVDA"})]),
              completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": 3})], finish_reason="tool_calls")]
    waits: list[float] = []
    with replay_server(bodies) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        instrument_client(client._client, tracer_provider=provider)
        guard_client(client, GuardPolicy(action="retry", max_retries=3, backoff=0.01, seed=1))
        client._client._transport._sleep = waits.append  # no real waiting in a unit test
        out = client.chat.completions.create(model="m", messages=MESSAGES, tools=[ORDER_TOOL])
    assert out.choices[0].message.tool_calls[0].function.arguments == '{"symbol": "NVDA", "amount": 3}'
    assert len(server.requests) == 3
    spans = sorted(_chat_spans(exporter), key=lambda s: s.start_time)
    assert [s.attributes[A.GUARD_ATTEMPT] for s in spans] == [0, 1, 2]
    assert [s.attributes[A.GUARD_ACTION] for s in spans] == ["retry", "retry", "pass"]
    assert [list(s.attributes[A.GUARD_FINDINGS]) for s in spans] == [["empty_answer"], ["schema_mismatch"], []]
    assert len(waits) == 2 and waits[1] > waits[0] > 0
    assert [s.attributes[A.GUARD_BACKOFF] for s in spans[:2]] == waits


def test_retry_exhausted_raises_with_the_attempt_count(memory_tracing) -> None:
    provider, _ = memory_tracing
    with replay_server([completion(None)]) as server:
        client = _client(server, provider, GuardPolicy(action="retry", max_retries=2, backoff=0.0))
        with pytest.raises(EmptyAnswer) as info:
            client.chat.completions.create(model="m", messages=MESSAGES)
    assert info.value.attempts == 3 and len(server.requests) == 3


def test_annotate_passes_the_answer_on_and_marks_the_span(memory_tracing) -> None:
    provider, exporter = memory_tracing
    with replay_server([completion("Bought 3 NV", finish_reason="length")]) as server:
        out = _client(server, provider, "annotate").chat.completions.create(model="m", messages=MESSAGES)
    assert out.choices[0].finish_reason == "length"
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.GUARD_ACTION] == "annotate" and "token limit" in span.attributes[A.GUARD_DETAIL]


@pytest.mark.parametrize("plan", ["tool_schema_persistent", "tool_corrupt_persistent"])
def test_the_guard_sees_what_the_injector_did(memory_tracing, plan) -> None:
    """A valid tool call from the server, corrupted by the injector's plan: the guard catches it."""
    from agentchaos_otel.episode_scope import Episode

    provider, exporter = memory_tracing
    good = completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": 3})], finish_reason="tool_calls")
    with replay_server([good]) as server:
        client = _client(server, provider)
        with Episode("t1", plan, 0, tracer_provider=provider), pytest.raises(GuardError) as info:
            client.chat.completions.create(model="m", messages=MESSAGES, tools=[ORDER_TOOL])
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.FAULT_INJECTED] is True
    assert span.attributes[A.GUARD_ACTION] == "raise" and info.value.kind in span.attributes[A.GUARD_FINDINGS]


def test_a_cut_value_that_still_fits_the_schema_is_a_limit_of_form_checks(memory_tracing) -> None:
    """tool_truncate cuts 'NVDA' to a shorter upper-case string: well-formed, so nothing is found."""
    from agentchaos_otel.episode_scope import Episode

    provider, exporter = memory_tracing
    good = completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": 3})], finish_reason="tool_calls")
    with replay_server([good]) as server, Episode("t1", "tool_truncate_persistent", 0, tracer_provider=provider):
        out = _client(server, provider).chat.completions.create(model="m", messages=MESSAGES, tools=[ORDER_TOOL])
    assert out.choices[0].message.tool_calls[0].function.arguments != good["choices"][0]["message"][
        "tool_calls"][0]["function"]["arguments"]
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.FAULT_INJECTED] is True and span.attributes[A.GUARD_ACTION] == "pass"


def test_without_the_injector_the_decision_is_an_event_on_the_current_span(memory_tracing) -> None:
    provider, exporter = memory_tracing
    tracer = provider.get_tracer("test")
    with replay_server([completion(None)]) as server:
        client = _client(server, chaos=False, policy="annotate")
        with tracer.start_as_current_span("agent step"):
            client.chat.completions.create(model="m", messages=MESSAGES)
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "agent step"]
    (event,) = [e for e in span.events if e.name == A.EVENT_GUARD_DECISION]
    assert event.attributes[A.GUARD_ACTION] == "annotate"


async def test_async_client_raises_the_same_types(memory_tracing) -> None:
    provider, exporter = memory_tracing
    with replay_server([completion(tool_calls=[tool_call({"symbol": "NVDA"})])]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
        instrument_client(client._client, tracer_provider=provider)
        guard_client(client)
        with pytest.raises(SchemaMismatch):
            await client.chat.completions.create(model="m", messages=MESSAGES, tools=[ORDER_TOOL])
        await client.close()
    assert _chat_spans(exporter)[0].attributes[A.GUARD_ACTION] == "raise"


def test_streams_are_annotated_at_their_end_and_never_raised(memory_tracing) -> None:
    """A streamed empty answer under the raise policy: every chunk reaches the agent, the span says what was found."""
    from agentchaos_otel.sim.policy import Turn
    from agentchaos_otel.sim.server import SimulatedModelServer

    class Empty:
        name = "sim-empty"

        def respond(self, request, rng):
            return Turn(content="")

    provider, exporter = memory_tracing
    with SimulatedModelServer(Empty(), seed=0) as server:
        client = _client(server, provider, "raise")
        chunks = list(client.chat.completions.create(model="sim-empty", messages=MESSAGES, stream=True))
    assert chunks and chunks[-1].choices[0].finish_reason == "stop"
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.GUARD_ACTION] == "annotate"
    assert list(span.attributes[A.GUARD_FINDINGS]) == ["empty_answer"]


def test_process_wide_install_puts_the_guard_outside_the_injector(memory_tracing) -> None:
    from agentchaos_otel import guards
    from agentchaos_otel.guards.transport import GuardTransport
    from agentchaos_otel.inject import hook
    from agentchaos_otel.inject import install as chaos
    from agentchaos_otel.inject.transport import ChaosTransport

    provider, exporter = memory_tracing
    chaos.install(tracer_provider=provider)
    guards.install("raise")
    try:
        with replay_server([completion(None)]) as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
            transport = client._client._transport.chain()
            assert isinstance(transport, GuardTransport) and isinstance(transport.wrapped, ChaosTransport)
            with pytest.raises(EmptyAnswer):
                client.chat.completions.create(model="m", messages=MESSAGES)
    finally:
        guards.uninstall()
        chaos.uninstall()
    assert not guards.installed()
    assert _chat_spans(exporter)[0].attributes[A.GUARD_ACTION] == "raise"
    fresh = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    assert not isinstance(fresh._client._transport, GuardTransport)
    assert not hook.patched(), "the shared hook is unwrapped with its last layer"


def test_anthropic_sdk_surfaces_the_same_typed_exception(memory_tracing) -> None:
    anthropic = pytest.importorskip("anthropic")
    from tests.support.guards import ANTHROPIC_ORDER_TOOL, message

    provider, exporter = memory_tracing
    cut = message([{"type": "text", "text": "Bought 3 NV"}], "max_tokens")
    with replay_server([cut]) as server:
        client = anthropic.Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="sk-test", max_retries=2)
        instrument_client(client._client, tracer_provider=provider)
        guard_client(client)
        with pytest.raises(LengthStop) as info:
            client.messages.create(model="m", max_tokens=5, messages=MESSAGES, tools=[ANTHROPIC_ORDER_TOOL])
    assert isinstance(info.value, anthropic.APIResponseValidationError)
    assert isinstance(info.value, openai.APIResponseValidationError)
    assert info.value.status_code == 200 and info.value.findings[0].kind == "length"
    assert len(server.requests) == 1
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.GUARD_ACTION] == "raise"
