"""Odd request bodies and compressed bombs: the request leaves untouched, the agent gets the
provider's bytes, and every call still gets a span.

The upstream is an in-process ``MockTransport`` handler: these properties are about our wrapper,
and the handler records exactly the bytes that left it.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import tracemalloc
from typing import Any

import httpx
import httpx2
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.call import MAX_INSPECT_BYTES, http_module
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from tests.support.inject_harness import JSON_BODY

pytestmark = pytest.mark.reliability

URL = "http://llm.test/v1/chat/completions"
USER = {"role": "user", "content": "hi"}

ODD_BODIES: dict[str, bytes] = {
    "tools_int": json.dumps({"model": "m", "messages": [USER], "tools": 5}).encode(),
    "tools_true": json.dumps({"model": "m", "messages": [USER], "tools": True}).encode(),
    "tools_str": json.dumps({"model": "m", "messages": [USER], "tools": "get_weather"}).encode(),
    "tools_non_dict_entries": json.dumps({"model": "m", "messages": [USER], "tools": [1, None, "x", []]}).encode(),
    "messages_str": json.dumps({"model": "m", "messages": "x"}).encode(),
    "messages_non_dict": json.dumps({"model": "m", "messages": [1, "two", None, [USER]]}).encode(),
    "message_tool_calls_int": json.dumps({"model": "m", "messages": [{"role": "assistant", "tool_calls": 5}]}).encode(),
    "model_dict": json.dumps({"model": {}, "messages": [USER]}).encode(),
    "model_list": json.dumps({"model": ["a"], "messages": [USER]}).encode(),
    "huge_numbers": json.dumps({"model": "m", "messages": [USER], "max_tokens": 10 ** 400,
                                "temperature": 1e308}).encode(),
    "infinite_temperature": b'{"model": "m", "messages": [], "temperature": Infinity, "max_tokens": -1e999}',
    "nan": b'{"model": "m", "messages": [], "temperature": NaN}',
    "bool_max_tokens": json.dumps({"model": "m", "max_tokens": True, "stream": "yes"}).encode(),
    "lone_surrogate": b'{"model": "m\\ud800", "messages": [{"role": "user", "content": "\\udfff"}]}',
    "deep_nesting": b'{"model": "m", "messages": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "too_deep_to_parse": b'{"messages": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "top_level_list": b"[1, 2, 3]",
    "top_level_string": b'"hello"',
    "not_json": b"model=m&messages=hi",
    "invalid_utf8": b'{"model": "\xff\xfe"}',
    "empty": b"",
}


def _upstream(seen: list[bytes], body: bytes = JSON_BODY, headers: dict[str, str] | None = None) -> Any:
    def handler(request: Any) -> Any:
        seen.append(request.content)
        module = http_module(request)
        # an unread stream: Response(content=...) would decode a gzip body on construction
        return module.Response(200, headers=headers or {"content-type": "application/json"},
                               stream=module.ByteStream(body))

    return handler


def _chat_spans(exporter: Any) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith(A.OP_CHAT)]


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("kind", sorted(ODD_BODIES))
def test_odd_request_bodies_leave_untouched_and_get_a_span(kind: str, module: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    seen: list[bytes] = []
    body = ODD_BODIES[kind]
    transport = ChaosTransport(module.MockTransport(_upstream(seen)), tracer_provider=provider)
    with module.Client(transport=transport) as client, episode("odd", plan="llm_error_persistent",
                                                              tracer_provider=provider):
        r = client.post(URL, content=body, headers={"content-type": "application/json"})
    assert seen == [body]
    assert r.status_code == 200
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.GEN_AI_OPERATION_NAME] == A.OP_CHAT
    for value in span.attributes.values():  # what reaches OTLP and the store fits their types
        if isinstance(value, int) and not isinstance(value, bool):
            assert -2 ** 63 <= value < 2 ** 63


def test_odd_request_body_async(memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    seen: list[bytes] = []

    async def go() -> int:
        transport = AsyncChaosTransport(httpx2.MockTransport(_upstream(seen)), tracer_provider=provider)
        async with httpx2.AsyncClient(transport=transport) as client:
            r = await client.post(URL, content=ODD_BODIES["tools_int"])
            return r.status_code

    assert asyncio.run(go()) == 200
    assert seen == [ODD_BODIES["tools_int"]]
    assert len(_chat_spans(exporter)) == 1


def test_odd_tools_still_allow_faults(memory_tracing: Any) -> None:
    """A body the provider may reject is still an LLM call: its response can be faulted."""
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.MockTransport(_upstream([])), tracer_provider=provider)
    with httpx2.Client(transport=transport) as client, episode("odd", plan="llm_error_single",
                                                              tracer_provider=provider):
        r = client.post(URL, content=ODD_BODIES["tools_true"])
    assert r.json()["choices"][0]["message"]["content"].startswith("[API ERROR]")
    (span,) = _chat_spans(exporter)
    assert span.attributes[A.FAULT_INJECTED] is True
    assert span.attributes[A.REQUEST_TOOL_COUNT] == 0


def _gzip_bomb(expanded: int) -> bytes:
    member = gzip.compress(b"\x00" * (1 << 20), compresslevel=9)
    return member * (expanded >> 20)


@pytest.mark.parametrize("plan", ["llm_error_persistent", None])
def test_gzip_bomb_response_passes_through_without_expanding(plan: str | None, memory_tracing: Any) -> None:
    """About 1 MiB of gzip that expands to 1 GiB: the agent gets the bytes untouched, the span says
    why nothing was inspected, and the injector never holds more than its inspection limit."""
    provider, exporter = memory_tracing
    bomb = _gzip_bomb(1 << 30)
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    transport = ChaosTransport(httpx2.MockTransport(_upstream([], bomb, headers)), tracer_provider=provider)
    with httpx2.Client(transport=transport) as client, episode("bomb", plan=plan, tracer_provider=provider):
        tracemalloc.start()
        try:
            with client.stream("POST", URL, json={"model": "m", "messages": [USER]}) as r:
                raw = b"".join(r.iter_raw())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert raw == bomb and r.headers["content-encoding"] == "gzip"
    (span,) = _chat_spans(exporter)
    reasons = [str(e.attributes[A.SKIP_REASON]) for e in span.events if e.name == A.EVENT_INJECTOR_SKIP]
    assert any("limit" in reason for reason in reasons), reasons
    assert span.attributes[A.FAULT_INJECTED] is False
    # the raw body (held by the mock upstream and the test) plus at most the decoded limit
    assert peak < 3 * len(bomb) + 1.5 * MAX_INSPECT_BYTES


class _ReadingTransport(httpx2.BaseTransport):
    """A custom transport that reads the upstream response itself before returning it."""

    def __init__(self, body: bytes, encoding: str) -> None:
        self.body, self.encoding = body, encoding

    def handle_request(self, request: Any) -> Any:
        class Once(httpx2.SyncByteStream):
            def __iter__(inner) -> Any:  # noqa: N805 - a one-shot stream, not re-iterable
                yield self.body

        response = httpx2.Response(200, headers={"content-type": "application/json",
                                                 "content-encoding": self.encoding},
                                   stream=Once(), request=request)
        response.read()
        return response


@pytest.mark.parametrize("encoding", ["gzip", "identity"])
def test_response_read_by_the_wrapped_transport_reaches_the_agent_as_is(encoding: str, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    body = gzip.compress(JSON_BODY) if encoding == "gzip" else JSON_BODY
    with httpx2.Client(transport=_ReadingTransport(body, encoding)) as client:
        bare = client.post(URL, json={"model": "m"}).content
    transport = ChaosTransport(_ReadingTransport(body, encoding), tracer_provider=provider)
    with httpx2.Client(transport=transport) as client, episode("read", plan="llm_error_persistent",
                                                              tracer_provider=provider):
        ours = client.post(URL, json={"model": "m"}).content
    assert bare == JSON_BODY
    (span,) = _chat_spans(exporter)
    if encoding == "gzip":  # only the decoded bytes are left: the response goes through as it is
        assert ours == bare
        assert any("already read" in str(e.attributes[A.SKIP_REASON]) for e in span.events)
    else:  # the decoded bytes are the body: it can still be faulted
        assert json.loads(ours)["choices"][0]["message"]["content"].startswith("[API ERROR]")
