"""A loopback OpenAI-compatible chat server, written on raw asyncio streams.

Raw streams rather than a framework because the corpus needs what a framework hides: closing a
connection before the status line, resetting it, stopping a chunked SSE body part-way, stalling
between events. The server does no scripting itself: every request goes to a handler that returns
a :class:`Reply`, which says exactly which bytes go out and when.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
           404: "Not Found", 408: "Request Timeout", 409: "Conflict", 413: "Payload Too Large",
           422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 520: "Unknown Error",
           524: "A Timeout Occurred", 529: "Overloaded"}


@dataclass
class Reply:
    """What goes back for one request.

    ``kind``: ``json`` (one body), ``sse`` (``events`` as a chunked event stream), ``drop`` (close
    before any byte), ``reset`` (TCP reset before any byte). ``delay`` waits before the status line
    (with ``heartbeat``: after it, sending whitespace or SSE comments, so no read timeout fires);
    ``gaps`` maps an event index to a wait before that event. ``end`` for SSE: ``clean`` (chunked
    terminator), ``abort`` (close without it: the client sees the body end part-way).
    """

    kind: str = "json"
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    events: list[str] = field(default_factory=list)
    gaps: dict[int, float] = field(default_factory=dict)
    delay: float = 0.0
    end: str = "clean"
    heartbeat: float = 0.0   # while waiting (delay, gaps), keep the connection alive every this many seconds


Handler = Callable[[str, dict[str, str], bytes], Awaitable[Reply]]


class ModelServer:
    """Serves ``handler`` on 127.0.0.1; one request at a time per connection (HTTP/1.1 keep-alive)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.port = 0
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                path, headers, body = request
                reply = await self.handler(path, headers, body)
                if not await _send(reply, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping
        finally:
            if not writer.is_closing():
                writer.close()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return path, headers, body


def _head(status: int, content_type: str, extra: dict[str, str], length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}", f"content-type: {content_type}"]
    lines.append(f"content-length: {length}" if length is not None else "transfer-encoding: chunked")
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _wait(writer: asyncio.StreamWriter, seconds: float, every: float, filler: bytes) -> None:
    """Wait ``seconds``, sending ``filler`` every ``every`` seconds (a slow server that keeps talking)."""
    while seconds > 0:
        step = min(every, seconds)
        await asyncio.sleep(step)
        seconds -= step
        await _chunk(writer, filler)


async def _send(reply: Reply, writer: asyncio.StreamWriter) -> bool:
    """Write ``reply``; False when the connection was closed on purpose."""
    if reply.heartbeat and reply.kind in ("json", "sse"):
        return await _send_slow(reply, writer)
    if reply.delay:
        await asyncio.sleep(reply.delay)
    if reply.kind in ("drop", "reset"):
        if reply.kind == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()
        return False
    if reply.kind == "json":
        body = reply.body if isinstance(reply.body, bytes) else (
            reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode())
        writer.write(_head(reply.status, reply.content_type, reply.headers, len(body)) + body)
        await writer.drain()
        return True
    writer.write(_head(reply.status, "text/event-stream", reply.headers, None))
    for i, event in enumerate(reply.events):
        if i in reply.gaps:
            await writer.drain()
            await asyncio.sleep(reply.gaps[i])
        data = event.encode()
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    if reply.end == "clean":
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
    await writer.drain()
    writer.close()
    return False


async def _send_slow(reply: Reply, writer: asyncio.StreamWriter) -> bool:
    """A reply that takes long but keeps the connection alive: whitespace before a JSON body (valid
    JSON), SSE comment lines in a stream (as OpenRouter documents for slow models)."""
    sse = reply.kind == "sse"
    writer.write(_head(reply.status, "text/event-stream" if sse else reply.content_type, reply.headers, None))
    filler = b": keep-alive\n\n" if sse else b" "
    await _wait(writer, reply.delay, reply.heartbeat, filler)
    if not sse:
        body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        await _chunk(writer, body)
    for i, event in enumerate(reply.events):
        if i in reply.gaps:
            await _wait(writer, reply.gaps[i], reply.heartbeat, filler)
        await _chunk(writer, event.encode())
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True
