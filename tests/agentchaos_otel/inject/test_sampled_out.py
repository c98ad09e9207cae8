"""A call whose span the sampler drops gets the provider's bytes, costs no signal reading, and
still counts its tokens in the GenAI metrics.

Signals exist only to be written on the span; when the span is not recording nothing can read
them, so the injector skips them. The upstream is an in-process ``MockTransport`` handler.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, Sampler

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject import call as call_module
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from tests.support.inject_harness import COMPLETION, JSON_BODY

URL = "http://llm.test/v1/chat/completions"
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "weather in Paris?"}]}


def _reply(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "application/json"}, content=JSON_BODY)


@pytest.mark.parametrize(("sampler", "recorded"), [(ALWAYS_OFF, False), (ALWAYS_ON, True)])
def test_sampled_out_calls_skip_the_signals_and_keep_bytes_and_token_counts(
        monkeypatch: pytest.MonkeyPatch, sampler: Sampler, recorded: bool) -> None:
    read: list[int] = []
    counted: list[dict[str, Any]] = []
    real_read, real_count = call_module.annotate.response_attributes, call_module.metrics.record_call
    monkeypatch.setattr(call_module.annotate, "response_attributes",
                        lambda *a, **k: read.append(1) or real_read(*a, **k))
    monkeypatch.setattr(call_module.metrics, "record_call",
                        lambda provider, model, attrs, *a: counted.append(dict(attrs)) or real_count(
                            provider, model, attrs, *a))
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = httpx2.Client(transport=ChaosTransport(httpx2.MockTransport(_reply), tracer_provider=provider))
    with episode("sampled", plan=None, tracer_provider=provider):
        response = client.post(URL, json=REQUEST)
        assert response.content == JSON_BODY
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert len(chats) == int(recorded)
    assert len(read) == int(recorded)
    usage = COMPLETION["usage"]
    assert counted and counted[0][A.GEN_AI_USAGE_INPUT_TOKENS] == usage["prompt_tokens"]
    assert counted[0][A.GEN_AI_USAGE_OUTPUT_TOKENS] == usage["completion_tokens"]
    if recorded:
        assert chats[0].attributes[A.RESPONSE_CONTENT_FAILURE] == ""
        assert chats[0].attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS] == usage["completion_tokens"]
