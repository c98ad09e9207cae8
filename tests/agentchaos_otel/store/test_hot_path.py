"""The per-call shortcuts change no recorded value: incremental digests, one stream parser.

The conversation digest and folded text are checked against a from-scratch computation over
seeded random conversations that grow, get edited in the middle and shrink (an agent that
trims its history); the stream check counts parsers while a real openai SDK stream runs through
the transport, and compares the span with a faulted run's bookkeeping of the same content.
"""

from __future__ import annotations

import random
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, sse
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject import call as call_module
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.trace.annotate import Conversation, conversation_digest, request_attributes

pytestmark = pytest.mark.scale

TEXTS = ["Weather in Zürich?", "", "STRASSE ß", "İstanbul flights", "x" * 40, "ok"]


def _message(rng: random.Random, i: int) -> dict[str, Any]:
    kind = rng.randrange(4)
    if kind == 0:
        return {"role": "assistant", "content": None,
                "tool_calls": [{"function": {"name": "f", "arguments": f'{{"city": "Oslo {i}"}}'}}]}
    if kind == 1:
        return {"role": "tool", "content": [{"type": "text", "text": rng.choice(TEXTS)}]}
    return {"role": rng.choice(["user", "assistant"]), "content": rng.choice(TEXTS) + f" {i}"}


def test_incremental_conversation_equals_from_scratch() -> None:
    rng = random.Random(7)
    conv = Conversation()
    messages: list[dict[str, Any]] = []
    seen: dict[str, list[Any]] = {}
    for i in range(200):
        r = rng.random()
        if r < 0.7 or not messages:
            messages = [*messages, _message(rng, i)]
        elif r < 0.85:
            messages = [*messages]
            messages[rng.randrange(len(messages))] = _message(rng, i)
        else:
            messages = messages[: rng.randrange(len(messages))]
        digest, text = conv.update(messages)
        assert digest == conversation_digest(messages)
        assert text == signals._message_text(messages)
        assert seen.setdefault(digest, messages) == messages  # one digest, one conversation
    assert request_attributes("openai", {"messages": messages})[A.REQUEST_DIGEST] == conversation_digest(messages)


def test_unfaulted_stream_runs_one_parser_and_records_the_same(mode_server: Any, memory_tracing: Any,
                                                               monkeypatch: Any) -> None:
    provider, exporter = memory_tracing
    made: list[int] = []

    class Counting(sse.SSEParser):
        def __init__(self, *a: Any, **k: Any) -> None:
            made.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(call_module, "SSEParser", Counting)
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode("s", tracer_provider=provider):
            chunks = list(client.chat.completions.create(
                model="sim-core-test", stream=True, messages=[{"role": "user", "content": "TEXT q 3"}]))
    assert len(made) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    (span,) = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
    attrs = span.attributes
    assert attrs[A.RESPONSE_STREAM_DONE] is True and attrs[A.RESPONSE_CONTENT_LENGTH] == len(text) > 0
    assert attrs[A.ORIGINAL_DIGEST] and attrs[A.RESPONSE_DIGEST] and attrs[A.FAULT_INJECTED] is False
