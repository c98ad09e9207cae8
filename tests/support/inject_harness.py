"""Test harness for the injector: a raw-socket loopback server that breaks its responses on
purpose, and client runners that record exactly what an agent sees of a call.

``http.server`` always finishes a response cleanly; the failures agents meet in production
(connection reset mid-body, a Content-Length the body never reaches, a chunked body whose last
chunk is bad or missing) need a server that writes bytes itself. Each scenario is a list of steps
the server plays after reading the request; the path names it: ``/<scenario>/v1/chat/completions``.
The runners compare a client with and without the injector: same exception (class, message, and
whether ``send()`` or the read raised it), same status, headers and bytes.
"""

from __future__ import annotations

import gzip
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

COMPLETION = {"id": "chatcmpl-raw-1", "object": "chat.completion", "created": 1, "model": "m",
              "choices": [{"index": 0, "message": {"role": "assistant",
                                                   "content": "The weather in Paris is sunny and mild."},
                           "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 9, "completion_tokens": 8, "total_tokens": 17}}
JSON_BODY = json.dumps(COMPLETION).encode()
GZIP_BODY = gzip.compress(JSON_BODY)


def _sse_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {"id": "chatcmpl-raw-2", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


SSE_EVENTS = [_sse_event({"role": "assistant", "content": ""})] + [
    _sse_event({"content": piece}) for piece in ("The weather ", "in Paris ", "is sunny ", "and mild.")
] + [_sse_event({}, "stop")]
SSE_DONE = b"data: [DONE]\n\n"
SSE_BODY = b"".join(SSE_EVENTS) + SSE_DONE
SSE_TEXT = "The weather in Paris is sunny and mild."

JSON_HEADERS = [("content-type", "application/json"), ("x-request-id", "req-raw")]
SSE_HEADERS = [("content-type", "text/event-stream"), ("x-request-id", "req-raw")]


@dataclass
class Scenario:
    """Steps to play: bytes to send, ("sleep", s), ("reset",), ("close",), ("gate", s)."""

    steps: list[Any]
    body_sent: bytes  # the payload bytes the client can have received before the failure
    streamed: bool = False  # an SSE body
    broken: bool = True


def _head(headers: list[tuple[str, str]], **extra: str) -> bytes:
    # one response per connection: without "connection: close" a client may reuse a socket we closed
    lines = ["HTTP/1.1 200 OK"] + [f"{k}: {v}" for k, v in headers + list(extra.items())] + ["connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _length(headers: list[tuple[str, str]], body: bytes, sent: bytes, **extra: str) -> list[Any]:
    """Declare ``len(body)`` bytes but send only ``sent``, then close."""
    return [_head(headers, **{"content-length": str(len(body)), **extra}), sent, ("close",)]


def _reset(headers: list[tuple[str, str]], body: bytes, sent: bytes, **extra: str) -> list[Any]:
    return [_head(headers, **{"content-length": str(len(body)), **extra}), sent, ("sleep", 0.005), ("reset",)]


def _chunked(headers: list[tuple[str, str]], pieces: list[bytes], ending: bytes | None, **extra: str) -> list[Any]:
    steps: list[Any] = [_head(headers, **{"transfer-encoding": "chunked", **extra})]
    steps += [_chunk(p) for p in pieces]
    if ending is not None:
        steps.append(ending)
    steps.append(("close",))
    return steps


_SSE_PART = b"".join(SSE_EVENTS[:3])
_GZ = {"content-encoding": "gzip"}
_HALF = len(GZIP_BODY) // 2
_SSE_GZIP = gzip.compress(SSE_BODY)

SCENARIOS: dict[str, Scenario] = {
    "json_reset_after_headers": Scenario(_reset(JSON_HEADERS, JSON_BODY, b""), b""),
    "json_reset_mid_body": Scenario(_reset(JSON_HEADERS, JSON_BODY, JSON_BODY[:100]), JSON_BODY[:100]),
    "json_length_too_large": Scenario(_length(JSON_HEADERS, JSON_BODY + b" " * 500, JSON_BODY), JSON_BODY),
    "json_chunked_bad_last": Scenario(_chunked(JSON_HEADERS, [JSON_BODY[:90], JSON_BODY[90:]], b"zz\r\n\r\n"),
                                      JSON_BODY),
    "json_chunked_no_last": Scenario(_chunked(JSON_HEADERS, [JSON_BODY[:90], JSON_BODY[90:]], None), JSON_BODY),
    "gzip_length_too_large": Scenario(_length(JSON_HEADERS, GZIP_BODY, GZIP_BODY[:_HALF], **_GZ), GZIP_BODY[:_HALF]),
    "gzip_reset_mid_body": Scenario(_reset(JSON_HEADERS, GZIP_BODY, GZIP_BODY[:_HALF], **_GZ), GZIP_BODY[:_HALF]),
    "gzip_chunked_no_last": Scenario(_chunked(JSON_HEADERS, [GZIP_BODY[:_HALF]], None, **_GZ), GZIP_BODY[:_HALF]),
    "sse_reset_mid_stream": Scenario(_reset(SSE_HEADERS, SSE_BODY, _SSE_PART), _SSE_PART, True),
    "sse_length_too_large": Scenario(_length(SSE_HEADERS, SSE_BODY, _SSE_PART), _SSE_PART, True),
    "sse_chunked_bad_last": Scenario(_chunked(SSE_HEADERS, SSE_EVENTS[:3], b"zz\r\n\r\n"), _SSE_PART, True),
    "sse_chunked_no_last": Scenario(_chunked(SSE_HEADERS, SSE_EVENTS[:3], None), _SSE_PART, True),
    "sse_gzip_length_too_large": Scenario(_length(SSE_HEADERS, _SSE_GZIP, _SSE_GZIP[:40], **_GZ),
                                          _SSE_GZIP[:40], True),
    # complete up to [DONE], then the connection ends before the declared length
    "sse_done_then_short": Scenario(_length(SSE_HEADERS, SSE_BODY + b"\n" * 64, SSE_BODY), SSE_BODY, True),
    # well-formed, for calls that must succeed
    "sse_ok": Scenario(_chunked(SSE_HEADERS, SSE_EVENTS + [SSE_DONE], b"0\r\n\r\n"), SSE_BODY, True, False),
    "json_ok": Scenario([_head(JSON_HEADERS, **{"content-length": str(len(JSON_BODY))}), JSON_BODY, ("close",)],
                        JSON_BODY, False, False),
    # the first event, then a wait until the client says it has it (or a timeout), then the rest
    "json_gated": Scenario([_head(JSON_HEADERS, **{"transfer-encoding": "chunked"}), _chunk(JSON_BODY[:50]),
                            ("gate", 0.0), _chunk(JSON_BODY[50:]), b"0\r\n\r\n", ("close",)],
                           JSON_BODY, False, False),
    "sse_gated": Scenario(_chunked(SSE_HEADERS, SSE_EVENTS[:1], None)[:-1] + [("gate", 0.0)]
                          + [_chunk(e) for e in SSE_EVENTS[1:] + [SSE_DONE]] + [b"0\r\n\r\n", ("close",)],
                          SSE_BODY, True, False),
}


REQUEST = {"model": "m", "messages": [{"role": "user", "content": "weather in Paris?"}]}


@dataclass(frozen=True)
class Outcome:
    raised_at: str | None  # "send", "read" or None
    exc_type: str | None
    exc_message: str | None
    status: int | None
    headers: tuple[tuple[bytes, bytes], ...] | None
    body: bytes


def _payload(body: Any) -> dict[str, Any]:
    return {"content": body} if isinstance(body, bytes) else {"json": body}


def _failed(stage: str, exc: Exception, status: int | None, headers: Any, body: bytes) -> Outcome:
    return Outcome(stage, type(exc).__qualname__, str(exc), status, headers, body)


def run_sync(module: Any, transport: Any, url: str, streamed: bool, request: Any = None) -> Outcome:
    """What a client sees of one call: where it raised, what, and the status, headers and bytes."""
    body = REQUEST if request is None else request
    with module.Client(transport=transport) as client:
        status = headers = None
        got = bytearray()
        try:
            if not streamed:
                r = client.post(url, **_payload(body))
                return Outcome(None, None, None, r.status_code, tuple(r.headers.raw), r.content)
            with client.stream("POST", url, **_payload(body)) as r:
                status, headers = r.status_code, tuple(r.headers.raw)
                try:
                    for chunk in r.iter_raw():
                        got += chunk
                except Exception as exc:
                    return _failed("read", exc, status, headers, bytes(got))
        except Exception as exc:
            return _failed("send", exc, status, headers, bytes(got))
        return Outcome(None, None, None, status, headers, bytes(got))


async def run_async(module: Any, transport: Any, url: str, streamed: bool, request: Any = None) -> Outcome:
    body = REQUEST if request is None else request
    async with module.AsyncClient(transport=transport) as client:
        status = headers = None
        got = bytearray()
        try:
            if not streamed:
                r = await client.post(url, **_payload(body))
                return Outcome(None, None, None, r.status_code, tuple(r.headers.raw), r.content)
            async with client.stream("POST", url, **_payload(body)) as r:
                status, headers = r.status_code, tuple(r.headers.raw)
                try:
                    async for chunk in r.aiter_raw():
                        got += chunk
                except Exception as exc:
                    return _failed("read", exc, status, headers, bytes(got))
        except Exception as exc:
            return _failed("send", exc, status, headers, bytes(got))
        return Outcome(None, None, None, status, headers, bytes(got))


@dataclass
class RawServer:
    """``with RawServer() as s: httpx.post(s.url("json_reset_mid_body"), ...)``."""

    gate_timeout: float = 0.5
    gate: threading.Event = field(default_factory=threading.Event)
    gate_log: list[bool] = field(default_factory=list)  # per gated response: client had chunk 1 in time
    requests: list[bytes] = field(default_factory=list)  # raw request bodies, in arrival order

    def __post_init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def url(self, scenario: str) -> str:
        return f"http://127.0.0.1:{self.port}/{scenario}/v1/chat/completions"

    def base_url(self, scenario: str) -> str:
        return f"http://127.0.0.1:{self.port}/{scenario}/v1"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop = True
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            pass
        self._thread.join(timeout=2)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop:
            conn, _ = self._sock.accept()
            if self._stop:
                conn.close()
                break
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> tuple[str, bytes] | None:
        data = b""
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return None
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        while len(body) < length:
            more = conn.recv(65536)
            if not more:
                break
            body += more
        return lines[0].split(" ")[1], body

    def _handle(self, conn: socket.socket) -> None:
        try:
            got = self._read_request(conn)
            if got is None:
                return
            path, body = got
            self.requests.append(body)
            for step in SCENARIOS[path.strip("/").split("/")[0]].steps:
                if isinstance(step, bytes):
                    conn.sendall(step)
                elif step[0] == "sleep":
                    time.sleep(step[1])
                elif step[0] == "gate":
                    self.gate_log.append(self.gate.wait(self.gate_timeout))
                elif step[0] == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                elif step[0] == "close":
                    conn.shutdown(socket.SHUT_WR)
                    time.sleep(0.005)
                    return
        except OSError:
            return
        finally:
            conn.close()


def scenario_names(pred: Callable[[Scenario], bool]) -> list[str]:
    return sorted(name for name, s in SCENARIOS.items() if pred(s))
