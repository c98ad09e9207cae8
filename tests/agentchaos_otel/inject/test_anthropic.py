"""The Anthropic Messages API as a second wire format: recognised, faulted and annotated."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import ChaosTransport


def _message(tool: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "Let me look that up for you in the weather service."}]
    if tool:
        content.append({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}})
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sim", "content": content,
            "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 30}}


_EVENTS = [
    ("message_start", {"type": "message_start", "message": {"id": "msg_s", "type": "message", "role": "assistant",
                                                            "model": "claude-sim", "content": [], "stop_reason": None,
                                                            "usage": {"input_tokens": 9, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "Sunny in Oslo."}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
    ("message_stop", {"type": "message_stop"}),
]
SSE = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in _EVENTS)


class _Handler(BaseHTTPRequestHandler):
    """A loopback stand-in for the Anthropic API (simulated; shapes follow the public docs)."""

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:  # noqa: N802
        req = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if req.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(SSE)))
            self.end_headers()
            for i in range(0, len(SSE), 50):
                self.wfile.write(SSE[i:i + 50])
                self.wfile.flush()
            return
        body = json.dumps(_message("tool" in req["messages"][-1]["content"])).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", "req_sim_1")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def anthropic_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/messages"
    server.shutdown()
    server.server_close()


# a model calls only tools the request declares (the injector relies on it to skip guarded faults)
_WEATHER_TOOL = {"name": "get_weather", "description": "Current weather",
                 "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def _post(url: str, provider: Any, plan: str, text: str) -> httpx2.Response:
    with httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)) as client:
        with episode("anth", plan=plan, tracer_provider=provider):
            return client.post(url, headers={"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-secret"},
                               json={"model": "claude-sim", "max_tokens": 100, "tools": [_WEATHER_TOOL],
                                     "messages": [{"role": "user", "content": text}]})


def test_content_fault_on_anthropic_message(anthropic_url: str, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    r = _post(anthropic_url, provider, "llm_truncate_single", "hello")
    body = r.json()
    assert body["stop_reason"] == "max_tokens" and r.headers["request-id"] == "req_sim_1"
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert span.attributes[A.GEN_AI_PROVIDER_NAME] == "anthropic"
    assert span.attributes[A.FAULT_TYPE] == "truncate" and span.attributes[A.FAULT_CHANGED] is True
    assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ["max_tokens"]
    assert span.attributes[A.GEN_AI_USAGE_INPUT_TOKENS] == 12


def test_tool_fault_on_anthropic_tool_use(anthropic_url: str, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    r = _post(anthropic_url, provider, "tool_schema_single", "tool please")
    (block,) = [b for b in r.json()["content"] if b["type"] == "tool_use"]
    assert block["input"] == {"wrong_param": "unexpected_value"}
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert span.attributes[A.RESPONSE_TOOL_CALL_COUNT] == 1
    assert span.attributes[A.RESPONSE_TOOL_ARGS_SCHEMA_VALID] is False  # wrong_param is not in the schema


def test_http_fault_uses_anthropic_error_shape(anthropic_url: str, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    r = _post(anthropic_url, provider, "http_429", "hello")
    assert r.status_code == 429
    body = r.json()
    assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"
    assert r.headers["retry-after"]


def test_streamed_anthropic_message_is_annotated(anthropic_url: str, memory_tracing: Any) -> None:
    """Streaming Messages responses pass through unchanged and are annotated when the stream ends."""
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with httpx2.Client(transport=transport) as client, episode("as", tracer_provider=provider):
        with client.stream("POST", anthropic_url, headers={"anthropic-version": "2023-06-01"},
                           json={"model": "claude-sim", "stream": True, "messages": []}) as r:
            assert b"".join(r.iter_bytes()) == SSE
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ["end_turn"]
    assert span.attributes[A.RESPONSE_CONTENT_LENGTH] == len("Sunny in Oslo.")
    assert span.attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS] == 5


def test_stream_from_a_transport_that_returns_read_content(memory_tracing: Any) -> None:
    """Custom transports may build responses with ``content=``; the span must still end."""
    provider, exporter = memory_tracing

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=SSE)

    transport = ChaosTransport(httpx2.MockTransport(handler), tracer_provider=provider)
    with httpx2.Client(transport=transport) as client, episode("mock", tracer_provider=provider):
        r = client.post("https://api.anthropic.test/v1/messages", headers={"anthropic-version": "x"},
                        json={"model": "claude-sim", "stream": True, "messages": []})
        assert r.content == SSE
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert list(span.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ["end_turn"]
