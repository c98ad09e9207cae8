"""Fault firing decided on the actual response: a model that calls tools the request never declared.

Some servers return ``tool_calls`` whether or not the request declared ``tools``. AgentChaos's
guard reads the response itself (a tool-call fault applies to a response with tool calls, a
guarded content fault to one without), so every one of its 65 configurations is driven here
through the real openai SDK, sync and async, against the loopback simulated model answering
every call with a tool call to a request that declares no tools, side by side with the same
requests sent without the injector.

What can fire is derived from the configuration's public fields and the response's known shape,
not from the scheduler: a tool-call target can (the response has tool calls), a content target
only without a guard, the HTTP latency of ``compound_slow_response`` always. A configuration
that can fire fires on the calls its strategy names and changes what the SDK returned; one that
cannot leaves every response as the provider sent it and records on each call, in an
``agentchaos.fault.not_fired`` event, which fault did not fire and why.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import agentchaos_names, get_fault
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names

pytestmark = pytest.mark.reliability

CALLS = 8
# An intermittent rule fires on each call with probability 0.3 (a seeded draw): enough calls that
# it fires at least once (P(no fire) = 0.7**20 < 0.001 for a seed; the draws are deterministic).
INTERMITTENT_CALLS = 20
MODEL = "sim-core-test"


def _messages(i: int) -> list[dict[str, Any]]:
    # ModePolicy answers a "TOOL ..." message with a get_weather call whatever the request declares
    return [{"role": "user", "content": f"TOOL weather question {i}"}]


def _seen(c: Any) -> tuple[str | None, list[tuple[str, str]], str | None]:
    msg = c.choices[0].message
    return msg.content, [(t.function.name, t.function.arguments) for t in msg.tool_calls or []], \
        c.choices[0].finish_reason


def _calls(spec: Any) -> int:
    return INTERMITTENT_CALLS if spec.strategy == "intermittent" else CALLS


def _run(mode: str, base_url: str, name: str, provider: Any) -> list[Any]:
    calls = _calls(get_fault(name))
    plan = from_fault_names([name]).with_overrides(delay_scale=0.01)
    if mode == "async":
        async def go() -> list[Any]:
            transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
            async with openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0,
                                          http_client=httpx2.AsyncClient(transport=transport)) as client:
                async with episode(f"task-{name}", plan=plan, seed=1, tracer_provider=provider):
                    return [_seen(await client.chat.completions.create(model=MODEL, messages=_messages(i)))
                            for i in range(calls)]
        return asyncio.run(go())
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode(f"task-{name}", plan=plan, seed=1, tracer_provider=provider):
            return [_seen(client.chat.completions.create(model=MODEL, messages=_messages(i))) for i in range(calls)]


def _originals(base_url: str) -> list[Any]:
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0) as client:
        return [_seen(client.chat.completions.create(model=MODEL, messages=_messages(i)))
                for i in range(INTERMITTENT_CALLS)]


def _can_fire(spec: Any) -> bool:
    """On a response with tool calls, by the configuration's own fields."""
    return spec.target in ("tool_calls", "http") or not spec.guard


def _expected_calls(spec: Any, fired: list[int]) -> list[int]:
    if spec.on_call is not None:
        return [spec.on_call - 1]
    if spec.strategy == "persistent":
        return list(range(_calls(spec)))
    if spec.strategy == "burst":
        return [0, 1, 2]
    if spec.strategy == "intermittent":
        return fired  # seeded draws; every call without a fault says so below
    return [0]


def _not_fired(span: Any, name: str) -> list[str]:
    return [str(e.attributes[A.SKIP_REASON]) for e in span.events
            if e.name == A.EVENT_FAULT_NOT_FIRED and e.attributes.get(A.FAULT_DETAIL) == name]


@pytest.fixture(scope="module")
def originals(mode_server: Any) -> list[Any]:
    out = _originals(mode_server.base_url)
    assert all(calls and not content for content, calls, _ in out), "the server answers with tool calls"
    return out


def test_the_split_of_the_65_configurations() -> None:
    """The issue's count: 26 tool-call configurations did nothing; with the guard on the response
    they fire, beside the unguarded ones, and only the guarded content faults cannot."""
    specs = [get_fault(n) for n in agentchaos_names()]
    assert sum(s.target == "tool_calls" for s in specs) == 26
    assert sum(_can_fire(s) for s in specs) == 38 and sum(not _can_fire(s) for s in specs) == 27


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", agentchaos_names())
def test_configuration_on_undeclared_tool_calls(name: str, mode: str, mode_server: Any, originals: list[Any],
                                                memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    spec = get_fault(name)
    seen = _run(mode, mode_server.base_url, name, provider)
    originals = originals[:len(seen)]
    spans = sorted((s for s in exporter.get_finished_spans() if s.name.startswith("chat ")),
                   key=lambda s: s.attributes[A.STEP])
    assert len(spans) == len(seen) == _calls(spec)
    assert all(not s.attributes.get(A.REQUEST_TOOL_COUNT) for s in spans), "the requests declare no tools"
    fired = [i for i, s in enumerate(spans) if s.attributes[A.FAULT_INJECTED]]
    if not _can_fire(spec):
        assert fired == [] and seen == originals, f"{name} changed a response it cannot fire on"
        for span in spans:
            (reason,) = _not_fired(span, name)
            assert "tool calls" in reason, reason
        return
    assert fired and fired == _expected_calls(spec, fired), f"{name}: fired on {fired}"
    for i, span in enumerate(spans):
        if i in fired:
            assert span.attributes[A.FAULT_TYPE] == spec.fault_type and span.attributes[A.FAULT_CHANGED] is True
            assert not _not_fired(span, name)
            if spec.fault_type == "latency":
                assert seen[i] == originals[i]  # a delay, then the real response
            else:
                assert seen[i] != originals[i], f"{name}: call {i} fired without changing the response"
        else:
            assert seen[i] == originals[i], f"{name}: call {i} changed without a fault"
            if spec.strategy == "intermittent":
                (reason,) = _not_fired(span, name)
                assert reason.startswith("seeded draw"), reason


def test_a_stream_is_not_held_back_for_undeclared_tools_and_says_so(mode_server: Any, memory_tracing: Any) -> None:
    """A stream flows when only a tool-call fault could fire and no tools are declared (held back,
    the agent would lose its streaming); the span says which fault did not fire and why."""
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode("stream", plan="tool_error_persistent", seed=1, tracer_provider=provider):
            chunks = list(client.chat.completions.create(model=MODEL, messages=_messages(0), stream=True))
    assert any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert span.attributes[A.FAULT_INJECTED] is False
    (reason,) = _not_fired(span, "tool_error_persistent")
    assert "declared no tools" in reason
