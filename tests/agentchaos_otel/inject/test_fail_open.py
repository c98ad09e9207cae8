"""Fail-open: bodies the injector cannot handle reach the client byte-identical, with a span event."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import httpx2
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport

_VALID = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
          "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello there, friend"},
                       "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}
_BIG = json.dumps({**_VALID, "padding": "x" * (10 * 1024 * 1024)}).encode()

BODIES: dict[str, tuple[bytes, dict[str, str]]] = {
    "non_json": (b"upstream said no <b>nope</b>", {"content-type": "text/plain"}),
    "gzip_garbage": (gzip.compress(b"\x00\x01 not json at all"), {"content-type": "application/json",
                                                                   "content-encoding": "gzip"}),
    "truncated_json": (json.dumps(_VALID).encode()[:57], {"content-type": "application/json"}),
    "empty": (b"", {"content-type": "application/json"}),
    "binary": (bytes(range(256)) * 16, {"content-type": "application/octet-stream"}),
    "very_large": (_BIG, {"content-type": "application/json"}),
    "brotli": (b"\x1b\x03\x00\xf8\xa5", {"content-type": "application/json", "content-encoding": "br"}),
}
EXPECTED_REASON = {"non_json": "non-JSON", "gzip_garbage": "", "truncated_json": "JSON", "empty": "empty",
                   "binary": "", "very_large": "limit", "brotli": "encoding"}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        kind = self.path.split("/")[2]
        body, headers = BODIES[kind]
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def raw_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _raw(response: Any) -> bytes:
    return b"".join(response.iter_raw())


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("kind", sorted(BODIES))
def test_unhandled_bodies_pass_byte_identical(kind: str, module: Any, raw_server: str,
                                              memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    transport = ChaosTransport(module.HTTPTransport(), tracer_provider=provider)
    with module.Client(transport=transport) as client, episode("fo", plan="llm_error_persistent",
                                                              tracer_provider=provider):
        with client.stream("POST", f"{raw_server}/raw/{kind}/v1/chat/completions",
                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}) as r:
            assert _raw(r) == BODIES[kind][0]
    span = next(s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT)
    events = [e for e in span.events if e.name == A.EVENT_INJECTOR_SKIP]
    assert events, f"{kind}: no skip event"
    assert EXPECTED_REASON[kind].lower() in str(events[0].attributes[A.SKIP_REASON]).lower()
    assert span.attributes[A.FAULT_INJECTED] is False


@pytest.mark.parametrize("kind", ["non_json", "truncated_json", "empty", "binary"])
def test_async_unhandled_bodies_pass_byte_identical(kind: str, raw_server: str, memory_tracing: Any) -> None:
    import asyncio

    provider, exporter = memory_tracing

    async def go() -> bytes:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=provider)
        async with httpx2.AsyncClient(transport=transport) as client:
            async with episode("fo", plan="llm_error_persistent", tracer_provider=provider):
                r = await client.post(f"{raw_server}/raw/{kind}/v1/chat/completions", json={"model": "m"})
                return r.content

    assert asyncio.run(go()) == BODIES[kind][0]
    span = next(s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT)
    assert any(e.name == A.EVENT_INJECTOR_SKIP for e in span.events)


def test_gzip_json_is_decoded_for_injection_and_rewritten_plain(memory_tracing: Any) -> None:
    """Real providers gzip their answers; the injector must still work on them."""
    import openai

    from agentchaos_otel.sim.server import SimulatedModelServer
    from tests.conftest import ModePolicy

    provider, exporter = memory_tracing
    with SimulatedModelServer(ModePolicy(), gzip_responses=True) as server:
        plain = httpx2.post(f"{server.base_url}/chat/completions", headers={"accept-encoding": "gzip"},
                            json={"model": "sim-core-test", "messages": [{"role": "user", "content": "TEXT 1"}]})
        assert plain.headers.get("content-encoding") == "gzip"
        transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
        with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0,
                           http_client=httpx2.Client(transport=transport)) as client:
            with episode("gz", plan="llm_error_single", tracer_provider=provider):
                raw = client.chat.completions.with_raw_response.create(
                    model="sim-core-test", messages=[{"role": "user", "content": "TEXT 1"}])
                again = client.chat.completions.create(model="sim-core-test",
                                                       messages=[{"role": "user", "content": "TEXT 1"}])
    completion = raw.parse()
    assert completion.choices[0].message.content.startswith("[API ERROR]")
    assert raw.headers.get("x-request-id") and "content-encoding" not in raw.headers
    assert again.choices[0].message.content == plain.json()["choices"][0]["message"]["content"]
