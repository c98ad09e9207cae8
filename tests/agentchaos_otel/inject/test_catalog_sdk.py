"""Every one of the 65 AgentChaos configurations, driven through the real openai SDK.

For each configuration and each client mode (sync, async, streaming) the test makes three calls
through the injecting transport against the loopback simulated model, then checks what the SDK
returned against what the provider really sent (the same request without the injector), and what
the LLM spans recorded.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import agentchaos_names, get_fault
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from agentchaos_otel.signals import mojibake_score
from tests.conftest import WEATHER_TOOL

MODES = ("sync", "async", "stream")
CALLS = 3


def _normalise_completion(c: Any) -> tuple[str | None, list[tuple[str, str]], str | None]:
    msg = c.choices[0].message
    calls = [(t.function.name, t.function.arguments) for t in (msg.tool_calls or [])]
    return msg.content, calls, c.choices[0].finish_reason


def _normalise_stream(chunks: list[Any]) -> tuple[str | None, list[tuple[str, str]], str | None]:
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    finish = None
    saw_content = False
    for ch in chunks:
        for choice in ch.choices:
            d = choice.delta
            if d.content is not None:
                saw_content = True
                text.append(d.content)
            for tc in d.tool_calls or []:
                entry = calls.setdefault(tc.index, ["", ""])
                if tc.function and tc.function.name:
                    entry[0] += tc.function.name
                if tc.function and tc.function.arguments:
                    entry[1] += tc.function.arguments
            if choice.finish_reason:
                finish = choice.finish_reason
    return ("".join(text) if saw_content else None), [tuple(v) for _, v in sorted(calls.items())], finish


def _messages(kind: str, i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"{kind} question {i}"}]


def _run(mode: str, base_url: str, name: str, provider: Any, kind: str) -> list[Any]:
    plan = from_fault_names([name]).with_overrides(delay_scale=0.01)
    seen: list[Any] = []
    if mode == "async":
        async def go() -> None:
            transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
            async with openai.AsyncOpenAI(base_url=base_url, api_key="sk-test",
                                          http_client=httpx2.AsyncClient(transport=transport),
                                          max_retries=0) as client:
                async with episode(f"task-{name}", plan=plan, seed=1, tracer_provider=provider):
                    for i in range(CALLS):
                        c = await client.chat.completions.create(model="sim-core-test", messages=_messages(kind, i),
                                                                 tools=[WEATHER_TOOL])
                        seen.append(_normalise_completion(c))
        asyncio.run(go())
        return seen
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=base_url, api_key="sk-test", http_client=httpx2.Client(transport=transport),
                       max_retries=0) as client:
        with episode(f"task-{name}", plan=plan, seed=1, tracer_provider=provider):
            for i in range(CALLS):
                if mode == "stream":
                    chunks = list(client.chat.completions.create(
                        model="sim-core-test", messages=_messages(kind, i), tools=[WEATHER_TOOL], stream=True,
                        stream_options={"include_usage": True}))
                    seen.append(_normalise_stream(chunks))
                else:
                    c = client.chat.completions.create(model="sim-core-test", messages=_messages(kind, i),
                                                       tools=[WEATHER_TOOL])
                    seen.append(_normalise_completion(c))
    return seen


def _originals(base_url: str, kind: str) -> list[Any]:
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0) as client:
        return [_normalise_completion(client.chat.completions.create(
            model="sim-core-test", messages=_messages(kind, i), tools=[WEATHER_TOOL])) for i in range(CALLS)]


def _string_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _string_values(v)]
    if isinstance(value, list):
        return [s for v in value for s in _string_values(v)]
    return []


def _check(spec: Any, orig: Any, seen: Any, previous_seen: Any) -> None:
    content, calls, finish = seen
    o_content, o_calls, _ = orig
    t, target, name = spec.fault_type, spec.target, spec.name
    if name == "compound_api_degradation":
        assert content and "503" in content and not calls
    elif name == "compound_proxy_html":
        assert content and "<html" in content.lower() and "502" in content
    elif name == "compound_content_filter":
        assert finish == "content_filter" and not calls and content
    elif name == "compound_max_tokens":
        assert finish == "length" and o_content.startswith(content) and len(content) <= 0.55 * len(o_content)
    elif name == "compound_stale_cache":
        assert seen[:2] == previous_seen[:2] and seen[:2] != orig[:2]
    elif name == "compound_stale_data":
        assert json.loads(calls[0][1]) == {"city": "Pyongyang"}
    elif name == "compound_wrong_entity":
        assert json.loads(calls[0][1]) == {"city": "Springfield"}
    elif name == "compound_slow_response":
        assert seen[:2] == orig[:2]
    elif target == "content":
        if t == "error":
            assert content.startswith("[API ERROR]") and not calls
        elif t == "timeout":
            assert content.startswith("[TIMEOUT]")
        elif t == "empty":
            assert content == ""
        elif t == "truncate":
            assert finish == "length" and o_content.startswith(content) and len(content) < 0.35 * len(o_content)
        elif t == "corrupt":
            assert content != o_content and mojibake_score(content) > 0
        elif t == "schema":
            assert json.loads(content)["error"] == "content_policy_violation"
        else:
            pytest.fail(f"unchecked {name}")
    elif target == "tool_calls":
        if t == "error":
            assert calls and calls[0][1] == "{}"
        elif t == "timeout":
            assert not calls and content.startswith("[TIMEOUT]")
        elif t == "empty":
            assert not calls
        elif t == "truncate":
            new, old = json.loads(calls[0][1]), json.loads(o_calls[0][1])
            assert new.keys() == old.keys()
            for a, b in zip(_string_values(new), _string_values(old), strict=True):
                assert b.startswith(a) and len(a) < len(b)
        elif t == "corrupt":
            new, old = json.loads(calls[0][1]), json.loads(o_calls[0][1])
            assert new.keys() == old.keys() and new != old
        elif t == "schema":
            assert json.loads(calls[0][1]) == {"wrong_param": "unexpected_value"}
        else:
            pytest.fail(f"unchecked {name}")
    else:
        pytest.fail(f"unexpected target for {name}")


def _expected_fired_calls(spec: Any, faulted: list[int]) -> list[int]:
    if spec.on_call is not None:
        return [spec.on_call - 1]
    if spec.strategy == "persistent":
        return list(range(CALLS))
    if spec.strategy == "burst":
        return list(range(min(3, CALLS)))
    if spec.strategy == "intermittent":
        return faulted  # seeded coin flips; checked for determinism elsewhere
    return [0]


def test_catalog_has_the_65_agentchaos_names() -> None:
    names = agentchaos_names()
    assert len(names) == 65 == len(set(names))
    assert "llm_error_single" in names and "tool_corrupt_burst" in names and "llm_schema_pos_late" in names


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", agentchaos_names())
def test_configuration_through_sdk(name: str, mode: str, mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    spec = get_fault(name)
    kind = "TOOL" if spec.target == "tool_calls" else "TEXT"
    seen = _run(mode, mode_server.base_url, name, provider, kind)
    originals = _originals(mode_server.base_url, kind)
    spans = sorted((s for s in exporter.get_finished_spans()
                    if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT), key=lambda s: s.attributes[A.STEP])
    assert [s.attributes[A.STEP] for s in spans] == list(range(CALLS))
    faulted = [i for i, s in enumerate(spans) if s.attributes[A.FAULT_INJECTED]]
    expected = _expected_fired_calls(spec, faulted)
    assert faulted == expected, f"{name}: faulted calls {faulted}, expected {expected}"
    for i in range(CALLS):
        span = spans[i]
        assert span.attributes[A.GEN_AI_REQUEST_STREAM] is (mode == "stream")
        if i in faulted:
            assert span.attributes[A.FAULT_TYPE] == spec.fault_type
            assert span.attributes[A.FAULT_TARGET] == spec.target
            assert span.attributes[A.FAULT_EXPERIMENT] == name
            assert span.attributes[A.FAULT_CHANGED] is True
            if spec.fault_type != "latency":
                assert span.attributes[A.FAULT_DIGEST_BEFORE] != span.attributes[A.FAULT_DIGEST_AFTER]
            _check(spec, originals[i], seen[i], seen[i - 1] if i else None)
        else:
            assert seen[i][:2] == originals[i][:2], f"{name}: call {i} changed without a fault"
            assert A.FAULT_TYPE not in span.attributes
        finish = seen[i][2]
        assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ([finish] if finish else [])


def test_argument_grounding_flags_an_entity_nobody_mentioned(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    messages = [{"role": "user", "content": "TOOL what is the weather in Paris-1 right now, in celsius? 1"}]
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        for plan in (None, "compound_wrong_entity"):
            with episode("g", plan=plan, tracer_provider=provider):
                client.chat.completions.create(model="sim-core-test", messages=messages, tools=[WEATHER_TOOL])
    clean, faulted = sorted((s for s in exporter.get_finished_spans() if s.name.startswith("chat")),
                            key=lambda s: s.start_time)
    assert clean.attributes[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 0  # "Paris-1" was asked for
    assert faulted.attributes[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 1  # "Springfield" never came up
    assert faulted.attributes[A.RESPONSE_TOOL_ARGS_STRINGS] == 1 and clean.attributes[A.RESPONSE_TOOL_ARGS_STRINGS] == 2
