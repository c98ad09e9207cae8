"""The provider adapters: one per wire format, picked once per request, each complete."""

from __future__ import annotations

import json
import random

import httpx
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.faults.catalog import get_fault
from agentchaos_otel.inject import wire
from agentchaos_otel.inject.call import recognise
from agentchaos_otel.sse import SSEParser

CHAT = {"id": "c1", "model": "gpt-4o", "choices": [{"index": 0, "finish_reason": "stop",
                                                     "message": {"role": "assistant", "content": "hi there"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
MESSAGE = {"id": "m1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "end_turn",
           "content": [{"type": "text", "text": "hi there"}], "usage": {"input_tokens": 3, "output_tokens": 2}}
BODIES = {A.PROVIDER_OPENAI: CHAT, A.PROVIDER_ANTHROPIC: MESSAGE}


def _request(url: str, method: str = "POST", **headers: str) -> httpx.Request:
    return httpx.Request(method, url, headers=headers, content=b'{"messages": []}')


@pytest.mark.parametrize(("url", "headers", "provider"), [
    ("https://api.openai.com/v1/chat/completions", {}, A.PROVIDER_OPENAI),
    ("http://localhost:8000/chat/completions/", {}, A.PROVIDER_OPENAI),
    ("https://api.anthropic.com/v1/messages", {}, A.PROVIDER_ANTHROPIC),
    ("https://gateway.example/anthropic/messages", {"anthropic-version": "2023-06-01"}, A.PROVIDER_ANTHROPIC),
    ("https://gateway.example/threads/messages", {}, None),
    ("https://api.openai.com/v1/embeddings", {}, None),
])
def test_each_request_gets_the_adapter_of_its_format(url: str, headers: dict[str, str], provider: str | None) -> None:
    adapter = wire.for_request(_request(url, **headers))
    assert (adapter.provider if adapter else None) == provider
    assert recognise(_request(url, **headers)) == provider
    assert wire.for_request(_request(url, "GET", **headers)) is None


@pytest.mark.parametrize("adapter", wire.ADAPTERS, ids=lambda a: a.provider)
def test_every_adapter_answers_every_question_of_the_call(adapter: wire.WireFormat) -> None:
    body = BODIES[adapter.provider]
    assert wire.for_provider(adapter.provider) is adapter
    view = adapter.view(body)
    assert view.text == "hi there" and view.input_tokens == 3 and view.finish_reasons
    assert not adapter.has_tool_calls(body)
    assert adapter.digest(body) == adapter.digest({**body, "id": "other"})  # ids do not count
    changed = adapter.apply_response_fault(get_fault("llm_empty_single"), body, rng=random.Random(0))
    assert adapter.digest(changed) != adapter.digest(body)
    raw = adapter.render_stream(body, [])
    parser = SSEParser()
    events = parser.feed(raw) + parser.close()
    assert adapter.view(adapter.assemble_stream(events)).text == "hi there"
    assert any(adapter.stream_ended(e) for e in events)
    assert adapter.stream_faulter(get_fault("stream_cut"), random.Random(0)) is not None
    err = adapter.error_response(get_fault("http_429"), model="m", rng=random.Random(0))
    assert err is not None and err.status == 429
    assert adapter.error_response(get_fault("llm_empty_single"), model="m", rng=None) is None
    req, problem = adapter.parse_request(_request("https://x/v1/chat/completions"))
    assert problem == "" and req["messages"] == []
    attrs = adapter.request_attributes(req, capture=False, conversation=wire.annotate.Conversation())
    assert attrs[A.GEN_AI_PROVIDER_NAME] == adapter.provider


def test_body_signals_belong_to_the_chat_completions_format() -> None:
    assert wire.OPENAI.body_signals({"choices": []})[A.RESPONSE_CHOICE_COUNT] == 0
    assert wire.ANTHROPIC.body_signals({"content": []}) == {}


def test_an_unreadable_request_body_is_named_not_raised() -> None:
    bad = httpx.Request("POST", "https://x/v1/chat/completions", content=b"{not json")
    req, problem = wire.OPENAI.parse_request(bad)
    assert problem == "request body is not JSON (JSONDecodeError)" and req == {"stream": False}
    listed = httpx.Request("POST", "https://x/v1/chat/completions", content=json.dumps([1]).encode())
    assert wire.OPENAI.parse_request(listed)[1] == "request body is not a JSON object"
