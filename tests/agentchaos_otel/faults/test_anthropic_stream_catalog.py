"""The 65 AgentChaos configurations on the Anthropic Messages API, through the official anthropic SDK.

The same checks as ``test_core_catalog_sdk`` (its ``_check`` judges what the agent saw against
what the provider really sent), with Messages results mapped to the chat shape they correspond
to: stop reasons to finish reasons, tool_use inputs to argument strings. Every configuration is
driven over a streamed Messages response (the SDK's ``messages.stream`` helper, which refuses any
stream it cannot accumulate); a spread of them also non-streamed, sync and async. The loopback
model is the simulated server's ``/v1/messages``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import agentchaos_names, get_fault
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from tests.agentchaos_otel.inject.test_catalog_sdk import CALLS, _check, _expected_fired_calls

MODEL = "sim-core-test"
TOOLS = [{"name": "get_weather", "description": "Current weather for a city",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                           "required": ["city"]}}]
FINISH_OF_STOP = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls", "refusal": "content_filter"}
NON_STREAMED = ("llm_error_single", "llm_truncate_single", "llm_corrupt_single", "tool_error_single",
                "tool_truncate_single", "tool_timeout_single", "compound_stale_cache", "compound_content_filter",
                "llm_schema_pos_mid")


def as_chat(message: Any) -> tuple[str | None, list[tuple[str, str]], str | None]:
    """(content, [(tool, arguments JSON)], finish reason) of a Message, in the chat shape."""
    texts = [b.text for b in message.content if b.type == "text"]
    calls = [(b.name, json.dumps(b.input)) for b in message.content if b.type == "tool_use"]
    content = "".join(texts) if texts else (None if calls else "")
    stop = message.stop_reason
    return content, calls, (FINISH_OF_STOP.get(stop, stop) if stop else None)


def _kwargs(kind: str, i: int) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 512, "tools": TOOLS,
            "messages": [{"role": "user", "content": f"{kind} question {i}"}]}


def sync_client(root_url: str, provider: Any, **options: Any) -> anthropic.Anthropic:
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    return anthropic.Anthropic(base_url=root_url, api_key="sk-ant-test", max_retries=0, open_telemetry=False,
                               http_client=httpx2.Client(transport=transport), **options)


def streamed(client: anthropic.Anthropic, **kwargs: Any) -> Any:
    with client.messages.stream(**kwargs) as stream:
        for _ in stream:
            pass
        return stream.get_final_message()


class Harness:
    """One tracing pipeline, one injecting sync client and the unfaulted answers, shared by the module:
    building an HTTP transport costs more than the calls it makes here."""

    def __init__(self, root_url: str) -> None:
        self.root_url = root_url
        self.provider = TracerProvider()
        self.exporter = InMemorySpanExporter()
        self.provider.add_span_processor(EpisodeSpanProcessor())
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.client = sync_client(root_url, self.provider)
        self.plain = anthropic.Anthropic(base_url=root_url, api_key="k", max_retries=0, open_telemetry=False)
        self._originals: dict[str, list[Any]] = {}

    def originals(self, kind: str) -> list[Any]:
        if kind not in self._originals:
            self._originals[kind] = [as_chat(self.plain.messages.create(**_kwargs(kind, i))) for i in range(CALLS)]
        return self._originals[kind]

    def run(self, mode: str, name: str, kind: str) -> list[Any]:
        plan = from_fault_names([name]).with_overrides(delay_scale=0.01)
        if mode == "async":
            return asyncio.run(self._run_async(plan, name, kind))
        with episode(f"task-{name}", plan=plan, seed=1, tracer_provider=self.provider):
            return [as_chat(streamed(self.client, **_kwargs(kind, i)) if mode == "stream"
                            else self.client.messages.create(**_kwargs(kind, i))) for i in range(CALLS)]

    async def _run_async(self, plan: Any, name: str, kind: str) -> list[Any]:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=self.provider)
        async with anthropic.AsyncAnthropic(base_url=self.root_url, api_key="sk-ant-test", max_retries=0,
                                            open_telemetry=False,
                                            http_client=httpx2.AsyncClient(transport=transport)) as client:
            async with episode(f"task-{name}", plan=plan, seed=1, tracer_provider=self.provider):
                return [as_chat(await client.messages.create(**_kwargs(kind, i))) for i in range(CALLS)]

    def close(self) -> None:
        self.client.close()
        self.plain.close()
        self.provider.shutdown()


@pytest.fixture(scope="module")
def harness(mode_server: Any) -> Iterator[Harness]:
    h = Harness(mode_server.root_url)
    yield h
    h.close()


CASES = [(name, "stream") for name in agentchaos_names()] + \
        [(name, mode) for name in NON_STREAMED for mode in ("sync", "async")]


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_configuration_through_anthropic_sdk(name: str, mode: str, harness: Harness) -> None:
    spec = get_fault(name)
    kind = "TOOL" if spec.target == "tool_calls" else "TEXT"
    harness.exporter.clear()
    seen = harness.run(mode, name, kind)
    originals = harness.originals(kind)
    spans = sorted((s for s in harness.exporter.get_finished_spans()
                    if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT), key=lambda s: s.attributes[A.STEP])
    assert [s.attributes[A.STEP] for s in spans] == list(range(CALLS))
    assert {s.attributes[A.GEN_AI_PROVIDER_NAME] for s in spans} == {"anthropic"}
    faulted = [i for i, s in enumerate(spans) if s.attributes[A.FAULT_INJECTED]]
    assert faulted == _expected_fired_calls(spec, faulted), f"{name}: faulted calls {faulted}"
    for i, span in enumerate(spans):
        assert span.attributes[A.GEN_AI_REQUEST_STREAM] is (mode == "stream")
        if i in faulted:
            assert span.attributes[A.FAULT_TYPE] == spec.fault_type
            assert span.attributes[A.FAULT_CHANGED] is True
            if spec.fault_type != "latency":
                assert span.attributes[A.FAULT_DIGEST_BEFORE] != span.attributes[A.FAULT_DIGEST_AFTER]
            _check(spec, originals[i], seen[i], seen[i - 1] if i else None)
        else:
            assert seen[i][:2] == originals[i][:2], f"{name}: call {i} changed without a fault"
            assert A.FAULT_TYPE not in span.attributes
        reasons = list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS])
        assert [FINISH_OF_STOP.get(r, r) for r in reasons] == ([seen[i][2]] if seen[i][2] else [])
