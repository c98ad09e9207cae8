"""The shared client hook: clients built before installation, one layer per request, clean removal.

Real openai SDK clients (httpx2) and plain httpx / httpx2 clients, sync and async, against the
loopback simulated server (SIMULATED model).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.guards import GuardTransport
from agentchaos_otel.inject import hook
from agentchaos_otel.inject import install as chaos
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.instrumentor import AgentChaosInstrumentor

MSG = [{"role": "user", "content": "TEXT 1"}]
BODY = {"model": "sim-core-test", "messages": MSG}


def _chats(exporter: Any) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]


@pytest.fixture
def instrumented(memory_tracing: Any) -> Any:
    provider, exporter = memory_tracing
    inst = AgentChaosInstrumentor()
    yield provider, exporter, inst
    if inst.is_instrumented_by_opentelemetry:
        inst.uninstrument()
    assert not hook.patched()


def test_an_sdk_client_built_before_instrumenting_is_traced_and_faulted(mode_server: Any, instrumented: Any) -> None:
    provider, exporter, inst = instrumented
    early = openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0)  # module-level agent
    inst.instrument(tracer_provider=provider)
    with episode("early", plan="llm_empty_single", tracer_provider=provider) as ep:
        out = early.chat.completions.create(model="sim-core-test", messages=MSG)
    assert out.choices[0].message.content == ""
    assert len(ep.fault_log) == 1 and ep.fault_log[0].changed
    (span,) = _chats(exporter)
    assert span.attributes[A.FAULT_INJECTED] is True and span.attributes[A.TASK_ID] == "early"
    early.close()


@pytest.mark.parametrize("module", [httpx, httpx2])
def test_early_sync_and_async_clients_of_both_libraries(module: Any, mode_server: Any, instrumented: Any) -> None:
    provider, exporter, inst = instrumented
    sync_client = module.Client()
    async_client = module.AsyncClient()
    inst.instrument(tracer_provider=provider)
    url = f"{mode_server.base_url}/chat/completions"

    async def async_call() -> Any:
        try:
            return await async_client.post(url, json=BODY)
        finally:
            await async_client.aclose()

    with episode("both", plan="llm_empty_persistent", tracer_provider=provider):
        first = sync_client.post(url, json=BODY)
        second = asyncio.run(async_call())
    assert first.json()["choices"][0]["message"]["content"] == ""
    assert second.json()["choices"][0]["message"]["content"] == ""
    assert [s.attributes[A.STEP] for s in sorted(_chats(exporter), key=lambda s: s.start_time)] == [0, 1]
    sync_client.close()


def test_one_layer_per_request_whatever_reaches_the_class_hook(mode_server: Any, instrumented: Any) -> None:
    """An explicit ChaosTransport and a hooked client both end in HTTPTransport.handle_request."""
    provider, exporter, inst = instrumented
    inst.instrument(tracer_provider=provider)
    url = f"{mode_server.base_url}/chat/completions"
    with httpx.Client(transport=ChaosTransport(httpx.HTTPTransport(), tracer_provider=provider)) as explicit, \
            httpx.Client() as hooked:
        assert isinstance(hooked._transport, hook.HookedTransport)
        with episode("once", tracer_provider=provider):
            explicit.post(url, json=BODY)
            hooked.post(url, json=BODY)
    assert len(_chats(exporter)) == 2


def test_removing_one_layer_keeps_the_other(mode_server: Any, instrumented: Any) -> None:
    from agentchaos_otel import guards

    provider, exporter, inst = instrumented
    guards.install("annotate")  # the guard first: it still goes outside the injector
    inst.instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0)
    chain = client._client._transport.chain()
    assert isinstance(chain, GuardTransport) and isinstance(chain.wrapped, ChaosTransport)
    guards.uninstall()
    assert chaos.installed() and hook.patched()
    assert isinstance(client._client._transport.chain(), ChaosTransport), "the client built earlier follows"
    with episode("kept", plan="llm_empty_single", tracer_provider=provider):
        client.chat.completions.create(model="sim-core-test", messages=MSG)
    assert _chats(exporter)[0].attributes[A.FAULT_INJECTED] is True
    assert A.GUARD_ACTION not in _chats(exporter)[0].attributes
    inst.uninstrument()
    assert not hook.patched()
    assert client._client._transport.chain() is client._client._transport.wrapped, "passes straight through"
    client.close()


def test_a_wrapper_installed_over_ours_is_left_in_place(instrumented: Any) -> None:
    """Unwrapping must never take another instrumentation's wrapper off (``unwrap`` takes the top)."""
    import wrapt

    provider, _, inst = instrumented
    inst.instrument(tracer_provider=provider)
    calls: list[int] = []

    def theirs(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        calls.append(1)
        return wrapped(*args, **kwargs)

    wrapt.wrap_function_wrapper(httpx.HTTPTransport, "handle_request", theirs)
    top = vars(httpx.HTTPTransport)["handle_request"]
    try:
        inst.uninstrument()
        assert vars(httpx.HTTPTransport)["handle_request"] is top
        inst.instrument(tracer_provider=provider)  # ours, buried, comes alive again
        assert vars(httpx.HTTPTransport)["handle_request"] is top
    finally:
        inst.uninstrument()
        httpx.HTTPTransport.handle_request = top.__wrapped__
        hook._unpatch()
    assert not hook.patched()


def test_a_planned_episode_with_no_llm_call_warns_once(memory_tracing: Any, caplog: Any) -> None:
    from agentchaos_otel import episode_scope

    provider, _ = memory_tracing
    episode_scope._warned_unreached = False
    with caplog.at_level(logging.WARNING, logger="agentchaos_otel.episode_scope"):
        with episode("unreached-1", plan="llm_empty_single", tracer_provider=provider):
            pass
        with episode("unreached-2", plan="llm_empty_single", tracer_provider=provider):
            pass
        with episode("no-plan", tracer_provider=provider):
            pass
    lines = [r.getMessage() for r in caplog.records if "no LLM call" in r.getMessage()]
    assert len(lines) == 1 and "unreached-1" in lines[0]
