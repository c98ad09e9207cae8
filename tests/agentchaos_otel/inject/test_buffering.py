"""The injector holds a response back only when a fault can still fire on that call.

Reading a stream whole costs the agent its streaming (first token only at the end) and memory;
it is only worth it when a response-stage rule may rewrite the body. The loopback server sends
the first chunk and then waits until the test has it: a body held back by the injector never
gets there before the server's wait runs out.

When exactly: a non-streamed JSON body is held when a response-stage rule is still open for the
call (not spent, not bound to another call, probability above 0), whatever the request declared,
because the guard is decided on the body itself (a model may return tool calls the request never
declared). A stream is held only when such a rule can fire given what is known before its body:
a tool-call rule counts only when the request declared tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx2
import pytest

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.plans.binding import EpisodeState
from agentchaos_otel.plans.plan import resolve_plan
from tests.conftest import WEATHER_TOOL
from tests.support.inject_harness import RawServer

pytestmark = pytest.mark.reliability

MESSAGES = [{"role": "user", "content": "weather in Paris?"}]


@pytest.fixture(scope="module")
def server() -> Iterator[RawServer]:
    with RawServer(gate_timeout=0.3) as s:
        yield s


def _first_chunk_in_time(server: RawServer, provider: Any, plan: str | None, *, calls_before: int = 0,
                         tools: bool = False, scenario: str = "sse_gated") -> bool:
    """Whether the client had the first chunk while the server was still waiting for it."""
    body: dict[str, Any] = {"model": "m", "messages": MESSAGES, "stream": scenario.startswith("sse")}
    if tools:
        body["tools"] = [WEATHER_TOOL]
    transport = ChaosTransport(httpx2.HTTPTransport(verify=False), tracer_provider=provider)
    with httpx2.Client(transport=transport) as client, episode("buf", plan=plan, tracer_provider=provider):
        for _ in range(calls_before):
            client.post(server.url("sse_ok"), json=body).read()
        server.gate.clear()
        with client.stream("POST", server.url(scenario), json=body) as r:
            chunks = r.iter_raw()
            next(chunks)
            server.gate.set()
            b"".join(chunks)
    return server.gate_log[-1]


@pytest.mark.parametrize(("plan", "calls_before", "tools", "scenario"), [
    (None, 0, False, "sse_gated"),
    ("http_500", 1, False, "sse_gated"),               # request-stage only (fired on the first call)
    ("llm_error_single", 1, False, "sse_gated"),       # spent on the first call
    ("llm_error_pos_mid", 0, False, "sse_gated"),      # bound to the 2nd call; this is the 1st
    ("tool_error_persistent", 0, False, "sse_gated"),  # a stream, no tools declared: not held for tool faults
    (None, 0, False, "json_gated"),
    ("llm_error_single", 1, False, "json_gated"),
])
def test_streams_flow_when_no_fault_can_fire(plan: str | None, calls_before: int, tools: bool, scenario: str,
                                             server: RawServer, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    assert _first_chunk_in_time(server, provider, plan, calls_before=calls_before, tools=tools,
                                scenario=scenario)


@pytest.mark.parametrize(("plan", "calls_before", "tools", "scenario"), [
    ("llm_error_persistent", 0, False, "sse_gated"),
    ("llm_error_pos_mid", 1, False, "sse_gated"),
    ("tool_error_persistent", 0, True, "sse_gated"),
    ("llm_error_persistent", 0, False, "json_gated"),
    ("tool_error_persistent", 0, False, "json_gated"),  # decided on the body: it may call a tool anyway
])
def test_streams_are_held_back_when_a_fault_can_fire(plan: str, calls_before: int, tools: bool, scenario: str,
                                                     server: RawServer, memory_tracing: Any) -> None:
    """The control: a rule that can fire does read the body whole (else the tests above prove nothing)."""
    provider, _ = memory_tracing
    assert not _first_chunk_in_time(server, provider, plan, calls_before=calls_before, tools=tools,
                                    scenario=scenario)


def test_async_stream_flows_when_the_plan_is_spent(server: RawServer, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    body = {"model": "m", "messages": MESSAGES, "stream": True}

    async def go() -> bool:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(verify=False), tracer_provider=provider)
        async with httpx2.AsyncClient(transport=transport) as client:
            async with episode("buf", plan="llm_error_single", tracer_provider=provider):
                await (await client.post(server.url("sse_ok"), json=body)).aread()
                server.gate.clear()
                async with client.stream("POST", server.url("sse_gated"), json=body) as r:
                    chunks = r.aiter_raw()
                    await chunks.__anext__()
                    server.gate.set()
                    async for _ in chunks:
                        pass
        return server.gate_log[-1]

    assert asyncio.run(go())


def test_could_fire_follows_choose_without_advancing_it() -> None:
    state = EpisodeState(task_id="t", plan=resolve_plan("llm_error_single"), seed=1)
    assert state.could_fire("response", 1)
    assert state.could_fire("response", 1)  # asking twice changes nothing
    assert state.choose("response", 1, has_tool_calls=False) is not None
    assert not state.could_fire("response", 2)
    assert state.choose("response", 2, has_tool_calls=False) is None


def test_could_fire_respects_guard_position_and_stage() -> None:
    tool = EpisodeState(task_id="t", plan=resolve_plan("tool_error_persistent"), seed=1)
    assert not tool.could_fire("response", 1, has_tool_calls=False)
    assert tool.could_fire("response", 1, has_tool_calls=None)
    assert not tool.could_fire("request", 1)
    pos = EpisodeState(task_id="t", plan=resolve_plan("llm_error_pos_mid"), seed=1)
    assert [pos.could_fire("response", n) for n in (1, 2, 3)] == [False, True, False]


def test_could_fire_leaves_seeded_draws_alone() -> None:
    """Asking before every call must not change which calls an intermittent rule fires on."""
    def fired(ask: bool) -> list[int]:
        state = EpisodeState(task_id="t", plan=resolve_plan("llm_error_intermittent"), seed=7)
        out = []
        for n in range(1, 60):
            if ask:
                state.could_fire("response", n)
            if state.choose("response", n, has_tool_calls=False) is not None:
                out.append(n)
        return out

    assert fired(True) == fired(False) and fired(False)


def test_choose_says_why_a_rule_put_on_the_call_did_not_fire() -> None:
    content = EpisodeState(task_id="t", plan=resolve_plan("llm_error_persistent"), seed=1)
    why: list[tuple[str, str]] = []
    assert content.choose("response", 1, has_tool_calls=True, why=why) is None
    assert why == [("llm_error_persistent", "guarded out: the response has tool calls and the fault targets content")]
    tool = EpisodeState(task_id="t", plan=resolve_plan("tool_error_single"), seed=1)
    why = []
    assert tool.choose("response", 1, has_tool_calls=False, why=why) is None and why[0][0] == "tool_error_single"
    assert tool.choose("response", 2, has_tool_calls=True) is not None
    why = []
    assert tool.choose("response", 3, has_tool_calls=False, why=why) is None and why == [], "spent: not this call"
    drawn = EpisodeState(task_id="t", plan=resolve_plan("llm_error_intermittent"), seed=7)
    reasons = []
    for n in range(1, 30):
        why = []
        if drawn.choose("response", n, has_tool_calls=False, why=why) is None:
            reasons += [r for _, r in why]
    assert reasons and all(r.startswith("seeded draw") for r in reasons)


def test_zero_probability_cannot_fire() -> None:
    plan = resolve_plan("llm_error_persistent")
    exp = plan.experiments[0]
    never = replace(exp, rules=tuple(r.with_overrides(probability=0.0) for r in exp.rules))
    state = EpisodeState(task_id="t", plan=replace(plan, experiments=(never,)), seed=1)
    assert not state.could_fire("response", 1)
